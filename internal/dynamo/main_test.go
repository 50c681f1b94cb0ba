package dynamo_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/algoitny/api/internal/cache"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB { return dynamotest.NewDB(t) }

// Timings of the feeds in tests: short, so that caches warm up fast.
const (
	testBound  = 500 * time.Millisecond
	testWindow = 5 * time.Second // the default: a shorter one leaves writes too little time on a loaded machine
)

// runFeed gives db a feed on broker (a member's, which caches, or a
// writer's) and runs it until the test ends.
func runFeed(t testing.TB, db *dynamo.DB, broker cache.Broker, member bool) *cache.Feed {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	f := cache.NewFeed(cache.FeedConfig{Broker: broker, Member: member, Bound: testBound, WriteWindow: testWindow, Logger: log})
	db.SetFeed(f, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}
