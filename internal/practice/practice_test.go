package practice_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/practice"
)

// The test problem (testdata/sums, shared with cmd/algoitny's end-to-end
// tests): T lines of "a b", print each a+b. Generated as `gen SEED INDEX`
// (saveProblem's command line): T = 3·INDEX, values up to 1000 below index
// 5 and up to 2·10⁹ from it on. overflow.py adds as a 32-bit int would:
// wrong only on large values.
var (
	generator   = sums("gen.py")
	validator   = sums("val.py")
	reference   = sums("ref.py")
	overflowing = sums("overflow.py")
)

func sums(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "sums", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func engine(t *testing.T) *judge.Engine {
	t.Helper()
	e := algoitnytest.Must[*judge.Engine](t)(judge.New(judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true, Workers: 2}))
	t.Cleanup(func() { e.Close() })
	return e
}

// problem is the test problem with its stored tests: seeds 1…6, as
// saveProblem makes them (made here by running the generator).
func problem(t *testing.T, e *judge.Engine) (*algoitny.Problem, []*algoitny.TestCase) {
	t.Helper()
	p := &algoitny.Problem{
		Platform: algoitny.PlatformCustom, ProblemID: "sum", Language: algoitny.LanguagePython, SolutionCode: reference,
		Generator: algoitny.Program{Language: algoitny.LanguagePython, Code: generator},
		Validator: algoitny.Program{Language: algoitny.LanguagePython, Code: validator},
	}
	var tests []*algoitny.TestCase
	for seed := 1; seed <= 6; seed++ {
		s := strconv.Itoa(seed)
		var out strings.Builder
		rr, err := e.Run(context.Background(), "python", generator, judge.RunOptions{Args: []string{s, s}, Stdout: &out})
		if err != nil || rr.Verdict != judge.Accepted {
			t.Fatalf("generator: %v %+v", err, rr)
		}
		tests = append(tests, &algoitny.TestCase{Input: out.String(), Generator: algoitny.GeneratorName(p.Generator), Seed: int64(seed), Args: []string{s, s}})
	}
	return p, tests
}

func TestFindCounterexample(t *testing.T) {
	t.Parallel()
	e := engine(t)
	r := &practice.Runner{Engine: e}
	p, tests := problem(t, e)

	t.Run("ShrunkBelowTheFailedTest", func(t *testing.T) {
		var steps []string
		res, err := r.FindCounterexample(context.Background(), practice.Search{Problem: p, Tests: tests,
			Language: algoitny.LanguagePython, Code: overflowing, Budget: 2 * time.Minute,
			Progress: func(step string, _ int, _ string, _ int) { steps = append(steps, step) }})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Counterexample
		t.Logf("%s; counterexample %+v", res.Message, c)
		if !res.Found || c == nil || c.Verdict != algoitny.VerdictWrongAnswer || !c.Shrunk {
			t.Fatalf("result %+v, counterexample %+v", res, c)
		}
		// One line of two large numbers, not the 15 of the stored test of
		// index 5 that the code fails first.
		lines := strings.Split(strings.TrimSpace(c.Input), "\n")
		if len(lines) != 2 || lines[0] != "1" || c.Args[1] != "5" || c.Seed <= 6 {
			t.Fatalf("counterexample %+v", c)
		}
		var a, b int64
		if _, err := fmt.Sscan(lines[1], &a, &b); err != nil || a+b < 1<<31 || strings.TrimSpace(c.ExpectedOutput) != strconv.FormatInt(a+b, 10) {
			t.Fatalf("counterexample %+v", c)
		}
		for _, tc := range tests {
			if tc.Input == c.Input {
				t.Fatal("a stored test was returned")
			}
		}
		if len(steps) == 0 || steps[len(steps)-1] != "shrinking" {
			t.Fatalf("progress steps %v", steps)
		}
	})

	t.Run("NoneFoundForACorrectSolution", func(t *testing.T) {
		res, err := r.FindCounterexample(context.Background(), practice.Search{Problem: p, Tests: tests,
			Language: algoitny.LanguagePython, Code: reference, Budget: 2 * time.Minute, MaxInputs: 12})
		if err != nil {
			t.Fatal(err)
		}
		if res.Found || res.Counterexample != nil || res.Tried != 12 || !strings.Contains(res.Message, "none found within the budget: 12 inputs") {
			t.Fatalf("result %+v", res)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		noGen := *p
		noGen.Generator = algoitny.Program{}
		_, err := r.FindCounterexample(context.Background(), practice.Search{Problem: &noGen, Language: algoitny.LanguagePython, Code: reference})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		_, err = r.FindCounterexample(context.Background(), practice.Search{Problem: p, Tests: tests, Language: algoitny.LanguagePython, Code: "print("})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
}

func TestRunCode(t *testing.T) {
	t.Parallel()
	r := &practice.Runner{Engine: engine(t)}
	run := func(code, stdin string, timeMs int) *algoitny.CodeRunResult {
		t.Helper()
		res, err := r.RunCode(context.Background(), algoitny.LanguagePython, code, algoitny.CodeRunParams{Stdin: stdin, TimeLimitMs: timeMs})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run("a, b = map(int, input().split())\nprint(a + b)\n", "2 3\n", 0); res.Verdict != algoitny.RunOK || res.Stdout != "5\n" || res.TimeLimitMs != 2000 || res.ExitCode != 0 {
		t.Fatalf("OK: %+v", res)
	}
	if res := run("print(", "", 0); res.Verdict != algoitny.RunCompilationError || !strings.Contains(res.CompileMessage, "SyntaxError") {
		t.Fatalf("COMPILATION_ERROR: %+v", res)
	}
	if res := run("while True: pass\n", "", 300); res.Verdict != algoitny.RunTimeLimitExceeded || res.TimeLimitMs != 300 {
		t.Fatalf("TIME_LIMIT_EXCEEDED: %+v", res)
	}
	if res := run("import sys\nsys.stdout.write('x' * 100000)\nsys.stderr.write('boom')\nraise SystemExit(3)\n", "", 0); res.Verdict != algoitny.RunRuntimeError ||
		len(res.Stdout) != algoitny.CodeRunOutputMax || !res.Truncated || res.ExitCode != 3 || res.Stderr != "boom" {
		t.Fatalf("RUNTIME_ERROR: %+v", res)
	}
}
