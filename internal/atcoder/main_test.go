package atcoder_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/jobs/jobstest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The storage of the package is *dynamo.DB (asserted here, beside the
// consumer, so that internal/dynamo need not import the feature).
var _ atcoder.Store = (*dynamo.DB)(nil)

// The sync's River jobs are a plugin of the job runner (asserted here: the
// package does not import internal/jobs).
var _ jobs.Plugin = (*atcoder.Jobs)(nil)

var pool *pgxpool.Pool

// TestMain starts DynamoDB Local (dynamotest, which gives each test its
// own tables) and PostgreSQL (for the River jobs' tests, each with a River
// schema of its own).
func TestMain(m *testing.M) { jobstest.Main(m, &pool) }

// riverSchema returns a migrated River schema no other test of the run uses.
func riverSchema(t testing.TB, name string) string { return jobstest.Schema(t, pool, name) }

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB { return dynamotest.NewDB(t) }

// newClient returns a client of srv with test-sized etiquette: calls 1 ms
// apart, retries after about 1 ms.
func newClient(t testing.TB, srv *atcodertest.Server, cfg atcoder.ClientConfig) *atcoder.Client {
	t.Helper()
	cfg.BaseURL = srv.URL
	if cfg.MinInterval == 0 {
		cfg.MinInterval = time.Millisecond
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = time.Millisecond
	}
	c, err := atcoder.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bundle is a test's store, fake API and syncer.
type bundle struct {
	db     *dynamo.DB
	srv    *atcodertest.Server
	syncer *atcoder.Syncer
}

func setup(t testing.TB, cfg atcoder.ClientConfig) bundle {
	t.Helper()
	db := newDB(t)
	srv := atcodertest.NewServer(t)
	return bundle{db: db, srv: srv, syncer: &atcoder.Syncer{Store: db, API: newClient(t, srv, cfg), Logger: slog.New(slog.DiscardHandler)}}
}

// as returns a context signed in as userID (staff if asked).
func as(userID string, staff bool) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: userID, IsStaff: staff}})
}
