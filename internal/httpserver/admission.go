package httpserver

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Codes of the admission's refusals.
const (
	// codeBusy answers a request turned away because the server is at its
	// concurrency limit and its queue is full or too slow (HTTP 503 with
	// Retry-After).
	codeBusy = "SERVER_BUSY"
	// codeTooMany answers a request or websocket operation over its
	// client's own share: the requests one address may have waiting, the
	// operations one socket or address may run at once (HTTP 429 with
	// Retry-After).
	codeTooMany = "TOO_MANY_REQUESTS"
)

// The admission's refusals.
var (
	errBusy    = errors.New("the server is busy")
	errTooMany = errors.New("too many requests from one address")
)

// Admission is the back-pressure of /query: at most Concurrency HTTP
// requests and websocket operations are served at once, up to Queue more
// wait for a slot in arrival order, for at most QueueTimeout; any other is
// answered at once with 503, Retry-After and SERVER_BUSY. Without it every
// request is served at once: under more load than the machine can serve,
// all of them slow down together, and requests queue invisibly in front of
// DynamoDB and the CPU where the unlucky ones wait many times longer than
// the rest.
//
// One client address (ClientAddress) holds at most PerAddress of the
// slots — its other requests wait, and the requests of other addresses go
// first — and has at most PerAddressQueue requests waiting: reading their
// body (an HTTP request asks for a slot only once its body is read, so a
// client that sends it slowly holds none) or in the queue. One more is
// answered 429 with Retry-After and TOO_MANY_REQUESTS.
//
// A zero field is DefaultAdmission's.
type Admission struct {
	// Concurrency is how many requests are served at once (-1: no limit,
	// no queue).
	Concurrency int
	// Queue is how many more may wait for a slot (-1: none).
	Queue int
	// QueueTimeout is the longest a request waits for a slot.
	QueueTimeout time.Duration
	// RetryAfter is what the 503's Retry-After says (rounded up to seconds).
	RetryAfter time.Duration
	// PerAddress is how many slots one client address holds at most
	// (default a quarter of Concurrency, at least 1; -1: no share).
	PerAddress int
	// PerAddressQueue is how many requests of one client address may wait
	// at once, reading their body or in the queue (default 64; -1: no cap).
	PerAddressQueue int
}

// DefaultAdmission is the production back-pressure: 8 requests at once
// per CPU (16 on two cores). Measured with `go run ./bench -scenarios
// overload` (200 closed-loop clients of reads) on two cores shared with
// DynamoDB Local: without a limit ~150 requests wait on DynamoDB at once
// and the p99 was 5.7–12.4× the p50 (up to 16 s); with 16 it was 2.1–4.3×
// (32: 4.9–5.8×, 64: 3.6×). With a remote DynamoDB a
// request waits longer for each call and more of them fit
// (ALGOITNY_MAX_CONCURRENT_REQUESTS).
var DefaultAdmission = Admission{Concurrency: 8 * runtime.GOMAXPROCS(0), Queue: 512, QueueTimeout: 5 * time.Second,
	RetryAfter: time.Second, PerAddressQueue: 64}

// admission is Admission at work.
type admission struct {
	cfg Admission

	mu      sync.Mutex
	serving int
	waiting int       // requests reading their body or queued
	queue   []*waiter // in arrival order
	addrs   map[string]*addrLoad
	spare   []*addrLoad // entries of addresses that left, for the next ones
}

// addrLoad is what one client address holds: slots, and requests waiting
// (reading their body or queued).
type addrLoad struct{ serving, waiting int }

// waiter is a queued request; ready is closed when it is given a slot.
type waiter struct {
	addr    string
	ready   chan struct{}
	granted bool
}

// newAdmission returns the admission of cfg, nil for none.
func newAdmission(cfg Admission) *admission {
	d := DefaultAdmission
	cfg.Concurrency = cmp.Or(cfg.Concurrency, d.Concurrency)
	if cfg.Concurrency < 0 {
		return nil
	}
	cfg.Queue = max(cmp.Or(cfg.Queue, d.Queue), 0)
	cfg.QueueTimeout = cmp.Or(cfg.QueueTimeout, d.QueueTimeout)
	cfg.RetryAfter = cmp.Or(cfg.RetryAfter, d.RetryAfter)
	cfg.PerAddress = cmp.Or(cfg.PerAddress, max(cfg.Concurrency/4, 1))
	cfg.PerAddressQueue = cmp.Or(cfg.PerAddressQueue, d.PerAddressQueue)
	return &admission{cfg: cfg, addrs: map[string]*addrLoad{}}
}

// arrive counts a request of addr as waiting (from the end of its headers:
// its body is read next); errTooMany when addr has PerAddressQueue
// waiting already. Every arrival ends in acquire or depart.
func (a *admission) arrive(addr string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.load(addr)
	if q := a.cfg.PerAddressQueue; q > 0 && l.waiting >= q {
		a.tidy(addr, l)
		return errTooMany
	}
	l.waiting++
	a.waiting++
	return nil
}

// depart ends the arrival of a request that will not ask for a slot (its
// body could not be read).
func (a *admission) depart(addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.load(addr)
	l.waiting--
	a.waiting--
	a.tidy(addr, l)
}

// acquire gives an arrived request of addr a slot, waiting in line if
// there is room in it: nil when it has one (release it), errBusy when it
// is turned away (the queue full, its timeout, ctx ended).
func (a *admission) acquire(ctx context.Context, addr string) error {
	a.mu.Lock()
	l := a.load(addr)
	if a.serving < a.cfg.Concurrency && a.eligible(l) {
		// No waiter is eligible while a slot is free (dispatch): going
		// first passes nobody.
		a.grant(l)
		a.mu.Unlock()
		return nil
	}
	if len(a.queue) >= a.cfg.Queue {
		l.waiting--
		a.waiting--
		a.tidy(addr, l)
		a.mu.Unlock()
		return errBusy
	}
	w := &waiter{addr: addr, ready: make(chan struct{})}
	a.queue = append(a.queue, w)
	a.mu.Unlock()

	t := time.NewTimer(a.cfg.QueueTimeout)
	defer t.Stop()
	select {
	case <-w.ready:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.granted { // given a slot as the wait ended: keep it
		return nil
	}
	a.queue = slices.DeleteFunc(a.queue, func(q *waiter) bool { return q == w })
	l.waiting--
	a.waiting--
	a.tidy(addr, l)
	return errBusy
}

// admit is arrive and acquire at once (a websocket operation, read
// already): release the slot when it returns nil.
func (a *admission) admit(ctx context.Context, addr string) error {
	if err := a.arrive(addr); err != nil {
		return err
	}
	return a.acquire(ctx, addr)
}

// release frees a slot of addr and gives it to the first waiter whose
// address is under its share.
func (a *admission) release(addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.load(addr)
	a.serving--
	l.serving--
	a.tidy(addr, l)
	a.dispatch()
}

// dispatch gives the free slots to the waiters, in arrival order, skipping
// those whose address holds its share already. a.mu is held.
func (a *admission) dispatch() {
	if a.serving >= a.cfg.Concurrency || len(a.queue) == 0 {
		return
	}
	a.queue = slices.DeleteFunc(a.queue, func(w *waiter) bool {
		l := a.addrs[w.addr]
		if a.serving >= a.cfg.Concurrency || !a.eligible(l) {
			return false
		}
		a.grant(l)
		w.granted = true
		close(w.ready)
		return true
	})
}

// grant moves a waiting request of l into a slot. a.mu is held.
func (a *admission) grant(l *addrLoad) {
	a.serving++
	l.serving++
	l.waiting--
	a.waiting--
}

func (a *admission) eligible(l *addrLoad) bool {
	return a.cfg.PerAddress < 0 || l.serving < a.cfg.PerAddress
}

// load returns addr's entry, made if it has none. a.mu is held.
func (a *admission) load(addr string) *addrLoad {
	l := a.addrs[addr]
	if l == nil {
		if n := len(a.spare); n > 0 {
			l, a.spare = a.spare[n-1], a.spare[:n-1]
		} else {
			l = &addrLoad{}
		}
		a.addrs[addr] = l
	}
	return l
}

// tidy forgets an address that holds nothing. a.mu is held.
func (a *admission) tidy(addr string, l *addrLoad) {
	if l.serving <= 0 && l.waiting <= 0 {
		delete(a.addrs, addr)
		if len(a.spare) < 64 {
			*l = addrLoad{}
			a.spare = append(a.spare, l)
		}
	}
}

// counts returns the requests served, queued, and reading their body
// (for /metrics).
func (a *admission) counts() (serving, queued, reading int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.serving, len(a.queue), a.waiting - len(a.queue)
}
