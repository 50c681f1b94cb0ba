package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/llm"
	"github.com/riverqueue/river"
)

// maxHintTests bounds the failed tests sent to the hint provider.
const maxHintTests = 5

// hintWorker runs HINT_GENERATION jobs: it explains a failed execution with
// the configured LLM provider, streaming the text to hintProgress
// subscribers, and stores the hints on the execution.
type hintWorker struct {
	river.WorkerDefaults[HintArgs]
	runner *Runner
}

// Work implements river.Worker.
func (w *hintWorker) Work(ctx context.Context, job *river.Job[HintArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		ref := algoitny.HistoryRef{UserID: rec.UserID, ID: rec.HistoryID}
		h, err := r.cfg.Store.GetHistory(ctx, ref)
		if algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return permanent(err, "the execution no longer exists")
		}
		if err != nil {
			return err
		}
		if len(h.Hints) > 0 { // asked again: the hints are already there
			r.cfg.Events.PublishHint(ctx, algoitny.HintEvent{History: ref, Done: true, Hints: h.Hints})
			return r.finishHints(ctx, rec, h.Hints, "stored")
		}
		p, tests, err := r.cfg.Store.GetProblemWithTestCases(ctx, algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})
		if algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return permanent(err, "the problem no longer exists")
		}
		if err != nil {
			return err
		}
		r.progress(ctx, rec, "thinking", "asking "+r.cfg.LLM.Name()+" for hints", -1)
		hints, err := r.cfg.LLM.Hints(ctx, hintRequest(p, tests, h), func(delta string) {
			r.cfg.Events.PublishHint(ctx, algoitny.HintEvent{History: ref, Delta: delta})
		})
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		if _, err := r.cfg.Store.SetHints(ctx, ref, hints); err != nil {
			return err
		}
		r.cfg.Events.PublishHint(ctx, algoitny.HintEvent{History: ref, Done: true, Hints: hints})
		return r.finishHints(ctx, rec, hints, r.cfg.LLM.Name())
	})
}

func (r *Runner) finishHints(ctx context.Context, rec *algoitny.Job, hints []string, source string) error {
	b, _ := json.Marshal(map[string]any{"hints": hints, "provider": source})
	result := string(b)
	return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, Result: &result}, "hints ready")
}

// hintRequest gathers what the provider needs: the failed tests (with their
// data) first, then one passed test for contrast.
func hintRequest(p *algoitny.Problem, tests []*algoitny.TestCase, h *algoitny.SearchHistory) llm.HintRequest {
	byID := make(map[string]*algoitny.TestCase, len(tests))
	for _, tc := range tests {
		byID[tc.ID] = tc
	}
	req := llm.HintRequest{Problem: *p, Language: h.Language, Code: h.Code, Verdict: h.Verdict, CompileMessage: h.CompileMessage,
		Counterexample: h.Counterexample}
	var passed *llm.HintTest
	for i, tr := range h.TestResults {
		tc := byID[tr.TestCaseID]
		if tc == nil {
			continue
		}
		t := llm.HintTest{Input: clip(tc.Input), Expected: clip(tc.Output), Result: tr, Stderr: tr.Stderr, Number: i + 1}
		if tr.Verdict == algoitny.VerdictAccepted {
			if passed == nil {
				passed = &t
			}
			continue
		}
		if len(req.Tests) < maxHintTests {
			req.Tests = append(req.Tests, t)
		}
	}
	if passed != nil {
		req.Tests = append(req.Tests, *passed)
	}
	return req
}

// clip keeps test data small enough for a prompt (providers truncate again).
func clip(s string) string {
	const n = 64 << 10
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// scriptWorker runs SCRIPT_GENERATION jobs: an LLM (or the offline
// provider) writes a test-case generator for the problem described on the
// job. saveProblem then runs it.
type scriptWorker struct {
	river.WorkerDefaults[ScriptArgs]
	runner *Runner
}

// Work implements river.Worker.
func (w *scriptWorker) Work(ctx context.Context, job *river.Job[ScriptArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		r.progress(ctx, rec, "writing generator", "asking "+r.cfg.LLM.Name()+" for a test generator", -1)
		gen, err := r.cfg.LLM.Generator(ctx, llm.GeneratorRequest{Problem: algoitny.Problem{
			Platform: rec.Platform, ProblemID: rec.ProblemID, Title: rec.Title, ProblemURL: rec.ProblemURL, Tags: rec.Tags,
			SolutionCode: rec.SolutionCode, Language: rec.Language, Constraints: rec.Constraints,
		}, TestCount: 20})
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		b, _ := json.Marshal(algoitny.ScriptResult{GeneratorLanguage: gen.Language, Notes: gen.Notes, Provider: r.cfg.LLM.Name()})
		result := string(b)
		return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, GeneratorCode: &gen.Code, Result: &result}, "generator ready")
	})
}

// extractWorker runs PROBLEM_EXTRACTION jobs: it fetches a judge's problem
// page (through the SSRF-safe client) and reads the statement, limits,
// constraints and samples from it; the result is stored on the job.
type extractWorker struct {
	river.WorkerDefaults[ExtractArgs]
	runner *Runner
}

// Work implements river.Worker.
func (w *extractWorker) Work(ctx context.Context, job *river.Job[ExtractArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		r.progress(ctx, rec, "fetching page", rec.ProblemURL, 10)
		resp, err := r.cfg.Fetch.Get(ctx, rec.ProblemURL)
		if algoitny.IsCode(err, algoitny.EINVALID) || isForbidden(err) {
			return permanent(err, "the URL cannot be fetched: %s", userMessage(err))
		}
		if err != nil {
			return fmt.Errorf("fetch page: %w", err)
		}
		switch {
		case resp.StatusCode == 404 || resp.StatusCode == 410:
			return permanent(nil, "the page does not exist (HTTP %d)", resp.StatusCode)
		case resp.StatusCode >= 400:
			return fmt.Errorf("fetch page: HTTP %d", resp.StatusCode) // retried
		}
		r.progress(ctx, rec, "reading page", fmt.Sprintf("%d bytes", len(resp.Body)), 50)
		ex, err := r.cfg.LLM.ExtractProblem(ctx, r.pageURL(resp.FinalURL), resp.Body)
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		ref, created, err := r.draftProblem(ctx, rec, owner, ex)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(extractResult{ExtractedProblem: ex, ProblemCreated: created})
		result := string(b)
		// The job points to its problem: job { problem platform problemId }.
		return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, Result: &result, Problem: &ref}, "extracted "+strings.TrimSpace(ex.Title))
	})
}

// extractResult is the JSON result of a PROBLEM_EXTRACTION job.
type extractResult struct {
	llm.ExtractedProblem
	// ProblemCreated is false when the problem already existed.
	ProblemCreated bool `json:"problemCreated"`
}

// Bounds of what extraction stores on a draft (the limits of
// internal/problems for tags; statements are only ever extracted).
const (
	maxStatementRunes = 20_000
	maxDraftTags      = 20
	maxDraftTagRunes  = 50
)

// draftProblem registers an extracted problem as a draft that needs review,
// with its statement, tags and samples (as test cases), on behalf of the
// job's user and within their plan's problem limit. It returns the
// problem's reference, and false when the problem existed already (it is
// left as it is).
func (r *Runner) draftProblem(ctx context.Context, rec *algoitny.Job, u *algoitny.User, ex llm.ExtractedProblem) (algoitny.ProblemRef, bool, error) {
	ref := algoitny.ProblemRef{Platform: ex.Platform, ProblemID: ex.ProblemID}
	if ex.Platform == "" || ex.ProblemID == "" {
		return ref, false, permanent(nil, "the page does not say which problem it is")
	}
	if u == nil {
		return ref, false, permanent(nil, "the extraction has no account")
	}
	limit := algoitny.Unlimited
	if !u.IsStaff {
		plan, err := r.cfg.Store.GetPlan(ctx, u.PlanName)
		if err != nil {
			return ref, false, err
		}
		limit = plan.MaxProblems
	}
	p := &algoitny.Problem{
		Platform: ex.Platform, ProblemID: ex.ProblemID, Title: pageText(ex.Title, 200), ProblemURL: ex.URL,
		Language: algoitny.LanguagePython, Constraints: pageText(ex.Constraints, 4000), Tags: draftTags(ex.Tags),
		Statement:   pageText(ex.Statement(), maxStatementRunes),
		TimeLimitMs: clamp(ex.TimeLimitMs, 100, 20_000, 2000), MemoryLimitMB: clamp(ex.MemoryLimitMB, 16, 2048, 256),
		Checker: algoitny.Checker{Kind: algoitny.CheckerLines}, NeedsReview: true, CreatedBy: rec.UserID,
	}
	switch err := r.cfg.Store.CreateProblem(ctx, p, limit); {
	case algoitny.IsCode(err, algoitny.ECONFLICT):
		return ref, false, nil // extracted before: the stored problem stays as it is
	case algoitny.IsCode(err, algoitny.ERATELIMITED):
		return ref, false, permanent(err, "your plan's problem limit is reached")
	case err != nil:
		return ref, false, err
	}
	var samples []*algoitny.TestCase
	for _, s := range ex.Samples {
		samples = append(samples, &algoitny.TestCase{Input: s.Input, Output: s.Output, Generator: "sample"})
	}
	if len(samples) > 0 {
		if err := r.cfg.Store.AddTestCases(ctx, p.Ref(), samples); err != nil {
			// Undone, so that the retry drafts it again rather than finding
			// it "extracted before" without its samples.
			_ = r.cfg.Store.DiscardProblem(context.WithoutCancel(ctx), p.Ref(), p.CreatedBy)
			return ref, false, err
		}
	}
	return ref, true, nil
}

// pageText is text read from a page as a draft stores it: without NUL
// bytes (algoitny.CheckText), trimmed, at most n runes.
func pageText(s string, n int) string {
	return truncateRunes(strings.ReplaceAll(s, "\x00", ""), n)
}

// draftTags bounds extracted tags as problems.Service bounds users' ones.
func draftTags(tags []string) []string {
	out := []string{}
	for _, t := range tags {
		if t = pageText(t, maxDraftTagRunes); t != "" && len(out) < maxDraftTags {
			out = append(out, t)
		}
	}
	return out
}

func clamp(v, lo, hi, def int) int {
	if v == 0 {
		return def
	}
	return min(max(v, lo), hi)
}

func truncateRunes(s string, n int) string {
	if r := []rune(strings.TrimSpace(s)); len(r) > n {
		return string(r[:n])
	}
	return strings.TrimSpace(s)
}

// pageURL is the address extraction reads a page as: the page's own, or for
// a stand-in host (tests) the real judge's address of the same path.
func (r *Runner) pageURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !slices.Contains(r.cfg.StandInHosts, u.Host) {
		return raw
	}
	switch {
	case strings.HasPrefix(u.Path, "/problem/"):
		return "https://www.acmicpc.net" + u.Path
	case strings.HasPrefix(u.Path, "/problemset/") || strings.HasPrefix(u.Path, "/contest/"):
		return "https://codeforces.com" + u.Path
	case strings.HasPrefix(u.Path, "/contests/"):
		return "https://atcoder.jp" + u.Path
	}
	return raw
}
