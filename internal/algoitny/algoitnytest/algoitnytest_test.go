package algoitnytest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestPoll: Poll goes on as soon as the condition holds, gives up at the
// deadline or when its context ends, and asks once more before giving up.
func TestPoll(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int32
		start := time.Now()
		if !algoitnytest.Poll(context.Background(), 10*time.Second, func() bool { return n.Add(1) == 3 }) {
			t.Fatal("Poll gave up on a condition that came true")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Poll took %v for a condition true on the third ask", d)
		}
	})
	t.Run("Every", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int32
		if !algoitnytest.PollEvery(context.Background(), 10*time.Second, time.Millisecond, func() bool { return n.Add(1) == 3 }) {
			t.Fatal("PollEvery gave up on a condition that came true")
		}
		algoitnytest.EventuallyEvery(t, time.Second, time.Millisecond, "a true condition", func() bool { return true })
	})
	t.Run("Deadline", func(t *testing.T) {
		t.Parallel()
		if algoitnytest.Poll(context.Background(), 20*time.Millisecond, func() bool { return false }) {
			t.Fatal("Poll reported a condition that never held")
		}
	})
	t.Run("ContextDone", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if algoitnytest.Poll(ctx, time.Hour, func() bool { return false }) {
			t.Fatal("Poll reported a condition that never held")
		}
	})
	t.Run("LastAsk", func(t *testing.T) {
		t.Parallel()
		deadline := time.Now().Add(20 * time.Millisecond)
		if !algoitnytest.Poll(context.Background(), 20*time.Millisecond, func() bool { return !time.Now().Before(deadline) }) {
			t.Fatal("Poll did not ask once more at its deadline")
		}
	})
}

// TestAssertionsPass: what holds passes, and ErrCode returns the error it
// found, for its field or message.
func TestAssertionsPass(t *testing.T) {
	t.Parallel()
	e := algoitnytest.ErrCode(t, algoitny.Invalid("name", "bad"), algoitny.EINVALID)
	if e == nil || e.Field != "name" {
		t.Fatalf("ErrCode returned %+v, want the EINVALID error naming name", e)
	}
	if e := algoitnytest.ErrCode(t, nil, ""); e != nil {
		t.Fatalf("ErrCode(nil, \"\") = %+v, want nil", e)
	}
	algoitnytest.Eventually(t, time.Second, "a true condition", func() bool { return true })
	algoitnytest.OK(t, nil)
	if v := algoitnytest.Must[int](t)(7, nil); v != 7 {
		t.Fatalf("Must passed on %d, want 7", v)
	}
}
