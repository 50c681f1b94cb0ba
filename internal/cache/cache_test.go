package cache_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/cache"
)

// watched returns a cache on a live member feed of its own, the node of
// that feed and a clock of the TTL the test moves.
func watched(t *testing.T, cfg cache.Config[string]) (*cache.Cache[string], *node, *time.Time) {
	t.Helper()
	now := time.Unix(1_700_000_000, 0)
	cfg.Now = func() time.Time { return now }
	if cfg.TTL == 0 {
		cfg.TTL = time.Minute
	}
	n := newHub().node(t)
	f := cache.NewFeed(cache.FeedConfig{Broker: n, Member: true, Bound: testBound, WriteWindow: testWindow,
		Logger: slog.New(slog.DiscardHandler)})
	cfg.Feed = f
	c := cache.New[string](cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	(&process{node: n, feed: f, cache: c}).live(t)
	return c, n, &now
}

func TestOffWithoutFeed(t *testing.T) {
	t.Parallel()
	c := cache.New[string](cache.Config[string]{TTL: time.Minute})
	c.Put("k", "v", c.Begin())
	if _, ok := c.Get("k"); ok {
		t.Fatal("a cache without a feed served an entry")
	}
	var nilCache *cache.Cache[string]
	nilCache.Put("k", "v", nilCache.Begin())
	nilCache.Forget("k")
	if _, ok := nilCache.Get("k"); ok {
		t.Fatal("a nil cache hit")
	}
}

func TestEpochAndTTL(t *testing.T) {
	t.Parallel()
	c, n, now := watched(t, cache.Config[string]{TTL: time.Minute})
	c.Put("k", "v", c.Begin())
	*now = now.Add(time.Minute - time.Nanosecond)
	if !hit(c, "k", "v") {
		t.Fatal("miss within the TTL")
	}
	*now = now.Add(time.Nanosecond)
	if hit(c, "k", "v") {
		t.Fatal("hit after the TTL")
	}
	c.Put("k", "v", c.Begin())
	n.cut()
	if hit(c, "k", "v") {
		t.Fatal("hit while the broker may be losing events")
	}
	c.Put("k0", "v", c.Begin())
	n.reconnect(2)
	if hit(c, "k", "v") || hit(c, "k0", "v") {
		t.Fatal("hit after a gap in delivery (a new epoch), or a read made during the gap was kept")
	}
	// The feed starts listening again, warms up, and the cache is back.
	algoitnytest.Eventually(t, waitLimit, "the cache to be back", func() bool { c.Put("k", "v2", c.Begin()); return hit(c, "k", "v2") })
}

func TestReadRacingAChangeIsNotStored(t *testing.T) {
	t.Parallel()
	c, _, _ := watched(t, cache.Config[string]{})
	ticket := c.Begin() // reads start
	c.Forget("k")       // k changes meanwhile
	c.Put("k", "stale?", ticket)
	if _, ok := c.Get("k"); ok {
		t.Fatal("a read that raced with a change of its key was stored")
	}
	c.Put("other", "v", ticket)
	if !hit(c, "other", "v") {
		t.Fatal("a change of another key spoiled a read")
	}
	ticket = c.Begin()
	c.ForgetFunc(func(string, string) bool { return false }) // a change of any key
	c.Put("k", "v", ticket)
	if _, ok := c.Get("k"); ok {
		t.Fatal("a read that raced with ForgetFunc was stored")
	}
	// Past maxForgotten keys, any change counts for every key.
	ticket = c.Begin()
	for i := range 5000 {
		c.Forget("f" + strconv.Itoa(i))
	}
	c.Put("k", "v", ticket)
	if _, ok := c.Get("k"); ok {
		t.Fatal("a read that raced with forgetting many keys was stored")
	}
	c.Put("k", "v", c.Begin())
	if !hit(c, "k", "v") {
		t.Fatal("a fresh read was not stored")
	}
}

func TestForget(t *testing.T) {
	t.Parallel()
	c, _, _ := watched(t, cache.Config[string]{})
	for i, owner := range []string{"u1", "u1", "u2"} {
		c.Put("s"+strconv.Itoa(i), owner, c.Begin())
	}
	c.ForgetFunc(func(_, owner string) bool { return owner == "u1" })
	if hit(c, "s0", "u1") || hit(c, "s1", "u1") || !hit(c, "s2", "u2") {
		t.Fatal("ForgetFunc must drop both of u1's entries and keep u2's")
	}
	c.Forget("s2")
	if hit(c, "s2", "u2") {
		t.Fatal("hit after Forget")
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	t.Run("Entries", func(t *testing.T) {
		c, _, _ := watched(t, cache.Config[string]{MaxEntries: 100})
		for i := range 110 {
			c.Put(strconv.Itoa(i), "v", c.Begin())
		}
		n := 0
		for i := range 110 {
			if hit(c, strconv.Itoa(i), "v") {
				n++
			}
		}
		if n != 100 || !hit(c, "109", "v") {
			t.Fatalf("%d entries kept (want the bound, 100, including the newest)", n)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		c, _, _ := watched(t, cache.Config[string]{MaxBytes: 100, Size: func(v string) int { return len(v) }})
		big := string(make([]byte, 101))
		c.Put("big", big, c.Begin())
		if _, ok := c.Get("big"); ok {
			t.Fatal("a value larger than MaxBytes was stored")
		}
		for i := range 10 {
			c.Put(strconv.Itoa(i), string(make([]byte, 30)), c.Begin())
		}
		n := 0
		for i := range 10 {
			if _, ok := c.Get(strconv.Itoa(i)); ok {
				n++
			}
		}
		if n != 3 {
			t.Fatalf("%d values of 30 bytes kept under a 100-byte bound, want 3", n)
		}
	})
}

// blockingRead is a read of Load that counts its calls, tells started of
// each and returns value once release is closed.
type blockingRead struct {
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
	value   string
}

func newBlockingRead(value string) *blockingRead {
	return &blockingRead{started: make(chan struct{}, 100), release: make(chan struct{}), value: value}
}

func (r *blockingRead) read(ctx context.Context) (string, error) {
	r.calls.Add(1)
	r.started <- struct{}{}
	select {
	case <-r.release:
		return r.value, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

type loaded struct {
	v   string
	err error
}

func load(ctx context.Context, c *cache.Cache[string], k string, read func(context.Context) (string, error)) <-chan loaded {
	out := make(chan loaded, 1)
	go func() {
		v, err := c.Load(ctx, k, nil, read)
		out <- loaded{v, err}
	}()
	return out
}

func TestLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("MissesShareOneRead", func(t *testing.T) {
		t.Parallel()
		c, _, _ := watched(t, cache.Config[string]{})
		r := newBlockingRead("v1")
		first := load(ctx, c, "k", r.read)
		<-r.started
		var others []<-chan loaded
		for range 10 {
			others = append(others, load(ctx, c, "k", r.read))
		}
		// Time for the others to wait (or to read, if they did not share):
		// a caller waiting on a shared read cannot be observed from outside.
		time.Sleep(20 * time.Millisecond)
		if n := r.calls.Load(); n != 1 {
			t.Fatalf("11 callers missing one key made %d reads, want 1", n)
		}
		close(r.release)
		for _, ch := range append(others, first) {
			if got := <-ch; got.err != nil || got.v != "v1" {
				t.Fatalf("Load = %q, %v; want the shared read's v1", got.v, got.err)
			}
		}
		if !hit(c, "k", "v1") {
			t.Fatal("the shared read was not stored")
		}
	})
	t.Run("NotSharedAcrossAChange", func(t *testing.T) {
		t.Parallel()
		c, _, _ := watched(t, cache.Config[string]{})
		before := newBlockingRead("before")
		first := load(ctx, c, "k", before.read)
		<-before.started
		c.Forget("k") // k changes while the first read is in flight
		after := newBlockingRead("after")
		second := load(ctx, c, "k", after.read)
		select {
		case <-after.started:
		case <-time.After(10 * time.Second):
			t.Fatal("a caller after the change waited for a read that began before it")
		}
		// A newcomer now shares the read that began after the change.
		third := load(ctx, c, "k", before.read)
		close(after.release)
		if got := <-second; got.v != "after" {
			t.Fatalf("the read after the change gave %q", got.v)
		}
		if got := <-third; got.v != "after" {
			t.Fatalf("a newcomer got %q, want the read that began after the change", got.v)
		}
		close(before.release)
		if got := <-first; got.v != "before" || got.err != nil {
			t.Fatalf("the first caller got %q, %v", got.v, got.err)
		}
		if !hit(c, "k", "after") {
			t.Fatal("the read that raced with the change was stored, or the later one was not")
		}
		if n := before.calls.Load(); n != 1 {
			t.Fatalf("the read from before the change ran %d times", n)
		}
	})
	t.Run("CallersMayLeave", func(t *testing.T) {
		t.Parallel()
		c, _, _ := watched(t, cache.Config[string]{})
		r := newBlockingRead("v")
		lctx, leave := context.WithCancel(ctx)
		starter := load(lctx, c, "k", r.read)
		<-r.started
		waiter := load(ctx, c, "k", r.read)
		// Time for the waiter to join the read (not observable from outside).
		time.Sleep(20 * time.Millisecond)
		leave()
		if got := <-starter; !errors.Is(got.err, context.Canceled) {
			t.Fatalf("the caller that left got %q, %v; want its context's error", got.v, got.err)
		}
		close(r.release)
		if got := <-waiter; got.err != nil || got.v != "v" {
			t.Fatalf("the caller still waiting got %q, %v: the read must outlive the caller that started it", got.v, got.err)
		}
	})
	t.Run("FailuresAreSharedNotStored", func(t *testing.T) {
		t.Parallel()
		c, _, _ := watched(t, cache.Config[string]{})
		boom := errors.New("boom")
		started, release := make(chan struct{}, 10), make(chan struct{})
		var calls atomic.Int32
		failing := func(context.Context) (string, error) {
			calls.Add(1)
			started <- struct{}{}
			<-release
			return "", boom
		}
		first := load(ctx, c, "k", failing)
		<-started
		second := load(ctx, c, "k", failing)
		// Time for the second caller to join the read (not observable from outside).
		time.Sleep(20 * time.Millisecond)
		close(release)
		for _, ch := range []<-chan loaded{first, second} {
			if got := <-ch; !errors.Is(got.err, boom) {
				t.Fatalf("Load = %q, %v; want the shared read's error", got.v, got.err)
			}
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("two callers sharing a failing read made %d reads", n)
		}
		_, err := c.Load(ctx, "p", nil, func(context.Context) (string, error) { panic("read panicked") })
		if err == nil {
			t.Fatal("a read that panicked returned no error")
		}
		if _, ok := c.Get("k"); ok {
			t.Fatal("a failed read was stored")
		}
		if v, err := c.Load(ctx, "k", nil, func(context.Context) (string, error) { return "v", nil }); err != nil || v != "v" || !hit(c, "k", "v") {
			t.Fatalf("after a failure Load = %q, %v; want a new read, stored", v, err)
		}
	})
	t.Run("CachedEntryIsNotReadAgain", func(t *testing.T) {
		t.Parallel()
		c, _, _ := watched(t, cache.Config[string]{})
		c.Put("k", "partial", c.Begin())
		reads := 0
		read := func(context.Context) (string, error) { reads++; return "whole", nil }
		if v, err := c.Load(ctx, "k", nil, read); v != "partial" || err != nil || reads != 0 {
			t.Fatalf("Load of a cached key = %q, %v after %d reads; want the entry, no read", v, err, reads)
		}
		whole := func(v string) bool { return v == "whole" }
		if v, err := c.Load(ctx, "k", whole, read); v != "whole" || err != nil || reads != 1 || !hit(c, "k", "whole") {
			t.Fatalf("Load of an entry want refuses = %q, %v after %d reads; want a read, stored", v, err, reads)
		}
	})
	t.Run("Off", func(t *testing.T) {
		t.Parallel()
		c := cache.New[string](cache.Config[string]{TTL: time.Minute})
		read := false
		if _, err := c.Load(ctx, "k", nil, func(context.Context) (string, error) { read = true; return "v", nil }); !errors.Is(err, cache.ErrOff) || read {
			t.Fatalf("Load on a cache that is off = %v (read: %t); want ErrOff without reading", err, read)
		}
	})
}
