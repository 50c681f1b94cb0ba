package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// TestMain starts DynamoDB Local (dynamotest, which gives each test its
// own tables) and PostgreSQL (each test its own River schema).
func TestMain(m *testing.M) {
	ctx := context.Background()
	stopDynamo, err := dynamotest.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, devstack.Describe(err))
		os.Exit(1)
	}
	url, stopPG, err := devstack.PostgresForTests(ctx)
	if err != nil {
		stopDynamo()
		fmt.Fprintln(os.Stderr, devstack.Describe(err))
		os.Exit(1)
	}
	if pool, err = pgxpool.New(ctx, url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pool.Close()
	stopPG()
	stopDynamo()
	os.Exit(code)
}

var seq atomic.Int64

// bundle is a test's own tables, River schema and insert-only runner.
type bundle struct {
	db     *dynamo.DB
	runner *jobs.Runner
	events *jobs.Events
}

// freshStores gives a test its own migrated DynamoDB tables
// (dynamotest.NewDB, dropped at the end) and River schema, named id
// ("name<n>").
func freshStores(t testing.TB, name string) (db *dynamo.DB, id string) {
	t.Helper()
	id = riverSchema(name)
	if _, err := jobs.Migrate(context.Background(), pool, id); err != nil {
		t.Fatal(err)
	}
	return dynamotest.NewDB(t), id
}

// riverSchema returns a River schema name no other test of the run uses.
func riverSchema(name string) string {
	return fmt.Sprintf("%s%d_%d", name, time.Now().UnixNano()%1e9, seq.Add(1))
}
func setup(t *testing.T) bundle {
	t.Helper()
	db, id := freshStores(t, "jobs")
	events := &jobs.Events{Broker: pubsub.NewMemory(pubsub.MemoryConfig{}), Store: db}
	r, err := jobs.New(jobs.Config{Pool: pool, Schema: id, Store: db, Events: events, StaleAfter: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return bundle{db: db, runner: r, events: events}
}
