// Package dynamotest gives a test package DynamoDB Local, started once in
// TestMain, and each test freshly migrated tables of its own (a unique table
// prefix), so that tests run in parallel without seeing each other's items.
package dynamotest

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

var (
	endpoint string
	seq      atomic.Int64
)

// Main runs a package's tests against DynamoDB Local — the one `make test`
// started (DYNAMODB_ENDPOINT), or a fresh in-memory one stopped afterwards —
// and exits with their result. Call it from TestMain.
func Main(m *testing.M) {
	stop, err := Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "these tests need DynamoDB Local:", devstack.Describe(err))
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// Start is Main's first half, for a TestMain that needs more than
// DynamoDB Local (PostgreSQL as well): it finds or starts DynamoDB Local
// for NewDB and returns what stops it, to call after m.Run. Its error is
// devstack's (devstack.Describe explains it).
func Start(ctx context.Context) (stop func(), err error) {
	ep, stop, err := devstack.DynamoForTests(ctx)
	if err != nil {
		return nil, err
	}
	endpoint = ep
	return stop, nil
}

// Endpoint is the address Main started (for tests that open their own clients).
func Endpoint() string { return endpoint }

// Prefix returns a table prefix no other test of the run uses.
func Prefix() string {
	return fmt.Sprintf("t%d-%d-", time.Now().UnixNano()%1e9, seq.Add(1))
}

// NewDB returns a DB on freshly migrated tables of the test's own, dropped
// when the test ends.
func NewDB(t testing.TB) *dynamo.DB {
	t.Helper()
	ctx := context.Background()
	db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: endpoint, TablePrefix: Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	t.Cleanup(func() { _ = db.DropTables(context.Background()) })
	return db
}
