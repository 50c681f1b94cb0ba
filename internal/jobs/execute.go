package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/riverqueue/river"
)

// executeWorker runs CODE_EXECUTION jobs: it judges the submitted code
// against the problem's test cases in the sandbox, publishes one event per
// finished test, and stores the execution (SearchHistory) with its results.
type executeWorker struct {
	river.WorkerDefaults[ExecuteArgs]
	runner *Runner
}

// Work implements river.Worker.
func (w *executeWorker) Work(ctx context.Context, job *river.Job[ExecuteArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		// The problem and all its test cases in one Query.
		p, tests, err := r.cfg.Store.GetProblemWithTestCases(ctx, algoitny.ProblemRef{Platform: rec.Platform, ProblemID: rec.ProblemID})
		if algoitny.IsCode(err, algoitny.ENOTFOUND) || (err == nil && (p.IsDeleted || len(tests) == 0)) {
			return permanent(err, "the problem was deleted or has no test cases")
		}
		if err != nil {
			return err
		}
		if owner == nil {
			return permanent(nil, "the execution has no account")
		}
		sub := judge.Submission{
			Language: string(rec.Language), Source: rec.SolutionCode,
			Limits:  judge.Limits{CPUTime: time.Duration(p.TimeLimitMs) * time.Millisecond, MemoryBytes: int64(p.MemoryLimitMB) << 20},
			Checker: judgeChecker(p.Checker),
		}
		for _, tc := range tests {
			sub.Tests = append(sub.Tests, judge.TestCase{ID: tc.ID, Input: []byte(tc.Input), Expected: []byte(tc.Output)})
		}
		r.progress(ctx, rec, "judging", fmt.Sprintf("running %d tests", len(tests)), 0)
		res, err := r.cfg.Judge.Judge(ctx, sub, func(tr judge.TestResult) {
			r.cfg.Events.PublishExecution(ctx, algoitny.ExecutionEvent{JobID: rec.ID, Index: tr.Index, Total: len(tests), Result: testResult(tr)})
		})
		switch {
		case errors.Is(err, judge.ErrUnknownLanguage), errors.Is(err, judge.ErrLanguageUnavailable):
			return permanent(err, "%s is not available on this server", rec.Language)
		case errors.Is(err, judge.ErrInvalidInput):
			return permanent(err, "the problem's judging settings are invalid")
		case err != nil:
			return err
		}
		h := history(rec, p, owner, res)
		if err := r.cfg.Store.CreateHistory(ctx, h); err != nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
			return err // ECONFLICT: an earlier attempt stored it
		}
		summary, _ := json.Marshal(map[string]any{"verdict": h.Verdict, "passed": h.PassedCount, "total": h.TotalCount, "maxTimeMs": h.MaxTimeMs, "maxMemoryKb": h.MaxMemoryKB})
		result := string(summary)
		return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, HistoryID: &h.ID, Result: &result}, string(h.Verdict))
	})
}

func judgeChecker(c algoitny.Checker) judge.Checker {
	return judge.Checker{
		Kind:   judge.CheckerKind(c.Kind),
		AbsEps: c.Epsilon, RelEps: c.Epsilon,
		Language: string(c.Language), Source: c.Code,
	}
}

func testResult(tr judge.TestResult) algoitny.TestResult {
	return algoitny.TestResult{
		TestCaseID: tr.TestID, Verdict: algoitny.Verdict(tr.Verdict), Output: tr.Output, Stderr: tr.Stderr,
		TimeMs: int(tr.CPUTime.Milliseconds()), MemoryKB: int(tr.MemoryBytes >> 10), Message: tr.Message,
	}
}

// history builds the execution record of a judged job.
func history(rec *algoitny.Job, p *algoitny.Problem, owner *algoitny.User, res judge.Result) *algoitny.SearchHistory {
	h := &algoitny.SearchHistory{
		ID: rec.HistoryID, UserID: rec.UserID, UserEmail: owner.Email,
		Platform: p.Platform, ProblemID: p.ProblemID, ProblemTitle: p.Title, ProblemInternalID: p.InternalID,
		// Public only while the problem is published (it may have turned
		// back into a draft since the job was queued).
		Language: rec.Language, Code: rec.SolutionCode, IsCodePublic: rec.IsCodePublic && p.IsPublished(), JobID: rec.ID,
		Verdict: algoitny.Verdict(res.Verdict), CompileMessage: res.CompileOutput,
		PassedCount: res.Passed, FailedCount: res.Failed, TotalCount: res.Total,
		MaxTimeMs: int(res.MaxCPUTime.Milliseconds()), MaxMemoryKB: int(res.MaxMemoryBytes >> 10),
	}
	if res.Verdict == judge.CompilationError {
		h.FailedCount = res.Total
	}
	for _, tr := range res.Tests {
		h.TestResults = append(h.TestResults, testResult(tr))
	}
	return h
}
