package httpserver

import (
	"context"
	"sync"
	"time"
)

// deadlines stops the HTTP requests that outlive the request timeout, with
// one timer for all of them. Every request has the same timeout, so they
// expire in the order they started: a list in arrival order, whose head is
// the next to expire, is all the bookkeeping needed. A
// context.WithTimeout per request did the same with a runtime timer each,
// added to and removed from the timer heap of every request (issue 18: most
// of what the request timeout cost).
type deadlines struct {
	timeout time.Duration
	mu      sync.Mutex
	head    *deadline // oldest first
	tail    *deadline
	// timer fires at the head's deadline (it is set when the list stops
	// being empty and by expire): no goroutine while nothing is listed.
	timer *time.Timer
}

// deadline is one request's place in the list (part of its requestInfo:
// no allocation of its own).
type deadline struct {
	prev, next *deadline
	at         time.Time
	cancel     context.CancelCauseFunc
	listed     bool
	ctx        deadlineCtx
}

func newDeadlines(timeout time.Duration) *deadlines {
	d := &deadlines{timeout: timeout}
	d.timer = time.AfterFunc(time.Hour, d.expire)
	d.timer.Stop()
	return d
}

// deadlineCtx is a request's context: cancelled with errRequestTimeout at
// its deadline, which Deadline reports as context.WithTimeout's would (for
// the DynamoDB and PostgreSQL calls made under it).
type deadlineCtx struct {
	context.Context
	at time.Time
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// start returns parent with the request timeout and its cancel function
// (the request's budget uses it too); call end(e) when the request is done.
func (d *deadlines) start(parent context.Context, e *deadline) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	e.at, e.cancel = time.Now().Add(d.timeout), cancel
	if pd, ok := parent.Deadline(); ok && pd.Before(e.at) {
		e.at = pd
	}
	d.mu.Lock()
	e.prev, e.next, e.listed = d.tail, nil, true
	if d.tail != nil {
		d.tail.next = e
	} else {
		d.head = e
		d.timer.Reset(time.Until(e.at))
	}
	d.tail = e
	d.mu.Unlock()
	e.ctx = deadlineCtx{Context: ctx, at: e.at}
	return &e.ctx, cancel
}

// end takes a request that is done out of the list and cancels its context.
func (d *deadlines) end(e *deadline) {
	d.remove(e)
	e.cancel(nil)
}

func (d *deadlines) remove(e *deadline) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !e.listed {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		d.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		d.tail = e.prev
	}
	e.prev, e.next, e.listed = nil, nil, false
}

// expire cancels the requests whose deadline has passed and sets the timer
// to the next one (a parent's earlier deadline only shortens one request's,
// never reorders the rest: such a request is cancelled by its parent).
func (d *deadlines) expire() {
	now := time.Now()
	var expired []context.CancelCauseFunc
	d.mu.Lock()
	for d.head != nil && !d.head.at.After(now) {
		e := d.head
		expired = append(expired, e.cancel)
		d.head = e.next
		if d.head != nil {
			d.head.prev = nil
		} else {
			d.tail = nil
		}
		e.prev, e.next, e.listed = nil, nil, false
	}
	if d.head != nil {
		d.timer.Reset(d.head.at.Sub(now))
	}
	d.mu.Unlock()
	for _, cancel := range expired {
		cancel(errRequestTimeout)
	}
}
