package main

import (
	"encoding/json"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testReplicasProgressOnceAcrossRescue (issue 16): two API replicas A and
// B and a worker process; a job is submitted through A and followed on B
// (both protocols), the replica it was not submitted through, which hears
// of its progress only through PostgreSQL. The worker is killed with
// SIGKILL mid-execution and River rescues the job on a second worker. The
// subscribers on B receive each test's progress event once — and what they
// were shown is what the execution stores: the rescued attempt resumes from
// the tests the first one stored rather than judging (and announcing) them
// again. Each test prints a random number to stderr, so a test judged twice
// would show. One execution is stored and one use charged.
func testReplicasProgressOnceAcrossRescue(t *testing.T) {
	cfg := testConfig(t)
	db := prepare(t, cfg)
	a := &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	b := &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	admin := staffOn(t, a, db, "admin@example.com")
	const n = 6
	a.createProblem(t, admin, "BAEKJOON", "1000", n, true)
	alice := a.login(t, "alice@example.com")
	slow := "import random, sys, time\nprint(random.random(), file=sys.stderr)\ntime.sleep(0.5)\na, b = map(int, input().split())\nprint(a + b)\n"
	var out struct{ ExecuteCode struct{ ID string } }
	a.query(t, alice, executeMutation, executeInput(slow, nil)).decode(t, &out)
	jobID := out.ExecuteCode.ID

	subs := map[string]*wsClient{}
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		c := b.dialWS(t, protocol, nil)
		c.init(alice)
		followExecution(c, protocol, "x", jobID)
		subs[protocol] = c
	}
	timings := rescueTimings()
	w1 := startProcess(t, env(cfg, timings...), "worker")

	// Killed once the first test has been announced, with others running.
	first := subs["graphql-transport-ws"]
	var before []json.RawMessage
	deadline := time.Now().Add(60 * time.Second)
	for len(before) == 0 {
		m := first.read(time.Until(deadline))
		switch {
		case m.Type == "ping":
			first.send(map[string]any{"type": "pong"})
		case m.Type == "next":
			before = append(before, m.Payload)
		case m.Type == "complete" || m.Type == "error":
			t.Fatalf("the subscription ended before the kill: %+v", m)
		}
	}
	w1.kill(syscall.SIGKILL)
	startProcess(t, env(cfg, timings...), "worker")

	// Read together: each answers its pings while the job is rescued.
	var results []execEvent
	var wg sync.WaitGroup
	var mu sync.Mutex
	for protocol, c := range subs {
		wg.Go(func() {
			payloads := c.collect("x", 150*time.Second)
			if c == first {
				payloads = append(before, payloads...)
			}
			events := execEvents(t, payloads)
			eachIndexOnce(t, protocol+" subscriber", events, n)
			if c == first {
				mu.Lock()
				results = events
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	var j struct {
		Job struct {
			Status  string
			History struct {
				Verdict     string
				TestResults []struct{ Stderr string }
			}
			Progress struct {
				Edges []struct {
					Node struct{ Step, Message string }
				}
			}
		}
	}
	b.query(t, alice, `query($id: ID!) { job(id: $id) { status history { verdict testResults { stderr } }
		progress(first: 100) { edges { node { step message } } } } }`, map[string]any{"id": jobID}).decode(t, &j)
	if j.Job.Status != "COMPLETED" || j.Job.History.Verdict != "ACCEPTED" || len(j.Job.History.TestResults) != n {
		t.Fatalf("job after the rescue: %+v", j.Job)
	}
	for _, e := range results {
		if stored := j.Job.History.TestResults[e.Index].Stderr; stored != e.Result.Stderr {
			t.Fatalf("test %d: subscribers were shown stderr %q, the execution stores %q (judged again after the rescue)", e.Index, e.Result.Stderr, stored)
		}
	}
	// The rescued attempt ran only the tests the first did not finish.
	var steps []string
	resumed := false
	for _, e := range j.Job.Progress.Edges {
		steps = append(steps, e.Node.Step+": "+e.Node.Message)
		resumed = resumed || (e.Node.Step == "judging" && strings.Contains(e.Node.Message, " of 6 tests"))
	}
	if !resumed {
		t.Fatalf("no attempt resumed from the tests finished before the kill; steps:\n%s", strings.Join(steps, "\n"))
	}
	// One execution stored and one use charged, whatever the rescue did.
	var mine struct {
		MyHistory struct {
			Edges []struct{ Node struct{ ID string } }
		}
		MyUsage []struct {
			Action string
			Used   int
		}
	}
	b.query(t, alice, `{ myHistory(first: 10) { edges { node { id } } } myUsage { action used } }`, nil).decode(t, &mine)
	if len(mine.MyHistory.Edges) != 1 {
		t.Fatalf("%d executions stored after the rescue, want 1", len(mine.MyHistory.Edges))
	}
	for _, u := range mine.MyUsage {
		if u.Action == "EXECUTION" && u.Used != 1 {
			t.Fatalf("%d executions charged after the rescue, want 1", u.Used)
		}
	}
}
