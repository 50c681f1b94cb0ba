package problempkg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// Limits of the package's own programs (validators, generators, the
// reference solution making answers): the format's typical validation
// limits, generous because a setter's program is trusted to end.
var authorLimits = judge.Limits{CPUTime: 30 * time.Second, WallTime: 90 * time.Second, MemoryBytes: 2 << 30,
	OutputBytes: 1 << 30, FileSizeBytes: 64 << 20, MaxThreads: judge.AuthorThreads}

// judgeWith is what submissions are judged with: the compiled checker or
// interactor, validators and generators.
type judgeWith struct {
	checker    judge.Checker
	interactor *judge.Interactor
	validators []compiled
	generators map[string]*judge.Program
	programs   []*judge.Program // to close
}

type compiled struct {
	Program
	prog *judge.Program
}

func (j *judgeWith) close() {
	for _, p := range j.programs {
		p.Close()
	}
}

// compile compiles a package program with its files beside it (and, for
// C++, the project's testlib.h when it includes one the package does not
// ship).
func (v *verifier) compile(ctx context.Context, p Program) (*judge.Program, error) {
	src, err := v.source(p)
	if err != nil {
		return nil, err
	}
	prog, err := v.e.CompileAuthor(ctx, p.Language, p.Main, string(src), v.files(p))
	if err != nil {
		return nil, err
	}
	v.programs = append(v.programs, prog)
	return prog, nil
}

// source reads a program's main source file (an included driver in its
// place), with the package's constants substituted.
func (v *verifier) source(p Program) ([]byte, error) {
	if p.mainSource != nil {
		return v.pkg.substitute(p.mainSource), nil
	}
	rel := p.Path
	if isDir(joinRel(v.pkg.Root, p.Path)) {
		rel = p.Path + "/" + p.Main
	}
	src, err := readInside(v.pkg.Root, rel)
	if err != nil {
		return nil, err
	}
	return v.pkg.substitute(src), nil
}

// files are a program's other files with the package's constants
// substituted.
func (v *verifier) files(p Program) map[string][]byte {
	if len(v.pkg.Constants) == 0 {
		return p.Files
	}
	out := make(map[string][]byte, len(p.Files))
	for name, data := range p.Files {
		out[name] = v.pkg.substitute(data)
	}
	return out
}

// build compiles the checker or interactor, the input validators and the
// generators. A checker or interactor that does not compile stops the
// verification; a validator or generator that does not is an error of the
// report.
func (v *verifier) build(ctx context.Context) error {
	if err := v.buildJudging(ctx); err != nil {
		return err
	}
	for _, p := range v.pkg.InputValidators {
		prog, err := v.compile(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			v.errorf("input validator %s: %v", p.Path, compileMessage(err))
			continue
		}
		v.validators = append(v.validators, compiled{Program: p, prog: prog})
	}
	v.generators = map[string]*judge.Program{}
	for name, p := range v.pkg.Generators {
		if !v.usesGenerator(name) {
			continue
		}
		prog, err := v.compile(ctx, *p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			v.errorf("generator %s: %v", p.Path, compileMessage(err))
			continue
		}
		v.generators[name] = prog
	}
	return nil
}

func (v *verifier) usesGenerator(name string) bool {
	for _, t := range v.pkg.Tests {
		if t.Generation != nil && t.Generation.Generator == name {
			return true
		}
	}
	return false
}

// interactorChecked says a Polygon package's checker judges what its
// interactor writes to its output file, as Polygon runs them.
func (pkg *Package) interactorChecked() bool {
	return pkg.Interactive && pkg.Format == FormatPolygon && pkg.Checker.Kind == CheckTestlib && pkg.Checker.Program != nil
}

// buildJudging compiles what judges a test's output.
func (v *verifier) buildJudging(ctx context.Context) error {
	pkg := v.pkg
	if pkg.Interactive {
		prog, err := v.compile(ctx, *pkg.Interactor)
		if err != nil {
			return fmt.Errorf("the interactor %s: %v", pkg.Interactor.Path, compileMessage(err))
		}
		protocol := judge.InteractTestlib
		if pkg.Format == FormatICPC {
			protocol = judge.InteractICPC
		}
		v.interactor = &judge.Interactor{Program: prog, Protocol: protocol, Points: pkg.CheckerPoints, Passes: pkg.Limits.ValidationPasses}
		if pkg.interactorChecked() {
			cp, err := v.compile(ctx, *pkg.Checker.Program)
			if err != nil {
				return fmt.Errorf("the checker %s: %v", pkg.Checker.Program.Path, compileMessage(err))
			}
			v.checker = judge.Checker{Kind: judge.CheckCustom, Program: cp, Points: pkg.CheckerPoints}
		}
		return nil
	}
	switch pkg.Checker.Kind {
	case CheckDefault:
		v.checker = judge.Checker{Kind: judge.CheckDefaultValidator}
	case CheckICPC, CheckTestlib:
		prog, err := v.compile(ctx, *pkg.Checker.Program)
		if err != nil {
			return fmt.Errorf("the checker %s: %v", pkg.Checker.Program.Path, compileMessage(err))
		}
		kind := judge.CheckCustom
		if pkg.Checker.Kind == CheckICPC {
			kind = judge.CheckICPC
		}
		v.checker = judge.Checker{Kind: kind, Program: prog}
		if kind == judge.CheckICPC {
			v.checker.Passes = pkg.Limits.ValidationPasses
		}
		if kind == judge.CheckCustom {
			v.checker.Points = pkg.CheckerPoints
		}
	}
	return nil
}

// compileMessage is a compile error's first lines.
func compileMessage(err error) string {
	var ce *judge.CompileError
	if errors.As(err, &ce) {
		return "does not compile: " + firstLines(ce.Output, 5)
	}
	return err.Error()
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// testFiles are the tests' input and answer files: the package's, or
// made in a directory of the verifier's (generated inputs, answers of the
// reference solution).
type testFiles struct {
	dir            string
	input, answers []string
}

func (t *testFiles) close() {
	if t.dir != "" {
		_ = os.RemoveAll(t.dir)
	}
}

// prepareTests makes every test's input (generating those the package
// generates, and checking the shipped ones regenerate byte for byte),
// validates each with every input validator, and makes the answers the
// package does not ship with its reference solution.
func (v *verifier) prepareTests(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "algoitny-verify-")
	if err != nil {
		return err
	}
	v.tests = &testFiles{dir: dir, input: make([]string, len(v.pkg.Tests)), answers: make([]string, len(v.pkg.Tests))}
	for i, t := range v.pkg.Tests {
		if err := v.prepareInput(ctx, i, t); err != nil {
			return err
		}
	}
	for i, t := range v.pkg.Tests {
		if v.tests.input[i] == "" {
			continue
		}
		if err := v.validate(ctx, t, v.tests.input[i]); err != nil {
			return err
		}
	}
	return v.prepareAnswers(ctx)
}

// prepareInput finds or generates test i's input.
func (v *verifier) prepareInput(ctx context.Context, i int, t Test) error {
	if t.Input != "" {
		full, err := inside(v.pkg.Root, t.Input)
		if err != nil {
			return err
		}
		if v.tests.input[i], err = v.unixText(full, fmt.Sprintf("lf-%d.in", i)); err != nil {
			return err
		}
	}
	if t.Generation == nil {
		return nil
	}
	gen := v.generators[t.Generation.Generator]
	if gen == nil {
		if t.Input == "" {
			v.errorf("test %s: its generator %s is not available", t.Name, t.Generation.Generator)
		}
		return nil
	}
	out := filepath.Join(v.tests.dir, fmt.Sprintf("gen-%d.in", i))
	if err := runToFile(ctx, gen, t.Generation.Args, "", out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v.errorf("test %s: %q: %v", t.Name, t.Generation.Command, err)
		return nil
	}
	if t.Input == "" {
		v.tests.input[i] = out
		return nil
	}
	if at := firstDifference(v.tests.input[i], out); at >= 0 {
		v.errorf("test %s: %q does not regenerate %s byte for byte (they differ at byte %d)", t.Name, t.Generation.Command, t.Input, at)
	}
	return nil
}

// unixText is a Polygon package's test file at path, or, when it has
// Windows line ends (CRLF), a copy named name in the verifier's directory
// with Unix ones: Polygon's standard package is written for Windows, where
// testlib reads CR LF as a line end; on Linux testlib's strict readers
// (a validator's readEoln) and the generators' output have LF, as
// Polygon's Linux package does. Other formats' files are used as they are.
func (v *verifier) unixText(path, name string) (string, error) {
	if v.pkg.Format != FormatPolygon {
		return path, nil
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte("\r\n")) {
		return path, err
	}
	out := filepath.Join(v.tests.dir, name)
	return out, os.WriteFile(out, bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), 0o644)
}

// runToFile runs prog with args, its input from the file in ("" for none)
// and its output into the new file out.
func runToFile(ctx context.Context, prog *judge.Program, args []string, in, out string) (err error) {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	opts := judge.RunOptions{Args: args, Stdout: f, Limits: authorLimits}
	if in != "" {
		r, err := os.Open(in)
		if err != nil {
			return err
		}
		defer r.Close()
		opts.Stdin = r
	}
	rr, err := prog.Run(ctx, opts)
	if err != nil {
		return err
	}
	if rr.Verdict != judge.Accepted {
		return fmt.Errorf("%s %s %s", rr.Verdict, rr.Message, firstLineOf(rr.Stderr))
	}
	return nil
}

// firstDifference is the offset of the first byte where the files differ,
// -1 when they are equal.
func firstDifference(a, b string) int {
	da, err1 := os.ReadFile(a)
	db, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil {
		return 0
	}
	n := min(len(da), len(db))
	for i := 0; i < n; i++ {
		if da[i] != db[i] {
			return i
		}
	}
	if len(da) != len(db) {
		return n
	}
	return -1
}

// validate runs every input validator on a test's input: an ICPC
// validator accepts it by exiting 42, a testlib one by exiting 0.
func (v *verifier) validate(ctx context.Context, t Test, input string) error {
	want := 0
	if v.pkg.Format == FormatICPC {
		want = 42
	}
	for _, val := range v.validators {
		args := t.InputValidatorArgs[val.Name]
		if args == nil {
			args = t.InputValidatorArgs[""]
		}
		if v.pkg.Format == FormatPolygon {
			args = []string{"--testset", "tests"}
			if t.Group != "" {
				args = append(args, "--group", t.Group)
			}
		}
		r, err := os.Open(input)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		rr, err := val.prog.Run(ctx, judge.RunOptions{Stdin: r, Stdout: &out, Args: args, Limits: authorLimits})
		r.Close()
		if err != nil {
			return err
		}
		if rr.ExitCode != want || rr.Signal != "" {
			v.errorf("test %s: input validator %s refuses it (exit code %d): %s", t.Name, val.Path, rr.ExitCode,
				firstLineOf(strings.TrimSpace(out.String()+"\n"+rr.Stderr)))
		}
	}
	return nil
}

// prepareAnswers makes the answers the package does not ship by running
// its reference solution (an interactive test without one gets an empty
// answer file).
func (v *verifier) prepareAnswers(ctx context.Context) error {
	var ref *judge.Program
	for i, t := range v.pkg.Tests {
		if t.Answer != "" {
			full, err := inside(v.pkg.Root, t.Answer)
			if err != nil {
				return err
			}
			if v.tests.answers[i], err = v.unixText(full, fmt.Sprintf("lf-%d.ans", i)); err != nil {
				return err
			}
			continue
		}
		out := filepath.Join(v.tests.dir, fmt.Sprintf("ans-%d", i))
		if v.pkg.Interactive || v.tests.input[i] == "" {
			if err := os.WriteFile(out, nil, 0o644); err != nil {
				return err
			}
			v.tests.answers[i] = out
			continue
		}
		if ref == nil {
			var err error
			if ref, err = v.reference(ctx); err != nil {
				return err
			}
		}
		if err := runToFile(ctx, ref, nil, v.tests.input[i], out); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			v.errorf("test %s: the reference solution failed making its answer: %v", t.Name, err)
			continue
		}
		v.tests.answers[i] = out
	}
	return nil
}

// reference compiles the package's main solution.
func (v *verifier) reference(ctx context.Context) (*judge.Program, error) {
	for _, s := range v.pkg.Submissions {
		if s.Main {
			prog, err := v.compile(ctx, s.Program)
			if err != nil {
				return nil, fmt.Errorf("the main solution %s: %v", s.Path, compileMessage(err))
			}
			return prog, nil
		}
	}
	return nil, fmt.Errorf("tests have no answers and the package has no main solution to make them")
}

// judgeOne compiles a submission and judges it on every test with the
// time limit tl.
func (v *verifier) judgeOne(ctx context.Context, s Submission, tl time.Duration) (*judged, error) {
	v.logf("judging %s (time limit %v)", s.Path, tl)
	prog, err := v.compile(ctx, s.Program)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ce *judge.CompileError
		if errors.As(err, &ce) {
			return &judged{compile: ce.Output}, nil
		}
		return &judged{compile: err.Error()}, nil
	}
	sub := judge.Submission{Program: prog, Limits: v.limits(tl), Checker: v.checker, Interactor: v.interactor}
	for i, t := range v.pkg.Tests {
		if v.tests.input[i] == "" || v.tests.answers[i] == "" {
			continue
		}
		sub.Tests = append(sub.Tests, judge.TestCase{ID: t.Name, InputFile: v.tests.input[i],
			ExpectedFile: v.tests.answers[i], CheckerArgs: t.OutputValidatorArgs, Points: t.Points})
	}
	if len(sub.Tests) == 0 {
		return nil, fmt.Errorf("no test can be run")
	}
	res, err := v.judgeTests(ctx, sub)
	if err != nil {
		return nil, err
	}
	j := &judged{compiled: true, tests: res.Tests, maxTime: res.MaxCPUTime}
	// Tests were numbered in sub.Tests; map them back to the package's.
	idx := make([]int, 0, len(sub.Tests))
	for i := range v.pkg.Tests {
		if v.tests.input[i] != "" && v.tests.answers[i] != "" {
			idx = append(idx, i)
		}
	}
	for k := range j.tests {
		j.tests[k].Index = idx[j.tests[k].Index]
	}
	j.result = v.pkg.Evaluate(v.outcomesAt(j.tests, tl))
	return j, nil
}

// limits are a submission's limits at the time limit tl.
func (v *verifier) limits(tl time.Duration) judge.Limits {
	l := judge.Limits{CPUTime: tl}
	if mb := v.pkg.Limits.MemoryMB; mb > 0 {
		l.MemoryBytes = int64(mb) << 20
	} else {
		l.MemoryBytes = 1 << 30
	}
	if mb := v.pkg.Limits.OutputMB; mb > 0 {
		l.OutputBytes = int64(mb) << 20
	}
	return l
}

// judgeTests judges sub. When the package's verdict is its first failure
// (StopsAtFirstFailure), judging stops once a test failed and every test
// before it is done: the rest cannot change the result.
func (v *verifier) judgeTests(ctx context.Context, sub judge.Submission) (judge.Result, error) {
	if !v.pkg.StopsAtFirstFailure() {
		return v.e.Judge(ctx, sub, nil)
	}
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make([]bool, len(sub.Tests))
	failedAt := -1
	onTest := func(tr judge.TestResult) {
		done[tr.Index] = true
		if tr.Verdict != judge.Accepted && (failedAt < 0 || tr.Index < failedAt) {
			failedAt = tr.Index
		}
		if failedAt < 0 {
			return
		}
		for i := 0; i < failedAt; i++ {
			if !done[i] {
				return
			}
		}
		stop()
	}
	res, err := v.e.Judge(jctx, sub, onTest)
	if err != nil && ctx.Err() == nil && jctx.Err() != nil {
		err = nil // stopped by onTest
	}
	return res, err
}
