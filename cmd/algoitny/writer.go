package main

import (
	"context"
	"log/slog"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/pubsub"
)

// writer is the tables opened by a command that writes while servers may
// be running (seed-plans, admin). Its writes need DynamoDB only: servers
// read security state from DynamoDB on use and keep display data at most
// ALGOITNY_CACHE_BOUND. Broker, when PostgreSQL answers, tells running
// servers of account changes so they close the user's sockets at once;
// without it they notice at the socket's next session check.
type writer struct {
	DB     *dynamo.DB
	Broker pubsub.Broker // nil when PostgreSQL is unreachable
	close  func()
}

// openWriter opens the tables and, if it can, the live events' broker.
// Close it when done.
func openWriter(ctx context.Context, cfg Config, log *slog.Logger) (*writer, error) {
	db, err := dynamo.Open(ctx, cfg.Dynamo)
	if err != nil {
		return nil, err
	}
	w := &writer{DB: db, close: func() {}}
	pool, err := openPool(ctx, cfg.DatabaseURL)
	if err != nil {
		log.Warn("PostgreSQL is unreachable: running servers are not told of the change (their sockets re-check it)", "err", err)
		return w, nil
	}
	broker, err := pubsub.NewPostgres(ctx, pubsub.PostgresConfig{Pool: pool, Channel: cfg.PubsubChannel, Logger: log})
	if err != nil {
		pool.Close()
		log.Warn("live events are unavailable: running servers are not told of the change (their sockets re-check it)", "err", algoitny.ErrorMessage(err))
		return w, nil
	}
	w.Broker, w.close = broker, func() { broker.Close(); pool.Close() }
	return w, nil
}

// Close releases the connections.
func (w *writer) Close() { w.close() }
