// Package cache keeps copies of stored state in a process's memory without
// serving what another process has changed. Whoever changes the state drops
// the affected entries here (Forget) and publishes the change on a pubsub
// topic; every process's Watch drops them when it hears of it. On top:
//   - an entry is trusted only while the broker has lost nothing since it
//     was read: it remembers the broker's epoch (pubsub.Postgres.Epoch), and
//     a reconnection, when events may have been lost, makes it a miss;
//   - a read that raced with a change is not stored (Begin/Put);
//   - the cache is off until Watch has subscribed, and whenever its
//     subscription ends;
//   - and every entry expires after the TTL whatever happens (the bound
//     when a connection dies without the broker noticing at once).
//
// So a change is visible at once in the process that made it, and in the
// others as soon as the broker delivers (milliseconds).
package cache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/algoitny/api/internal/pubsub"
)

// Broker carries the change events (internal/pubsub's Postgres broker: a
// LISTEN/NOTIFY channel every process shares).
type Broker interface {
	pubsub.Broker
	// Epoch numbers the broker's unbroken stretches of delivery; 0 while
	// events may be lost.
	Epoch() uint64
}

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
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Cache maps keys to values read from storage. The zero value is not usable;
// call New. Values are shared by every reader: they must not be modified.
type Cache[K comparable, V any] struct {
	cfg Config[V]

	mu     sync.Mutex
	broker Broker // set while Watch is subscribed (live)
	// gen counts changes: every Forget, ForgetFunc and reset. forgotAt
	// holds the gen of each key's latest Forget and wideGen that of the
	// latest change that concerned every key (ForgetFunc, reset, or the
	// pruning of forgotAt): a read is stored only if neither came after its
	// ticket, so a change to one key does not spoil the reads of others.
	gen      uint64
	wideGen  uint64
	forgotAt map[K]uint64
	bytes    int
	entries  map[K]entry[V]
	// flights are the reads of Load in progress, by key.
	flights map[K]*flight[V]
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

// New returns an empty cache, off until Watch runs.
func New[K comparable, V any](cfg Config[V]) *Cache[K, V] {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache[K, V]{cfg: cfg}
}

// Get returns the value of k if it is cached and still trustworthy.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(k)
}

// getLocked is Get with c.mu held.
func (c *Cache[K, V]) getLocked(k K) (V, bool) {
	var zero V
	e, ok := c.entries[k]
	if !ok || c.broker == nil {
		return zero, false
	}
	if epoch := c.broker.Epoch(); epoch == 0 || e.epoch != epoch || !c.cfg.Now().Before(e.expires) {
		c.dropLocked(k) // never good again
		return zero, false
	}
	return e.v, true
}

// Ticket is taken before reading what Put will store.
type Ticket struct {
	gen, epoch uint64
}

// Live reports whether the cache was on when the ticket was taken (a read
// made with it may be stored).
func (t Ticket) Live() bool { return t.epoch != 0 }

// Begin is called before reading a value from storage; Put stores it only if
// nothing changed in between.
func (c *Cache[K, V]) Begin() Ticket {
	if c == nil {
		return Ticket{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := Ticket{gen: c.gen}
	if c.broker != nil {
		t.epoch = c.broker.Epoch()
	}
	return t
}

// Put stores v, read after t was taken, unless a change or a gap in the
// broker's delivery came in between, or the cache is off.
func (c *Cache[K, V]) Put(k K, v V, t Ticket) {
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
	if c.broker == nil || t.gen < c.wideGen || t.gen < c.forgotAt[k] {
		return
	}
	if c.entries == nil {
		c.entries = make(map[K]entry[V])
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
func (c *Cache[K, V]) Load(ctx context.Context, k K, want func(V) bool, read func(context.Context) (V, error)) (V, error) {
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
		t := Ticket{gen: c.gen}
		if c.broker != nil {
			t.epoch = c.broker.Epoch()
		}
		if !t.Live() {
			c.mu.Unlock()
			return zero, ErrOff
		}
		f = &flight[V]{t: t, done: make(chan struct{})}
		if c.flights == nil {
			c.flights = make(map[K]*flight[V])
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
func (c *Cache[K, V]) fly(ctx context.Context, k K, f *flight[V], read func(context.Context) (V, error)) {
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
func (c *Cache[K, V]) currentLocked(k K, t Ticket) bool {
	return c.broker != nil && t.epoch != 0 && c.broker.Epoch() == t.epoch && t.gen >= c.wideGen && t.gen >= c.forgotAt[k]
}

func (c *Cache[K, V]) dropLocked(k K) {
	if e, ok := c.entries[k]; ok {
		c.bytes -= e.size
		delete(c.entries, k)
	}
}

// Forget drops the entry of k; reads in flight are not stored.
func (c *Cache[K, V]) Forget(k K) {
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
		c.forgotAt = make(map[K]uint64)
	}
	c.forgotAt[k] = c.gen
	c.dropLocked(k)
}

// ForgetFunc drops the entries for which drop is true; reads in flight are
// not stored.
func (c *Cache[K, V]) ForgetFunc(drop func(K, V) bool) {
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

// setBroker empties the cache and turns it on (b != nil) or off.
func (c *Cache[K, V]) setBroker(b Broker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.wideGen, c.forgotAt = c.gen, nil
	c.entries, c.bytes = nil, 0
	c.broker = b
}

// Watch keeps the cache in step with the changes published on topic by any
// process until ctx is done: each event's payload goes to apply (which
// Forgets what it names). The cache is on only while Watch is subscribed.
// A nil log is slog.Default().
func (c *Cache[K, V]) Watch(ctx context.Context, b Broker, topic string, apply func(payload []byte), log *slog.Logger) {
	log = cmp.Or(log, slog.Default())
	defer c.setBroker(nil)
	for ctx.Err() == nil {
		sub, err := b.Subscribe(ctx, topic)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("cache: cannot watch for changes; reading from storage meanwhile", "topic", topic, "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		c.setBroker(b)
		for e := range sub.Events() {
			apply(e.Payload)
		}
		c.setBroker(nil)
		if ctx.Err() == nil {
			log.Warn("cache: the change subscription ended; resubscribing", "topic", topic, "err", sub.Err())
		}
	}
}

// PublishTimeout bounds telling other processes of a change: a request
// never hangs on the broker.
const PublishTimeout = 5 * time.Second

// Publish tells the other processes that what payload names changed. The
// change is stored already, so it is sent even if ctx's client went away;
// a failure is logged (the others then see the change within the TTL; a
// nil log is slog.Default()). Without a broker it does nothing.
func Publish(ctx context.Context, b Broker, topic string, payload []byte, log *slog.Logger) {
	if b == nil {
		return
	}
	log = cmp.Or(log, slog.Default())
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), PublishTimeout)
	defer cancel()
	if err := b.Publish(pctx, topic, payload); err != nil {
		log.Error("cache: cannot publish a change; other processes may use their cached copy until it expires",
			"topic", topic, "key", string(payload), "err", err)
	}
}
