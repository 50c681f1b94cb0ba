package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/cache"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/pubsub"
)

// writer is the tables opened by a command that writes while servers may
// be running (seed-plans, admin): its writes are announced on the servers'
// change feed like theirs (cache.Feed), so it needs PostgreSQL as they do —
// without it nothing is written, rather than leave the servers' caches
// behind.
type writer struct {
	DB     *dynamo.DB
	Broker *pubsub.Postgres
	close  func()
}

// openWriter opens the tables and the feed (a writer, not a member: it
// caches nothing). Close it when done.
func openWriter(ctx context.Context, cfg Config, log *slog.Logger) (*writer, error) {
	db, err := dynamo.Open(ctx, cfg.Dynamo)
	if err != nil {
		return nil, err
	}
	pool, err := openPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w (writes are announced to running servers through PostgreSQL)", err)
	}
	broker, err := pubsub.NewPostgres(ctx, pubsub.PostgresConfig{Pool: pool, Channel: cfg.PubsubChannel, Logger: log})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("change feed: %s", algoitny.ErrorMessage(err))
	}
	feed := cache.NewFeed(cache.FeedConfig{Broker: broker, Bound: cfg.CacheBound, WriteWindow: cfg.CacheWriteWindow, Logger: log})
	db.SetFeed(feed, log)
	return &writer{DB: db, Broker: broker, close: func() { feed.Flush(); broker.Close(); pool.Close() }}, nil
}

// Close releases the connections.
func (w *writer) Close() { w.close() }
