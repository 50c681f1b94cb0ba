package jobs_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/jobs/jobstest"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/jackc/pgx/v5/pgxpool"
)

var pool *pgxpool.Pool

// TestMain starts DynamoDB Local (dynamotest, which gives each test its
// own tables) and PostgreSQL (each test its own River schema).
func TestMain(m *testing.M) { jobstest.Main(m, &pool) }

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
	return dynamotest.NewDB(t), jobstest.Schema(t, pool, name)
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
