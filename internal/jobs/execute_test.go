package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/algoitny/api/internal/submissions"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The runner is the submissions service's queue, and *dynamo.DB its store.
var (
	_ submissions.Enqueuer = (*jobs.Runner)(nil)
	_ jobs.Store           = (*dynamo.DB)(nil)
)

// fakeJudge stands in for *judge.Engine: it records the submissions and
// answers each test with verdict(index), or fails with err.
type fakeJudge struct {
	mu      sync.Mutex
	subs    []judge.Submission
	verdict func(i int) judge.Verdict
	points  func(i int) *float64 // nil: no checker points
	err     error
	// errs, when set, are the errors of the first calls, one each (nil:
	// judged); err is the later calls'.
	errs []error
}

func (f *fakeJudge) Judge(ctx context.Context, sub judge.Submission, onTest func(judge.TestResult)) (judge.Result, error) {
	f.mu.Lock()
	f.subs = append(f.subs, sub)
	err := f.err
	if n := len(f.subs); n <= len(f.errs) {
		err = f.errs[n-1]
	}
	f.mu.Unlock()
	res := judge.Result{Verdict: judge.Accepted, Total: len(sub.Tests)}
	if err != nil {
		res.Verdict = judge.InternalError
		return res, err
	}
	for i, tc := range sub.Tests {
		tr := judge.TestResult{Index: i, TestID: tc.ID, Verdict: f.verdict(i), CPUTime: time.Duration(i+1) * time.Millisecond, MemoryBytes: 1 << 20}
		if f.points != nil {
			tr.Points = f.points(i)
		}
		if tr.Verdict != judge.Accepted && res.Verdict == judge.Accepted {
			res.Verdict = tr.Verdict
		}
		res.Tests = append(res.Tests, tr)
		if onTest != nil {
			onTest(tr)
		}
	}
	return res, nil
}

func (f *fakeJudge) judged() []judge.Submission {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]judge.Submission(nil), f.subs...)
}

// executeBundle is a working runner with a fake judge, a user and a
// problem of three test cases.
type executeBundle struct {
	db      *dynamo.DB
	events  *jobs.Events
	runner  *jobs.Runner
	user    *algoitny.User
	problem *algoitny.Problem
}

func setupExecute(t testing.TB, j jobs.Judge) *executeBundle {
	t.Helper()
	return setupExecuteWith(t, j, nil)
}

// setupExecuteWith is setupExecute with the runner's configuration
// adjusted by tweak (if not nil).
func setupExecuteWith(t testing.TB, j jobs.Judge, tweak func(*jobs.Config)) *executeBundle {
	t.Helper()
	ctx := context.Background()
	db, id := freshStores(t, "exec")
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	b := &executeBundle{db: db, events: &jobs.Events{Broker: broker, Store: db}}
	cfg := jobs.Config{
		Pool: pool, Schema: id, Store: db, Events: b.events, Judge: j, Work: true,
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
		ExecutionProgressInterval: -1, RetryBase: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	var err error
	b.runner, err = jobs.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.runner.Stop(stop)
	})
	b.user = &algoitny.User{Email: "exec@example.com", Name: "Exec", IsActive: true}
	if err := db.CreateUser(ctx, b.user, nil); err != nil {
		t.Fatal(err)
	}
	b.problem = &algoitny.Problem{Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Title: "A+B", TimeLimitMs: 2000, MemoryLimitMB: 128, IsCompleted: true}
	if err := db.CreateProblem(ctx, b.problem, algoitny.Unlimited); err != nil {
		t.Fatal(err)
	}
	ref := algoitny.ProblemRef{Platform: b.problem.Platform, ProblemID: b.problem.ProblemID}
	if err := db.AddTestCases(ctx, ref, []*algoitny.TestCase{{Input: "1 2\n", Output: "3\n"}, {Input: "2 2\n", Output: "4\n"}, {Input: "5 5\n", Output: "10\n"}}); err != nil {
		t.Fatal(err)
	}
	return b
}

// submit stores and queues an execution of code and waits for its job's
// final state.
func (b *executeBundle) submit(t testing.TB, code string) *algoitny.Job {
	t.Helper()
	// Only stops a hang: a job retried twice waits on River's polling,
	// which a loaded machine stretches.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j, _, err := b.db.CreateJob(ctx, &algoitny.Job{
		Type: algoitny.JobCodeExecution, UserID: b.user.ID, UserEmail: b.user.Email,
		Platform: b.problem.Platform, ProblemID: b.problem.ProblemID, Title: b.problem.Title,
		Language: algoitny.LanguagePython, SolutionCode: code,
	})
	if err != nil {
		t.Fatal(err)
	}
	follow, err := b.events.JobEvents(ctx, j.ID, b.db.GetJob)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Enqueue(ctx, j); err != nil {
		t.Fatal(err)
	}
	for ev := range follow {
		if ev.Job.Status.Final() {
			return ev.Job
		}
	}
	t.Fatalf("job %s did not finish: %v", j.ID, ctx.Err())
	return nil
}

// TestExecuteWorker runs CODE_EXECUTION jobs with a stand-in judge (no
// sandbox): the worker hands the problem's tests and limits to the judge
// and stores the execution it returns.
func TestExecuteWorker(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		fj := &fakeJudge{verdict: func(i int) judge.Verdict {
			if i == 1 {
				return judge.WrongAnswer
			}
			return judge.Accepted
		}}
		b := setupExecute(t, fj)
		done := b.submit(t, "print(sum(map(int, input().split())))")
		if done.Status != algoitny.JobCompleted || done.HistoryID == "" {
			t.Fatalf("job = %+v, want COMPLETED with an execution", done)
		}
		subs := fj.judged()
		if len(subs) != 1 {
			t.Fatalf("judged %d times, want 1", len(subs))
		}
		sub := subs[0]
		if sub.Language != "python" || sub.Source != "print(sum(map(int, input().split())))" || len(sub.Tests) != 3 ||
			sub.Limits.CPUTime != 2*time.Second || sub.Limits.MemoryBytes != 128<<20 || string(sub.Tests[2].Expected) != "10\n" {
			t.Fatalf("submission = %+v", sub)
		}
		h, err := b.db.GetHistory(algoitny.WithFreshReads(context.Background()), algoitny.HistoryRef{UserID: b.user.ID, ID: done.HistoryID})
		if err != nil {
			t.Fatal(err)
		}
		if h.Verdict != algoitny.Verdict(judge.WrongAnswer) || h.PassedCount != 2 || h.FailedCount != 1 || h.TotalCount != 3 || h.MaxTimeMs != 3 || h.MaxMemoryKB != 1024 {
			t.Fatalf("execution = %+v", h)
		}
	})

	// A problem with subtasks gets a score: per group, with the checker's
	// points, after the dependencies.
	t.Run("Subtasks", func(t *testing.T) {
		t.Parallel()
		half := 0.5
		fj := &fakeJudge{
			verdict: func(i int) judge.Verdict {
				if i == 1 {
					return judge.WrongAnswer
				}
				return judge.Accepted
			},
			points: func(i int) *float64 {
				if i == 1 {
					return &half
				}
				return nil
			},
		}
		b := setupExecute(t, fj)
		ctx := algoitny.WithFreshReads(context.Background())
		tests, err := b.db.ListTestCases(ctx, b.problem.Ref(), algoitny.PageRequest{First: 10})
		if err != nil || len(tests.Items) != 3 {
			t.Fatalf("tests %+v, %v", tests.Items, err)
		}
		id := func(i int) string { return tests.Items[i].ID }
		subtasks := []algoitny.Subtask{
			{Name: "small", Points: 30, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{id(0)}},
			{Name: "large", Points: 70, Mode: algoitny.ScoreSum, TestIDs: []string{id(1), id(2)}, DependsOn: []string{"small"}},
		}
		if _, err := b.db.UpdateProblem(ctx, b.problem.Ref(), algoitny.ProblemUpdate{Subtasks: &subtasks}); err != nil {
			t.Fatal(err)
		}
		done := b.submit(t, "print(1)")
		h, err := b.db.GetHistory(ctx, algoitny.HistoryRef{UserID: b.user.ID, ID: done.HistoryID})
		if err != nil {
			t.Fatal(err)
		}
		want := &algoitny.Score{Score: 82.5, MaxScore: 100, Subtasks: []algoitny.SubtaskResult{
			{Name: "small", Points: 30, MaxPoints: 30, Passed: 1, Total: 1},
			{Name: "large", Points: 52.5, MaxPoints: 70, Passed: 1, Total: 2},
		}}
		if !reflect.DeepEqual(h.Score, want) || h.TestResults[1].Points == nil || *h.TestResults[1].Points != 0.5 {
			t.Fatalf("score %+v, results %+v; want %+v", h.Score, h.TestResults, want)
		}
	})

	// A record cancelled after it was queued, before its worker starts,
	// ends CANCELLED with nothing stored and never started.
	t.Run("CancelledBeforeItStarts", func(t *testing.T) {
		t.Parallel()
		fj := &fakeJudge{verdict: func(int) judge.Verdict { return judge.Accepted }}
		b := setupExecute(t, fj)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		j, _, err := b.db.CreateJob(ctx, &algoitny.Job{
			Type: algoitny.JobCodeExecution, UserID: b.user.ID, UserEmail: b.user.Email,
			Platform: b.problem.Platform, ProblemID: b.problem.ProblemID, Title: b.problem.Title,
			Language: algoitny.LanguagePython, SolutionCode: "print(1)",
		})
		if err != nil {
			t.Fatal(err)
		}
		queued := *j // PENDING, as it was queued
		if _, err := b.db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobCancelled}); err != nil {
			t.Fatal(err)
		}
		linked, err := b.runner.Enqueue(ctx, &queued)
		if err != nil {
			t.Fatal(err)
		}
		algoitnytest.EventuallyEvery(t, 30*time.Second, 20*time.Millisecond, "the River job to finish", func() bool {
			rj, err := b.runner.Client().JobGet(ctx, linked.RiverJobID)
			if err != nil {
				t.Fatal(err)
			}
			return rj.FinalizedAt != nil
		})
		cur, err := b.db.GetJob(algoitny.WithFreshReads(ctx), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status != algoitny.JobCancelled || cur.HistoryID != "" || cur.StartedAt != nil {
			t.Fatalf("job %+v, want CANCELLED, never started, no execution", cur)
		}
		if tests, err := b.db.ListExecutionTests(ctx, j.ID); err != nil || len(tests) != 0 {
			t.Fatalf("stored tests %+v, %v", tests, err)
		}
	})

	// A compiler that did not finish in time is the machine's failure:
	// the job is retried, and judged when the compiler finishes.
	t.Run("CompilerTimeoutIsRetried", func(t *testing.T) {
		t.Parallel()
		fj := &fakeJudge{verdict: func(int) judge.Verdict { return judge.Accepted },
			errs: []error{fmt.Errorf("%w: go", judge.ErrCompilerTimeout)}}
		b := setupExecute(t, fj)
		done := b.submit(t, "package main")
		h, err := b.db.GetHistory(algoitny.WithFreshReads(context.Background()), algoitny.HistoryRef{UserID: b.user.ID, ID: done.HistoryID})
		if err != nil || done.Status != algoitny.JobCompleted || h.Verdict != algoitny.Verdict(judge.Accepted) || len(fj.judged()) != 2 {
			t.Fatalf("job %+v, execution %+v (%v), judged %d times; want ACCEPTED at the second attempt", done, h, err, len(fj.judged()))
		}
	})

	// When it persists, the execution's verdict says so: INTERNAL_ERROR
	// with the reason, never COMPILATION_ERROR.
	t.Run("CompilerTimeoutPersists", func(t *testing.T) {
		t.Parallel()
		fj := &fakeJudge{err: fmt.Errorf("%w: go", judge.ErrCompilerTimeout)}
		b := setupExecute(t, fj)
		done := b.submit(t, "package main")
		if done.Status != algoitny.JobCompleted || done.HistoryID == "" {
			t.Fatalf("job = %+v, want COMPLETED with an execution", done)
		}
		h, err := b.db.GetHistory(algoitny.WithFreshReads(context.Background()), algoitny.HistoryRef{UserID: b.user.ID, ID: done.HistoryID})
		if err != nil || h.Verdict != algoitny.Verdict(judge.InternalError) || !strings.Contains(h.CompileMessage, "not a compilation error") ||
			h.FailedCount != 3 || len(h.TestResults) != 0 {
			t.Fatalf("execution %+v (%v), want INTERNAL_ERROR saying the compiler timed out", h, err)
		}
		if n := len(fj.judged()); n != 3 {
			t.Fatalf("judged %d times, want 3 (every attempt)", n)
		}
	})

	// A language the judge does not have fails the job at once (no retry).
	t.Run("ErrUnknownLanguage", func(t *testing.T) {
		t.Parallel()
		fj := &fakeJudge{err: judge.ErrUnknownLanguage}
		b := setupExecute(t, fj)
		done := b.submit(t, "print(1)")
		if done.Status != algoitny.JobFailed {
			t.Fatalf("status = %s, want FAILED", done.Status)
		}
		if n := len(fj.judged()); n != 1 {
			t.Fatalf("judged %d times, want 1 (no retry)", n)
		}
	})
}

// TestJudgeQueueWaitsForTheJudge: a worker whose judge is not warm yet
// (Config.JudgeReady open) does not take executions — it works no judge
// queue at all, while its other queues run — and judges them once it is.
func TestJudgeQueueWaitsForTheJudge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fj := &fakeJudge{verdict: func(int) judge.Verdict { return judge.Accepted }}
	ready := make(chan struct{})
	b := setupExecuteWith(t, fj, func(c *jobs.Config) { c.JudgeReady = ready })
	j, _, err := b.db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: b.user.ID, UserEmail: b.user.Email,
		Platform: b.problem.Platform, ProblemID: b.problem.ProblemID, Title: b.problem.Title, Language: algoitny.LanguagePython, SolutionCode: "print(3)"})
	if err != nil {
		t.Fatal(err)
	}
	linked, err := b.runner.Enqueue(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	client := b.runner.Client()
	// The worker runs: a sweep queued after the execution (the default
	// queue's) is fetched and done, while the execution waits.
	var sweep *rivertype.JobInsertResult
	algoitnytest.Eventually(t, 30*time.Second, "a sweep of its own is queued", func() bool {
		sweep, err = client.Insert(ctx, jobs.ReapArgs{}, nil)
		return err == nil && !sweep.UniqueSkippedAsDuplicate // not the start-up sweep
	})
	algoitnytest.Eventually(t, 30*time.Second, "the sweep is done", func() bool {
		row, err := client.JobGet(ctx, sweep.Job.ID)
		return err == nil && row.State == rivertype.JobStateCompleted
	})
	if row, err := client.JobGet(ctx, linked.RiverJobID); err != nil || row.State != rivertype.JobStateAvailable {
		t.Fatalf("the execution's River job %+v (%v), want it available: not taken before the judge is ready", row, err)
	}
	if _, err := client.QueueGet(ctx, jobs.QueueJudge); !errors.Is(err, river.ErrNotFound) {
		t.Fatalf("the judge's queue is worked before the judge is ready (%v)", err)
	}
	if n := len(fj.judged()); n != 0 {
		t.Fatalf("judged %d submissions before the judge was ready", n)
	}
	close(ready)
	algoitnytest.Eventually(t, 30*time.Second, "the execution is judged once the judge is ready", func() bool {
		cur, err := b.db.GetJob(ctx, j.ID)
		return err == nil && cur.Status == algoitny.JobCompleted
	})
}
