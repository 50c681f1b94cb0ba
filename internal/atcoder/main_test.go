package atcoder_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
)

var endpoint string

// TestMain starts DynamoDB Local once for the package (or uses the one
// `make test` started, via DYNAMODB_ENDPOINT). Each test gets its own tables.
func TestMain(m *testing.M) {
	ep, stop, err := devstack.DynamoForTests(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "atcoder tests need DynamoDB Local:", devstack.Describe(err))
		os.Exit(1)
	}
	endpoint = ep
	code := m.Run()
	stop()
	os.Exit(code)
}

var tableSeq atomic.Int64

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB {
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("ac%d-%d-", time.Now().UnixNano()%1e9, tableSeq.Add(1))
	db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: endpoint, TablePrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() { db.DropTables(context.Background()) })
	return db
}

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

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errCode fails the test unless err carries code.
func errCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := algoitny.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// as returns a context signed in as userID (staff if asked).
func as(userID string, staff bool) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: userID, IsStaff: staff}})
}
