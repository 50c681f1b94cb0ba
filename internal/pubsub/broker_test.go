package pubsub_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/pubsub"
)

// brokers is what the shared suite runs on: Pub to publish on and Sub to
// subscribe on (the same Memory, or two Postgres brokers standing for two
// processes) and CloseSub to close Sub.
type brokers struct {
	Pub, Sub pubsub.Broker
	CloseSub func()
}

// newBrokers makes fresh brokers for one test, with bufferSize per
// subscription (0 = default), cleaned up when the test ends.
type newBrokers func(t *testing.T, bufferSize int) brokers

func memoryBrokers(t *testing.T, bufferSize int) brokers {
	m := pubsub.NewMemory(pubsub.MemoryConfig{BufferSize: bufferSize})
	t.Cleanup(m.Close)
	return brokers{Pub: m, Sub: m, CloseSub: m.Close}
}

func postgresBrokers(t *testing.T, bufferSize int) brokers {
	p := newPgProcesses(t, pubsub.PostgresConfig{BufferSize: bufferSize})
	return brokers{Pub: p.A, Sub: p.B, CloseSub: p.B.Close}
}

// testBroker is the suite every Broker passes: what the GraphQL
// subscriptions rely on, whichever broker is wired in.
func testBroker(t *testing.T, newBrokers newBrokers) {
	t.Run("FanOut", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		subs := make([]*pubsub.Subscription, 200)
		for i := range subs {
			subs[i] = subscribe(t, context.Background(), b.Sub, "job:1")
		}
		publish(t, b.Pub, "job:1", []byte(`{"status":"DONE"}`))
		for i, s := range subs {
			if e := receive(t, s); e.Topic != "job:1" || string(e.Payload) != `{"status":"DONE"}` {
				t.Fatalf("subscriber %d got %q %q", i, e.Topic, e.Payload)
			}
		}
	})

	t.Run("TopicFiltering", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		job := subscribe(t, context.Background(), b.Sub, "job:1")
		hint := subscribe(t, context.Background(), b.Sub, "hint:1")
		// One publisher's events arrive in order across topics too, so the
		// first event each subscriber sees proves the others were filtered.
		publish(t, b.Pub, "job:2", []byte("other job"))
		publish(t, b.Pub, "hint:1", []byte("hint"))
		publish(t, b.Pub, "job:1", []byte("job"))
		if e := receive(t, job); e.Topic != "job:1" || string(e.Payload) != "job" {
			t.Fatalf("job subscriber got %q %q", e.Topic, e.Payload)
		}
		if e := receive(t, hint); e.Topic != "hint:1" || string(e.Payload) != "hint" {
			t.Fatalf("hint subscriber got %q %q", e.Topic, e.Payload)
		}
	})

	t.Run("OrderOfOnePublisher", func(t *testing.T) {
		t.Parallel()
		const n = 500
		b := newBrokers(t, n) // room for all: this test is about order, not speed
		s := subscribe(t, context.Background(), b.Sub, "execution:1")
		for i := range n {
			publish(t, b.Pub, "execution:1", []byte(strconv.Itoa(i)))
		}
		for i := range n {
			if e := receive(t, s); string(e.Payload) != strconv.Itoa(i) {
				t.Fatalf("event %d has payload %q", i, e.Payload)
			}
		}
	})

	t.Run("OrderOfConcurrentPublishers", func(t *testing.T) {
		t.Parallel()
		const publishers, each = 4, 50
		b := newBrokers(t, publishers*each)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		var wg sync.WaitGroup
		errs := make(chan error, publishers)
		for p := range publishers {
			wg.Go(func() {
				for i := range each {
					if err := b.Pub.Publish(context.Background(), "job:1", fmt.Appendf(nil, "%d %d", p, i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		next := make([]int, publishers)
		for range publishers * each {
			var p, i int
			e := receive(t, s)
			if _, err := fmt.Sscanf(string(e.Payload), "%d %d", &p, &i); err != nil {
				t.Fatal(err)
			}
			if i != next[p] {
				t.Fatalf("publisher %d: got event %d, want %d", p, i, next[p])
			}
			next[p]++
		}
	})

	t.Run("LargePayload", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "hint:1")
		binary := make([]byte, 100<<10)
		rand.Read(binary)
		text := []byte(`{"output":"` + strings.Repeat(`line "quoted" <tag> & é\n`, 4000) + `"}`)
		publish(t, b.Pub, "hint:1", binary)
		publish(t, b.Pub, "hint:1", text)
		if e := receive(t, s); !bytes.Equal(e.Payload, binary) {
			t.Fatalf("binary payload: got %d bytes, not the %d sent", len(e.Payload), len(binary))
		}
		if e := receive(t, s); !bytes.Equal(e.Payload, text) {
			t.Fatalf("text payload: got %d bytes, not the %d sent", len(e.Payload), len(text))
		}
	})

	t.Run("OpaquePayloads", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		every := make([]byte, 256)
		for i := range every {
			every[i] = byte(i)
		}
		payloads := [][]byte{nil, every, []byte("\x00"), []byte("\xff\xfe"), []byte(`{"a":"<b>\u00e9"}`), []byte("\"\\")}
		for _, p := range payloads {
			publish(t, b.Pub, "job:1", p)
		}
		for i, want := range payloads {
			if e := receive(t, s); !bytes.Equal(e.Payload, want) {
				t.Fatalf("payload %d: got %q, want %q", i, e.Payload, want)
			}
		}
	})

	t.Run("PublishedPayloadIsCopied", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		buf := []byte("first")
		publish(t, b.Pub, "job:1", buf)
		copy(buf, "XXXXX") // the publisher reuses its buffer
		if e := receive(t, s); string(e.Payload) != "first" {
			t.Fatalf("got %q", e.Payload)
		}
	})

	t.Run("ContextCancelEndsSubscription", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		ctx, cancel := context.WithCancel(context.Background())
		s := subscribe(t, ctx, b.Sub, "job:1")
		cancel()
		requireEnded(t, s, context.Canceled)
		// The broker carries on for others.
		other := subscribe(t, context.Background(), b.Sub, "job:1")
		publish(t, b.Pub, "job:1", []byte("after"))
		if e := receive(t, other); string(e.Payload) != "after" {
			t.Fatalf("got %q", e.Payload)
		}
	})

	t.Run("ContextCauseIsErr", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		ctx, cancel := context.WithCancelCause(context.Background())
		s := subscribe(t, ctx, b.Sub, "job:1")
		cause := errors.New("websocket closed")
		cancel(cause)
		requireEnded(t, s, cause)
	})

	t.Run("ErrContextDone", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := b.Sub.Subscribe(ctx, "job:1"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Subscribe on a done context: %v", err)
		}
	})

	t.Run("CloseTwice", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		other := subscribe(t, context.Background(), b.Sub, "job:1")
		s.Close()
		s.Close()
		requireEnded(t, s, nil)
		publish(t, b.Pub, "job:1", []byte("after"))
		if e := receive(t, other); string(e.Payload) != "after" {
			t.Fatalf("got %q", e.Payload)
		}
		s.Close()
	})

	t.Run("BufferedEventsSurviveClose", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		marker := subscribe(t, context.Background(), b.Sub, "job:1")
		publish(t, b.Pub, "job:1", []byte("1"))
		publish(t, b.Pub, "job:1", []byte("2"))
		receive(t, marker)
		receive(t, marker)
		// Subscribers of a topic are served in no set order: marker may
		// have both events before s has the second.
		algoitnytest.Eventually(t, 10*time.Second, "s to have both events", func() bool { return len(s.Events()) == 2 })
		s.Close()
		if got := requireEnded(t, s, nil); len(got) != 2 {
			t.Fatalf("drained %d events after Close, want 2", len(got))
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		s := subscribe(t, context.Background(), b.Sub, "job:1")
		b.CloseSub()
		b.CloseSub()
		requireEnded(t, s, pubsub.ErrClosed)
		algoitnytest.ErrCode(t, s.Err(), algoitny.EINTERNAL)
		if _, err := b.Sub.Subscribe(context.Background(), "job:1"); !errors.Is(err, pubsub.ErrClosed) {
			t.Fatalf("Subscribe after Close: %v", err)
		}
		if err := b.Sub.Publish(context.Background(), "job:1", nil); !errors.Is(err, pubsub.ErrClosed) {
			t.Fatalf("Publish after Close: %v", err)
		}
	})

	t.Run("ErrInvalidTopic", func(t *testing.T) {
		t.Parallel()
		b := newBrokers(t, 0)
		for name, topic := range map[string]string{
			"Empty":   "",
			"TooLong": strings.Repeat("x", pubsub.MaxTopicLen+1),
			"NUL":     "job:\x00",
			"NotUTF8": "job:\xff",
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				algoitnytest.ErrCode(t, b.Pub.Publish(context.Background(), topic, nil), algoitny.EINVALID)
				_, err := b.Sub.Subscribe(context.Background(), topic)
				algoitnytest.ErrCode(t, err, algoitny.EINVALID)
			})
		}
	})
}
