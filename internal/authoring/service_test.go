package authoring_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/authoring"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problems"
)

// TestSaveProblemRefuses: what saveProblem refuses before any program runs
// (so the service has no judge here) — who may save, the input, the job
// named and the problem — with the code and field that say why, and
// nothing is stored.
func TestSaveProblemRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.createProblem(t, "refuse")
	noSolution := algoitnytest.Must[*algoitny.Problem](t)(b.problems.Create(author, problems.CreateInput{Problem: algoitny.Problem{
		Platform: algoitny.PlatformCustom, ProblemID: "nosolution", Title: "No solution", Language: algoitny.LanguagePython,
		TimeLimitMs: 1000, MemoryLimitMB: 256}})).Ref()
	b.jobs["running"] = &algoitny.Job{ID: "running", Type: algoitny.JobScriptGeneration, Status: algoitny.JobProcessing, GeneratorCode: generator.Code,
		Platform: algoitny.PlatformCustom, ProblemID: "fromjob"}
	b.jobs["execution"] = &algoitny.Job{ID: "execution", Type: algoitny.JobCodeExecution, Status: algoitny.JobCompleted, GeneratorCode: generator.Code}
	b.jobs["nogenerator"] = &algoitny.Job{ID: "nogenerator", Type: algoitny.JobScriptGeneration, Status: algoitny.JobCompleted}
	b.jobs["nosolution"] = &algoitny.Job{ID: "nosolution", Type: algoitny.JobScriptGeneration, Status: algoitny.JobCompleted, GeneratorCode: generator.Code,
		Result: `{"generatorLanguage":"python"}`, Platform: algoitny.PlatformCustom, ProblemID: "fromjob", Title: "From a job", Language: algoitny.LanguagePython}
	big := strings.Repeat("#", problems.MaxCodeBytes+1)

	for _, c := range []struct {
		name  string
		ctx   context.Context
		in    authoring.SaveInput
		code  string
		field string
	}{
		{"ErrAnonymous", anonymous, authoring.SaveInput{Problem: ref, Generator: generator}, algoitny.EUNAUTHENTICATED, ""},
		{"ErrPlanCannotRegister", freeUser, authoring.SaveInput{Problem: ref, Generator: generator}, algoitny.EFORBIDDEN, ""},
		{"ErrNotTheAuthor", otherPro, authoring.SaveInput{Problem: ref, Generator: generator}, algoitny.EFORBIDDEN, ""},
		{"ErrTestCountLow", author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: -1}, algoitny.EINVALID, "testCount"},
		{"ErrTestCountHigh", author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: authoring.MaxTestCount + 1}, algoitny.EINVALID, "testCount"},
		{"ErrNoGenerator", author, authoring.SaveInput{Problem: ref, Generator: authoring.Source{Language: algoitny.LanguagePython, Code: " \n"}}, algoitny.EINVALID, "generatorCode"},
		{"ErrGeneratorLanguage", author, authoring.SaveInput{Problem: ref, Generator: authoring.Source{Language: "cobol", Code: "x"}}, algoitny.EINVALID, "generatorLanguage"},
		{"ErrGeneratorTooLarge", author, authoring.SaveInput{Problem: ref, Generator: authoring.Source{Language: algoitny.LanguagePython, Code: big}}, algoitny.EINVALID, "generatorCode"},
		{"ErrValidatorTooLarge", author, authoring.SaveInput{Problem: ref, Generator: generator, Validator: &authoring.Source{Language: algoitny.LanguagePython, Code: big}}, algoitny.EINVALID, "validatorCode"},
		{"ErrNoSuchProblem", author, authoring.SaveInput{Problem: algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "nosuch"}, Generator: generator}, algoitny.ENOTFOUND, ""},
		{"ErrBadRef", author, authoring.SaveInput{Problem: algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "a b"}, Generator: generator}, algoitny.EINVALID, "problemId"},
		{"ErrNoSolution", author, authoring.SaveInput{Problem: noSolution, Generator: generator}, algoitny.EINVALID, "solutionCode"},
		{"ErrNoSuchJob", author, authoring.SaveInput{JobID: "nosuch"}, algoitny.ENOTFOUND, ""},
		{"ErrJobNotCompleted", author, authoring.SaveInput{JobID: "running"}, algoitny.EINVALID, "jobId"},
		{"ErrJobNotScriptGeneration", author, authoring.SaveInput{JobID: "execution"}, algoitny.EINVALID, "jobId"},
		{"ErrJobWithoutGenerator", author, authoring.SaveInput{JobID: "nogenerator"}, algoitny.EINVALID, "jobId"},
		{"ErrJobProblemWithoutSolution", author, authoring.SaveInput{JobID: "nosolution"}, algoitny.EINVALID, "solutionCode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.svc.SaveProblem(c.ctx, c.in)
			if e := algoitnytest.ErrCode(t, err, c.code); c.field != "" && e.Field != c.field {
				t.Fatalf("field %q (%v), want %q", e.Field, err, c.field)
			}
		})
	}
	// Once the refusals are done, nothing was stored.
	t.Cleanup(func() {
		if n := len(b.generated(t, ref)); n != 0 {
			t.Errorf("%d generated tests stored after refusals, want none", n)
		}
		_, err := b.problems.Get(staff, algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "fromjob"})
		if !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Errorf("the job's problem: %v, want it not created (not_found)", err)
		}
	})
}

// asError returns err's *algoitny.Error, an empty one if it has none.
func asError(err error) *algoitny.Error {
	var e *algoitny.Error
	if errors.As(err, &e) {
		return e
	}
	return &algoitny.Error{}
}

// TestRegenerateTestsRefuses: what regenerateTests refuses before any
// program runs.
func TestRegenerateTestsRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.createProblem(t, "regen-refuse")
	deleted := b.createProblem(t, "regen-deleted")
	algoitnytest.Must[*algoitny.Problem](t)(b.problems.Delete(author, deleted, "gone"))

	for _, c := range []struct {
		name  string
		ctx   context.Context
		ref   algoitny.ProblemRef
		code  string
		field string
	}{
		{"ErrAnonymous", anonymous, ref, algoitny.EUNAUTHENTICATED, ""},
		{"ErrPlanCannotRegister", freeUser, ref, algoitny.EFORBIDDEN, ""},
		{"ErrNotTheAuthor", otherPro, ref, algoitny.EFORBIDDEN, ""},
		{"ErrNoSuchProblem", author, algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "nosuch"}, algoitny.ENOTFOUND, ""},
		{"ErrDeleted", staff, deleted, algoitny.ENOTFOUND, ""},
		{"ErrNoStoredGenerator", author, ref, algoitny.EINVALID, "generatorCode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.svc.RegenerateTests(c.ctx, c.ref)
			if e := algoitnytest.ErrCode(t, err, c.code); c.field != "" && e.Field != c.field {
				t.Fatalf("field %q (%v), want %q", e.Field, err, c.field)
			}
		})
	}
}

// TestSaveProblem runs the programs (in an unsandboxed judge: no bwrap):
// saveProblem stores the produced tests with their seeds, keeps the
// programs with the problem, completes it, and a second save replaces the
// generated tests while hand-written ones stay; regenerateTests rebuilds
// them byte for byte, and refuses once the solution makes other outputs.
func TestSaveProblem(t *testing.T) {
	t.Parallel()
	b := setup(t).withJudge(t)

	t.Run("SaveAndReplace", func(t *testing.T) {
		t.Parallel()
		ref := b.createProblem(t, "save")
		p := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator, Validator: &validator, TestCount: 3}))
		if !p.IsCompleted || !reflect.DeepEqual(p.Generator, generator) || !reflect.DeepEqual(p.Validator, validator) || p.TestCaseCount != 4 {
			t.Fatalf("problem completed %v, %d tests, generator kept %v, validator kept %v; want completed with 1+3 tests and both programs",
				p.IsCompleted, p.TestCaseCount, reflect.DeepEqual(p.Generator, generator), reflect.DeepEqual(p.Validator, validator))
		}
		checkGenerated(t, b.generated(t, ref), p.Production, 3)

		again := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: 2}))
		if again.Production <= p.Production || again.TestCaseCount != 3 || !again.Validator.IsZero() {
			t.Fatalf("second save: run %d (was %d), %d tests, validator %+v; want a newer run, 1+2 tests and no validator",
				again.Production, p.Production, again.TestCaseCount, again.Validator)
		}
		checkGenerated(t, b.generated(t, ref), again.Production, 2)
	})
	t.Run("TestlibPrograms", func(t *testing.T) {
		t.Parallel()
		// A C++ generator and validator written with testlib.h, as on
		// Polygon: the project's header is beside them when they compile.
		ref := b.createProblem(t, "testlib")
		gen := authoring.Source{Language: algoitny.LanguageCPP, Code: `#include "testlib.h"
int main(int argc, char* argv[]) {
    registerGen(argc, argv, 1);
    int s = opt<int>(1);
    println(s, 2 * s);
}
`}
		val := authoring.Source{Language: algoitny.LanguageCPP, Code: `#include "testlib.h"
int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    int a = inf.readInt(1, 1000, "a");
    inf.readSpace();
    inf.readInt(2 * a, 2 * a, "b");
    inf.readEoln();
    inf.readEof();
}
`}
		p := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: gen, Validator: &val, TestCount: 2}))
		tests := b.generated(t, ref)
		if !p.IsCompleted || len(tests) != 2 || tests[0].Input != "1 2\n" || tests[1].Input != "2 4\n" || tests[1].Output != "6\n" {
			t.Fatalf("problem completed %v, generated tests %+v; want two, 1 2 and 2 4", p.IsCompleted, tests)
		}
	})
	t.Run("FromJob", func(t *testing.T) {
		t.Parallel()
		// A completed script-generation job names a problem that does not
		// exist yet: it is created, completed, with the job's programs.
		b.jobs["script"] = &algoitny.Job{ID: "script", Type: algoitny.JobScriptGeneration, Status: algoitny.JobCompleted, UserID: "author",
			Platform: algoitny.PlatformCustom, ProblemID: "fromjob", Title: "From a job", Language: algoitny.LanguagePython,
			SolutionCode: solution, GeneratorCode: generator.Code, Result: `{"generatorLanguage":"python"}`}
		p := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{JobID: "script", TestCount: 2}))
		if p.ProblemID != "fromjob" || p.CreatedBy != "author" || !p.IsCompleted || !reflect.DeepEqual(p.Generator, generator) || p.TestCaseCount != 2 {
			t.Fatalf("problem %s by %s, completed %v, generator kept %v, %d tests; want fromjob by author, completed with the job's generator and 2 tests",
				p.ProblemID, p.CreatedBy, p.IsCompleted, reflect.DeepEqual(p.Generator, generator), p.TestCaseCount)
		}
		checkGenerated(t, b.generated(t, p.Ref()), p.Production, 2)
	})
	t.Run("Regenerate", func(t *testing.T) {
		t.Parallel()
		ref := b.createProblem(t, "regen")
		p := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: 3}))
		before := b.generated(t, ref)
		re := algoitnytest.Must[*algoitny.Problem](t)(b.svc.RegenerateTests(author, ref))
		if re.Production <= p.Production || re.TestCaseCount != p.TestCaseCount {
			t.Fatalf("regenerated: run %d (was %d), %d tests (were %d); want a newer run with as many tests", re.Production, p.Production, re.TestCaseCount, p.TestCaseCount)
		}
		after := b.generated(t, ref)
		checkGenerated(t, after, re.Production, 3)
		for i := range before {
			if before[i].Input != after[i].Input || before[i].Output != after[i].Output || before[i].Seed != after[i].Seed {
				t.Fatalf("test %d rebuilt as %q → %q (seed %d), was %q → %q (seed %d)", i+1,
					after[i].Input, after[i].Output, after[i].Seed, before[i].Input, before[i].Output, before[i].Seed)
			}
		}

		// Another solution makes other outputs: not reproducible, nothing changes.
		other := "a, b = map(int, input().split())\nprint(a + b + 1)\n"
		algoitnytest.Must[*algoitny.Problem](t)(b.problems.Update(author, ref, algoitny.ProblemUpdate{SolutionCode: &other}))
		_, err := b.svc.RegenerateTests(author, ref)
		if e := algoitnytest.ErrCode(t, err, algoitny.EINVALID); e.Field != "solutionCode" || !strings.Contains(e.Message, "not reproducible") {
			t.Fatalf("refusal %v, want solutionCode not reproducible", err)
		}
		checkGenerated(t, b.generated(t, ref), re.Production, 3)

		// Without a reference solution there is nothing to make outputs with.
		none := ""
		algoitnytest.Must[*algoitny.Problem](t)(b.problems.Update(author, ref, algoitny.ProblemUpdate{SolutionCode: &none}))
		_, err = b.svc.RegenerateTests(author, ref)
		if e := algoitnytest.ErrCode(t, err, algoitny.EINVALID); e.Field != "solutionCode" {
			t.Fatalf("refusal %v, want solutionCode", err)
		}
	})
	t.Run("SubtasksFollowTheTests", func(t *testing.T) {
		t.Parallel()
		ref := b.createProblem(t, "subtasks")
		algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: 3}))
		all := algoitnytest.Must[algoitny.Page[*algoitny.TestCase]](t)(b.problems.Store.ListTestCases(algoitny.WithFreshReads(author), ref, algoitny.PageRequest{First: 10}))
		var hand string
		for _, tc := range all.Items {
			if !tc.IsGenerated() {
				hand = tc.ID
			}
		}
		subtasks := func(gen []*algoitny.TestCase) []algoitny.Subtask {
			return []algoitny.Subtask{
				{Name: "samples", Points: 0, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{hand}},
				{Name: "gen", Points: 40, Mode: algoitny.ScoreSum, TestIDs: []string{gen[0].ID, gen[1].ID}, DependsOn: []string{"samples"}},
				{Name: "last", Points: 60, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{gen[2].ID}, DependsOn: []string{"samples", "gen"}},
			}
		}
		set := subtasks(b.generated(t, ref))
		algoitnytest.Must[*algoitny.Problem](t)(b.problems.Update(author, ref, algoitny.ProblemUpdate{Subtasks: &set}))

		// regenerateTests: each rebuilt test takes its original's place.
		re := algoitnytest.Must[*algoitny.Problem](t)(b.svc.RegenerateTests(author, ref))
		if want := subtasks(b.generated(t, ref)); !reflect.DeepEqual(re.Subtasks, want) {
			t.Fatalf("after regenerateTests: subtasks %+v, want %+v", re.Subtasks, want)
		}
		// saveProblem replaces the generated tests on purpose: they leave
		// the subtasks, gen and last go, and samples stays.
		again := algoitnytest.Must[*algoitny.Problem](t)(b.svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator, TestCount: 2}))
		if want := set[:1]; !reflect.DeepEqual(again.Subtasks, want) {
			t.Fatalf("after saveProblem: subtasks %+v, want %+v", again.Subtasks, want)
		}
	})
	t.Run("ErrProgramFails", func(t *testing.T) {
		t.Parallel()
		ref := b.createProblem(t, "fails")
		for _, c := range []struct {
			name, field string
			in          authoring.SaveInput
		}{
			{"GeneratorDoesNotCompile", "generatorCode", authoring.SaveInput{Generator: authoring.Source{Language: algoitny.LanguagePython, Code: "def (\n"}}},
			{"ValidatorDoesNotCompile", "validatorCode", authoring.SaveInput{Generator: generator, Validator: &authoring.Source{Language: algoitny.LanguagePython,
				Code: "def (\n"}}},
			{"GeneratorNotDeterministic", "generatorCode", authoring.SaveInput{Generator: authoring.Source{Language: algoitny.LanguagePython,
				Code: "import random\nprint(random.random())\n"}}},
			{"GeneratorCrashes", "generatorCode", authoring.SaveInput{Generator: authoring.Source{Language: algoitny.LanguagePython, Code: "raise SystemExit(3)\n"}}},
			{"GeneratorPrintsNothing", "generatorCode", authoring.SaveInput{Generator: authoring.Source{Language: algoitny.LanguagePython, Code: "pass\n"}}},
			{"ValidatorRejects", "validatorCode", authoring.SaveInput{Generator: generator, Validator: &authoring.Source{Language: algoitny.LanguagePython,
				Code: "import sys\nsys.exit(1)\n"}}},
			{"SolutionFails", "solutionCode", authoring.SaveInput{Generator: authoring.Source{Language: algoitny.LanguagePython, Code: "print('x y')\n"}}},
		} {
			c.in.Problem, c.in.TestCount = ref, 2
			_, err := b.svc.SaveProblem(author, c.in)
			if e := asError(err); e.Code != algoitny.EINVALID || e.Field != c.field {
				t.Errorf("%s: %v (field %q), want %s naming %s", c.name, err, e.Field, algoitny.EINVALID, c.field)
			}
		}
		if p := algoitnytest.Must[*algoitny.Problem](t)(b.problems.Get(author, ref)); p.IsCompleted || p.TestCaseCount != 1 || len(b.generated(t, ref)) != 0 {
			t.Fatalf("after failed saves: completed %v, %d tests; want the draft with its one hand-written test", p.IsCompleted, p.TestCaseCount)
		}
	})
}

// checkGenerated fails the test unless tests are n generated tests of run
// production, for seeds 1…n, each input "s 2s" with the output 3s.
func checkGenerated(t *testing.T, tests []*algoitny.TestCase, production, n int) {
	t.Helper()
	if len(tests) != n {
		t.Fatalf("%d generated tests, want %d", len(tests), n)
	}
	name := algoitny.GeneratorName(generator)
	for i, tc := range tests {
		s := i + 1
		if tc.Production != production || tc.Generator != name || tc.Seed != int64(s) ||
			tc.Input != fmt.Sprintf("%d %d\n", s, 2*s) || tc.Output != fmt.Sprintf("%d\n", 3*s) {
			t.Fatalf("generated test %d: run %d, generator %s, seed %d, %q → %q; want run %d, %s, seed %d, %q → %q",
				i+1, tc.Production, tc.Generator, tc.Seed, tc.Input, tc.Output, production, name, s, fmt.Sprintf("%d %d\n", s, 2*s), fmt.Sprintf("%d\n", 3*s))
		}
	}
}

// TestSaveProblemCompilerTimeout: a compiler that does not finish in time
// is the judge's failure — UNAVAILABLE, try again — never a generator
// that "does not compile".
func TestSaveProblemCompilerTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := b.createProblem(t, "slowcompiler")
	langs := judge.DefaultLanguages()
	for i := range langs {
		if langs[i].ID == "python" {
			langs[i].Compile = []string{"sleep", "60"} // a machine too busy to run the compiler
		}
	}
	e := algoitnytest.Must[*judge.Engine](t)(judge.New(judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true, Workers: 2,
		Languages: langs, CompileLimits: judge.Limits{CPUTime: time.Second, WallTime: 2 * time.Second}}))
	t.Cleanup(func() { e.Close() })
	svc := *b.svc
	svc.Judge = e
	_, err := svc.SaveProblem(author, authoring.SaveInput{Problem: ref, Generator: generator})
	algoitnytest.ErrCode(t, err, algoitny.EUNAVAILABLE)
}
