package jobs_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/practice"
)

// fakePractice stands in for *practice.Runner: it records what it was
// asked and answers with run or search, or fails with err.
type fakePractice struct {
	mu       sync.Mutex
	runs     []algoitny.CodeRunParams
	searches []practice.Search
	run      *algoitny.CodeRunResult
	search   *algoitny.CounterexampleResult
	err      error
}

func (f *fakePractice) RunCode(_ context.Context, _ algoitny.Language, _ string, p algoitny.CodeRunParams) (*algoitny.CodeRunResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, p)
	return f.run, f.err
}

func (f *fakePractice) FindCounterexample(_ context.Context, in practice.Search) (*algoitny.CounterexampleResult, error) {
	f.mu.Lock()
	f.searches = append(f.searches, in)
	f.mu.Unlock()
	if in.Progress != nil {
		in.Progress("searching", 1, "an input of 2 lines", 10)
	}
	return f.search, f.err
}

func (f *fakePractice) calls() (runs, searches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.runs), len(f.searches)
}

// run stores job, queues it and waits for its final state.
func (b *executeBundle) run(t *testing.T, j *algoitny.Job) *algoitny.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j.UserID, j.UserEmail = b.user.ID, b.user.Email
	j, _, err := b.db.CreateJob(ctx, j)
	algoitnytest.OK(t, err)
	follow, err := b.events.JobEvents(ctx, j.ID, b.db.GetJob)
	algoitnytest.OK(t, err)
	_, err = b.runner.Enqueue(ctx, j)
	algoitnytest.OK(t, err)
	for ev := range follow {
		if ev.Job.Status.Final() {
			return ev.Job
		}
	}
	t.Fatalf("job %s did not finish: %v", j.ID, ctx.Err())
	return nil
}

// TestPracticeWorkers runs CODE_RUN and COUNTEREXAMPLE jobs with a
// stand-in for the sandbox's work.
func TestPracticeWorkers(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, fp *fakePractice) *executeBundle {
		return setupExecuteWith(t, &fakeJudge{}, func(c *jobs.Config) {
			c.Practice, c.CounterexampleBudget, c.CounterexampleMaxInputs = fp, 7*time.Second, 9
		})
	}

	t.Run("CodeRun", func(t *testing.T) {
		t.Parallel()
		fp := &fakePractice{run: &algoitny.CodeRunResult{Verdict: algoitny.RunOK, Stdout: "3\n", TimeLimitMs: 2000}}
		b := setup(t, fp)
		params, _ := json.Marshal(algoitny.CodeRunParams{Stdin: "1 2\n", TimeLimitMs: 500})
		done := b.run(t, &algoitny.Job{Type: algoitny.JobCodeRun, Language: algoitny.LanguagePython, SolutionCode: "print(3)", Params: string(params)})
		var res algoitny.CodeRunResult
		if err := json.Unmarshal([]byte(done.Result), &res); err != nil || done.Status != algoitny.JobCompleted || res.Stdout != "3\n" ||
			fp.runs[0].Stdin != "1 2\n" || fp.runs[0].TimeLimitMs != 500 {
			t.Fatalf("job %+v, runs %+v", done, fp.runs)
		}
	})

	t.Run("CodeRunErrInvalidIsNotRetried", func(t *testing.T) {
		t.Parallel()
		fp := &fakePractice{err: algoitny.Invalid("language", "cobol is not available on this server")}
		b := setup(t, fp)
		done := b.run(t, &algoitny.Job{Type: algoitny.JobCodeRun, Language: algoitny.LanguagePython, SolutionCode: "print(3)", Params: "{}"})
		if runs, _ := fp.calls(); done.Status != algoitny.JobFailed || done.ErrorMessage != "cobol is not available on this server" || runs != 1 {
			t.Fatalf("job %+v after %d runs", done, runs)
		}
	})

	t.Run("CounterexampleFound", func(t *testing.T) {
		t.Parallel()
		c := &algoitny.Counterexample{Input: "1 9\n", ExpectedOutput: "10\n", ActualOutput: "8\n", Verdict: algoitny.VerdictWrongAnswer, Seed: 4, Args: []string{"4", "4"}}
		fp := &fakePractice{search: &algoitny.CounterexampleResult{Found: true, Counterexample: c, Tried: 3}}
		b := setup(t, fp)
		h := b.failedExecution(t)
		done := b.run(t, &algoitny.Job{Type: algoitny.JobCounterexample, HistoryID: h.ID, Platform: h.Platform, ProblemID: h.ProblemID})
		if done.Status != algoitny.JobCompleted || done.HistoryID != h.ID {
			t.Fatalf("job %+v", done)
		}
		in := fp.searches[0]
		if in.Code != h.Code || len(in.Tests) != 3 || in.Problem.ProblemID != "1000" || in.Budget != 7*time.Second || in.MaxInputs != 9 {
			t.Fatalf("search %+v", in)
		}
		got := algoitnytest.Must[*algoitny.SearchHistory](t)(b.db.GetHistory(algoitny.WithFreshReads(context.Background()), h.Ref()))
		if got.Counterexample == nil || got.Counterexample.Input != "1 9\n" {
			t.Fatalf("execution %+v", got)
		}
		steps := algoitnytest.Must[algoitny.Page[*algoitny.JobProgress]](t)(b.db.ListJobProgress(context.Background(), done.ID, algoitny.PageRequest{First: 20}))
		var names []string
		for _, p := range steps.Items {
			names = append(names, p.Step)
		}
		if len(names) < 3 || names[len(names)-2] != "searching" || names[len(names)-1] != "found" {
			t.Fatalf("steps %v", names)
		}
	})

	t.Run("NoneFoundKeepsTheExecution", func(t *testing.T) {
		t.Parallel()
		fp := &fakePractice{search: &algoitny.CounterexampleResult{Tried: 9, Message: "none found within the budget: 9 inputs tried in 1.0 s"}}
		b := setup(t, fp)
		h := b.failedExecution(t)
		done := b.run(t, &algoitny.Job{Type: algoitny.JobCounterexample, HistoryID: h.ID, Platform: h.Platform, ProblemID: h.ProblemID})
		got := algoitnytest.Must[*algoitny.SearchHistory](t)(b.db.GetHistory(algoitny.WithFreshReads(context.Background()), h.Ref()))
		var res algoitny.CounterexampleResult
		if err := json.Unmarshal([]byte(done.Result), &res); err != nil || done.Status != algoitny.JobCompleted || res.Found || res.Tried != 9 || got.Counterexample != nil {
			t.Fatalf("job %+v, execution %+v", done, got)
		}
	})
}

// failedExecution stores a WRONG_ANSWER execution of b's user on b's problem.
func (b *executeBundle) failedExecution(t *testing.T) *algoitny.SearchHistory {
	t.Helper()
	h := &algoitny.SearchHistory{UserID: b.user.ID, UserEmail: b.user.Email, Platform: b.problem.Platform, ProblemID: b.problem.ProblemID,
		ProblemTitle: b.problem.Title, Language: algoitny.LanguagePython, Code: "print(8)", Verdict: algoitny.VerdictWrongAnswer, TotalCount: 3}
	algoitnytest.OK(t, b.db.CreateHistory(context.Background(), h))
	return h
}
