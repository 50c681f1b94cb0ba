package httpserver

import (
	"bytes"
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// writeCounter is a connection that records each write.
type writeCounter struct {
	net.Conn
	writes [][]byte
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// Between hold and release the frames leave in one write; outside, each
// write goes through as it comes.
func TestCorkConn(t *testing.T) {
	t.Parallel()
	under := &writeCounter{}
	c := &corkConn{Conn: under}
	c.Write([]byte("a"))
	c.hold()
	c.Write([]byte("bc"))
	c.Write([]byte("d"))
	if len(under.writes) != 1 {
		t.Fatalf("writes while held went through: %q", under.writes)
	}
	if err := c.release(); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("e"))
	if err := c.release(); err != nil { // not held: nothing to write
		t.Fatal(err)
	}
	want := [][]byte{[]byte("a"), []byte("bcd"), []byte("e")}
	if !slices.EqualFunc(under.writes, want, bytes.Equal) {
		t.Fatalf("writes %q, want %q", under.writes, want)
	}
	if c.buf != nil {
		t.Fatal("a released connection keeps its buffer")
	}
}

// countStream forwards every event in order and numbers the last one
// before forwarding it; it stops with the context.
func TestCountStream(t *testing.T) {
	t.Parallel()
	in := make(chan *algoitny.JobEvent, 3)
	running := &algoitny.JobEvent{Job: &algoitny.Job{Status: algoitny.JobProcessing}}
	final := &algoitny.JobEvent{Job: &algoitny.Job{Status: algoitny.JobCancelled}}
	in <- running
	in <- running
	in <- final
	close(in)
	c := &eventCount{}
	out := countStream[*algoitny.JobEvent](t.Context(), (<-chan *algoitny.JobEvent)(in), c).(<-chan *algoitny.JobEvent)
	var got []*algoitny.JobEvent
	for ev := range out {
		if ev == final && c.last.Load() != 3 {
			t.Fatalf("the last event arrived before it was numbered (last = %d)", c.last.Load())
		}
		got = append(got, ev)
	}
	if !slices.Equal(got, []*algoitny.JobEvent{running, running, final}) {
		t.Fatalf("forwarded %v", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	open := make(chan *algoitny.JobEvent)
	out = countStream[*algoitny.JobEvent](ctx, (<-chan *algoitny.JobEvent)(open), &eventCount{}).(<-chan *algoitny.JobEvent)
	cancel()
	select {
	case _, ok := <-out:
		if ok {
			t.Fatal("an event from nowhere")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end with its context")
	}
}
