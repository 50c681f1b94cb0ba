package pubsub_test

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/algoitny/api/internal/pubsub"
)

// BenchmarkPublishReceive measures one event's trip from Publish to the
// subscriber: within a Memory, and from one Postgres broker (process) to
// another. ns/op is the mean; p50/p99 are reported in µs.
func BenchmarkPublishReceive(b *testing.B) {
	b.Run("Memory", func(b *testing.B) {
		m := pubsub.NewMemory(pubsub.MemoryConfig{})
		b.Cleanup(m.Close)
		benchPublishReceive(b, m, m)
	})
	b.Run("Postgres", func(b *testing.B) {
		p := newPgProcesses(b, pubsub.PostgresConfig{})
		benchPublishReceive(b, p.A, p.B)
	})
}

func benchPublishReceive(b *testing.B, pub, sub pubsub.Broker) {
	s := subscribe(b, context.Background(), sub, "job:1")
	payload := []byte(`{"id":"job-1","status":"PROCESSING","progress":42}`)
	latencies := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		publish(b, pub, "job:1", payload)
		receive(b, s)
		latencies = append(latencies, time.Since(start))
	}
	reportPercentiles(b, latencies, "")
}

// BenchmarkFanOut1000 measures one event reaching 1,000 subscribers, each
// reading on its own goroutine like a websocket writer: within a Memory, and
// published on one Postgres broker with the subscribers on another. ns/op is
// until the last subscriber has it; p50/p99 are per delivery and
// publish-p50/p99 the Publish call alone, in µs.
func BenchmarkFanOut1000(b *testing.B) {
	b.Run("Memory", func(b *testing.B) {
		m := pubsub.NewMemory(pubsub.MemoryConfig{})
		b.Cleanup(m.Close)
		benchFanOut(b, m, m, 1000)
	})
	b.Run("Postgres", func(b *testing.B) {
		p := newPgProcesses(b, pubsub.PostgresConfig{})
		benchFanOut(b, p.A, p.B, 1000)
	})
}

func benchFanOut(b *testing.B, pub, sub pubsub.Broker, subscribers int) {
	received := make(chan time.Duration, subscribers)
	for range subscribers {
		s := subscribe(b, context.Background(), sub, "execution:1")
		go func() {
			for e := range s.Events() {
				sent := time.Unix(0, int64(binary.BigEndian.Uint64(e.Payload)))
				received <- time.Since(sent)
			}
		}()
	}
	var latencies, publishing []time.Duration
	payload := make([]byte, 8)
	for b.Loop() {
		start := time.Now()
		binary.BigEndian.PutUint64(payload, uint64(start.UnixNano()))
		publish(b, pub, "execution:1", payload)
		publishing = append(publishing, time.Since(start))
		for range subscribers {
			select {
			case d := <-received:
				latencies = append(latencies, d)
			case <-time.After(waitTimeout):
				b.Fatal("a subscriber did not receive the event")
			}
		}
	}
	reportPercentiles(b, latencies, "")
	// What the publisher pays: Publish returns without waiting for readers.
	reportPercentiles(b, publishing, "publish-")
}

// reportPercentiles adds p50 and p99 of latencies, in µs, to the results.
func reportPercentiles(b *testing.B, latencies []time.Duration, prefix string) {
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(at(0.50), prefix+"p50-µs")
	b.ReportMetric(at(0.99), prefix+"p99-µs")
}
