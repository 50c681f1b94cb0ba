package dynamo_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
)

var endpoint string

// TestMain starts DynamoDB Local once for the package (or uses the one
// `make test` started, via DYNAMODB_ENDPOINT). Each test gets its own tables.
func TestMain(m *testing.M) {
	ep, stop, err := devstack.DynamoForTests(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "dynamo tests need DynamoDB Local:", devstack.Describe(err))
		os.Exit(1)
	}
	endpoint = ep
	code := m.Run()
	stop()
	os.Exit(code)
}

var tableSeq atomic.Int64

// newDB returns a DB on freshly migrated tables with a prefix of the test's
// own, dropped when the test ends.
func newDB(t testing.TB) *dynamo.DB {
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("t%d-%d-", time.Now().UnixNano()%1e9, tableSeq.Add(1))
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
	if got := codeOf(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}
