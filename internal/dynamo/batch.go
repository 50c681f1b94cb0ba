package dynamo

import (
	"context"
	"maps"
	"math/rand/v2"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's batch limits.
const (
	maxBatchGet   = 100
	maxBatchWrite = 25
	// maxBatchRetries bounds the retries of unprocessed keys or items.
	maxBatchRetries = 12
)

// itemKey is the primary key of an item.
type itemKey struct{ PK, SK string }

func (k itemKey) av() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: k.PK},
		attrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

func keyOf(item map[string]types.AttributeValue) itemKey {
	return itemKey{PK: stringAttr(item, attrPK), SK: stringAttr(item, attrSK)}
}

func stringAttr(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// backoff sleeps before retry attempt n (0-based) with full jitter, or returns
// ctx's error.
func backoff(ctx context.Context, n int) error {
	ceiling := min(25*time.Millisecond<<n, time.Second)
	d := time.Duration(rand.Int64N(int64(ceiling))) + time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// batchGet reads the items with the given keys from table, 100 keys per call,
// retrying unprocessed keys with backoff. Duplicate keys are read once;
// missing items are simply absent from the result.
func (db *DB) batchGet(ctx context.Context, table string, keys []itemKey) (map[itemKey]map[string]types.AttributeValue, error) {
	found := make(map[itemKey]map[string]types.AttributeValue, len(keys))
	seen := make(map[itemKey]bool, len(keys))
	t := db.partitions.Begin()
	var unique []itemKey
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if item, ok := db.cachedItem(ctx, table, k); ok {
			if item != nil {
				found[k] = item
			}
			continue
		}
		unique = append(unique, k)
	}
	for start := 0; start < len(unique); start += maxBatchGet {
		chunk := unique[start:min(start+maxBatchGet, len(unique))]
		// Every item is read strongly consistent: security state must be
		// the latest write, and display data kept in memory too.
		got, err := db.batchGetTables(ctx, map[string][]itemKey{table: chunk}, true)
		if err != nil {
			return nil, err
		}
		maps.Copy(found, got[table])
	}
	db.keepHeads(ctx, table, unique, found, t)
	return found, nil
}

// batchWrite applies the write requests to table, 25 per call, retrying
// unprocessed items with backoff. Batch writes are not atomic: callers order
// their writes so that a partial failure leaves nothing visible half-written.
func (db *DB) batchWrite(ctx context.Context, table string, writes []types.WriteRequest) error {
	for start := 0; start < len(writes); start += maxBatchWrite {
		req := map[string][]types.WriteRequest{table: writes[start:min(start+maxBatchWrite, len(writes))]}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > maxBatchRetries {
				return algoitny.Internal(nil, "batch write: items still unprocessed after %d retries", maxBatchRetries)
			}
			if attempt > 0 {
				if err := backoff(ctx, attempt-1); err != nil {
					return translate(err, "batch write")
				}
			}
			out, err := db.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
			if err != nil {
				return translate(err, "batch write")
			}
			req = out.UnprocessedItems
		}
	}
	return nil
}

func putRequest(item map[string]types.AttributeValue) types.WriteRequest {
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
}

func deleteRequest(k itemKey) types.WriteRequest {
	return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.av()}}
}

// getItem reads one item with a strongly consistent read; nil if absent. An
// item read ahead in the same operation (PrefetchProblem) is not read again,
// nor is display data the cache holds (display.go) unless ctx is fresh.
func (db *DB) getItem(ctx context.Context, table string, k itemKey) (map[string]types.AttributeValue, error) {
	if isFresh(ctx) {
		return db.getItemFromDynamoDB(ctx, table, k, memoTicket{})
	}
	if item, ok := fromPrefetch(ctx, table, k); ok {
		return item, nil
	}
	if item, ok := db.cachedItem(ctx, table, k); ok {
		return item, nil
	}
	return db.getItemFromDynamoDB(ctx, table, k, db.partitions.Begin())
}

// getItemFromDynamoDB is getItem's GetItem; display data read with a
// ticket t of the cache is kept in it (keepHeads).
func (db *DB) getItemFromDynamoDB(ctx context.Context, table string, k itemKey, t memoTicket) (map[string]types.AttributeValue, error) {
	out, err := db.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: k.av(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, translate(err, "get item")
	}
	if len(out.Item) == 0 {
		db.keepHeads(ctx, table, []itemKey{k}, nil, t)
		return nil, nil
	}
	db.keepHeads(ctx, table, []itemKey{k}, map[itemKey]map[string]types.AttributeValue{k: out.Item}, t)
	return out.Item, nil
}
