package authoring

import (
	"context"
	"encoding/json"
	"fmt"
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
	StartProduction(ctx context.Context, ref algoitny.ProblemRef) (int, error)
	GeneratedTestCases(ctx context.Context, ref algoitny.ProblemRef) ([]*algoitny.TestCase, error)
	DeleteGeneratedTests(ctx context.Context, ref algoitny.ProblemRef, drop func(production int) bool, successors map[string]string) (int, error)
	TestCaseData(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error)
}

// Jobs reads the caller's jobs (submissions.Service).
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
// them (each with the generator, seed and arguments it came from) in place
// of the problem's earlier generated tests (hand-written ones stay, and
// the replaced ones leave its subtasks; see replace), keeps the generator
// and validator with the problem, and marks it completed. The caller must be able to register problems and to edit
// an existing problem. Returns EUNAUTHENTICATED, EFORBIDDEN, ENOTFOUND,
// ERATELIMITED (plan's problem limit), ECONFLICT (another run replaced the
// tests meanwhile) and EINVALID — naming the program and the seed — when
// production fails; nothing is stored then.
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
		if err := json.Unmarshal([]byte(job.Result), &res); err != nil {
			return nil, fmt.Errorf("script generation job %s: its result: %w", job.ID, err)
		}
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
	// The programs are kept with the problem: refuse now what could not be
	// stored once the tests are written.
	for field, prog := range map[string]*Source{"generatorCode": &in.Generator, "validatorCode": in.Validator} {
		if prog != nil && len(prog.Code) > problems.MaxCodeBytes {
			return nil, algoitny.Invalid(field, "%s must be at most %d KB", field, problems.MaxCodeBytes>>10)
		}
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
	tests, err := Produce(ctx, s.Judge, Production{
		Generator: in.Generator, Solution: Source{Language: p.Language, Code: p.SolutionCode},
		Validator: in.Validator, Count: in.TestCount, SolutionLimits: solutionLimits(p),
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
	return s.replace(ctx, ref, run{generator: in.Generator, validator: in.Validator, tests: tests, complete: true})
}

// solutionLimits are the reference solution's limits: the problem's.
func solutionLimits(p *algoitny.Problem) judge.Limits {
	return judge.Limits{CPUTime: time.Duration(max(p.TimeLimitMs, problems.DefaultTimeLimitMs)) * time.Millisecond, MemoryBytes: int64(max(p.MemoryLimitMB, problems.DefaultMemoryLimitMB)) << 20}
}

// run is a production run to store.
type run struct {
	generator Source
	validator *Source
	tests     []*algoitny.TestCase
	// complete marks the problem completed with it (saveProblem).
	complete bool
	// replaces, if set, is the run that was rebuilt (regenerateTests): the
	// new one becomes current only if that one still is.
	replaces *int
	// rebuilds, with replaces, are that run's tests that tests rebuild byte
	// for byte, in the same order: each rebuilt test takes the place of
	// its original in the problem's subtasks.
	rebuilds []*algoitny.TestCase
}

// replace stores r's tests as a new production run of the problem and
// makes it current in place of the generated tests of earlier runs:
//
//  1. number the run (StartProduction: higher than every earlier run's);
//  2. write all of its tests (AddTestCases; the count rises with them);
//  3. make it current, with its programs (Update; ECONFLICT if a run
//     finished meanwhile that it may not replace: this run's tests are
//     deleted again and the other's stay);
//  4. delete the generated tests of earlier runs (the count falls with
//     them; hand-written tests and samples stay). The subtasks lose them
//     in the same writes (problems.DeleteGeneratedTests): a subtask left
//     without tests is removed. A rebuilt test (r.rebuilds) takes its
//     original's place in the subtasks instead, so that regenerateTests
//     keeps them as they were.
//
// The window: from step 2 until step 4 is done the problem has both sets of
// generated tests — lists and testCaseCount show both, and an execution
// meanwhile runs both. A crash or a failure there leaves both until the
// next saveProblem or regenerateTests, which deletes the generated tests
// of every run older than its own (a failed step 2 deletes what it wrote
// of its own run at once). It never leaves a problem without tests: a run
// becomes current only once all its tests are written, and only tests of
// runs older than the current one, or of a run that can no longer become
// current, are ever deleted. Once step 2 succeeded the rest runs to its end
// even if the client goes away.
func (s *Service) replace(ctx context.Context, ref algoitny.ProblemRef, r run) (*algoitny.Problem, error) {
	n, err := s.Problems.StartProduction(ctx, ref)
	if err != nil {
		return nil, err
	}
	for _, tc := range r.tests {
		tc.Production = n
	}
	ownRun := func(p int) bool { return p == n }
	if _, err := s.Problems.AddTestCases(ctx, ref, r.tests); err != nil {
		// Some of them may be stored: they can never become current.
		_, _ = s.Problems.DeleteGeneratedTests(context.WithoutCancel(ctx), ref, ownRun, nil)
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	u := algoitny.ProblemUpdate{Generator: &r.generator, Validator: &algoitny.Program{}, Production: &n, ReplacesProduction: r.replaces}
	if r.validator != nil {
		u.Validator = r.validator
	}
	if r.complete {
		done := true
		u.IsCompleted = &done
	}
	if _, err := s.Problems.Update(ctx, ref, u); err != nil {
		if algoitny.IsCode(err, algoitny.ECONFLICT) {
			_, _ = s.Problems.DeleteGeneratedTests(ctx, ref, ownRun, nil)
			return nil, algoitny.Errorf(algoitny.ECONFLICT, "another saveProblem or regenerateTests of this problem finished first; its tests stay")
		}
		return nil, err
	}
	var successors map[string]string
	if len(r.rebuilds) == len(r.tests) {
		successors = make(map[string]string, len(r.tests))
		for i, old := range r.rebuilds {
			successors[old.ID] = r.tests[i].ID
		}
	}
	if _, err := s.Problems.DeleteGeneratedTests(ctx, ref, func(p int) bool { return p < n }, successors); err != nil {
		return nil, err
	}
	return s.Problems.Get(algoitny.WithFreshReads(ctx), ref)
}

// RegenerateTests rebuilds the generated tests of a problem from the
// programs stored with it: the generator is run again with each test's
// recorded arguments, the validator checks each input, and the reference
// solution (the problem's current SolutionCode) makes each output. If every
// input and output is byte for byte the stored one, the tests are replaced
// by the rebuilt ones (a new production run, replace; each rebuilt test
// takes its original's place in the subtasks) and the problem is returned. Otherwise nothing changes and it returns EINVALID ("not
// reproducible") naming the first differing test, its seed and the program
// (generatorCode for an input, solutionCode for an output): tests that
// cannot be rebuilt are what the check is for, and silently replacing them
// would change what submissions were judged against — saveProblem replaces
// them on purpose. Rights as SaveProblem's. Also EINVALID when no generator
// is stored (tests from before programs were kept, or hand-written only),
// and when a program fails (naming it and the seed, as SaveProblem does);
// EUNAUTHENTICATED, EFORBIDDEN, ENOTFOUND, ECONFLICT as SaveProblem.
func (s *Service) RegenerateTests(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	if err := problems.CheckCanRegister(ctx); err != nil {
		return nil, err
	}
	p, err := s.Problems.Get(algoitny.WithFreshReads(ctx), ref)
	switch {
	case err != nil:
		return nil, err
	case p.IsDeleted:
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	case !algoitny.ActorFrom(ctx).CanEditProblem(p):
		return nil, algoitny.Errorf(algoitny.EFORBIDDEN, "only staff and the problem's author may change it")
	case p.Generator.IsZero() || p.Production == 0:
		return nil, algoitny.Invalid("generatorCode", "the problem has no stored generator: its tests were not produced by saveProblem since generators are kept (run saveProblem once)")
	case strings.TrimSpace(p.SolutionCode) == "":
		return nil, algoitny.Invalid("solutionCode", "the problem has no reference solution")
	}
	generated, err := s.Problems.GeneratedTestCases(ctx, ref)
	if err != nil {
		return nil, err
	}
	var stored []*algoitny.TestCase // the current run's, in order
	var runs []Run
	name := algoitny.GeneratorName(p.Generator)
	for _, tc := range generated {
		if tc.Production != p.Production {
			continue // an earlier run's, left by an interrupted replace: replaced below too
		}
		if tc.Generator != name {
			return nil, algoitny.Invalid("generatorCode", "not reproducible: generated test %d (seed %d) names the generator %s, not the stored one (%s)",
				len(stored)+1, tc.Seed, tc.Generator, name)
		}
		stored = append(stored, tc)
		runs = append(runs, Run{Seed: tc.Seed, Args: tc.GeneratorArgs()})
	}
	if len(stored) == 0 {
		return nil, algoitny.Invalid("generatorCode", "the problem has no generated tests to rebuild")
	}
	var validator *Source
	if !p.Validator.IsZero() {
		v := p.Validator
		validator = &v
	}
	rebuilt, err := Produce(ctx, s.Judge, Production{
		Generator: p.Generator, Solution: Source{Language: p.Language, Code: p.SolutionCode},
		Validator: validator, Runs: runs, SolutionLimits: solutionLimits(p),
	})
	if err != nil {
		return nil, err
	}
	for i, tc := range stored {
		if tc.Truncated { // a preview: compare the whole
			if tc, err = s.Problems.TestCaseData(ctx, ref, tc.ID); err != nil {
				return nil, err
			}
		}
		what, field, old, now := "input", "generatorCode", tc.Input, rebuilt[i].Input
		if old == now {
			what, field, old, now = "expected output", "solutionCode", tc.Output, rebuilt[i].Output
		}
		if old != now {
			return nil, algoitny.Invalid(field, "not reproducible: the %s of generated test %d (seed %d) differs from the stored one at byte %d (%d bytes stored, %d now); nothing was changed (saveProblem replaces the tests with what the programs make now)",
				what, i+1, tc.Seed, firstDifference(old, now), len(old), len(now))
		}
	}
	current := p.Production
	return s.replace(ctx, ref, run{generator: p.Generator, validator: validator, tests: rebuilt, replaces: &current, rebuilds: stored})
}

// firstDifference is the offset of the first byte where a and b differ.
func firstDifference(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
