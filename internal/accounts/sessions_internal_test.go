package accounts

import (
	"strconv"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// TestSessionCache covers the rules that keep the cache from serving a stale
// session: off until live, one epoch only, expiry, reads that raced with a
// change, forgetting one user's sessions, and the size bound.
func TestSessionCache(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	snap := func(userID string) *algoitny.AuthSnapshot {
		return &algoitny.AuthSnapshot{User: &algoitny.User{ID: userID}}
	}
	entry := func(userID string, epoch uint64) cachedSession {
		return cachedSession{snap: snap(userID), epoch: epoch, expires: now.Add(time.Minute)}
	}
	hit := func(c *sessionCache, id string, epoch uint64, at time.Time) bool {
		_, ok := c.get(id, epoch, at)
		return ok
	}

	t.Run("OffUntilLive", func(t *testing.T) {
		var c sessionCache
		c.put("s1", entry("u1", 1), c.begin())
		if hit(&c, "s1", 1, now) {
			t.Fatal("cached before WatchChanges subscribed")
		}
		c.reset(true)
		c.put("s1", entry("u1", 1), c.begin())
		if !hit(&c, "s1", 1, now) {
			t.Fatal("miss on a live cache")
		}
		c.reset(false)
		if hit(&c, "s1", 1, now) {
			t.Fatal("hit after the subscription ended")
		}
	})

	t.Run("OneEpochAndTTL", func(t *testing.T) {
		var c sessionCache
		c.reset(true)
		c.put("s1", entry("u1", 1), c.begin())
		switch {
		case hit(&c, "s1", 2, now):
			t.Fatal("hit in a later epoch: events may have been lost in between")
		case hit(&c, "s1", 0, now):
			t.Fatal("hit while the broker is disconnected")
		case hit(&c, "s1", 1, now.Add(time.Minute)):
			t.Fatal("hit after the TTL")
		case !hit(&c, "s1", 1, now.Add(time.Minute-time.Nanosecond)):
			t.Fatal("miss within the TTL")
		}
		c.put("s2", entry("u2", 0), c.begin())
		if hit(&c, "s2", 0, now) {
			t.Fatal("a read made while disconnected was cached")
		}
	})

	t.Run("ReadRacingAChange", func(t *testing.T) {
		var c sessionCache
		c.reset(true)
		gen := c.begin() // a read starts
		c.forget("u9")   // any change meanwhile
		c.put("s1", entry("u1", 1), gen)
		if hit(&c, "s1", 1, now) {
			t.Fatal("a read that raced with a change was cached")
		}
	})

	t.Run("ForgetOneUser", func(t *testing.T) {
		var c sessionCache
		c.reset(true)
		for i, u := range []string{"u1", "u1", "u2"} {
			c.put("s"+strconv.Itoa(i), entry(u, 1), c.begin())
		}
		c.forget("u1")
		if hit(&c, "s0", 1, now) || hit(&c, "s1", 1, now) || !hit(&c, "s2", 1, now) {
			t.Fatal("forget(u1) must drop both of u1's sessions and keep u2's")
		}
	})

	t.Run("Bounded", func(t *testing.T) {
		var c sessionCache
		c.reset(true)
		for i := range maxCachedSessions + 10 {
			c.put("s"+strconv.Itoa(i), entry("u", 1), c.begin())
		}
		if n := len(c.entries); n != maxCachedSessions {
			t.Fatalf("%d entries, want the bound %d", n, maxCachedSessions)
		}
		if !hit(&c, "s"+strconv.Itoa(maxCachedSessions+9), 1, now) {
			t.Fatal("the newest session was not kept")
		}
	})
}
