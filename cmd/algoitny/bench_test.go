package main

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// reportPercentiles adds p50/p99 of samples (milliseconds) to a benchmark.
func reportPercentiles(b *testing.B, samples []time.Duration, prefix string) {
	slices.Sort(samples)
	if len(samples) == 0 {
		return
	}
	pick := func(q float64) float64 {
		return float64(samples[min(len(samples)-1, int(q*float64(len(samples))))].Microseconds()) / 1000
	}
	b.ReportMetric(pick(0.50), prefix+"p50_ms")
	b.ReportMetric(pick(0.99), prefix+"p99_ms")
}

// BenchmarkExecuteToCompleted measures the time from the executeCode response
// to the subscriber's COMPLETED event, for a 10-test A+B in Python, with the
// workers in the same process.
//
//	go run ./cmd/algoitny stack -- go test -run '^$' -bench ExecuteToCompleted -benchtime 20x ./cmd/algoitny/
func BenchmarkExecuteToCompleted(b *testing.B) {
	t := b
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 10, true)
	s.query(t, admin, `mutation { updatePlan(name: "Free", input: {maxExecutionsPerDay: -1}) { name } }`, nil)
	user := s.login(t, "bench@example.com")
	ws := s.dialWS(t, "graphql-transport-ws", nil)
	ws.init(user)
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		var out struct{ ExecuteCode struct{ ID string } }
		s.query(t, user, executeMutation, executeInput(aPlusB, nil)).decode(t, &out)
		start := time.Now()
		id := fmt.Sprint("b", i)
		ws.subscribe(id, jobUpdated, map[string]any{"id": out.ExecuteCode.ID})
		evs := ws.collect(id, time.Minute)
		samples = append(samples, time.Since(start))
		if len(evs) == 0 {
			b.Fatal("no events")
		}
	}
	b.StopTimer()
	reportPercentiles(b, samples, "")
}

// BenchmarkFanOut1000 measures how long an event takes to reach each of 1,000
// websocket subscribers of one process (p50/p99 over all deliveries).
//
//	go run ./cmd/algoitny stack -- go test -run '^$' -bench FanOut1000 -benchtime 3x ./cmd/algoitny/
func BenchmarkFanOut1000(b *testing.B) {
	t := b
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	s.query(t, admin, `mutation { updatePlan(name: "Free", input: {maxExecutionsPerDay: -1}) { name } }`, nil)
	user := s.login(t, "bench@example.com")
	const n = 1000
	clients := make([]*wsClient, n)
	for i := range clients {
		clients[i] = s.dialWS(t, "graphql-transport-ws", nil)
		clients[i].init(user)
	}
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		job := s.pendingJob(t, user)
		id := fmt.Sprint("f", i)
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.subscribe(id, jobUpdated, map[string]any{"id": job})
				c.read(30 * time.Second) // the initial state
			}()
		}
		wg.Wait()
		var mu sync.Mutex
		start := time.Now()
		s.query(t, user, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": job})
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.collect(id, 30*time.Second)
				d := time.Since(start)
				mu.Lock()
				samples = append(samples, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	reportPercentiles(b, samples, "delivery_")
}
