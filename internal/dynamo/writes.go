package dynamo

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// dynamoAPI is the part of the DynamoDB client the repositories use. They
// never hold the SDK's client itself, only localWrites: every item write
// forgets the display data it touches in this process's memory, so no
// repository method can forget to. A new write operation of the SDK must
// be added here and to localWrites.
type dynamoAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)

	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)

	// Tables (migrate, tests): they change no item.
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	UpdateTable(ctx context.Context, in *dynamodb.UpdateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
	DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ dynamoAPI = (*dynamodb.Client)(nil)

// localWrites is the one write path: reads and table operations go straight
// to the SDK; each item write, whatever its outcome, then forgets the
// display data it touches (displayKeyOf) in this process's memory. It
// depends on nothing but DynamoDB: a write never waits for anyone.
type localWrites struct {
	*dynamodb.Client
	db *DB
}

var _ dynamoAPI = localWrites{}

func (w localWrites) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	defer w.db.forget(deref(in.TableName), in.Item)
	return w.Client.PutItem(ctx, in, opts...)
}

func (w localWrites) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	defer w.db.forget(deref(in.TableName), in.Key)
	return w.Client.UpdateItem(ctx, in, opts...)
}

func (w localWrites) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	defer w.db.forget(deref(in.TableName), in.Key)
	return w.Client.DeleteItem(ctx, in, opts...)
}

func (w localWrites) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	defer func() {
		for table, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					w.db.forget(table, r.PutRequest.Item)
				case r.DeleteRequest != nil:
					w.db.forget(table, r.DeleteRequest.Key)
				}
			}
		}
	}()
	return w.Client.BatchWriteItem(ctx, in, opts...)
}

func (w localWrites) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	defer func() {
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				w.db.forget(deref(it.Put.TableName), it.Put.Item)
			case it.Update != nil:
				w.db.forget(deref(it.Update.TableName), it.Update.Key)
			case it.Delete != nil:
				w.db.forget(deref(it.Delete.TableName), it.Delete.Key)
			}
		}
	}()
	return w.Client.TransactWriteItems(ctx, in, opts...)
}

// forget drops the display data of an item just written (its key, at
// least, in item) from this process's memory.
func (db *DB) forget(table string, item map[string]types.AttributeValue) {
	if key, use := db.displayKeyOf(table, stringAttr(item, attrPK), stringAttr(item, attrSK)); use != notDisplay {
		db.partitions.Forget(key)
	}
}

// attemptsKey carries a write's attempt counter (countAttempts).
type attemptsKey struct{}

// withAttempts returns a context whose SDK calls count their attempts (the
// SDK retries a call up to Config.MaxAttempts times) in the counter — the
// one ctx has already, if any.
func withAttempts(ctx context.Context) (context.Context, *atomic.Int32) {
	if n, ok := ctx.Value(attemptsKey{}).(*atomic.Int32); ok {
		return ctx, n
	}
	n := &atomic.Int32{}
	return context.WithValue(ctx, attemptsKey{}, n), n
}

// countAttempts is SDK middleware placed after the retry middleware: it
// runs once per attempt and bumps the counter of withAttempts.
func countAttempts(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("algoitnyCountAttempts",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if n, ok := ctx.Value(attemptsKey{}).(*atomic.Int32); ok {
				n.Add(1)
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// mayHaveLanded says whether a write that returned err after attempts
// attempts may still have been applied: not when DynamoDB refused the only
// attempt (a failed condition, a cancelled transaction, throttling,
// validation: client faults) or nothing was sent; otherwise yes — a
// timeout, a server fault, a broken connection, or a refusal after a retry
// (the first attempt may have landed: a create retried after a lost reply
// fails its condition).
func mayHaveLanded(err error, attempts int32) bool {
	if err == nil {
		return true
	}
	if attempts == 0 {
		return false
	}
	var api smithy.APIError
	return attempts != 1 || !errors.As(err, &api) || api.ErrorFault() != smithy.FaultClient
}
