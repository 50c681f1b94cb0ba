package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// executionJob stores a PROCESSING CODE_EXECUTION job of user u1.
func executionJob(t *testing.T, ctx context.Context, b bundle) *algoitny.Job {
	t.Helper()
	job, _, err := b.db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u1", Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Language: algoitny.LanguagePython, SolutionCode: "print(1)"})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := b.db.NewHistoryID()
	running, err := b.db.TransitionJob(ctx, job.ID, algoitny.JobTransition{Status: algoitny.JobProcessing, HistoryID: &id})
	if err != nil {
		t.Fatal(err)
	}
	return running
}

func testEvent(job *algoitny.Job, i, total int, stderr string) algoitny.ExecutionEvent {
	return algoitny.ExecutionEvent{JobID: job.ID, Index: i, Total: total, Result: algoitny.TestResult{
		TestCaseID: fmt.Sprint("t", i), Verdict: algoitny.Verdict("ACCEPTED"), Output: "2\n", Stderr: stderr, TimeMs: 3, MemoryKB: 900,
	}}
}

// store and publish a finished test, as the worker does.
func storeAndPublish(t *testing.T, ctx context.Context, b bundle, ev algoitny.ExecutionEvent) {
	t.Helper()
	if err := b.db.PutExecutionTest(ctx, ev); err != nil {
		t.Fatal(err)
	}
	b.events.PublishExecution(ctx, ev)
}

// finishJob stores the execution of results and completes the job, with
// its end event.
func finishJob(t *testing.T, ctx context.Context, b bundle, job *algoitny.Job, results []algoitny.TestResult) {
	t.Helper()
	h := &algoitny.SearchHistory{ID: job.HistoryID, UserID: job.UserID, UserEmail: "u1@example.com", Platform: job.Platform, ProblemID: job.ProblemID,
		Language: job.Language, Code: job.SolutionCode, JobID: job.ID, Verdict: algoitny.Verdict("ACCEPTED"),
		PassedCount: len(results), TotalCount: len(results), TestResults: results}
	if err := b.db.CreateHistory(ctx, h); err != nil {
		t.Fatal(err)
	}
	done, err := b.db.TransitionJob(ctx, job.ID, algoitny.JobTransition{Status: algoitny.JobCompleted, HistoryID: &h.ID})
	if err != nil {
		t.Fatal(err)
	}
	b.events.PublishJob(ctx, done, nil)
}

// drain reads a subscription to its end and returns the events' indexes
// in the order received, and the stderr of each.
func drain(t *testing.T, ctx context.Context, ch <-chan *algoitny.ExecutionEvent) ([]int, map[int]string) {
	t.Helper()
	var got []int
	stderr := map[int]string{}
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return got, stderr
			}
			got = append(got, ev.Index)
			stderr[ev.Index] = ev.Result.Stderr
		case <-ctx.Done():
			t.Fatalf("no end; received %v", got)
		}
	}
}

// A subscriber that joins a running job gets the tests finished before it
// came, then the others, each index once: a test both stored before the
// read and published after the subscription (the seam), and tests announced
// again (a job rescued after its worker died), are sent once.
func TestExecutionEventsReplayWithoutDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A deadline that only stops a test that hangs (setup is not in it:
	// on a loaded machine it alone can take seconds).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	job := executionJob(t, ctx, b)
	const n = 5
	var results []algoitny.TestResult
	for i := range n {
		results = append(results, testEvent(job, i, n, "").Result)
	}
	storeAndPublish(t, ctx, b, testEvent(job, 0, n, ""))
	storeAndPublish(t, ctx, b, testEvent(job, 1, n, ""))
	// Test 2 is stored; the worker is about to publish it.
	if err := b.db.PutExecutionTest(ctx, testEvent(job, 2, n, "")); err != nil {
		t.Fatal(err)
	}
	ch, err := b.events.ExecutionEvents(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	b.events.PublishExecution(ctx, testEvent(job, 2, n, "")) // read and received
	// A rescued attempt announcing earlier tests again.
	b.events.PublishExecution(ctx, testEvent(job, 0, n, "again"))
	b.events.PublishExecution(ctx, testEvent(job, 1, n, "again"))
	storeAndPublish(t, ctx, b, testEvent(job, 3, n, ""))
	storeAndPublish(t, ctx, b, testEvent(job, 3, n, "again"))
	storeAndPublish(t, ctx, b, testEvent(job, 4, n, ""))
	finishJob(t, ctx, b, job, results)

	got, stderr := drain(t, ctx, ch)
	if fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("indexes received %v, want [0 1 2 3 4] each once", got)
	}
	for i, s := range stderr {
		if s != "" {
			t.Fatalf("test %d was sent as announced again (%q), not as first finished", i, s)
		}
	}

	// Following the finished job replays its execution, and ends.
	late, err := b.events.ExecutionEvents(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := drain(t, ctx, late); fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("after the end: %v", got)
	}
}

// A test whose event a subscriber never received (lost, or published
// while its store failed, before the subscriber came) is sent from the
// execution when the job ends: the subscription still has every test.
func TestExecutionEventsFillGapsAtTheEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A deadline that only stops a test that hangs (setup is not in it:
	// on a loaded machine it alone can take seconds).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	job := executionJob(t, ctx, b)
	const n = 3
	var results []algoitny.TestResult
	for i := range n {
		results = append(results, testEvent(job, i, n, "").Result)
	}
	storeAndPublish(t, ctx, b, testEvent(job, 0, n, ""))
	b.events.PublishExecution(ctx, testEvent(job, 1, n, "")) // never stored
	ch, err := b.events.ExecutionEvents(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	storeAndPublish(t, ctx, b, testEvent(job, 2, n, ""))
	finishJob(t, ctx, b, job, results)
	got, _ := drain(t, ctx, ch)
	if len(got) != n || fmt.Sprint(got) != "[0 2 1]" {
		t.Fatalf("indexes received %v, want 0 and 2, then 1 from the execution", got)
	}
}
