// Package authoring produces a problem's test cases from a generator program
// and a reference solution, the way Codeforces Polygon does: the generator is
// run in the judge's sandbox with N seeds, an optional validator accepts or
// rejects each input, identical inputs are dropped, and the reference
// solution's output on each input becomes the expected output. Every test
// records the exact generator (its language and hash), the seed and the
// arguments it came from, and the programs are kept with the problem, so
// that regenerateTests rebuilds the tests byte for byte.
package authoring

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
)

// Source is a program: its language and code.
type Source = algoitny.Program

// Production says how to produce tests.
type Production struct {
	Generator Source
	Solution  Source
	// Validator, if set, must exit 0 on a valid input (read from stdin).
	Validator *Source
	// Count is how many seeds to run (1, 2, …, Count), each as `generator
	// SEED SEED` (SeedRun); identical inputs are kept once.
	Count int
	// Runs, if set, are the generator's runs instead of Count's (a
	// regeneration: each test's recorded seed and arguments), one test
	// each, in order, none dropped.
	Runs []Run
	// SolutionLimits bound the reference solution (the problem's limits).
	SolutionLimits judge.Limits
}

// Run is one run of the generator: the seed that names it and the
// command-line arguments it gets.
type Run struct {
	Seed int64
	Args []string
}

// SeedRun is the run of seed n in a new production: `generator SEED INDEX`
// with the index equal to the seed.
func SeedRun(n int) Run {
	s := strconv.Itoa(n)
	return Run{Seed: int64(n), Args: []string{s, s}}
}

// Limits of the generator and validator runs.
var toolLimits = judge.Limits{CPUTime: 5 * time.Second, MemoryBytes: 512 << 20, OutputBytes: 16 << 20}

// maxInputBytes bounds one generated input.
const maxInputBytes = 8 << 20

// Produce runs the production and returns the test cases in run order,
// each recording its generator (algoitny.GeneratorName), seed and
// arguments. It returns EINVALID, naming the program and the seed, when a
// program does not compile, the generator fails or is not deterministic,
// the validator rejects an input, or the reference solution fails on one —
// so the author knows what to fix. Other errors are EINTERNAL.
func Produce(ctx context.Context, e *judge.Engine, p Production) ([]*algoitny.TestCase, error) {
	progs, err := compileAll(ctx, e, p)
	if err != nil {
		return nil, err
	}
	defer progs.close()
	runs, regenerating := p.Runs, p.Runs != nil
	if !regenerating {
		if runs, err = seedRuns(ctx, progs.gen, p.Count); err != nil {
			return nil, err
		}
	}
	results := progs.runAll(ctx, runs, p.SolutionLimits)
	return testCases(results, runs, algoitny.GeneratorName(p.Generator), !regenerating)
}

// programs are the compiled programs of a production; val is nil without
// a validator.
type programs struct {
	gen, sol, val *judge.Program
}

// compileAll compiles the generator, the reference solution and the
// validator, in that order; on failure what compiled is closed.
func compileAll(ctx context.Context, e *judge.Engine, p Production) (progs programs, err error) {
	defer func() {
		if err != nil {
			progs.close()
		}
	}()
	if progs.gen, err = compile(ctx, e, "generator", p.Generator); err != nil {
		return progs, err
	}
	if progs.sol, err = compile(ctx, e, "reference solution", p.Solution); err != nil {
		return progs, err
	}
	if p.Validator != nil {
		if progs.val, err = compile(ctx, e, "validator", *p.Validator); err != nil {
			return progs, err
		}
	}
	return progs, nil
}

func (ps programs) close() {
	for _, prog := range []*judge.Program{ps.val, ps.sol, ps.gen} {
		if prog != nil {
			prog.Close()
		}
	}
}

// seedRuns returns the runs of a new production, seeds 1 to count, once
// the generator is seen to be deterministic: deterministic regeneration is
// the point of recording seeds, so the first seed runs twice and the
// inputs are compared. (A regeneration compares every test with the
// stored one instead.)
func seedRuns(ctx context.Context, gen *judge.Program, count int) ([]Run, error) {
	a, err := generate(ctx, gen, SeedRun(1))
	if err != nil {
		return nil, err
	}
	b, err := generate(ctx, gen, SeedRun(1))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(a, b) {
		return nil, algoitny.Invalid("generatorCode", "the generator is not deterministic: seed 1 gave two different inputs (seed the random generator from argv[1])")
	}
	var runs []Run
	for i := range count {
		runs = append(runs, SeedRun(i+1))
	}
	return runs, nil
}

// produced is what one run made: its input and the reference output, or
// the error of its first failing step.
type produced struct {
	input, output []byte
	err           error
}

// runAll generates, validates and solves every run, four at a time, and
// returns what each made, in run order.
func (ps programs) runAll(ctx context.Context, runs []Run, lim judge.Limits) []produced {
	results := make([]produced, len(runs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for i, run := range runs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[i] = ps.runOne(ctx, run, lim)
		}()
	}
	wg.Wait()
	return results
}

// runOne generates run's input, validates it and solves it.
func (ps programs) runOne(ctx context.Context, run Run, lim judge.Limits) produced {
	in, err := generate(ctx, ps.gen, run)
	if err == nil && ps.val != nil {
		err = validate(ctx, ps.val, run.Seed, in)
	}
	var out []byte
	if err == nil {
		out, err = solve(ctx, ps.sol, run.Seed, in, lim)
	}
	return produced{input: in, output: out, err: err}
}

// testCases returns the test cases of the results in run order, each
// recording its generator, seed and arguments, or the error of the first
// failing run (so the message is stable). With dedupe, an input made
// before is left out.
func testCases(results []produced, runs []Run, generator string, dedupe bool) ([]*algoitny.TestCase, error) {
	var tests []*algoitny.TestCase
	seen := map[[32]byte]bool{}
	for i, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		if dedupe {
			sum := sha256.Sum256(r.input)
			if seen[sum] {
				continue
			}
			seen[sum] = true
		}
		tests = append(tests, &algoitny.TestCase{Input: string(r.input), Output: string(r.output),
			Generator: generator, Seed: runs[i].Seed, Args: runs[i].Args})
	}
	return tests, nil
}

func compile(ctx context.Context, e *judge.Engine, what string, s Source) (*judge.Program, error) {
	field := map[string]string{"generator": "generatorCode", "reference solution": "solutionCode", "validator": "validatorCode"}[what]
	// The problem's own programs: a C++ one may include testlib.h.
	prog, err := e.CompileAuthor(ctx, string(s.Language), "", s.Code, nil)
	var ce *judge.CompileError
	switch {
	case errors.As(err, &ce):
		return nil, algoitny.Invalid(field, "the %s does not compile: %s", what, truncate(ce.Output, 2000))
	case errors.Is(err, judge.ErrUnknownLanguage), errors.Is(err, judge.ErrLanguageUnavailable):
		return nil, algoitny.Invalid(field, "the %s's language %q is not available", what, s.Language)
	case errors.Is(err, judge.ErrCompilerTimeout):
		// The machine, not the code: the author tries again later.
		return nil, &algoitny.Error{Code: algoitny.EUNAVAILABLE, Err: err,
			Message: fmt.Sprintf("the %s's compiler did not finish within its time limit: the judge is overloaded, try again later", what)}
	case err != nil:
		return nil, algoitny.Internal(err, "compile the %s", what)
	}
	return prog, nil
}

// generate runs the generator with the run's arguments.
func generate(ctx context.Context, gen *judge.Program, run Run) ([]byte, error) {
	seed := run.Seed
	var out bytes.Buffer
	res, err := gen.Run(ctx, judge.RunOptions{Stdout: &out, Args: run.Args, Limits: toolLimits})
	if err != nil {
		return nil, algoitny.Internal(err, "run the generator")
	}
	if res.Verdict != judge.Accepted {
		return nil, algoitny.Invalid("generatorCode", "the generator failed on seed %d: %s %s", seed, res.Verdict, detail(res))
	}
	if out.Len() == 0 || out.Len() > maxInputBytes {
		return nil, algoitny.Invalid("generatorCode", "the generator printed %d bytes on seed %d (want 1 byte to %d MB)", out.Len(), seed, maxInputBytes>>20)
	}
	return out.Bytes(), nil
}

func validate(ctx context.Context, val *judge.Program, seed int64, input []byte) error {
	res, err := val.Run(ctx, judge.RunOptions{Stdin: bytes.NewReader(input), Limits: toolLimits})
	if err != nil {
		return algoitny.Internal(err, "run the validator")
	}
	if res.Verdict != judge.Accepted {
		return algoitny.Invalid("validatorCode", "the validator rejected the input of seed %d: %s", seed, detail(res))
	}
	return nil
}

func solve(ctx context.Context, sol *judge.Program, seed int64, input []byte, lim judge.Limits) ([]byte, error) {
	var out bytes.Buffer
	res, err := sol.Run(ctx, judge.RunOptions{Stdin: bytes.NewReader(input), Stdout: &out, Limits: lim})
	if err != nil {
		return nil, algoitny.Internal(err, "run the reference solution")
	}
	if res.Verdict != judge.Accepted {
		return nil, algoitny.Invalid("solutionCode", "the reference solution failed on the input of seed %d: %s %s", seed, res.Verdict, detail(res))
	}
	return out.Bytes(), nil
}

func detail(res judge.RunResult) string {
	msg := res.Message
	if res.Stderr != "" {
		msg += ": " + res.Stderr
	}
	return truncate(msg, 500)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
