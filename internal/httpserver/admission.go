package httpserver

import (
	"cmp"
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// codeBusy answers a request turned away because the server is at its
// concurrency limit and its queue is full or too slow (HTTP 503 with
// Retry-After).
const codeBusy = "SERVER_BUSY"

// Admission is the back-pressure of /query: at most Concurrency HTTP
// requests are served at once, up to Queue more wait for a slot in arrival
// order, for at most QueueTimeout; any other is answered at once with 503,
// Retry-After and SERVER_BUSY. Without it every request is served at once:
// under more load than the machine can serve, all of them slow down
// together, and requests queue invisibly in front of DynamoDB and the CPU
// where the unlucky ones wait many times longer than the rest. Websocket
// upgrades are not counted (a socket lives long; its operations are light).
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
}

// DefaultAdmission is the production back-pressure: 8 requests at once
// per CPU (16 on two cores). Measured with `go run ./bench -scenarios
// overload` (200 closed-loop clients of reads) on two cores shared with
// DynamoDB Local: without a limit ~150 requests wait on DynamoDB at once
// and the p99 was 5.7–12.4× the p50 (up to 16 s); with 16 it was 2.1–4.3×
// (32: 4.9–5.8×, 64: 3.6×; docs/benchmarks.md). With a remote DynamoDB a
// request waits longer for each call and more of them fit
// (ALGOITNY_MAX_CONCURRENT_REQUESTS).
var DefaultAdmission = Admission{Concurrency: 8 * runtime.GOMAXPROCS(0), Queue: 512, QueueTimeout: 5 * time.Second, RetryAfter: time.Second}

// admission is Admission at work.
type admission struct {
	cfg Admission
	// slots holds a token per request being served: sending blocks when
	// all are taken, and blocked senders are served first in, first out.
	slots   chan struct{}
	waiting atomic.Int64
}

// newAdmission returns the admission of cfg, nil for none.
func newAdmission(cfg Admission) *admission {
	d := DefaultAdmission
	cfg.Concurrency = cmp.Or(cfg.Concurrency, d.Concurrency)
	cfg.Queue = max(cmp.Or(cfg.Queue, d.Queue), 0)
	cfg.QueueTimeout = cmp.Or(cfg.QueueTimeout, d.QueueTimeout)
	cfg.RetryAfter = cmp.Or(cfg.RetryAfter, d.RetryAfter)
	if cfg.Concurrency < 0 {
		return nil
	}
	return &admission{cfg: cfg, slots: make(chan struct{}, cfg.Concurrency)}
}

// acquire takes a slot, waiting in line if there is room in it; false when
// the request is to be turned away.
func (a *admission) acquire(ctx context.Context) bool {
	select {
	case a.slots <- struct{}{}:
		return true
	default:
	}
	if a.waiting.Add(1) > int64(a.cfg.Queue) {
		a.waiting.Add(-1)
		return false
	}
	defer a.waiting.Add(-1)
	t := time.NewTimer(a.cfg.QueueTimeout)
	defer t.Stop()
	select {
	case a.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (a *admission) release() { <-a.slots }
