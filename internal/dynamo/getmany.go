package dynamo

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// getMany reads the items of keys with batchGet and decodes them into a map
// keyed by id(value). Missing items are absent from the map.
func getMany[K comparable, V any](ctx context.Context, db *DB, table string, keys []itemKey,
	decode func(map[string]types.AttributeValue) (V, error), id func(V) K) (map[K]V, error) {
	found, err := db.batchGet(ctx, table, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(found))
	for _, av := range found {
		v, err := decode(av)
		if err != nil {
			return nil, err
		}
		out[id(v)] = v
	}
	return out, nil
}
