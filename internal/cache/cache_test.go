package cache_test

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/cache"
	"github.com/algoitny/api/internal/pubsub"
)

// broker is an in-process broker whose epoch the test moves, standing for a
// PostgreSQL listener that reconnected (or is down: 0).
type broker struct {
	*pubsub.Memory
	epoch atomic.Uint64
}

func (b *broker) Epoch() uint64 { return b.epoch.Load() }

func newBroker(t *testing.T) *broker {
	b := &broker{Memory: pubsub.NewMemory(pubsub.MemoryConfig{})}
	b.epoch.Store(1)
	t.Cleanup(b.Close)
	return b
}

const topic = "test:changed"

// watched returns a cache that Watch keeps live (forgetting the keys
// published on topic) until the test ends, and a clock the test moves.
func watched(t *testing.T, b *broker, cfg cache.Config[string]) (*cache.Cache[string, string], *time.Time) {
	now := time.Unix(1_700_000_000, 0)
	cfg.Now = func() time.Time { return now }
	if cfg.TTL == 0 {
		cfg.TTL = time.Minute
	}
	c := cache.New[string, string](cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Watch(ctx, b, topic, func(k []byte) { c.Forget(string(k)) }, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the cache to go live", func() bool {
		c.Put("probe", "p", c.Begin())
		_, ok := c.Get("probe")
		return ok
	})
	c.Forget("probe")
	return c, &now
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

func hit(c *cache.Cache[string, string], k, want string) bool {
	v, ok := c.Get(k)
	return ok && v == want
}

func TestOffUntilWatched(t *testing.T) {
	t.Parallel()
	c := cache.New[string, string](cache.Config[string]{TTL: time.Minute})
	c.Put("k", "v", c.Begin())
	if _, ok := c.Get("k"); ok {
		t.Fatal("a cache nobody watches served an entry")
	}
	b := newBroker(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Watch(ctx, b, topic, func([]byte) {}, slog.New(slog.DiscardHandler))
	}()
	waitFor(t, "the cache to go live", func() bool { c.Put("k", "v", c.Begin()); return hit(c, "k", "v") })
	cancel()
	<-done
	if _, ok := c.Get("k"); ok {
		t.Fatal("hit after Watch returned")
	}
	var nilCache *cache.Cache[string, string]
	nilCache.Put("k", "v", nilCache.Begin())
	nilCache.Forget("k")
	if _, ok := nilCache.Get("k"); ok {
		t.Fatal("a nil cache hit")
	}
}

func TestEpochAndTTL(t *testing.T) {
	t.Parallel()
	b := newBroker(t)
	c, now := watched(t, b, cache.Config[string]{TTL: time.Minute})
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
	b.epoch.Store(0)
	if hit(c, "k", "v") {
		t.Fatal("hit while the broker may be losing events")
	}
	c.Put("k0", "v", c.Begin())
	b.epoch.Store(2)
	if hit(c, "k", "v") || hit(c, "k0", "v") {
		t.Fatal("hit after a gap in delivery (a new epoch), or a read made during the gap was kept")
	}
	c.Put("k", "v2", c.Begin())
	if !hit(c, "k", "v2") {
		t.Fatal("miss after reading again in the new epoch")
	}
}

func TestReadRacingAChangeIsNotStored(t *testing.T) {
	t.Parallel()
	c, _ := watched(t, newBroker(t), cache.Config[string]{})
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
	c, _ := watched(t, newBroker(t), cache.Config[string]{})
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

// TestWatchForgetsPublishedChanges: another process's change reaches this
// cache through the broker.
func TestWatchForgetsPublishedChanges(t *testing.T) {
	t.Parallel()
	b := newBroker(t)
	c, _ := watched(t, b, cache.Config[string]{})
	c.Put("k", "v", c.Begin())
	c.Put("other", "v", c.Begin())
	cache.Publish(context.Background(), b, topic, []byte("k"), slog.New(slog.DiscardHandler))
	waitFor(t, "the published change to be applied", func() bool { _, ok := c.Get("k"); return !ok })
	if !hit(c, "other", "v") {
		t.Fatal("an entry nobody changed was dropped")
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	t.Run("Entries", func(t *testing.T) {
		c, _ := watched(t, newBroker(t), cache.Config[string]{MaxEntries: 100})
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
		c, _ := watched(t, newBroker(t), cache.Config[string]{MaxBytes: 100, Size: func(v string) int { return len(v) }})
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
