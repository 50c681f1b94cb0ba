package dynamo

import (
	"context"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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

// batchGetTables reads keys of several tables in one BatchGetItem call (at
// most 100 keys in all), retrying unprocessed keys with backoff. Missing
// items are absent from the result. consistent asks for strongly consistent
// reads (twice the read capacity): for what must see the latest write.
// project, if given, names the only attributes to read besides the keys.
func (db *DB) batchGetTables(ctx context.Context, keys map[string][]itemKey, consistent bool, project ...string) (map[string]map[itemKey]map[string]types.AttributeValue, error) {
	var proj *string
	var names map[string]string
	if len(project) > 0 {
		b := expression.NamesList(expression.Name(attrPK), expression.Name(attrSK))
		for _, a := range project {
			b = b.AddNames(expression.Name(a))
		}
		expr, err := expression.NewBuilder().WithProjection(b).Build()
		if err != nil {
			return nil, algoitny.Internal(err, "build projection")
		}
		proj, names = expr.Projection(), expr.Names()
	}
	req := make(map[string]types.KeysAndAttributes, len(keys))
	out := make(map[string]map[itemKey]map[string]types.AttributeValue, len(keys))
	for table, ks := range keys {
		avs := make([]map[string]types.AttributeValue, len(ks))
		for i, k := range ks {
			avs[i] = k.av()
		}
		req[table] = types.KeysAndAttributes{Keys: avs, ConsistentRead: aws.Bool(consistent), ProjectionExpression: proj, ExpressionAttributeNames: names}
		out[table] = map[itemKey]map[string]types.AttributeValue{}
	}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > maxBatchRetries {
			return nil, algoitny.Internal(nil, "batch get: keys still unprocessed after %d retries", maxBatchRetries)
		}
		if attempt > 0 {
			if err := backoff(ctx, attempt-1); err != nil {
				return nil, translate(err, "batch get")
			}
		}
		resp, err := db.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, translate(err, "batch get")
		}
		for table, items := range resp.Responses {
			for _, item := range items {
				out[table][keyOf(item)] = item
			}
		}
		req = resp.UnprocessedKeys
	}
	return out, nil
}

// getOne reads the item k of table (getItem: strongly consistent, or
// display data the cache holds) and decodes it; an absent item is
// ENOTFOUND with the message notFound (a format, with args).
func getOne[V any](ctx context.Context, db *DB, table string, k itemKey,
	decode func(map[string]types.AttributeValue) (V, error), notFound string, args ...any) (V, error) {
	var zero V
	av, err := db.getItem(ctx, table, k)
	if err != nil {
		return zero, err
	}
	if av == nil {
		return zero, algoitny.Errorf(algoitny.ENOTFOUND, notFound, args...)
	}
	return decode(av)
}
