package httpserver

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// The last event and the completion are framed as gorilla frames a
// server's text message: FIN and text, unmasked, the length in 7, 16 or 64
// bits, and the message writeShared writes.
func TestAppendSharedFrame(t *testing.T) {
	t.Parallel()
	for _, size := range []int{10, 200, 70000} {
		payload := []byte(`"` + strings.Repeat("x", size) + `"`)
		b := appendSharedFrame(nil, []byte(`"f1"`), "next", payload)
		b = appendSharedFrame(b, []byte(`"f1"`), "complete", nil)
		for _, want := range []string{`{"id":"f1","type":"next","payload":` + string(payload) + `}`, `{"id":"f1","type":"complete"}`} {
			if b[0] != 0x81 {
				t.Fatalf("size %d: first byte %#x", size, b[0])
			}
			n, h := int(b[1]), 2
			switch n {
			case 126:
				n, h = int(binary.BigEndian.Uint16(b[2:])), 4
			case 127:
				n, h = int(binary.BigEndian.Uint64(b[2:])), 10
			}
			if got := string(b[h : h+n]); got != want {
				t.Fatalf("size %d: frame %.80q…, want %.80q…", size, got, want)
			}
			b = b[h+n:]
		}
		if len(b) != 0 {
			t.Fatalf("size %d: %d bytes left", size, len(b))
		}
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

func TestJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "f1", "job-3f2a", `a"b`, `a\b`, "<&>", "tab\t", "é", "\u2028"} {
		want, _ := json.Marshal(s)
		if got := jsonString(s); string(got) != string(want) {
			t.Fatalf("jsonString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestFanOut: every member is written exactly once, by one goroutine for a
// small group and by several for a large one, and fanOut returns only
// when every write is done.
func TestFanOut(t *testing.T) {
	for _, n := range []int{0, 1, fanOutChunk - 1, fanOutChunk, 2*fanOutChunk + 1, 1000} {
		members := make([]member, n)
		for i := range members {
			members[i] = member{id: strconv.Itoa(i)}
		}
		var mu sync.Mutex
		seen := map[string]int{}
		fanOut(members, func(m member) {
			time.Sleep(10 * time.Microsecond) // writes take time: fanOut must wait for them
			mu.Lock()
			seen[m.id]++
			mu.Unlock()
		})
		mu.Lock()
		if len(seen) != n {
			t.Errorf("%d members: %d written when fanOut returned", n, len(seen))
		}
		for id, c := range seen {
			if c != 1 {
				t.Errorf("%d members: %s written %d times", n, id, c)
			}
		}
		mu.Unlock()
	}
}
