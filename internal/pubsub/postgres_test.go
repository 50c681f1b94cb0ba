package pubsub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestPostgres(t *testing.T) {
	t.Parallel()
	testBroker(t, postgresBrokers)

	t.Run("SameProcess", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{})
		s := subscribe(t, context.Background(), p.A, "job:1")
		publish(t, p.A, "job:1", []byte("1"))
		publish(t, p.A, "job:1", []byte("2"))
		// Exactly once each: through the listener, not also directly.
		if e := receive(t, s); string(e.Payload) != "1" {
			t.Fatalf("got %q", e.Payload)
		}
		if e := receive(t, s); string(e.Payload) != "2" {
			t.Fatalf("got %q", e.Payload)
		}
	})

	// Received stamps each kind of topic when its notification arrives,
	// on every process, whether anyone here subscribes or not.
	t.Run("Received", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{})
		s := subscribe(t, context.Background(), p.A, "job:1")
		before := time.Now()
		publish(t, p.A, "job:1", []byte("1"))
		receive(t, s)
		if at := p.A.Received()["job"]; at.Before(before) {
			t.Fatalf("A: job received at %v, published after %v", at, before)
		}
		s2 := subscribe(t, context.Background(), p.B, "exec:1")
		publish(t, p.A, "exec:1", []byte("2"))
		receive(t, s2) // B has both by now: one listener, in order
		got := p.B.Received()
		if got["job"].Before(before) || got["exec"].Before(got["job"]) {
			t.Fatalf("B: %v", got)
		}
	})

	// PublishAll: the events of a batch arrive on another process in order,
	// across topics, one statement for those that fit a notification, one
	// publication each when one does not.
	t.Run("PublishAll", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{BufferSize: 100})
		jobs, execs := subscribe(t, context.Background(), p.B, "job:1"), subscribe(t, context.Background(), p.B, "exec:1")
		big := []byte(strings.Repeat("x", 20_000))
		for _, batch := range [][]pubsub.Message{
			{{Topic: "exec:1", Payload: []byte("e1")}, {Topic: "job:1", Payload: []byte("j1")}, {Topic: "exec:1", Payload: []byte("e2")}},
			{{Topic: "exec:1", Payload: []byte("e3")}, {Topic: "job:1", Payload: big}, {Topic: "exec:1", Payload: []byte("e4")}},
		} {
			if err := p.A.PublishAll(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{"e1", "e2", "e3", "e4"} {
			if e := receive(t, execs); string(e.Payload) != want {
				t.Fatalf("exec:1 got %q, want %q", e.Payload, want)
			}
		}
		if e := receive(t, jobs); string(e.Payload) != "j1" {
			t.Fatalf("job:1 got %q", e.Payload)
		}
		if e := receive(t, jobs); !bytes.Equal(e.Payload, big) {
			t.Fatalf("job:1's large payload arrived as %d bytes", len(e.Payload))
		}
		// Across topics, the listener's order is the batch's: the job event
		// of a batch is received after the tests published before it.
		before := time.Now()
		if err := p.A.PublishAll(context.Background(), []pubsub.Message{{Topic: "exec:1", Payload: []byte("e5")}, {Topic: "job:1", Payload: []byte("j2")}}); err != nil {
			t.Fatal(err)
		}
		receive(t, jobs)
		if got := p.B.Received(); got["exec"].Before(before) || got["job"].Before(got["exec"]) {
			t.Fatalf("received %v: the job's event before the tests'", got)
		}
		if err := p.A.PublishAll(context.Background(), []pubsub.Message{{Topic: "", Payload: []byte("x")}}); !algoitny.IsCode(err, algoitny.EINVALID) {
			t.Fatalf("a bad topic: %v", err)
		}
	})

	t.Run("NotifySizeBoundary", func(t *testing.T) {
		t.Parallel()
		// Sizes on both sides of the 8000-byte NOTIFY limit, for text (sent
		// as is; "é" is two bytes) and binary (sent as base64) payloads.
		p := newPgProcesses(t, pubsub.PostgresConfig{BufferSize: 200}) // all are read at the end
		s := subscribe(t, context.Background(), p.B, "job:1")
		var payloads [][]byte
		for n := 7930; n <= 8010; n++ {
			payloads = append(payloads, []byte(strings.Repeat("é", n/2)+strings.Repeat("a", n%2)))
		}
		for n := 5930; n <= 6010; n++ {
			b := make([]byte, n)
			rand.Read(b)
			b[0] = 0xff // never valid UTF-8
			payloads = append(payloads, b)
		}
		for _, payload := range payloads {
			publish(t, p.A, "job:1", payload)
		}
		for i, want := range payloads {
			if e := receive(t, s); !bytes.Equal(e.Payload, want) {
				t.Fatalf("payload %d (%d bytes) arrived as %d bytes", i, len(want), len(e.Payload))
			}
		}
		var stored int
		if err := p.PoolA.QueryRow(context.Background(), "SELECT count(*) FROM algoitny_pubsub_payloads").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored == 0 || stored == len(payloads) {
			t.Fatalf("%d of %d payloads went through the table: the boundary was not crossed", stored, len(payloads))
		}
	})

	t.Run("StoredPayloadsPruned", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{PayloadTTL: 100 * time.Millisecond})
		s := subscribe(t, context.Background(), p.B, "hint:1")
		for _, fill := range []string{"a", "b"} {
			big := []byte(strings.Repeat(fill, 20_000))
			publish(t, p.A, "hint:1", big)
			if e := receive(t, s); !bytes.Equal(e.Payload, big) {
				t.Fatal("the large payload did not arrive intact")
			}
			time.Sleep(300 * time.Millisecond) // the scenario: the payload's TTL passes
		}
		var rows int
		if err := p.PoolA.QueryRow(context.Background(), "SELECT count(*) FROM algoitny_pubsub_payloads").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Fatalf("%d stored payloads, want 1: the expired one should be pruned", rows)
		}
	})

	t.Run("ReconnectAfterTerminate", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{ReconnectMin: 10 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
		s := subscribe(t, context.Background(), p.B, "job:1")
		publish(t, p.A, "job:1", []byte("before"))
		if e := receive(t, s); string(e.Payload) != "before" {
			t.Fatalf("got %q", e.Payload)
		}
		before := p.B.Epoch()
		if before == 0 {
			t.Fatal("Epoch is 0 while the listener is connected")
		}
		old := terminateListeners(t, p.Channel)
		if len(old) != 2 {
			t.Fatalf("terminated %d listener connections, want 2 (one per process)", len(old))
		}
		waitForListener(t, p.A, s, "job:1")
		for i := range 10 {
			publish(t, p.A, "job:1", fmt.Appendf(nil, "after %d", i))
		}
		for i := 0; i < 10; {
			e := receive(t, s)
			if string(e.Payload) == "probe" {
				continue
			}
			if want := fmt.Sprintf("after %d", i); string(e.Payload) != want {
				t.Fatalf("got %q, want %q", e.Payload, want)
			}
			i++
		}
		// Events published in the gap were lost: the epoch says so.
		if after := p.B.Epoch(); after == 0 || after == before {
			t.Fatalf("Epoch %d after reconnecting, %d before: want a new non-zero epoch", after, before)
		}
		now := listenerPIDs(t, p.Channel)
		if len(now) != 2 || slices.ContainsFunc(now, func(pid int32) bool { return slices.Contains(old, pid) }) {
			t.Fatalf("listener backends %v after terminating %v, want two new ones", now, old)
		}
	})

	t.Run("LargePayloadAfterReconnect", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{ReconnectMin: 10 * time.Millisecond})
		s := subscribe(t, context.Background(), p.B, "hint:1")
		terminateListeners(t, p.Channel)
		waitForListener(t, p.A, s, "hint:1")
		big := bytes.Repeat([]byte("z"), 50_000)
		publish(t, p.A, "hint:1", big)
		for {
			if e := receive(t, s); string(e.Payload) != "probe" {
				if !bytes.Equal(e.Payload, big) {
					t.Fatalf("got %d bytes", len(e.Payload))
				}
				return
			}
		}
	})

	t.Run("HealthChecksBetweenEvents", func(t *testing.T) {
		t.Parallel()
		// A wait for notifications that times out (every millisecond here)
		// pings the connection and resumes waiting on it: nothing is lost
		// or garbled, and the connection is kept.
		p := newPgProcesses(t, pubsub.PostgresConfig{HealthCheckInterval: time.Millisecond, BufferSize: 100})
		before := listenerPIDs(t, p.Channel)
		s := subscribe(t, context.Background(), p.B, "job:1")
		for i := range 100 {
			publish(t, p.A, "job:1", fmt.Appendf(nil, "%d %s", i, strings.Repeat("x", i*50)))
			if i%10 == 0 {
				time.Sleep(5 * time.Millisecond) // the scenario: health checks time out between events
			}
		}
		for i := range 100 {
			if e := receive(t, s); string(e.Payload) != fmt.Sprintf("%d %s", i, strings.Repeat("x", i*50)) {
				t.Fatalf("event %d: got %.20q…", i, e.Payload)
			}
		}
		if after := listenerPIDs(t, p.Channel); !slices.Equal(before, after) {
			t.Fatalf("listener backends %v became %v: a health check replaced a good connection", before, after)
		}
	})

	t.Run("MalformedNotificationIgnored", func(t *testing.T) {
		t.Parallel()
		p := newPgProcesses(t, pubsub.PostgresConfig{})
		s := subscribe(t, context.Background(), p.B, "job:1")
		for _, msg := range []string{"not json", `{"t":""}`, `{"t":"job:1","b":"!!"}`} {
			if _, err := p.PoolA.Exec(context.Background(), "SELECT pg_notify($1, $2)", p.Channel, msg); err != nil {
				t.Fatal(err)
			}
		}
		publish(t, p.A, "job:1", []byte("ok"))
		if e := receive(t, s); string(e.Payload) != "ok" {
			t.Fatalf("got %q", e.Payload)
		}
	})

	t.Run("UnloadablePayloadStartsANewEpoch", func(t *testing.T) {
		t.Parallel()
		// A notification of a stored payload that cannot be loaded is an
		// event lost: the epoch changes, so whoever trusts it knows (the
		// caches' change feed); the connection and other topics' events go
		// on.
		p := newPgProcesses(t, pubsub.PostgresConfig{ReconnectMin: 10 * time.Millisecond, ReconnectMax: 200 * time.Millisecond})
		subscribe(t, context.Background(), p.B, "job:1") // someone waits for it: its payload is loaded
		other := subscribe(t, context.Background(), p.B, "job:2")
		listeners := listenerPIDs(t, p.Channel)
		before := p.B.Epoch()
		if _, err := p.PoolA.Exec(context.Background(), "SELECT pg_notify($1, $2)", p.Channel, `{"t":"job:1","id":999999999}`); err != nil {
			t.Fatal(err)
		}
		algoitnytest.Eventually(t, 10*time.Second, "the epoch to change after an event was lost", func() bool { return p.B.Epoch() != before })
		if after := p.B.Epoch(); after == 0 || after == before {
			t.Fatalf("epoch %d after the loss, %d before", after, before)
		}
		publish(t, p.A, "job:2", []byte("after"))
		if e := receive(t, other); string(e.Payload) != "after" {
			t.Fatalf("another topic got %q after the loss", e.Payload)
		}
		if now := listenerPIDs(t, p.Channel); !slices.Equal(now, listeners) {
			t.Fatalf("listeners %v became %v: the loss dropped the connection", listeners, now)
		}
	})

	t.Run("ErrNewPostgres", func(t *testing.T) {
		t.Parallel()
		unreachable, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(unreachable.Close)
		pool := newPool(t, "public")
		for name, tc := range map[string]struct {
			cfg  pubsub.PostgresConfig
			code string
		}{
			"NoPool":         {pubsub.PostgresConfig{}, algoitny.EINVALID},
			"ChannelTooLong": {pubsub.PostgresConfig{Pool: pool, Channel: strings.Repeat("c", 64)}, algoitny.EINVALID},
			"ChannelQuoted":  {pubsub.PostgresConfig{Pool: pool, Channel: `a"; DROP TABLE x; --`}, algoitny.EINVALID},
			"ChannelDigit":   {pubsub.PostgresConfig{Pool: pool, Channel: "1events"}, algoitny.EINVALID},
			"Unreachable":    {pubsub.PostgresConfig{Pool: unreachable}, algoitny.EINTERNAL},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b, err := pubsub.NewPostgres(context.Background(), tc.cfg)
				if err == nil {
					b.Close()
				}
				algoitnytest.ErrCode(t, err, tc.code)
			})
		}
	})

	t.Run("ErrPublishWithoutTable", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t, createSchema(t)) // not migrated
		b := newPostgres(t, pubsub.PostgresConfig{Pool: pool, Channel: uniqueName()})
		algoitnytest.ErrCode(t, b.Publish(context.Background(), "job:1", make([]byte, 10_000)), algoitny.EINTERNAL)
		publish(t, b, "job:1", []byte("small events need no table"))
	})

	t.Run("MigrateConcurrently", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t, createSchema(t))
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = pubsub.Migrate(context.Background(), pool) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := pubsub.Migrate(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPostgresCloseLeavesNoGoroutines is not parallel: it counts every
// goroutine of the process, which only means something while no other test
// runs.
func TestPostgresCloseLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	name := newSchema(t)
	poolA, poolB := newPool(t, name), newPool(t, name)
	for _, pool := range []*pgxpool.Pool{poolA, poolB} {
		if err := pool.Ping(ctx); err != nil { // its goroutines belong to the baseline
			t.Fatal(err)
		}
	}
	base := baselineGoroutines()

	cfg := pubsub.PostgresConfig{Pool: poolA, Channel: name, ReconnectMin: 10 * time.Millisecond}
	a := newPostgres(t, cfg)
	cfg.Pool = poolB
	b := newPostgres(t, cfg)
	cfg.Channel = uniqueName()
	c := newPostgres(t, cfg) // closed while it reconnects

	s := subscribe(t, ctx, b, "job:1")
	open := subscribe(t, ctx, b, "job:2") // left to Close
	publish(t, a, "job:1", []byte("small"))
	publish(t, a, "job:1", bytes.Repeat([]byte("L"), 20_000))
	receive(t, s)
	receive(t, s)
	terminateListeners(t, name)
	waitForListener(t, a, s, "job:1")
	terminateListeners(t, cfg.Channel)

	a.Close()
	b.Close()
	c.Close()
	requireEnded(t, open, pubsub.ErrClosed)
	requireEnded(t, s, pubsub.ErrClosed)
	for _, p := range []*pubsub.Postgres{a, b, c} {
		if e := p.Epoch(); e != 0 {
			t.Fatalf("Epoch %d after Close, want 0", e)
		}
	}
	if n := settledGoroutines(base); n > base {
		t.Fatalf("%d goroutines after Close, %d before\n%s", n, base, goroutineDump())
	}
}

// listenerPIDs returns the backends of the listener connections on channel.
func listenerPIDs(tb testing.TB, channel string) []int32 {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid",
		pubsub.ListenerApplicationName(channel))
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		tb.Fatal(err)
	}
	return pids
}

// terminateListeners kills the listener connections on channel, as a server
// restart or a network failure would, and returns their backend pids.
func terminateListeners(tb testing.TB, channel string) []int32 {
	tb.Helper()
	pids := listenerPIDs(tb, channel)
	conn, err := pgx.Connect(context.Background(), databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, pid := range pids {
		var ok bool
		// The timeout makes it wait until the backend is gone.
		if err := conn.QueryRow(context.Background(), "SELECT pg_terminate_backend($1, 5000)", pid).Scan(&ok); err != nil || !ok {
			tb.Fatalf("terminate %d: %v %v", pid, ok, err)
		}
	}
	return pids
}

// waitForListener publishes "probe" on topic until s receives one: events
// published while a listener reconnects are lost, so only then is it back.
func waitForListener(tb testing.TB, pub pubsub.Broker, s *pubsub.Subscription, topic string) {
	tb.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		publish(tb, pub, topic, []byte("probe"))
		select {
		case e, ok := <-s.Events():
			if !ok {
				tb.Fatalf("the subscription ended: %v", s.Err())
			}
			if string(e.Payload) != "probe" {
				tb.Fatalf("unexpected event %q", e.Payload)
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	tb.Fatal("the listener did not come back")
}
