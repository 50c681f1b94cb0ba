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
	gen, err := compile(ctx, e, "generator", p.Generator)
	if err != nil {
		return nil, err
	}
	defer gen.Close()
	sol, err := compile(ctx, e, "reference solution", p.Solution)
	if err != nil {
		return nil, err
	}
	defer sol.Close()
	var val *judge.Program
	if p.Validator != nil {
		if val, err = compile(ctx, e, "validator", *p.Validator); err != nil {
			return nil, err
		}
		defer val.Close()
	}
	runs, regenerating := p.Runs, p.Runs != nil
	if !regenerating {
		// Deterministic regeneration is the point of recording seeds: run
		// the first seed twice and compare. (A regeneration compares every
		// test with the stored one instead.)
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
		for i := range p.Count {
			runs = append(runs, SeedRun(i+1))
		}
	}

	type produced struct {
		input, output []byte
		err           error
	}
	results := make([]produced, len(runs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for i, run := range runs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			in, err := generate(ctx, gen, run)
			if err == nil && val != nil {
				err = validate(ctx, val, run.Seed, in)
			}
			var out []byte
			if err == nil {
				out, err = solve(ctx, sol, run.Seed, in, p.SolutionLimits)
			}
			results[i] = produced{input: in, output: out, err: err}
		}()
	}
	wg.Wait()

	var tests []*algoitny.TestCase
	seen := map[[32]byte]bool{}
	generator := algoitny.GeneratorName(p.Generator)
	for i, r := range results {
		if r.err != nil {
			return nil, r.err // the first failing run, so the message is stable
		}
		if !regenerating {
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
	prog, err := e.Compile(ctx, string(s.Language), s.Code)
	var ce *judge.CompileError
	switch {
	case errors.As(err, &ce):
		return nil, algoitny.Invalid(field, "the %s does not compile: %s", what, truncate(ce.Output, 2000))
	case errors.Is(err, judge.ErrUnknownLanguage), errors.Is(err, judge.ErrLanguageUnavailable):
		return nil, algoitny.Invalid(field, "the %s's language %q is not available", what, s.Language)
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
