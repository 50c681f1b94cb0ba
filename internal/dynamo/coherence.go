package dynamo

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/algoitny/api/internal/cache"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// dynamoAPI is the part of the DynamoDB client the repositories use. The
// repositories never hold the SDK's client itself, only writeThrough: every
// write they make is announced to the caches of every process first, so no
// repository method can forget to tell them (the seventeen hand-placed
// invalidations this replaced could be forgotten). A new write operation of
// the SDK must be added here and to writeThrough.
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

// writeThrough is the one write path: reads and table operations go
// straight to the SDK; each item write is announced on the feed (Feed.Change)
// for the cached items it touches, made while the announcement holds, and
// finished with its outcome (see cache.Feed for what that guarantees).
type writeThrough struct {
	*dynamodb.Client
	db *DB
}

var _ dynamoAPI = writeThrough{}

func (w writeThrough) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.PutItemOutput, err error) {
	err = w.db.announced(ctx, []writtenItem{{deref(in.TableName), in.Item}}, func(ctx context.Context) error {
		out, err = w.Client.PutItem(ctx, in, opts...)
		return err
	})
	return out, err
}

func (w writeThrough) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	err = w.db.announced(ctx, []writtenItem{{deref(in.TableName), in.Key}}, func(ctx context.Context) error {
		out, err = w.Client.UpdateItem(ctx, in, opts...)
		return err
	})
	return out, err
}

func (w writeThrough) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.DeleteItemOutput, err error) {
	err = w.db.announced(ctx, []writtenItem{{deref(in.TableName), in.Key}}, func(ctx context.Context) error {
		out, err = w.Client.DeleteItem(ctx, in, opts...)
		return err
	})
	return out, err
}

func (w writeThrough) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.BatchWriteItemOutput, err error) {
	var items []writtenItem
	for table, reqs := range in.RequestItems {
		for _, r := range reqs {
			switch {
			case r.PutRequest != nil:
				items = append(items, writtenItem{table, r.PutRequest.Item})
			case r.DeleteRequest != nil:
				items = append(items, writtenItem{table, r.DeleteRequest.Key})
			}
		}
	}
	err = w.db.announced(ctx, items, func(ctx context.Context) error {
		out, err = w.Client.BatchWriteItem(ctx, in, opts...)
		return err
	})
	return out, err
}

func (w writeThrough) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (out *dynamodb.TransactWriteItemsOutput, err error) {
	var items []writtenItem
	for _, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			items = append(items, writtenItem{deref(it.Put.TableName), it.Put.Item})
		case it.Update != nil:
			items = append(items, writtenItem{deref(it.Update.TableName), it.Update.Key})
		case it.Delete != nil:
			items = append(items, writtenItem{deref(it.Delete.TableName), it.Delete.Key})
		}
	}
	err = w.db.announced(ctx, items, func(ctx context.Context) error {
		out, err = w.Client.TransactWriteItems(ctx, in, opts...)
		return err
	})
	return out, err
}

// writtenItem is an item a write touches: its table and (at least) its key.
type writtenItem struct {
	table string
	item  map[string]types.AttributeValue
}

// announced makes write, a write of items, through the feed: the cached
// ones among items (cacheKeyOf) are announced first, the write runs in the
// announcement's context (cache.Change.Write) and its outcome is reported
// after. Writes of
// nothing cached, and every write of a DB without a feed, go straight out.
// It returns EUNAVAILABLE, without writing, when the announcement cannot be
// made; otherwise write's error.
func (db *DB) announced(ctx context.Context, items []writtenItem, write func(context.Context) error) error {
	keys, strict := db.changedKeys(items)
	if db.feed == nil || len(keys) == 0 {
		return write(ctx)
	}
	if db.onChange != nil {
		db.onChange(keys, strict)
	}
	ch, err := db.feed.Change(ctx, strict, keys)
	if err != nil {
		return err
	}
	wctx, cancel := ch.Write(ctx)
	wctx, attempts := withAttempts(wctx)
	func() {
		defer cancel() // stops the renewals, also if write panics
		err = write(wctx)
	}()
	o := outcome(err, attempts.Load())
	if db.onOutcome != nil {
		db.onOutcome(keys, o, attempts.Load())
	}
	ch.Finish(ctx, o)
	return err
}

// attemptsKey carries a write's attempt counter (countAttempts).
type attemptsKey struct{}

// withAttempts returns a context whose SDK calls count their attempts (the
// SDK retries a call up to Config.MaxAttempts times) in the counter — the
// one ctx has already, if any: a repository method that judges its write's
// outcome itself (CreateChargedJob) sets one for the write path to share.
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

// changedKeys returns the cache keys of the cached items among items
// (sorted, once each), and whether any of them is security state.
func (db *DB) changedKeys(items []writtenItem) (keys []string, strict bool) {
	for _, it := range items {
		key, s, ok := db.cacheKeyOf(it.table, stringAttr(it.item, attrPK), stringAttr(it.item, attrSK))
		if !ok {
			continue
		}
		strict = strict || s
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, strict
}

// outcome says what a write's error means for what is stored, given how
// many attempts the SDK made: applied without an error; certainly not
// applied when DynamoDB refused the only attempt (a failed condition, a
// cancelled transaction, throttling, validation: client faults) or nothing
// was sent; otherwise unknown — a timeout, a server fault, a broken
// connection, or a refusal after a retry (the first attempt may have
// landed: a create retried after a lost reply fails its condition).
func outcome(err error, attempts int32) cache.Outcome {
	if err == nil {
		return cache.Applied
	}
	if attempts == 0 {
		return cache.NotApplied
	}
	var api smithy.APIError
	if attempts == 1 && errors.As(err, &api) && api.ErrorFault() == smithy.FaultClient {
		return cache.NotApplied
	}
	return cache.Unknown
}
