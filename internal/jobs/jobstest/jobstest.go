// Package jobstest gives the test packages whose River jobs run on
// PostgreSQL (jobs, watch, atcoder) what their TestMain repeats:
// DynamoDB Local through dynamotest (each test its own tables), a
// PostgreSQL pool, and a migrated River schema per test.
package jobstest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Main starts DynamoDB Local and PostgreSQL (devstack's, as `make test`
// or the local server provides them), stores the pool in *pool, runs the
// package's tests and exits with their result. Call it from TestMain.
func Main(m *testing.M, pool **pgxpool.Pool) {
	ctx := context.Background()
	stopDynamo, err := dynamotest.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "these tests need DynamoDB Local:", devstack.Describe(err))
		os.Exit(1)
	}
	url, stopPG, err := devstack.PostgresForTests(ctx)
	if err != nil {
		stopDynamo()
		fmt.Fprintln(os.Stderr, "these tests need PostgreSQL:", devstack.Describe(err))
		os.Exit(1)
	}
	p, err := pgxpool.New(ctx, url)
	if err != nil {
		stopPG()
		stopDynamo()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*pool = p
	code := m.Run()
	p.Close()
	stopPG()
	stopDynamo()
	os.Exit(code)
}

var seq atomic.Int64

// Schema returns a River schema, migrated in pool, that no other test of
// the run uses: name followed by a number.
func Schema(t testing.TB, pool *pgxpool.Pool, name string) string {
	t.Helper()
	id := fmt.Sprintf("%s%d_%d", name, time.Now().UnixNano()%1e9, seq.Add(1))
	if _, err := jobs.Migrate(context.Background(), pool, id); err != nil {
		t.Fatal(err)
	}
	return id
}
