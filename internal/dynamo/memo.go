package dynamo

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// memo keeps display data read from DynamoDB in this process's memory for at
// most ttl after the read began, and forgets what this process writes
// (Forget): a value read before one of this process's writes finished is
// never kept after it. Nothing crosses processes: another process's write
// shows here within ttl. The zero *memo is off (every Get misses).
type memo[V any] struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int
	size       func(V) int
	now        func() time.Time

	mu sync.Mutex
	// gen counts Forgets; forgotAt is the gen of each key's latest Forget,
	// and wideGen that of the latest Forget of every key (the pruning of
	// forgotAt): a read is kept only if neither came after its ticket.
	gen      uint64
	wideGen  uint64
	forgotAt map[string]uint64
	bytes    int
	entries  map[string]memoEntry[V]
	flights  map[string]*memoFlight[V]
}

type memoEntry[V any] struct {
	v       V
	size    int
	expires time.Time
}

// memoFlight is one read of Load that callers missing the same key share.
type memoFlight[V any] struct {
	t    memoTicket
	done chan struct{} // closed when v and err are set
	v    V
	err  error
}

// memoTicket is taken before a read whose value Put may keep.
type memoTicket struct {
	gen uint64
	at  time.Time
	on  bool
}

// maxForgotten bounds forgotAt; past it, it is emptied and counts as a
// Forget of every key.
const maxForgotten = 4096

// loadTimeout bounds a shared read of Load: it runs on after the caller
// that started it has gone, for the others waiting on it.
const loadTimeout = 10 * time.Second

// Get returns the value of k if it is kept and younger than ttl.
func (m *memo[V]) Get(k string) (V, bool) {
	var zero V
	if m == nil {
		return zero, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.getLocked(k)
}

func (m *memo[V]) getLocked(k string) (V, bool) {
	var zero V
	e, ok := m.entries[k]
	if !ok {
		return zero, false
	}
	if !m.now().Before(e.expires) {
		m.dropLocked(k)
		return zero, false
	}
	return e.v, true
}

// Begin is called before reading a value that Put may keep.
func (m *memo[V]) Begin() memoTicket {
	if m == nil {
		return memoTicket{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return memoTicket{gen: m.gen, at: m.now(), on: true}
}

// Put keeps v, read after t was taken, until t's time plus ttl, unless k
// (or every key) was forgotten in between.
func (m *memo[V]) Put(k string, v V, t memoTicket) {
	if m == nil || !t.on {
		return
	}
	size := 0
	if m.size != nil {
		size = m.size(v)
	}
	if m.maxBytes > 0 && size > m.maxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.currentLocked(k, t) {
		return
	}
	if m.entries == nil {
		m.entries = make(map[string]memoEntry[V])
	}
	m.dropLocked(k)
	for id := range m.entries {
		if (m.maxEntries <= 0 || len(m.entries) < m.maxEntries) && (m.maxBytes <= 0 || m.bytes+size <= m.maxBytes) {
			break
		}
		m.dropLocked(id)
	}
	m.entries[k] = memoEntry[V]{v: v, size: size, expires: t.at.Add(m.ttl)}
	m.bytes += size
}

// currentLocked reports whether a read of k made with t may still be kept.
func (m *memo[V]) currentLocked(k string, t memoTicket) bool {
	return t.on && t.gen >= m.wideGen && t.gen >= m.forgotAt[k] && m.now().Sub(t.at) < m.ttl
}

// Load returns the entry of k if it is kept (and want accepts it; nil
// accepts any), or else reads it with read and keeps what it returns;
// callers that miss the same key together share one read, so a popular
// problem just edited costs DynamoDB one read, not one per request. The
// read runs with ctx's values but not its cancellation (bounded by
// loadTimeout); each caller waits until it is done or its own ctx ends.
func (m *memo[V]) Load(ctx context.Context, k string, want func(V) bool, read func(context.Context) (V, error)) (V, error) {
	var zero V
	m.mu.Lock()
	if v, ok := m.getLocked(k); ok && (want == nil || want(v)) {
		m.mu.Unlock()
		return v, nil
	}
	f := m.flights[k]
	if f == nil || !m.currentLocked(k, f.t) {
		f = &memoFlight[V]{t: memoTicket{gen: m.gen, at: m.now(), on: true}, done: make(chan struct{})}
		if m.flights == nil {
			m.flights = make(map[string]*memoFlight[V])
		}
		m.flights[k] = f
		go m.fly(ctx, k, f, read)
	}
	m.mu.Unlock()
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// fly makes f's read, keeps its value and lets the waiting callers have it.
func (m *memo[V]) fly(ctx context.Context, k string, f *memoFlight[V], read func(context.Context) (V, error)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
	defer cancel()
	defer func() {
		m.mu.Lock()
		if m.flights[k] == f {
			delete(m.flights, k)
		}
		m.mu.Unlock()
		close(f.done)
	}()
	defer func() {
		if p := recover(); p != nil {
			f.err = fmt.Errorf("dynamo: read of a shared load panicked: %v", p)
		}
	}()
	f.v, f.err = read(ctx)
	if f.err == nil {
		m.Put(k, f.v, f.t)
	}
}

// Forget drops the entry of k; reads begun before are not kept.
func (m *memo[V]) Forget(k string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	if len(m.forgotAt) >= maxForgotten {
		m.forgotAt, m.wideGen = nil, m.gen
	}
	if m.forgotAt == nil {
		m.forgotAt = make(map[string]uint64)
	}
	m.forgotAt[k] = m.gen
	m.dropLocked(k)
}

func (m *memo[V]) dropLocked(k string) {
	if e, ok := m.entries[k]; ok {
		m.bytes -= e.size
		delete(m.entries, k)
	}
}
