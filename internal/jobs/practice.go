package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/practice"
)

// CodeRunArgs runs a CODE_RUN job.
type CodeRunArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (CodeRunArgs) Kind() string { return "code_run" }

// InsertOpts: a run needs the sandbox, so it goes to the judge's queue;
// retries cover the machine's failures only (a run is deterministic).
func (CodeRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: uniqueByJob, Queue: QueueJudge}
}

// CounterexampleArgs runs a COUNTEREXAMPLE job.
type CounterexampleArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (CounterexampleArgs) Kind() string { return "counterexample" }

// InsertOpts: a search spends its whole budget in the sandbox; one retry
// covers a crash.
func (CounterexampleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 2, UniqueOpts: uniqueByJob, Queue: QueueJudge}
}

// Practice runs the sandboxed work of CODE_RUN and COUNTEREXAMPLE jobs
// (*practice.Runner). EINVALID is the code's or the problem's fault (not
// retried).
type Practice interface {
	RunCode(ctx context.Context, lang algoitny.Language, code string, p algoitny.CodeRunParams) (*algoitny.CodeRunResult, error)
	FindCounterexample(ctx context.Context, in practice.Search) (*algoitny.CounterexampleResult, error)
}

var _ Practice = (*practice.Runner)(nil)

// PracticeStore is what the COUNTEREXAMPLE worker writes besides the
// job's frame (it reads through AIStore).
type PracticeStore interface {
	SetCounterexample(ctx context.Context, ref algoitny.HistoryRef, c *algoitny.Counterexample) (*algoitny.SearchHistory, error)
}

type codeRunWorker struct {
	river.WorkerDefaults[CodeRunArgs]
	runner *Runner
}

// Work runs the job's code once on its input and completes the job with
// the run (algoitny.CodeRunResult); nothing else is stored.
func (w *codeRunWorker) Work(ctx context.Context, job *river.Job[CodeRunArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, _ *algoitny.User) error {
		if r.cfg.Practice == nil {
			return permanent(nil, "this server does not run code")
		}
		var params algoitny.CodeRunParams
		if err := json.Unmarshal([]byte(rec.Params), &params); err != nil {
			return permanent(err, "the job's parameters cannot be read")
		}
		r.progress(ctx, rec, "running", fmt.Sprintf("%d bytes of input", len(params.Stdin)), -1)
		res, err := r.cfg.Practice.RunCode(ctx, rec.Language, rec.SolutionCode, params)
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		return r.finishWith(ctx, rec, res, string(res.Verdict))
	})
}

// finishWith completes rec with res as its JSON result.
func (r *Runner) finishWith(ctx context.Context, rec *algoitny.Job, res any, step string) error {
	b, err := json.Marshal(res)
	if err != nil {
		return permanent(err, "encode the result")
	}
	result := string(b)
	return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, Result: &result}, step)
}

type counterexampleWorker struct {
	river.WorkerDefaults[CounterexampleArgs]
	runner *Runner
}

// Work searches a counterexample for the job's execution, stores the one
// it finds on the execution, and completes the job with the search's
// outcome (algoitny.CounterexampleResult). An execution or problem gone
// meanwhile fails the job.
func (w *counterexampleWorker) Work(ctx context.Context, job *river.Job[CounterexampleArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, _ *algoitny.User) error {
		if r.cfg.Practice == nil {
			return permanent(nil, "this server does not search counterexamples")
		}
		ref := algoitny.HistoryRef{UserID: rec.UserID, ID: rec.HistoryID}
		h, err := r.cfg.Store.GetHistory(ctx, ref)
		if algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return permanent(err, "the execution no longer exists")
		}
		if err != nil {
			return err
		}
		p, tests, err := r.cfg.Store.GetProblemWithTestCases(ctx, algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})
		if algoitny.IsCode(err, algoitny.ENOTFOUND) || (err == nil && p.IsDeleted) {
			return permanent(err, "the problem was deleted")
		}
		if err != nil {
			return err
		}
		res, err := r.cfg.Practice.FindCounterexample(ctx, practice.Search{
			Problem: p, Tests: tests, Language: h.Language, Code: h.Code,
			Budget: r.cfg.CounterexampleBudget, MaxInputs: r.cfg.CounterexampleMaxInputs,
			Progress: func(step string, _ int, detail string, percent int) { r.progress(ctx, rec, step, detail, percent) },
		})
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		step := "none found"
		if res.Found {
			step = "found"
			if _, err := r.cfg.Store.SetCounterexample(context.WithoutCancel(ctx), ref, res.Counterexample); err != nil {
				return err
			}
		}
		return r.finishWith(ctx, rec, res, step)
	})
}
