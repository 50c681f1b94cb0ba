package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"
)

// execEvent is one executionProgress event as a client reads it.
type execEvent struct {
	Index, Total int
	Result       struct{ Verdict, Stderr string }
}

const executionProgressStderr = `subscription($id: ID!) { executionProgress(jobId: $id) { index total result { verdict stderr } } }`

// followExecution starts executionProgress on c with either protocol.
func followExecution(c *wsClient, protocol, id, jobID string) {
	vars := map[string]any{"id": jobID}
	if protocol == "graphql-ws" {
		c.send(map[string]any{"type": "start", "id": id, "payload": map[string]any{"query": executionProgressStderr, "variables": vars}})
		return
	}
	c.subscribe(id, executionProgressStderr, vars)
}

// execEvents decodes the payloads of an executionProgress subscription.
func execEvents(t testing.TB, payloads []json.RawMessage) []execEvent {
	t.Helper()
	out := make([]execEvent, len(payloads))
	for i, p := range payloads {
		var ev struct {
			Data   struct{ ExecutionProgress execEvent }
			Errors []any
		}
		if err := json.Unmarshal(p, &ev); err != nil || len(ev.Errors) > 0 {
			t.Fatalf("event %s", p)
		}
		out[i] = ev.Data.ExecutionProgress
	}
	return out
}

// eachIndexOnce fails unless events hold test indexes 0..n-1, each once.
func eachIndexOnce(t testing.TB, who string, events []execEvent, n int) {
	t.Helper()
	var got []int
	for _, e := range events {
		got = append(got, e.Index)
		if e.Total != n {
			t.Fatalf("%s: event %+v, want total %d", who, e, n)
		}
	}
	sorted := append([]int(nil), got...)
	sort.Ints(sorted)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	if fmt.Sprint(sorted) != fmt.Sprint(want) {
		t.Fatalf("%s received test indexes %v (in order of arrival), want each of 0..%d once", who, got, n-1)
	}
}

// joinedRunning fails unless a subscriber who joined a running execution
// (got: the indexes it received, in order) first received every test
// finished before it joined, then the others as they finished. before are
// the indexes an earlier subscriber had received when this one joined,
// after those it received next. The worker stores and announces the tests
// one by one, in the order they finish, so the tests finished when it
// joined are before and some first r of after: got must be those
// len(before)+r in any order, then after[r:] as they were announced — and
// r < len(after), or the job was not running any more (its end alone
// would have sent everything).
func joinedRunning(t testing.TB, who string, got, before, after []int) {
	t.Helper()
	set := func(xs []int) string {
		s := append([]int(nil), xs...)
		sort.Ints(s)
		return fmt.Sprint(s)
	}
	for r := 0; r < len(after) && len(before)+r <= len(got); r++ {
		head, tail := got[:len(before)+r], got[len(before)+r:]
		if set(head) == set(append(append([]int(nil), before...), after[:r]...)) && fmt.Sprint(tail) == fmt.Sprint(after[r:]) {
			return
		}
	}
	t.Fatalf("%s received test indexes %v (in order of arrival); when it joined, tests %v had finished and %v finished later (in this order): "+
		"it must receive %v (and any of the later ones finished before it joined) first, then the rest as they finish", who, got, before, after, before)
}

func indexes(events []execEvent) []int {
	out := make([]int, len(events))
	for i, e := range events {
		out[i] = e.Index
	}
	return out
}

// TestExecutionProgressLateSubscriber (issue 17, item 8): a subscriber who
// joins a running execution gets every test finished before it came,
// before any test that finishes later, then the others as they finish —
// each index once, with either protocol.
func TestExecutionProgressLateSubscriber(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	const n = 8
	s.createProblem(t, admin, "BAEKJOON", "1000", n, true)
	alice := s.login(t, "alice@example.com")
	// Each test sleeps 1 s: the job runs for seconds after its first tests.
	slow := "import time\ntime.sleep(1)\na, b = map(int, input().split())\nprint(a + b)\n"
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, alice, executeMutation, executeInput(slow, nil)).decode(t, &out)
	jobID := out.ExecuteCode.ID

	early := s.dialWS(t, "graphql-transport-ws", nil)
	early.init(alice)
	followExecution(early, "graphql-transport-ws", "e", jobID)
	var seen []json.RawMessage
	deadline := time.Now().Add(90 * time.Second)
	for len(seen) < 2 {
		m := early.read(time.Until(deadline))
		switch {
		case m.Type == "ping":
			early.send(map[string]any{"type": "pong"})
		case m.Type == "next":
			seen = append(seen, m.Payload)
		case m.Type == "complete" || m.Type == "error":
			t.Fatalf("the job ended after %d events: %+v", len(seen), m)
		}
	}

	// Two tests have finished: the late subscribers join now.
	late := map[string]*wsClient{}
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		c := s.dialWS(t, protocol, nil)
		c.init(alice)
		followExecution(c, protocol, "late", jobID)
		late[protocol] = c
	}
	// Read together: each answers its pings.
	var wg sync.WaitGroup
	var rest []execEvent
	wg.Go(func() { rest = execEvents(t, early.collect("e", 90*time.Second)) })
	got := map[string][]execEvent{}
	var mu sync.Mutex
	for protocol, c := range late {
		wg.Go(func() {
			evs := execEvents(t, c.collect("late", 90*time.Second))
			mu.Lock()
			defer mu.Unlock()
			got[protocol] = evs
		})
	}
	wg.Wait()
	before := execEvents(t, seen)
	eachIndexOnce(t, "the subscriber from the start", append(before, rest...), n)
	for protocol, evs := range got {
		eachIndexOnce(t, "a late "+protocol+" subscriber", evs, n)
		joinedRunning(t, "a late "+protocol+" subscriber", indexes(evs), indexes(before), indexes(rest))
	}
}
