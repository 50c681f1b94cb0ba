package pubsub_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var databaseURL string

// TestMain finds PostgreSQL once for the package (DATABASE_URL, the local
// server's algoitny_test database or a private cluster). Each test then
// works in a schema and on a notification channel of its own.
func TestMain(m *testing.M) {
	url, stop, err := devstack.PostgresForTests(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pubsub tests need PostgreSQL:", devstack.Describe(err))
		os.Exit(1)
	}
	databaseURL = url
	code := m.Run()
	stop()
	os.Exit(code)
}

var nameSeq atomic.Int64

// uniqueName returns a lower-case identifier no other test, nor another
// test process on the same server, uses: the test's schema and channel.
func uniqueName() string {
	return fmt.Sprintf("pubsub_t%d_%d_%04x", os.Getpid(), nameSeq.Add(1), rand.Uint32N(1<<16))
}

// newSchema creates a schema of the test's own with the payload table in it,
// dropped when the test ends. Its name doubles as the channel name.
func newSchema(tb testing.TB) string {
	tb.Helper()
	name := createSchema(tb)
	if err := pubsub.Migrate(context.Background(), newPool(tb, name)); err != nil {
		tb.Fatal(err)
	}
	return name
}

// createSchema creates an empty schema, dropped when the test ends.
func createSchema(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	name := uniqueName()
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, databaseURL)
		if err != nil {
			tb.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			tb.Error(err)
		}
	})
	return name
}

// newPool opens a small pool whose search path is schema, closed when the
// test ends. Each pool stands for one process.
func newPool(tb testing.TB, schema string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = 3 // many tests share one server's max_connections
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// newPostgres starts a Postgres broker on pool, closed when the test ends.
func newPostgres(tb testing.TB, cfg pubsub.PostgresConfig) *pubsub.Postgres {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(tb.Output(), nil))
	}
	b, err := pubsub.NewPostgres(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Close) // runs before the pool's Close, registered earlier
	return b
}

// pgProcesses are two Postgres brokers on one channel, each with its own
// pool: two processes of AlgoItny.
type pgProcesses struct {
	A, B    *pubsub.Postgres
	PoolA   *pgxpool.Pool
	Channel string // also the schema
}

// newPgProcesses starts two brokers on a fresh schema and channel; cfg's
// Pool and Channel are filled in.
func newPgProcesses(tb testing.TB, cfg pubsub.PostgresConfig) pgProcesses {
	tb.Helper()
	name := newSchema(tb)
	cfg.Channel = name
	p := pgProcesses{Channel: name, PoolA: newPool(tb, name)}
	cfg.Pool = p.PoolA
	p.A = newPostgres(tb, cfg)
	cfg.Pool = newPool(tb, name)
	p.B = newPostgres(tb, cfg)
	return p
}

// subscribe subscribes or fails the test; the subscription is closed when
// the test ends.
func subscribe(tb testing.TB, ctx context.Context, b pubsub.Broker, topic string) *pubsub.Subscription {
	tb.Helper()
	s, err := b.Subscribe(ctx, topic)
	if err != nil {
		tb.Fatalf("subscribe %q: %v", topic, err)
	}
	tb.Cleanup(s.Close)
	return s
}

// publish publishes or fails the test.
func publish(tb testing.TB, b pubsub.Broker, topic string, payload []byte) {
	tb.Helper()
	if err := b.Publish(context.Background(), topic, payload); err != nil {
		tb.Fatalf("publish %q: %v", topic, err)
	}
}

// waitTimeout bounds every wait for an event: generous for slow CI machines,
// and only ever used up by a failing test.
const waitTimeout = 15 * time.Second

// receive returns the next event of s, failing the test if the subscription
// ends or nothing arrives in time.
func receive(tb testing.TB, s *pubsub.Subscription) pubsub.Event {
	tb.Helper()
	select {
	case e, ok := <-s.Events():
		if !ok {
			tb.Fatalf("subscription ended: %v", s.Err())
		}
		return e
	case <-time.After(waitTimeout):
		tb.Fatal("no event in time")
	}
	panic("unreachable")
}

// requireEnded drains s until its channel is closed and checks that Err is
// want (errors.Is; nil for nil). It returns the events drained.
func requireEnded(tb testing.TB, s *pubsub.Subscription, want error) []pubsub.Event {
	tb.Helper()
	var drained []pubsub.Event
	deadline := time.After(waitTimeout)
	for {
		select {
		case e, ok := <-s.Events():
			if ok {
				drained = append(drained, e)
				continue
			}
			if err := s.Err(); !errors.Is(err, want) || (want == nil && err != nil) {
				tb.Fatalf("Err() = %v, want %v", err, want)
			}
			return drained
		case <-deadline:
			tb.Fatal("the subscription did not end")
		}
	}
}

// settledGoroutines waits until the number of goroutines is at most want
// (goroutines that just ended need a moment to leave the count) and returns
// the last count seen.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	algoitnytest.Poll(context.Background(), 5*time.Second, func() bool { n = runtime.NumGoroutine(); return n <= want })
	return n
}

// baselineGoroutines returns the goroutine count once it stopped falling.
func baselineGoroutines() int {
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(10 * time.Millisecond) // a quiet stretch is what is measured
		m := runtime.NumGoroutine()
		if m >= n {
			return min(n, m)
		}
		n = m
	}
	return n
}

// goroutineDump is printed when a leak test fails.
func goroutineDump() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
