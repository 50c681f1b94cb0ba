// Package cache keeps copies of stored state in a process's memory without
// serving what another process has changed. A Feed (feed.go) carries every
// process's announced writes; each Cache attached to it forgets and holds
// what they name, and serves entries only while the feed can vouch that it
// is complete (see Feed for the protocol and its guarantees). On top:
//   - a read that raced with a change is not stored (Begin/Put);
//   - callers that miss the same key share one read (Load);
//   - entries are bounded in number and bytes, and expire after the TTL
//     whatever happens (a backstop: the feed is what keeps them right).
package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Config configures a Cache.
type Config[V any] struct {
	// TTL bounds how long an entry is trusted (required, > 0).
	TTL time.Duration
	// MaxEntries bounds the number of entries; past it a new entry replaces
	// arbitrary ones (0: no bound).
	MaxEntries int
	// Size and MaxBytes bound the entries' total size as Size measures it;
	// a value larger than MaxBytes is not stored (0: no bound).
	Size     func(V) int
	MaxBytes int
	// Now is the clock of the TTL (time.Now if nil).
	Now func() time.Time
	// Feed keeps the cache coherent with every process's writes; without
	// one the cache is always off (every Get misses, nothing is stored).
	Feed *Feed
}

// Cache maps keys to values read from storage. The zero value is not usable;
// call New. Values are shared by every reader: they must not be modified.
type Cache[V any] struct {
	cfg Config[V]

	mu sync.Mutex
	// gen counts changes: every Forget, ForgetFunc and reset. forgotAt
	// holds the gen of each key's latest Forget and wideGen that of the
	// latest change that concerned every key (ForgetFunc, reset, or the
	// pruning of forgotAt): a read is stored only if neither came after its
	// ticket, so a change to one key does not spoil the reads of others.
	gen      uint64
	wideGen  uint64
	forgotAt map[string]uint64
	bytes    int
	entries  map[string]entry[V]
	// flights are the reads of Load in progress, by key.
	flights map[string]*flight[V]
}

// flight is one read of Load that callers missing the same key share.
type flight[V any] struct {
	t    Ticket
	done chan struct{} // closed when v and err are set
	v    V
	err  error
}

// maxForgotten bounds forgotAt; past it, it is emptied and the change
// counts as one for every key.
const maxForgotten = 4096

type entry[V any] struct {
	v       V
	size    int
	epoch   uint64
	expires time.Time
}

// New returns an empty cache attached to cfg.Feed: it is on while the feed
// vouches for it (see Feed.Epoch).
func New[V any](cfg Config[V]) *Cache[V] {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache[V]{cfg: cfg}
	if cfg.Feed != nil {
		cfg.Feed.attach(c)
	}
	return c
}

// Get returns the value of k if it is cached and still trustworthy.
func (c *Cache[V]) Get(k string) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(k)
}

// getLocked is Get with c.mu held.
func (c *Cache[V]) getLocked(k string) (V, bool) {
	var zero V
	e, ok := c.entries[k]
	if !ok {
		return zero, false
	}
	if e.epoch != c.cfg.Feed.stretch() || !c.cfg.Now().Before(e.expires) {
		c.dropLocked(k) // never good again
		return zero, false
	}
	if !c.cfg.Feed.trusted() {
		return zero, false // for now
	}
	return e.v, true
}

// Ticket is taken before reading what Put will store.
type Ticket struct {
	gen, epoch uint64
	at         int64 // when it was taken (the feed's mono ns)
}

// Live reports whether the cache was on when the ticket was taken (a read
// made with it may be stored).
func (t Ticket) Live() bool { return t.epoch != 0 }

// Begin is called before reading a value from storage; Put stores it only if
// nothing changed in between.
func (c *Cache[V]) Begin() Ticket {
	if c == nil {
		return Ticket{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Ticket{gen: c.gen, epoch: c.cfg.Feed.storable(), at: c.cfg.Feed.now()}
}

// Put stores v, read after t was taken, unless a change or a gap in the
// feed came in between, a change of k is in progress, or the cache is off.
func (c *Cache[V]) Put(k string, v V, t Ticket) {
	if c == nil || t.epoch == 0 {
		return
	}
	size := 0
	if c.cfg.Size != nil {
		size = c.cfg.Size(v)
	}
	if c.cfg.MaxBytes > 0 && size > c.cfg.MaxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.Feed.storable() != t.epoch || t.gen < c.wideGen || t.gen < c.forgotAt[k] || c.cfg.Feed.held(k, t.at) {
		return
	}
	if c.entries == nil {
		c.entries = make(map[string]entry[V])
	}
	c.dropLocked(k)
	for id := range c.entries {
		if (c.cfg.MaxEntries <= 0 || len(c.entries) < c.cfg.MaxEntries) && (c.cfg.MaxBytes <= 0 || c.bytes+size <= c.cfg.MaxBytes) {
			break
		}
		c.dropLocked(id)
	}
	c.entries[k] = entry[V]{v: v, size: size, epoch: t.epoch, expires: c.cfg.Now().Add(c.cfg.TTL)}
	c.bytes += size
}

// ErrOff is Load's answer while the cache is off: nothing was read, and the
// caller reads storage its own way.
var ErrOff = errors.New("cache: off")

// LoadTimeout bounds a read of Load: it runs on after the caller that
// started it has gone, for the others waiting on it.
const LoadTimeout = 10 * time.Second

// Load returns the entry of k if it is cached (and want accepts it; nil
// accepts any), or else reads k with read and stores what it returns, like
// Begin, read, Put; but callers that miss the same key at the same time
// share one read: a newcomer waits for a read of k in flight instead of
// starting its own, if that read began after k's latest change (a read
// older than a change is never shared, as it is never stored). So a popular
// entry that was just forgotten costs storage one read, not one per request
// that missed it.
//
// The read runs with ctx's values but not its cancellation (bounded by
// LoadTimeout): the caller that started it may go away while others wait.
// Each caller waits until the read is done or its own ctx ends (then it
// returns ctx's error). A failed read is returned to every caller that
// shared it, and nothing is stored. It returns ErrOff, without reading,
// while the cache is off.
func (c *Cache[V]) Load(ctx context.Context, k string, want func(V) bool, read func(context.Context) (V, error)) (V, error) {
	var zero V
	if c == nil {
		return zero, ErrOff
	}
	c.mu.Lock()
	if v, ok := c.getLocked(k); ok && (want == nil || want(v)) {
		c.mu.Unlock()
		return v, nil
	}
	f := c.flights[k]
	if f == nil || !c.currentLocked(k, f.t) {
		t := Ticket{gen: c.gen, epoch: c.cfg.Feed.storable(), at: c.cfg.Feed.now()}
		if !t.Live() || c.cfg.Feed.held(k, t.at) {
			// A read of a held key is never shared: it may be of what was
			// there before the write landed.
			c.mu.Unlock()
			return zero, ErrOff
		}
		f = &flight[V]{t: t, done: make(chan struct{})}
		if c.flights == nil {
			c.flights = make(map[string]*flight[V])
		}
		c.flights[k] = f
		go c.fly(ctx, k, f, read)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// fly makes f's read, stores its value and lets the waiting callers have it.
func (c *Cache[V]) fly(ctx context.Context, k string, f *flight[V], read func(context.Context) (V, error)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LoadTimeout)
	defer cancel()
	defer func() {
		c.mu.Lock()
		if c.flights[k] == f {
			delete(c.flights, k)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	defer func() {
		if p := recover(); p != nil {
			f.err = fmt.Errorf("cache: read of a shared load panicked: %v", p)
		}
	}()
	f.v, f.err = read(ctx)
	if f.err == nil {
		c.Put(k, f.v, f.t)
	}
}

// currentLocked reports whether a read of k made with t would still be
// stored: the cache is on in the same epoch and neither k nor every key
// changed since t. c.mu is held.
func (c *Cache[V]) currentLocked(k string, t Ticket) bool {
	return t.epoch != 0 && c.cfg.Feed.storable() == t.epoch && t.gen >= c.wideGen && t.gen >= c.forgotAt[k]
}

func (c *Cache[V]) dropLocked(k string) {
	if e, ok := c.entries[k]; ok {
		c.bytes -= e.size
		delete(c.entries, k)
	}
}

// Forget drops the entry of k; reads in flight are not stored.
func (c *Cache[V]) Forget(k string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(c.forgotAt) >= maxForgotten {
		c.forgotAt, c.wideGen = nil, c.gen
	}
	if c.forgotAt == nil {
		c.forgotAt = make(map[string]uint64)
	}
	c.forgotAt[k] = c.gen
	c.dropLocked(k)
}

// ForgetFunc drops the entries for which drop is true; reads in flight are
// not stored.
func (c *Cache[V]) ForgetFunc(drop func(string, V) bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.wideGen = c.gen
	for k, e := range c.entries {
		if drop(k, e.v) {
			c.dropLocked(k)
		}
	}
}

// reset empties the cache (the feed began a new listening stretch).
func (c *Cache[V]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.wideGen, c.forgotAt = c.gen, nil
	c.entries, c.bytes = nil, 0
}
