package practice

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
)

// Defaults of a Search.
const (
	DefaultBudget    = 30 * time.Second
	DefaultMaxInputs = 400
)

// Search is one counterexample search: the user's code against the
// problem's reference solution on inputs of the problem's generator.
type Search struct {
	Problem *algoitny.Problem
	// Tests are the problem's stored tests. Their generator runs give the
	// argument shapes the generator is run with (with fresh seeds); their
	// inputs are never returned, even when a fresh seed makes one again.
	Tests    []*algoitny.TestCase
	Language algoitny.Language
	Code     string
	// Budget bounds the search's time (default DefaultBudget) and
	// MaxInputs the inputs it runs (default DefaultMaxInputs), shrinking
	// included: what was found by then is returned.
	Budget    time.Duration
	MaxInputs int
	// Progress, if set, hears of the search every few inputs: its step
	// ("searching", "shrinking"), the inputs tried so far, the size being
	// tried, and the share of the budget used (0–99).
	Progress func(step string, tried int, detail string, percent int)
}

// Supports says whether a counterexample can be searched on p: it keeps
// a generator and a reference solution and is not interactive. EINVALID
// (field historyId) otherwise.
func Supports(p *algoitny.Problem) error {
	switch {
	case p.Generator.IsZero() || strings.TrimSpace(p.SolutionCode) == "":
		return algoitny.Invalid("historyId", "the problem keeps no test generator and reference solution to search a counterexample with")
	case !p.Interactor.IsZero():
		return algoitny.Invalid("historyId", "counterexamples are not searched for interactive problems")
	}
	return nil
}

// FindCounterexample runs the problem's generator with fresh seeds on its
// recorded argument shapes (the smallest first), validates each input,
// and runs the code and the reference solution on it, comparing them with
// the problem's checker; on a difference it shrinks the input (smaller
// generator arguments first, then, where the validator accepts the
// result, fewer lines and tokens) until the budget is spent or nothing
// smaller fails. Not finding one is a result, not an error. Errors:
// EINVALID (Supports; a program of the problem, or the code, does not
// compile; a language this judge does not run), EUNAVAILABLE (a compiler
// did not finish in time: retry), EINTERNAL, or ctx's error.
func (r *Runner) FindCounterexample(ctx context.Context, in Search) (*algoitny.CounterexampleResult, error) {
	if err := Supports(in.Problem); err != nil {
		return nil, err
	}
	in.Budget = cmpOr(in.Budget, DefaultBudget)
	in.MaxInputs = cmpOr(in.MaxInputs, DefaultMaxInputs)
	progs, err := r.compileAll(ctx, in)
	if err != nil {
		return nil, err
	}
	defer progs.close()
	s := newSearcher(r.Engine, progs, in)
	c, err := s.search(ctx)
	if err == nil && c != nil {
		c, err = s.shrink(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	return s.result(c), nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// programs are a search's compiled programs; val and checker may be nil.
type programs struct {
	gen, ref, val, user, checker *judge.Program
}

func (ps programs) close() {
	for _, p := range []*judge.Program{ps.gen, ps.ref, ps.val, ps.user, ps.checker} {
		if p != nil {
			p.Close()
		}
	}
}

// compileAll compiles the problem's programs and the user's code; on a
// failure what compiled is closed.
func (r *Runner) compileAll(ctx context.Context, in Search) (ps programs, err error) {
	defer func() {
		if err != nil {
			ps.close()
		}
	}()
	p := in.Problem
	if ps.user, err = r.compile(ctx, "your code", algoitny.Program{Language: in.Language, Code: in.Code}); err != nil {
		return ps, err
	}
	if ps.gen, err = r.compile(ctx, "the problem's generator", p.Generator); err != nil {
		return ps, err
	}
	if ps.ref, err = r.compile(ctx, "the problem's reference solution", algoitny.Program{Language: p.Language, Code: p.SolutionCode}); err != nil {
		return ps, err
	}
	if !p.Validator.IsZero() {
		if ps.val, err = r.compile(ctx, "the problem's validator", p.Validator); err != nil {
			return ps, err
		}
	}
	if c := p.Checker; c.Kind == algoitny.CheckerCustom || c.Kind == algoitny.CheckerICPC {
		ps.checker, err = r.compile(ctx, "the problem's checker", algoitny.Program{Language: c.Language, Code: c.Code, Files: c.Files})
	}
	return ps, err
}

// compile compiles one program (what names it in errors), with
// testlib.h beside a source that includes it.
func (r *Runner) compile(ctx context.Context, what string, prog algoitny.Program) (*judge.Program, error) {
	files := map[string][]byte{}
	for name, data := range prog.Files {
		files[name] = []byte(data)
	}
	if _, ok := files["testlib.h"]; !ok && strings.Contains(prog.Code, "testlib.h") {
		files["testlib.h"] = judge.TestlibHeader()
	}
	p, err := r.Engine.CompileFiles(ctx, string(prog.Language), "", prog.Code, files)
	var ce *judge.CompileError
	if errors.As(err, &ce) {
		return nil, algoitny.Invalid("historyId", "%s does not compile: %s", what, truncate(compileMessage(ce), 2000))
	}
	if err != nil {
		return nil, compileFailure(err, what, prog.Language)
	}
	return p, nil
}

// Limits of the generator and validator runs.
var toolLimits = judge.Limits{CPUTime: 5 * time.Second, MemoryBytes: 512 << 20, OutputBytes: 16 << 20}

// maxInputBytes bounds one generated input.
const maxInputBytes = 8 << 20

// searcher is the state of one search.
type searcher struct {
	Search
	e        *judge.Engine
	progs    programs
	checker  judge.Checker
	limits   judge.Limits
	hidden   map[[32]byte]bool // the stored tests' inputs
	recorded map[int64]bool    // the stored tests' seeds
	nextSeed int64
	shapes   []shape
	start    time.Time
	tried    int
	shrinks  int
	step     string
	genErr   string // the generator's last failure
}

func newSearcher(e *judge.Engine, progs programs, in Search) *searcher {
	p := in.Problem
	s := &searcher{
		Search: in, e: e, progs: progs, limits: limits(p.TimeLimitMs, p.MemoryLimitMB),
		hidden: map[[32]byte]bool{}, recorded: map[int64]bool{}, start: time.Now(),
		checker: judge.Checker{Kind: judge.CheckerKind(p.Checker.Kind), AbsEps: p.Checker.Epsilon, RelEps: p.Checker.Epsilon,
			Language: string(p.Checker.Language), Source: p.Checker.Code, Program: progs.checker, Args: p.Checker.Args, Passes: p.ValidationPasses},
	}
	for _, tc := range in.Tests {
		s.hidden[sha256.Sum256([]byte(tc.Input))] = true
		s.recorded[tc.Seed] = true
		s.nextSeed = max(s.nextSeed, tc.Seed)
	}
	s.shapes = shapesOf(p.Generator, in.Tests)
	return s
}

// freshSeed is the next seed no stored test was generated with.
func (s *searcher) freshSeed() int64 {
	for {
		s.nextSeed++
		if !s.recorded[s.nextSeed] {
			return s.nextSeed
		}
	}
}

// exhausted says whether the search must stop: its budget is spent or
// ctx ended.
func (s *searcher) exhausted(ctx context.Context) bool {
	return ctx.Err() != nil || time.Since(s.start) >= s.Budget || s.tried >= s.MaxInputs
}

// candidate is an input on which the code failed, with how it was made.
type candidate struct {
	shape    shape
	seed     int64
	input    string
	expected string
	result   judge.TestResult
	shrunk   bool
}

// search tries fresh seeds on the shapes in rounds, the smallest shapes
// first: round k tries the 2^k smallest once each, so that small inputs
// get more seeds than large ones. It returns the first failing input, nil
// when the budget ran out first.
func (s *searcher) search(ctx context.Context) (*candidate, error) {
	s.step = "searching"
	for round := 1; ; round++ {
		for _, sh := range s.shapes[:min(len(s.shapes), 1<<round)] {
			if s.exhausted(ctx) {
				return nil, ctx.Err()
			}
			c, err := s.generate(ctx, sh, s.freshSeed())
			if c != nil || err != nil {
				return c, err
			}
		}
	}
}

// generate runs the generator on shape sh with seed and checks its
// input (check); nil when the code passed on it or it was no input to
// try (the generator failed, or made a stored test).
func (s *searcher) generate(ctx context.Context, sh shape, seed int64) (*candidate, error) {
	var out bytes.Buffer
	res, err := s.progs.gen.Run(ctx, judge.RunOptions{Stdout: &out, Args: sh.with(seed), Limits: toolLimits})
	if err != nil {
		return nil, s.runFailure(ctx, err, "the generator")
	}
	if res.Verdict != judge.Accepted || out.Len() == 0 || out.Len() > maxInputBytes {
		s.tried++
		s.genErr = fmt.Sprintf("the generator failed with arguments %q: %s %s", sh.with(seed), res.Verdict, truncate(res.Message, 200))
		return nil, nil
	}
	c, err := s.check(ctx, out.String())
	if c != nil {
		c.shape, c.seed = sh, seed
	}
	return c, err
}

// check runs one input: the validator must accept it, the reference
// solution must solve it, and the code must fail on it (by the problem's
// checker) for it to be returned. A stored test's input is never tried.
func (s *searcher) check(ctx context.Context, input string) (*candidate, error) {
	s.tried++
	s.report(input)
	if s.hidden[sha256.Sum256([]byte(input))] {
		return nil, nil
	}
	if s.progs.val != nil {
		res, err := s.progs.val.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(input), Args: s.Problem.Validator.Args, Limits: toolLimits})
		if err != nil {
			return nil, s.runFailure(ctx, err, "the validator")
		}
		if res.Verdict != judge.Accepted {
			return nil, nil
		}
	}
	var expected bytes.Buffer
	res, err := s.progs.ref.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(input), Stdout: &expected, Limits: s.limits})
	if err != nil {
		return nil, s.runFailure(ctx, err, "the reference solution")
	}
	if res.Verdict != judge.Accepted {
		return nil, nil // an input the reference cannot solve says nothing of the code
	}
	judged, err := s.e.Judge(ctx, judge.Submission{Program: s.progs.user, Limits: s.limits, Checker: s.checker,
		Tests: []judge.TestCase{{ID: "counterexample", Input: []byte(input), Expected: expected.Bytes()}}}, nil)
	if err != nil {
		return nil, s.runFailure(ctx, err, "your code")
	}
	tr := judged.Tests[0]
	if tr.Verdict == judge.Accepted || tr.Verdict == judge.InternalError {
		return nil, nil
	}
	return &candidate{input: input, expected: expected.String(), result: tr}, nil
}

// runFailure is the search's error when a program could not be run at
// all: ctx's when it ended, else the sandbox's.
func (s *searcher) runFailure(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return algoitny.Internal(err, "run %s", what)
}

// report tells Progress of the search every ten inputs.
func (s *searcher) report(input string) {
	if s.Progress == nil || s.tried%10 != 1 {
		return
	}
	pct := int(min(99, time.Since(s.start)*100/s.Budget))
	s.Progress(s.step, s.tried, fmt.Sprintf("%d inputs tried; now %s", s.tried, describe(input)), pct)
}

// describe names an input's size.
func describe(input string) string {
	return fmt.Sprintf("an input of %d lines, %d bytes", strings.Count(input, "\n")+boolInt(!strings.HasSuffix(input, "\n")), len(input))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// result is the search's outcome with c, its counterexample (nil: none).
func (s *searcher) result(c *candidate) *algoitny.CounterexampleResult {
	elapsed := time.Since(s.start)
	res := &algoitny.CounterexampleResult{Tried: s.tried, Shrinks: s.shrinks,
		BudgetMs: int(s.Budget.Milliseconds()), ElapsedMs: int(elapsed.Milliseconds())}
	if c == nil {
		res.Message = fmt.Sprintf("none found within the budget: %d inputs tried in %.1f s", s.tried, elapsed.Seconds())
		if s.genErr != "" {
			res.Message += "; " + s.genErr
		}
		return res
	}
	res.Found, res.Counterexample = true, c.counterexample()
	res.Message = fmt.Sprintf("found after %d inputs (%s, shrunk %d times)", s.tried, describe(c.input), s.shrinks)
	return res
}

// counterexample is c as it is stored and shown.
func (c *candidate) counterexample() *algoitny.Counterexample {
	in, cutIn := clip(c.input)
	exp, cutExp := clip(c.expected)
	act, cutAct := clip(c.result.Output)
	return &algoitny.Counterexample{
		Input: in, ExpectedOutput: exp, ActualOutput: act,
		Verdict: algoitny.Verdict(c.result.Verdict), Message: c.result.Message,
		Seed: c.seed, Args: c.shape.with(c.seed), Shrunk: c.shrunk, Truncated: cutIn || cutExp || cutAct,
	}
}

// clip cuts s to algoitny.CounterexampleDataMax bytes of valid UTF-8.
func clip(s string) (string, bool) {
	if len(s) <= algoitny.CounterexampleDataMax {
		return strings.ToValidUTF8(s, "\uFFFD"), false
	}
	return strings.ToValidUTF8(s[:algoitny.CounterexampleDataMax], ""), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// shape is a generator command line of a stored test with its seed left
// out: the seed goes at seedAt (-1: appended, for generators that take
// none and derive their randomness from all their arguments, as
// testlib's registerGen does).
type shape struct {
	args   []string
	seedAt int
	size   int64 // the sum of its numeric arguments but the seed
}

// with is the shape's command line with seed.
func (sh shape) with(seed int64) []string {
	args := slices.Clone(sh.args)
	if sh.seedAt < 0 {
		return append(args, strconv.FormatInt(seed, 10))
	}
	args[sh.seedAt] = strconv.FormatInt(seed, 10)
	return args
}

// shapesOf returns the distinct command lines the stored tests were
// generated with by gen, the smallest first; without any (tests made by
// an earlier generator, or none generated), saveProblem's `SEED SEED`.
func shapesOf(gen algoitny.Program, tests []*algoitny.TestCase) []shape {
	name := algoitny.GeneratorName(gen)
	seen := map[string]bool{}
	var out []shape
	for _, tc := range tests {
		if tc.Generator != name {
			continue
		}
		sh := shapeOf(tc)
		key := strings.Join(sh.with(-1), "\x00")
		if !seen[key] {
			seen[key] = true
			out = append(out, sh)
		}
	}
	if len(out) == 0 {
		out = []shape{{args: []string{"0", "1"}, seedAt: 0, size: 1}}
	}
	slices.SortStableFunc(out, func(a, b shape) int { return compareInt(a.size, b.size) })
	return out
}

// shapeOf is the shape of a generated test: its seed is the first
// argument equal to its recorded seed.
func shapeOf(tc *algoitny.TestCase) shape {
	args := tc.GeneratorArgs()
	sh := shape{args: slices.Clone(args), seedAt: -1}
	if tc.Seed != 0 {
		sh.seedAt = slices.Index(args, strconv.FormatInt(tc.Seed, 10))
	}
	for i, a := range args {
		if v, err := strconv.ParseInt(a, 10, 64); err == nil && i != sh.seedAt && v > 0 {
			sh.size += v
		}
	}
	return sh
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
