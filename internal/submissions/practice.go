package submissions

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// MaxStdinBytes bounds the input of a code run.
const MaxStdinBytes = 64 << 10

// RunInput is code to run once on the user's own input (RunCode).
type RunInput struct {
	Language algoitny.Language
	Code     string
	Stdin    string
	// Problem, when set, names the problem whose time and memory limits
	// the run gets (else the judge's defaults: 2 s, 256 MB); both its
	// fields are required then.
	Problem        *algoitny.ProblemRef
	IdempotencyKey string
}

// RunCode starts a CODE_RUN job: the code compiled and run once on Stdin
// in the sandbox. It charges one code run from the caller's daily quota
// (its own, not executions') and stores no execution; a repeated
// IdempotencyKey returns the first job without charging again. Returns
// EUNAUTHENTICATED, EINVALID (language — also one no live judge worker
// runs —, code, stdin, idempotencyKey), ENOTFOUND (a named problem you
// may not see), ERATELIMITED.
func (s *Service) RunCode(ctx context.Context, in RunInput) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	if err := validateCode(in.Language, in.Code); err != nil {
		return nil, err
	}
	if len(in.Stdin) > MaxStdinBytes || !utf8.ValidString(in.Stdin) || strings.ContainsRune(in.Stdin, 0) {
		return nil, algoitny.Invalid("stdin", "stdin must be valid UTF-8 without NUL bytes, at most %d KB", MaxStdinBytes>>10)
	}
	if err := validateIdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, err
	}
	if existing, err := s.existing(ctx, in.IdempotencyKey); existing != nil || err != nil {
		return existing, err
	}
	if err := s.requireOffered(ctx, in.Language); err != nil {
		return nil, err
	}
	params := algoitny.CodeRunParams{Stdin: in.Stdin}
	job := &algoitny.Job{Type: algoitny.JobCodeRun, UserID: a.UserID(), IdempotencyKey: in.IdempotencyKey,
		Language: in.Language, SolutionCode: in.Code}
	log := &algoitny.UsageLog{Action: algoitny.ActionCodeRun}
	if in.Problem != nil {
		if in.Problem.Platform == "" || in.Problem.ProblemID == "" {
			return nil, algoitny.Invalid("problemId", "platform and problemId go together")
		}
		p, err := s.Problems.Get(ctx, *in.Problem)
		if err != nil {
			return nil, err
		}
		params.TimeLimitMs, params.MemoryLimitMB = p.TimeLimitMs, p.MemoryLimitMB
		job.Platform, job.ProblemID, job.Title = p.Platform, p.ProblemID, p.Title
		log.Platform, log.ProblemID = p.Platform, p.ProblemID
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, algoitny.Internal(err, "encode the run's parameters")
	}
	job.Params = string(b)
	return s.enqueue(ctx, job, log)
}

// validateCode checks a submission's language and code (EINVALID).
func validateCode(lang algoitny.Language, code string) error {
	if _, err := algoitny.ParseLanguage(string(lang)); err != nil {
		return err
	}
	if strings.TrimSpace(code) == "" {
		return algoitny.Invalid("code", "code is required")
	}
	if len(code) > MaxCodeBytes {
		return algoitny.Invalid("code", "code must be at most %d KB", MaxCodeBytes>>10)
	}
	if !utf8.ValidString(code) {
		return algoitny.Invalid("code", "code must be valid UTF-8")
	}
	return nil
}

// SearchCheck says whether a problem supports counterexample searches
// (practice.Supports: EINVALID otherwise).
type SearchCheck func(p *algoitny.Problem) error

// FindCounterexample starts a COUNTEREXAMPLE job for one of the caller's
// failed executions: the problem's generator, validator and reference
// solution against the execution's code, the counterexample stored on the
// execution. It charges one counterexample search from the caller's daily
// quota. Only the owner may search (staff too see only their own).
// Returns EUNAUTHENTICATED, ENOTFOUND (no such execution of yours, or its
// problem is gone), EINVALID (every test passed, the code did not
// compile, or the problem keeps no generator and reference solution, or
// is interactive), ERATELIMITED.
func (s *Service) FindCounterexample(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	h, err := s.Store.GetHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	if h.UserID != a.UserID() {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	switch h.Verdict {
	case algoitny.VerdictAccepted:
		return nil, algoitny.Invalid("historyId", "every test passed; there is no counterexample to find")
	case algoitny.VerdictCompilationError:
		return nil, algoitny.Invalid("historyId", "the code did not compile; fix that first")
	}
	p, err := s.Problems.Get(ctx, algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})
	if err != nil {
		return nil, err
	}
	if s.Searchable != nil {
		if err := s.Searchable(p); err != nil {
			return nil, err
		}
	}
	job := &algoitny.Job{
		Type: algoitny.JobCounterexample, UserID: h.UserID, HistoryID: h.ID,
		Platform: h.Platform, ProblemID: h.ProblemID, Title: h.ProblemTitle, Language: h.Language,
	}
	log := &algoitny.UsageLog{Action: algoitny.ActionCounterexample, Platform: h.Platform, ProblemID: h.ProblemID, HistoryID: h.ID}
	return s.enqueue(ctx, job, log)
}
