package pubsub_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/pubsub"
)

func TestMemory(t *testing.T) {
	t.Parallel()
	testBroker(t, memoryBrokers)

	t.Run("SlowSubscriberDropped", func(t *testing.T) {
		t.Parallel()
		m := pubsub.NewMemory(pubsub.MemoryConfig{BufferSize: 16})
		t.Cleanup(m.Close)
		slow := subscribe(t, context.Background(), m, "job:1")
		fast := subscribe(t, context.Background(), m, "job:1")
		for i := range 100 {
			publish(t, m, "job:1", []byte(strconv.Itoa(i)))
			if e := receive(t, fast); string(e.Payload) != strconv.Itoa(i) {
				t.Fatalf("fast subscriber: event %d has payload %q", i, e.Payload)
			}
		}
		got := requireEnded(t, slow, pubsub.ErrSlowSubscriber)
		algoitnytest.ErrCode(t, slow.Err(), algoitny.EINTERNAL)
		if len(got) != 16 || string(got[0].Payload) != "0" || string(got[15].Payload) != "15" {
			t.Fatalf("the slow subscriber kept %d events, want the first 16", len(got))
		}
	})

	t.Run("DefaultBufferSize", func(t *testing.T) {
		t.Parallel()
		m := pubsub.NewMemory(pubsub.MemoryConfig{})
		t.Cleanup(m.Close)
		s := subscribe(t, context.Background(), m, "job:1")
		for range pubsub.DefaultBufferSize {
			publish(t, m, "job:1", nil)
		}
		if s.Err() != nil {
			t.Fatalf("dropped with a full but not overflowing buffer: %v", s.Err())
		}
		publish(t, m, "job:1", nil)
		if got := requireEnded(t, s, pubsub.ErrSlowSubscriber); len(got) != pubsub.DefaultBufferSize {
			t.Fatalf("kept %d events, want %d", len(got), pubsub.DefaultBufferSize)
		}
	})

	t.Run("PublisherNeverBlocks", func(t *testing.T) {
		t.Parallel()
		m := pubsub.NewMemory(pubsub.MemoryConfig{})
		t.Cleanup(m.Close)
		stuck := subscribe(t, context.Background(), m, "job:1") // never reads
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			for i := range 10_000 {
				if err := m.Publish(context.Background(), "job:1", []byte(strconv.Itoa(i))); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Publish blocked on a subscriber that does not read")
		}
		t.Logf("10,000 events published in %v", time.Since(start))
		requireEnded(t, stuck, pubsub.ErrSlowSubscriber)
	})

	t.Run("ConcurrentChurn", func(t *testing.T) {
		t.Parallel()
		// Publishers, subscribers that read, that never read, that close and
		// that cancel, all at once: for the race detector and send-on-closed
		// panics.
		m := pubsub.NewMemory(pubsub.MemoryConfig{BufferSize: 4})
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for ctx.Err() == nil {
					_ = m.Publish(context.Background(), "job:1", []byte("x"))
				}
			})
		}
		for i := range 8 {
			wg.Go(func() {
				for j := 0; ctx.Err() == nil; j++ {
					subCtx, cancel := context.WithCancel(ctx)
					s, err := m.Subscribe(subCtx, "job:1")
					if err != nil {
						cancel()
						return // the broker was closed
					}
					switch (i + j) % 3 {
					case 0:
						<-s.Events()
						s.Close()
					case 1:
						cancel()
					}
					for range s.Events() {
					}
					cancel()
				}
			})
		}
		time.Sleep(200 * time.Millisecond) // the scenario: churn for a while
		m.Close()
		stop()
		wg.Wait()
	})
}

// TestMemoryNoGoroutineLeak is not parallel: it counts every goroutine of the
// process, which only means something while no other test runs.
func TestMemoryNoGoroutineLeak(t *testing.T) {
	m := pubsub.NewMemory(pubsub.MemoryConfig{BufferSize: 1})
	base := baselineGoroutines()
	var live []context.CancelFunc // contexts that outlive their subscriptions
	defer func() {
		for _, cancel := range live {
			cancel()
		}
	}()
	for i := range 1000 {
		ctx, cancel := context.WithCancel(context.Background())
		topic := "job:" + strconv.Itoa(i%7)
		s, err := m.Subscribe(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0: // the subscriber goes away
			s.Close()
		case 1: // the websocket's context ends
			cancel()
		case 2: // it falls behind
			publish(t, m, topic, nil)
			publish(t, m, topic, nil)
		}
		for range s.Events() {
		}
		live = append(live, cancel)
	}
	m.Close()
	if n := settledGoroutines(base); n > base {
		t.Fatalf("%d goroutines after 1,000 subscriptions, %d before\n%s", n, base, goroutineDump())
	}
}

// TestDecodeOncePerEvent: every subscriber of an event gets the same decoded
// value (the payload is parsed once, not once per subscriber), each event is
// decoded anew, and a subscriber decoding the same event as another type
// still gets its own correct value.
func TestDecodeOncePerEvent(t *testing.T) {
	t.Parallel()
	type job struct{ N int }
	type msg struct{ Job *job }
	type other struct {
		Job map[string]int
	}
	m := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(m.Close)
	a := subscribe(t, context.Background(), m, "job:d")
	b := subscribe(t, context.Background(), m, "job:d")
	c := subscribe(t, context.Background(), m, "job:d")
	var prev *job
	for i := range 2 {
		publish(t, m, "job:d", []byte(`{"Job":{"N":`+strconv.Itoa(i)+`}}`))
		ma, err := pubsub.Decode[msg](receive(t, a))
		if err != nil {
			t.Fatal(err)
		}
		mb, err := pubsub.Decode[msg](receive(t, b))
		if err != nil {
			t.Fatal(err)
		}
		if ma.Job == nil || ma.Job != mb.Job || ma.Job.N != i {
			t.Fatalf("event %d: subscribers decoded %+v and %+v, want one shared value with N=%d", i, ma.Job, mb.Job, i)
		}
		if ma.Job == prev {
			t.Fatalf("event %d reused the previous event's value", i)
		}
		prev = ma.Job
		mc, err := pubsub.Decode[other](receive(t, c))
		if err != nil || mc.Job["N"] != i {
			t.Fatalf("event %d as another type: %+v, %v", i, mc, err)
		}
	}
	publish(t, m, "job:d", []byte(`not json`))
	if _, err := pubsub.Decode[msg](receive(t, a)); err == nil {
		t.Fatal("a malformed payload decoded without an error")
	}
}

// TestMemoryEpoch: a Memory broker loses nothing while open (one epoch) and
// says so no longer once closed.
func TestMemoryEpoch(t *testing.T) {
	t.Parallel()
	m := pubsub.NewMemory(pubsub.MemoryConfig{})
	if e := m.Epoch(); e == 0 {
		t.Fatal("Epoch is 0 on an open broker")
	}
	m.Close()
	if e := m.Epoch(); e != 0 {
		t.Fatalf("Epoch %d after Close, want 0", e)
	}
}
