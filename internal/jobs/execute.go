package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/riverqueue/river"
)

// executeWorker runs CODE_EXECUTION jobs: it judges the submitted code
// against the problem's test cases in the sandbox, stores and publishes
// each test as it finishes, and stores the execution (SearchHistory) with
// its results. A retried or rescued job resumes: the tests an earlier
// attempt stored are not run again.
//
// It reads and writes through the runner's frame (run, the attempt's
// batcher, complete) and, for what is its own, through store and judge: interfaces,
// so that a test runs it with a stand-in judge.
type executeWorker struct {
	river.WorkerDefaults[ExecuteArgs]
	runner *Runner
	store  ExecutionStore
	judge  Judge
}

// Work implements river.Worker.
func (w *executeWorker) Work(ctx context.Context, job *river.Job[ExecuteArgs]) error {
	return run(ctx, w.runner, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		return w.execute(ctx, attemptCount{job.Attempt, job.MaxAttempts}, rec, owner)
	})
}

// attemptCount numbers an attempt of a job and says how many it may have.
type attemptCount struct{ n, max int }

func (a attemptCount) last() bool { return a.n >= a.max }

// execute is one attempt of job rec: it judges the tests no earlier
// attempt finished, then completes the job with the execution.
func (w *executeWorker) execute(ctx context.Context, at attemptCount, rec *algoitny.Job, owner *algoitny.User) error {
	r := w.runner
	p, tests, results, err := w.load(ctx, rec, at.n)
	if err != nil {
		return err
	}
	if owner == nil {
		return permanent(nil, "the execution has no account")
	}
	sub, index := submission(rec, p, tests, results)
	msg := fmt.Sprintf("running %d tests", len(tests))
	if len(sub.Tests) < len(tests) {
		msg = fmt.Sprintf("running %d of %d tests (the others finished in an earlier attempt)", len(sub.Tests), len(tests))
	}
	// Stored and published by the attempt's batcher, in order, while the
	// judge goes on.
	r.progress(ctx, rec, "judging", msg, 0)
	res, err := w.judgeTests(ctx, sub, func(tr judge.TestResult) {
		i, result := index[tr.Index], testResult(tr)
		results[i] = &result
		r.announce(ctx, algoitny.ExecutionEvent{JobID: rec.ID, Index: i, Total: len(tests), Result: result})
	})
	// The tests the batcher has not written yet are stored with the
	// execution instead, in the transaction that completes the job, and
	// announced after it, before the job's end. The others are stored
	// and announced by now.
	pending := batcherFrom(ctx).takeTests()
	if errors.Is(err, judge.ErrCompilerTimeout) && at.last() {
		// The machine, every time: the execution says so instead of
		// failing without one (or blaming the code).
		res = judge.Result{Verdict: judge.InternalError, CompileOutput: fmt.Sprintf("The compiler did not finish within its time limit "+
			"in %d attempts: the judge was overloaded. This is not a compilation error in your code; submit it again later.", at.n)}
		return r.complete(ctx, rec, history(rec, p, owner, res, results), pending)
	}
	if err != nil {
		r.announceTaken(ctx, pending) // a retry resumes from them
		return judgeFailure(err, rec.Language)
	}
	if res.Verdict != judge.CompilationError && slices.Contains(results, nil) {
		r.announceTaken(ctx, pending)
		return errors.New("the judge returned without every test's result")
	}
	return r.complete(ctx, rec, history(rec, p, owner, res, results), pending)
}

// load reads rec's problem and all its test cases (one Query) and, on a
// retry, the results an earlier attempt stored (nil where a test is still
// to run). A deleted problem or one without tests fails the job for good.
func (w *executeWorker) load(ctx context.Context, rec *algoitny.Job, attempt int) (*algoitny.Problem, []*algoitny.TestCase, []*algoitny.TestResult, error) {
	p, tests, err := w.store.GetProblemWithTestCases(ctx, algoitny.ProblemRef{Platform: rec.Platform, ProblemID: rec.ProblemID})
	if algoitny.IsCode(err, algoitny.ENOTFOUND) || (err == nil && (p.IsDeleted || len(tests) == 0)) {
		return nil, nil, nil, permanent(err, "the problem was deleted or has no test cases")
	}
	if err != nil {
		return nil, nil, nil, err
	}
	// Tests an earlier attempt finished (its worker died, or it failed
	// after judging them) are neither judged nor announced again.
	results := make([]*algoitny.TestResult, len(tests))
	if attempt > 1 {
		if results, err = finishedTests(ctx, w.store, rec.ID, tests); err != nil {
			return nil, nil, nil, err
		}
	}
	return p, tests, results, nil
}

// submission is what the judge runs for rec: the tests without a result,
// and for each of them its index in tests.
func submission(rec *algoitny.Job, p *algoitny.Problem, tests []*algoitny.TestCase, results []*algoitny.TestResult) (judge.Submission, []int) {
	sub := judge.Submission{
		Language: string(rec.Language), Source: rec.SolutionCode,
		Limits:  judge.Limits{CPUTime: time.Duration(p.TimeLimitMs) * time.Millisecond, MemoryBytes: int64(p.MemoryLimitMB) << 20},
		Checker: judgeChecker(p.Checker), Interactor: judgeInteractor(p.Interactor),
	}
	// The checker's or interactor's points are read as the problem means
	// them; the judge reports them as the fraction of the test.
	// A multi-pass problem's passes, likewise.
	sub.Checker.Points, sub.Checker.Passes = judge.PointsScale(p.CheckerPoints), p.ValidationPasses
	if sub.Interactor != nil {
		sub.Interactor.Points, sub.Interactor.Passes = judge.PointsScale(p.CheckerPoints), p.ValidationPasses
	}
	var index []int
	for i, tc := range tests {
		if results[i] == nil {
			index = append(index, i)
			sub.Tests = append(sub.Tests, judge.TestCase{ID: tc.ID, Input: []byte(tc.Input), Expected: []byte(tc.Output), Points: tc.Points})
		}
	}
	return sub, index
}

// judgeTests judges sub, reporting each test through each; with no test
// left to run (an earlier attempt finished them all) there is nothing to
// judge.
func (w *executeWorker) judgeTests(ctx context.Context, sub judge.Submission, each func(judge.TestResult)) (judge.Result, error) {
	if len(sub.Tests) == 0 {
		return judge.Result{}, nil
	}
	return w.judge.Judge(ctx, sub, each)
}

// judgeFailure is the attempt's error for the judge's err: permanent
// when no retry can help; a compiler that did not finish in time is the
// machine's failure, retried (a user-readable one: the job's progress
// shows it).
func judgeFailure(err error, lang algoitny.Language) error {
	switch {
	case errors.Is(err, judge.ErrUnknownLanguage), errors.Is(err, judge.ErrLanguageUnavailable):
		return permanent(err, "%s is not available on this server", lang)
	case errors.Is(err, judge.ErrInvalidInput):
		return permanent(err, "the problem's judging settings are invalid")
	case errors.Is(err, judge.ErrCompilerTimeout):
		return &algoitny.Error{Code: algoitny.EUNAVAILABLE, Err: err,
			Message: "the compiler did not finish within its time limit: the judge is overloaded (not an error in the code)"}
	}
	return err
}

// complete stores the execution h of job rec and completes the job in one
// write, then announces the tests taken from the batcher (pending) and the
// job's end, in that order.
//
// Should that write fail, the pending tests are stored and announced
// first, as they would have been without it: a retry resumes from them.
// An execution an earlier attempt stored (it could not complete the job
// in the same write then) is kept, and the job completed with it.
func (r *Runner) complete(ctx context.Context, rec *algoitny.Job, h *algoitny.SearchHistory, pending []algoitny.ExecutionEvent) error {
	bg := context.WithoutCancel(ctx)
	summary, _ := json.Marshal(map[string]any{"verdict": h.Verdict, "passed": h.PassedCount, "total": h.TotalCount, "maxTimeMs": h.MaxTimeMs, "maxMemoryKb": h.MaxMemoryKB})
	result := string(summary)
	none := "" // an earlier attempt's "attempt 1 failed …; retrying" is history
	t := algoitny.JobTransition{Status: algoitny.JobCompleted, HistoryID: &h.ID, Result: &result, ErrorMessage: &none}
	step := string(h.Verdict)
	p := &algoitny.JobProgress{Step: step, Percent: 100}
	done, err := r.cfg.Store.CompleteExecution(bg, h, rec, t, p)
	if err != nil {
		r.announceTaken(ctx, pending)
		switch {
		case algoitny.IsCode(err, algoitny.ENOTFOUND):
			return nil // the account was deleted
		case !algoitny.IsCode(err, algoitny.ECONFLICT):
			return err
		}
		// Cancelled meanwhile (finish leaves it so), or stored by an
		// earlier attempt: finish completes the job with that execution.
		if err := r.cfg.Store.CreateHistory(bg, h); err != nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
			return err
		}
		return r.finish(ctx, rec, t, step)
	}
	done.History = h
	r.cfg.Events.PublishJobAfterTests(bg, done, p, pending)
	if err := r.cfg.Store.CountExecution(bg, h); err != nil {
		r.cfg.Logger.WarnContext(ctx, "count execution", "job", rec.ID, "err", err)
	}
	return nil
}

// announceTaken stores and announces tests taken from the batcher that
// will not be stored with the execution.
func (r *Runner) announceTaken(ctx context.Context, pending []algoitny.ExecutionEvent) {
	if len(pending) > 0 {
		r.announceNow(context.WithoutCancel(ctx), pending)
	}
}

func judgeChecker(c algoitny.Checker) judge.Checker {
	return judge.Checker{
		Kind:   judge.CheckerKind(c.Kind),
		AbsEps: c.Epsilon, RelEps: c.Epsilon,
		Language: string(c.Language), Source: c.Code,
		Files: filesOf(c.Files), Args: c.Args,
	}
}

// judgeInteractor is an interactive problem's interactor for the judge;
// nil for a batch problem.
func judgeInteractor(it algoitny.Program) *judge.Interactor {
	if it.IsZero() {
		return nil
	}
	out := &judge.Interactor{Language: string(it.Language), Source: it.Code, Files: filesOf(it.Files), Args: it.Args}
	if it.Protocol == algoitny.ProtocolICPC {
		out.Protocol = judge.InteractICPC
	}
	return out
}

// filesOf is a program's further files as the judge takes them.
func filesOf(files map[string]string) map[string][]byte {
	if len(files) == 0 {
		return nil
	}
	out := make(map[string][]byte, len(files))
	for name, data := range files {
		out[name] = []byte(data)
	}
	return out
}

func testResult(tr judge.TestResult) algoitny.TestResult {
	return algoitny.TestResult{
		TestCaseID: tr.TestID, Verdict: algoitny.Verdict(tr.Verdict), Output: tr.Output, Stderr: tr.Stderr,
		TimeMs: int(tr.CPUTime.Milliseconds()), MemoryKB: int(tr.MemoryBytes >> 10), Message: tr.Message, Points: tr.Points,
	}
}

// history builds the execution record of a judged job: res says whether
// the source compiled, results holds every test's result by index (some
// may come from an earlier attempt of the job; one without any is a
// submission never judged: a compilation error, or a compiler that never
// finished). A problem with subtasks gets its score
// (algoitny.ScoreSubtasks: zero when the source was not judged).
func history(rec *algoitny.Job, p *algoitny.Problem, owner *algoitny.User, res judge.Result, results []*algoitny.TestResult) *algoitny.SearchHistory {
	h := &algoitny.SearchHistory{
		ID: rec.HistoryID, UserID: rec.UserID, UserEmail: owner.Email,
		Platform: p.Platform, ProblemID: p.ProblemID, ProblemTitle: p.Title, ProblemInternalID: p.InternalID,
		// Public only while the problem is published (it may have turned
		// back into a draft since the job was queued).
		Language: rec.Language, Code: rec.SolutionCode, IsCodePublic: rec.IsCodePublic && p.IsPublished(), JobID: rec.ID,
		Ranked:  p.IsPublished(),
		Verdict: algoitny.Verdict(res.Verdict), CompileMessage: res.CompileOutput, TotalCount: len(results),
	}
	if res.Verdict == judge.CompilationError || slices.Contains(results, nil) {
		h.FailedCount = len(results)
		h.Score = algoitny.ScoreSubtasks(p.Subtasks, nil)
		return h
	}
	// The judge's rules (judge.Result): ACCEPTED when every test passed,
	// else the verdict of the first failed test by index.
	h.Verdict = algoitny.Verdict(judge.Accepted)
	for _, tr := range results {
		h.TestResults = append(h.TestResults, *tr)
		if tr.Verdict == algoitny.Verdict(judge.Accepted) {
			h.PassedCount++
		} else {
			h.FailedCount++
			if h.Verdict == algoitny.Verdict(judge.Accepted) {
				h.Verdict = tr.Verdict
			}
		}
		h.MaxTimeMs = max(h.MaxTimeMs, tr.TimeMs)
		h.MaxMemoryKB = max(h.MaxMemoryKB, tr.MemoryKB)
	}
	h.Score = algoitny.ScoreSubtasks(p.Subtasks, h.TestResults)
	return h
}

// finishedTests returns, by index, the tests of job jobID that an earlier
// attempt finished and stored (nil for the others). A stored test counts
// only if it was of the same test case: the problem's tests may have
// changed since, and those are judged again.
func finishedTests(ctx context.Context, store ExecutionStore, jobID string, tests []*algoitny.TestCase) ([]*algoitny.TestResult, error) {
	results := make([]*algoitny.TestResult, len(tests))
	stored, err := store.ListExecutionTests(ctx, jobID)
	if err != nil {
		return nil, err
	}
	for _, ev := range stored {
		if ev.Total == len(tests) && ev.Index >= 0 && ev.Index < len(tests) && ev.Result.TestCaseID == tests[ev.Index].ID {
			result := ev.Result
			results[ev.Index] = &result
		}
	}
	return results, nil
}
