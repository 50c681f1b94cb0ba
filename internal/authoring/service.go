package authoring

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problems"
)

// Test counts of one saveProblem.
const (
	DefaultTestCount = 20
	MaxTestCount     = 100
)

// Problems registers problems with the caller's rights (problems.Service).
type Problems interface {
	Get(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
	Create(ctx context.Context, in problems.CreateInput) (*algoitny.Problem, error)
	AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) (*algoitny.Problem, error)
	Update(ctx context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error)
}

// Jobs reads the caller's jobs (jobs.Service).
type Jobs interface {
	Get(ctx context.Context, id string) (*algoitny.Job, error)
}

// Service is saveProblem: test production for a problem.
type Service struct {
	Problems Problems
	Jobs     Jobs
	Judge    *judge.Engine
}

// SaveInput names the generator: a completed SCRIPT_GENERATION job of the
// caller (its problem and generator), or a problem with generator code given
// directly.
type SaveInput struct {
	JobID     string
	Problem   algoitny.ProblemRef
	Generator Source
	Validator *Source
	TestCount int
}

// SaveProblem produces TestCount tests (Produce) for the problem, creating
// it as a draft first if it came from a job and does not exist yet, stores
// them (each with the generator and seed it came from) and marks the problem
// completed. The caller must be able to register problems and to edit an
// existing problem. Returns EUNAUTHENTICATED, EFORBIDDEN, ENOTFOUND,
// ERATELIMITED (plan's problem limit) and EINVALID — naming the program and
// the seed — when production fails; nothing is stored then.
func (s *Service) SaveProblem(ctx context.Context, in SaveInput) (*algoitny.Problem, error) {
	if err := problems.CheckCanRegister(ctx); err != nil {
		return nil, err
	}
	if in.TestCount == 0 {
		in.TestCount = DefaultTestCount
	}
	if in.TestCount < 1 || in.TestCount > MaxTestCount {
		return nil, algoitny.Invalid("testCount", "testCount must be between 1 and %d", MaxTestCount)
	}
	if in.Validator != nil && strings.TrimSpace(in.Validator.Code) == "" {
		in.Validator = nil
	}
	var draft *algoitny.Problem // a problem to create from the job
	if in.JobID != "" {
		job, err := s.Jobs.Get(ctx, in.JobID)
		if err != nil {
			return nil, err
		}
		if job.Type != algoitny.JobScriptGeneration || job.Status != algoitny.JobCompleted || job.GeneratorCode == "" {
			return nil, algoitny.Invalid("jobId", "the job is not a completed SCRIPT_GENERATION job")
		}
		var res algoitny.ScriptResult
		json.Unmarshal([]byte(job.Result), &res)
		in.Problem = algoitny.ProblemRef{Platform: job.Platform, ProblemID: job.ProblemID}
		in.Generator = Source{Language: res.GeneratorLanguage, Code: job.GeneratorCode}
		if in.Generator.Language == "" {
			in.Generator.Language = algoitny.LanguagePython
		}
		draft = &algoitny.Problem{
			Platform: job.Platform, ProblemID: job.ProblemID, Title: job.Title, ProblemURL: job.ProblemURL, Tags: job.Tags,
			SolutionCode: job.SolutionCode, Language: job.Language, Constraints: job.Constraints,
		}
	}
	if strings.TrimSpace(in.Generator.Code) == "" {
		return nil, algoitny.Invalid("generatorCode", "give a jobId or generator code")
	}
	if _, err := algoitny.ParseLanguage(string(in.Generator.Language)); err != nil {
		return nil, algoitny.Invalid("generatorLanguage", "unknown generator language %q", in.Generator.Language)
	}
	p, err := s.Problems.Get(ctx, in.Problem)
	switch {
	case algoitny.IsCode(err, algoitny.ENOTFOUND) && draft != nil:
		p = draft // created below, once the tests are known to be good
	case err != nil:
		return nil, err
	case !algoitny.ActorFrom(ctx).CanEditProblem(p):
		return nil, algoitny.Errorf(algoitny.EFORBIDDEN, "only staff and the problem's author may change it")
	}
	if strings.TrimSpace(p.SolutionCode) == "" {
		return nil, algoitny.Invalid("solutionCode", "the problem has no reference solution")
	}
	limits := judge.Limits{CPUTime: time.Duration(max(p.TimeLimitMs, problems.DefaultTimeLimitMs)) * time.Millisecond, MemoryBytes: int64(max(p.MemoryLimitMB, problems.DefaultMemoryLimitMB)) << 20}
	tests, err := Produce(ctx, s.Judge, Production{
		Generator: in.Generator, Solution: Source{Language: p.Language, Code: p.SolutionCode},
		Validator: in.Validator, Count: in.TestCount, SolutionLimits: limits,
	})
	if err != nil {
		return nil, err
	}
	ref := p.Ref()
	if p == draft {
		if _, err := s.Problems.Create(ctx, problems.CreateInput{Problem: *draft}); err != nil {
			return nil, err
		}
	}
	if _, err := s.Problems.AddTestCases(ctx, ref, tests); err != nil {
		return nil, err
	}
	done := true
	return s.Problems.Update(ctx, ref, algoitny.ProblemUpdate{IsCompleted: &done})
}
