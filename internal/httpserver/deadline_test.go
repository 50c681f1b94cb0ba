package httpserver

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeadlines: a request that outlives the timeout is cancelled with
// errRequestTimeout, one that ends first is not and leaves the list, the
// list emptying and filling again re-arms the one timer, and Deadline
// reports the earlier of the timeout and the parent's deadline.
func TestDeadlines(t *testing.T) {
	const timeout = 50 * time.Millisecond
	d := newDeadlines(timeout)
	for round := range 3 { // each round starts on an empty list
		var slow, quick deadline
		before := time.Now()
		sctx, _ := d.start(context.Background(), &slow)
		qctx, _ := d.start(context.Background(), &quick)
		if at, ok := sctx.Deadline(); !ok || at.Before(before.Add(timeout)) || at.After(time.Now().Add(timeout)) {
			t.Fatalf("round %d: Deadline() = %v, %t", round, at, ok)
		}
		d.end(&quick)
		if !errors.Is(context.Cause(qctx), context.Canceled) {
			t.Fatalf("round %d: an ended request's cause is %v", round, context.Cause(qctx))
		}
		select {
		case <-sctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the slow request was not stopped", round)
		}
		if !errors.Is(context.Cause(sctx), errRequestTimeout) || time.Since(before) < timeout {
			t.Fatalf("round %d: cause %v after %s", round, context.Cause(sctx), time.Since(before))
		}
		d.end(&slow)
		d.mu.Lock()
		empty := d.head == nil && d.tail == nil
		d.mu.Unlock()
		if !empty {
			t.Fatalf("round %d: the list is not empty after every request ended", round)
		}
	}

	parent, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	var e deadline
	ctx, _ := d.start(parent, &e)
	defer d.end(&e)
	if at, _ := ctx.Deadline(); !at.Equal(must(parent.Deadline())) {
		t.Fatalf("Deadline() = %v, want the parent's", at)
	}
	<-ctx.Done()
}

func must(t time.Time, _ bool) time.Time { return t }
