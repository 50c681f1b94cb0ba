package judge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// previewMax bounds TestResult.Output and TestResult.Stderr.
const previewMax = 1 << 10

// TestCase is one input with its expected output. Each side is given either in
// memory or as a file; a file is streamed (never loaded whole), so large
// expected outputs cost no memory.
type TestCase struct {
	// ID names the test in results (e.g. "07" or a database key); defaults to
	// its 1-based position.
	ID string
	// Input is the standard input, unless InputFile is set.
	Input []byte
	// InputFile is a path to read the standard input from.
	InputFile string
	// Expected is the expected output (or the answer given to a custom
	// checker), unless ExpectedFile is set.
	Expected []byte
	// ExpectedFile is a path to read the expected output from.
	ExpectedFile string
	// CheckerArgs are the test's own arguments of an ICPC output
	// validator or interactor (CheckICPC, InteractICPC), or the default
	// validator's flags (CheckDefaultValidator); other checkers ignore them.
	CheckerArgs []string
	// Points is what the test is worth in its problem's own points (a
	// Polygon test's points), 0 when it has none: what a testlib checker's
	// or interactor's points are a share of with PointsOfTest.
	Points float64
}

func (tc TestCase) open(data []byte, file string) (io.ReadCloser, error) {
	if file == "" {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: test %s: %v", ErrInvalidInput, tc.ID, err)
	}
	return f, nil
}

// Submission is a program to judge against test cases.
type Submission struct {
	// Language is a Language.ID.
	Language string
	// Source is the program's source code.
	Source string
	// Program, when set, is used instead of compiling Language/Source (a
	// rejudge, a reference solution run over many tests). Judge does not close
	// it.
	Program *Program
	// Tests are run in parallel (up to Config.Workers at a time); results keep
	// their order.
	Tests []TestCase
	// Limits apply to every test; zero fields take DefaultLimits.
	Limits Limits
	// Checker judges outputs; the zero value compares lines. With an
	// Interactor only a CheckCustom checker is used: it judges the output
	// file of a testlib interactor that accepted (Polygon's interactive
	// problems).
	Checker Checker
	// Interactor, when set, makes the problem interactive: the interactor
	// talks with the solution and decides each test's verdict.
	Interactor *Interactor
}

// TestResult is the outcome of one test.
type TestResult struct {
	// Index is the test's position in Submission.Tests.
	Index int
	// TestID is TestCase.ID (or the 1-based position).
	TestID string
	// Verdict is the test's verdict.
	Verdict Verdict
	// CPUTime is the CPU time the program used (user+system).
	CPUTime time.Duration
	// WallTime is the real time the program ran.
	WallTime time.Duration
	// MemoryBytes is the program's peak resident memory.
	MemoryBytes int64
	// ExitCode is the exit status, -1 when killed by a signal.
	ExitCode int
	// Signal names the signal that killed the program (RUNTIME_ERROR, or SIGKILL
	// when the engine killed it at a limit).
	Signal string
	// Output is the beginning of the program's output (1 KiB).
	Output string
	// Stderr is the beginning of the program's standard error (1 KiB).
	Stderr string
	// Message explains the verdict: the first difference for WRONG_ANSWER, the
	// limit for *_LIMIT_EXCEEDED, the exit code or signal for RUNTIME_ERROR, the
	// checker's comment for a custom checker.
	Message string
	// Points is the partial credit a custom checker gave the test (testlib's
	// quitp, exit code 7) as a fraction in [0, 1], whatever scale it gave
	// it in (Checker.Points); nil when it gave none (the
	// test then counts fully if ACCEPTED, not at all otherwise).
	Points *float64
	// Score is an absolute score an ICPC output validator gave the test
	// (its score.txt); nil when it gave none.
	Score *float64
}

// Result is the outcome of a judged submission.
type Result struct {
	// Verdict is ACCEPTED when every test passed, COMPILATION_ERROR when the
	// source did not compile, otherwise the verdict of the first failed test
	// (by index).
	Verdict Verdict
	// CompileOutput is the compiler's (truncated) message, for
	// COMPILATION_ERROR and for warnings.
	CompileOutput string
	// Tests holds the finished tests by index (all of them unless the judging
	// was cancelled; none after a compilation error).
	Tests []TestResult
	// Passed and Failed count Tests; Total is len(Submission.Tests).
	Passed, Failed, Total int
	// MaxCPUTime is the largest CPUTime over Tests.
	MaxCPUTime time.Duration
	// MaxWallTime is the largest WallTime over Tests.
	MaxWallTime time.Duration
	// MaxMemoryBytes is the largest MemoryBytes over Tests.
	MaxMemoryBytes int64
}

// Judge compiles the submission once and runs it against every test, calling
// onTest (if not nil) as each test finishes, in completion order and never
// concurrently. A compilation error is a Result with COMPILATION_ERROR, not an
// error; limit violations, crashes and wrong answers are per-test verdicts.
//
// An interactive submission (Submission.Interactor) is judged on any
// engine, whatever its Config.Workers: one of a single worker runs the
// interactor on its partner slot.
//
// Errors: ErrUnknownLanguage, ErrLanguageUnavailable, ErrInvalidInput (no tests,
// bad limits or checker, a custom checker or an interactor that does not
// compile), ErrClosed, ErrSandboxFailed when compilation could not be
// sandboxed, ErrCompilerTimeout when a compiler (the submission's, the
// checker's or the interactor's) did not finish in time — the Result is
// then INTERNAL_ERROR, not COMPILATION_ERROR: retry —, and ctx's error
// when ctx ends: running processes are killed at once and the Result holds
// the tests finished so far.
func (e *Engine) Judge(ctx context.Context, sub Submission, onTest func(TestResult)) (Result, error) {
	res := Result{Total: len(sub.Tests)}
	if err := sub.validate(); err != nil {
		return res, err
	}
	prog := sub.Program
	if prog == nil {
		p, err := e.compileSubmission(ctx, sub, &res)
		if p == nil {
			return res, err // a compilation error is in res, with a nil error
		}
		defer p.Close()
		prog = p
	}
	checker := sub.Checker
	if checker.runsProgram() && checker.Program == nil {
		cp, err := e.compileChecker(ctx, checker)
		if err != nil {
			res.Verdict = InternalError
			return res, err
		}
		defer cp.Close()
		checker.Program = cp
	}
	if it := sub.Interactor; it != nil && it.Program == nil {
		ip, err := e.compileInteractor(ctx, *it)
		if err != nil {
			res.Verdict = InternalError
			return res, err
		}
		defer ip.Close()
		compiled := *it
		compiled.Program = ip
		sub.Interactor = &compiled
	}
	results, runErr := e.runTests(ctx, prog, checker, sub, onTest)
	res.summarise(results, runErr, len(sub.Tests))
	return res, runErr
}

// validate checks what Judge can check before compiling: there are tests,
// the limits and the checker are valid. It fails with ErrInvalidInput.
func (sub Submission) validate() error {
	if len(sub.Tests) == 0 {
		return fmt.Errorf("%w: submission has no tests", ErrInvalidInput)
	}
	if _, err := sub.Limits.withDefaults(DefaultLimits()); err != nil {
		return err
	}
	for _, tc := range sub.Tests {
		if tc.Points < 0 || math.IsNaN(tc.Points) || math.IsInf(tc.Points, 0) {
			return fmt.Errorf("%w: test %s is worth %v points", ErrInvalidInput, tc.ID, tc.Points)
		}
	}
	if sub.Interactor != nil {
		if err := sub.Interactor.validate(); err != nil {
			return err
		}
	}
	return sub.Checker.validate()
}

// compileSubmission compiles sub's source. A compilation error is recorded
// in res (COMPILATION_ERROR and the compiler's output) and returns a nil
// program and a nil error; any other failure sets INTERNAL_ERROR and
// returns the error (ErrUnknownLanguage, ErrLanguageUnavailable, ErrClosed,
// ErrSandboxFailed, ctx's error).
func (e *Engine) compileSubmission(ctx context.Context, sub Submission, res *Result) (*Program, error) {
	if _, err := e.language(sub.Language); err != nil {
		return nil, err
	}
	p, err := e.Compile(ctx, sub.Language, sub.Source)
	var ce *CompileError
	if errors.As(err, &ce) {
		res.Verdict, res.CompileOutput = CompilationError, ce.Output
		if ce.Reason != "" {
			res.CompileOutput = strings.TrimSpace(ce.Reason + "\n" + ce.Output)
		}
		return nil, nil
	}
	if err != nil {
		res.Verdict = InternalError
		return nil, err
	}
	return p, nil
}

// compileChecker compiles a custom checker's source; a checker that does
// not compile is ErrInvalidInput.
func (e *Engine) compileChecker(ctx context.Context, checker Checker) (*Program, error) {
	cp, err := e.CompileAuthor(ctx, checker.Language, "", checker.Source, checker.Files)
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%w: the checker does not compile: %s", ErrInvalidInput, ce.Output)
		}
		return nil, fmt.Errorf("checker: %w", err)
	}
	return cp, nil
}

// runTests runs every test of sub on up to cfg.Workers workers, calling
// onTest as each finishes (never concurrently), and returns the finished
// tests in completion order and the first error (ctx's when it ended).
func (e *Engine) runTests(ctx context.Context, prog *Program, checker Checker, sub Submission, onTest func(TestResult)) ([]TestResult, error) {
	var (
		mu      sync.Mutex
		results []TestResult
		runErr  error
		wg      sync.WaitGroup
	)
	next := make(chan int)
	workers := min(e.cfg.Workers, len(sub.Tests))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tr, err := e.runTest(ctx, prog, checker, sub, i)
				mu.Lock()
				if err != nil {
					if runErr == nil {
						runErr = err
					}
				} else {
					results = append(results, tr)
					if onTest != nil {
						onTest(tr)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range sub.Tests {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if runErr == nil {
		runErr = ctx.Err()
	}
	return results, runErr
}

// summarise fills res from the finished tests: sorted by index, counted,
// the first failure's verdict, the largest times and memory. A run that
// ended on an error before every test finished, with no failure to show,
// is INTERNAL_ERROR.
func (res *Result) summarise(results []TestResult, runErr error, total int) {
	sort.Slice(results, func(a, b int) bool { return results[a].Index < results[b].Index })
	res.Tests = results
	res.Verdict = Accepted
	for _, tr := range results {
		if tr.Verdict == Accepted {
			res.Passed++
		} else {
			res.Failed++
			if res.Verdict == Accepted {
				res.Verdict = tr.Verdict
			}
		}
		res.MaxCPUTime = max(res.MaxCPUTime, tr.CPUTime)
		res.MaxWallTime = max(res.MaxWallTime, tr.WallTime)
		res.MaxMemoryBytes = max(res.MaxMemoryBytes, tr.MemoryBytes)
	}
	if runErr != nil && len(results) < total && res.Verdict == Accepted {
		res.Verdict = InternalError
	}
}

// runTest runs test i and judges its output. The error is only for a cancelled
// context; every other failure is an INTERNAL_ERROR result.
func (e *Engine) runTest(ctx context.Context, prog *Program, checker Checker, sub Submission, i int) (TestResult, error) {
	if sub.Interactor != nil {
		return e.runInteractiveTest(ctx, prog, checker, sub, i)
	}
	tc := sub.Tests[i]
	tr := TestResult{Index: i, TestID: tc.ID}
	if tr.TestID == "" {
		tr.TestID = strconv.Itoa(i + 1)
	}
	if checker.Kind == CheckICPC && checker.Passes > 1 {
		return e.runPasses(tr, checker.Passes, tc, func(tc TestCase, fbDir string) (TestResult, error) {
			return e.runPass(ctx, prog, checker, sub.Limits, tc, tr, fbDir)
		})
	}
	return e.runPass(ctx, prog, checker, sub.Limits, tc, tr, "")
}

// runPass runs the program on tc's input and judges its output: tr with
// the outcome. An ICPC validator's feedback goes to fbDir ("": a directory
// of its own). The error is only for a cancelled context.
func (e *Engine) runPass(ctx context.Context, prog *Program, checker Checker, limits Limits, tc TestCase, tr TestResult, fbDir string) (TestResult, error) {
	in, err := tc.open(tc.Input, tc.InputFile)
	if err != nil {
		return tr.internal("cannot read the input: %v", err)
	}
	defer in.Close()
	out, err := e.openTestOutput(checker, tc)
	if err != nil {
		return tr.internal("%v", err)
	}
	defer out.close()

	rr, err := prog.Run(ctx, RunOptions{Stdin: in, Stdout: out.stdout, Limits: limits})
	cmp := out.compared()
	tr.Verdict, tr.Message = rr.Verdict, rr.Message
	tr.CPUTime, tr.WallTime, tr.MemoryBytes = rr.CPUTime, rr.WallTime, rr.MemoryBytes
	tr.ExitCode, tr.Signal = rr.ExitCode, rr.Signal
	tr.Output, tr.Stderr = truncate(out.preview.b.String(), previewMax), truncate(rr.Stderr, previewMax)
	if err != nil {
		if ctx.Err() != nil {
			return tr, ctx.Err()
		}
		return tr.internal("%v", err)
	}
	if rr.Verdict != Accepted {
		return tr, nil
	}
	if !checker.runsProgram() {
		switch {
		case cmp.err != nil:
			return tr.internal("checker: %v", cmp.err)
		case cmp.ok:
			tr.Verdict, tr.Message = Accepted, ""
		default:
			tr.Verdict, tr.Message = WrongAnswer, cmp.msg
		}
		return tr, nil
	}
	return e.checkTest(ctx, tr, checker, limits, tc, out, fbDir)
}

// internal returns tr as an INTERNAL_ERROR with a message, and no error.
func (tr TestResult) internal(format string, args ...any) (TestResult, error) {
	tr.Verdict, tr.Message = InternalError, fmt.Sprintf(format, args...)
	return tr, nil
}

// testOutput is where a test's program writes: a preview of the start, and
// either a comparison with the expected output that reads it as it comes,
// or a file in a directory of the engine's for a custom checker (which
// reads files; the program never sees the directory).
type testOutput struct {
	preview *cappedWriter
	stdout  io.Writer

	// built-in comparison
	pw      *io.PipeWriter
	cmpDone chan compareOutcome

	// custom checker
	hostCheck string
	outFile   *os.File
	outBuffer *bufio.Writer

	closers []func() // in the order to run them
}

// openTestOutput prepares where tc's output goes for checker; the caller
// closes it. Its errors are messages for an INTERNAL_ERROR.
func (e *Engine) openTestOutput(checker Checker, tc TestCase) (*testOutput, error) {
	o := &testOutput{preview: &cappedWriter{b: &strings.Builder{}, n: previewMax}}
	if checker.runsProgram() {
		var err error
		if o.hostCheck, err = e.newCheckDir(); err != nil {
			return nil, err
		}
		if o.outFile, err = os.OpenFile(filepath.Join(o.hostCheck, "output.txt"),
			os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644); err != nil {
			sandbox.RemoveAll(o.hostCheck)
			return nil, err
		}
		o.closers = []func(){func() { o.outFile.Close() }, func() { sandbox.RemoveAll(o.hostCheck) }}
		o.outBuffer = bufio.NewWriterSize(o.outFile, 64<<10)
		o.stdout = io.MultiWriter(o.preview, o.outBuffer)
		return o, nil
	}
	compare, err := checker.comparer(tc)
	if err != nil {
		return nil, fmt.Errorf("checker: %v", err)
	}
	exp, err := tc.open(tc.Expected, tc.ExpectedFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the expected output: %v", err)
	}
	o.closers = []func(){func() { exp.Close() }}
	pr, pw := io.Pipe()
	o.pw, o.cmpDone = pw, make(chan compareOutcome, 1)
	go func() {
		ok, msg, err := compare(exp, pr)
		_, _ = io.Copy(io.Discard, pr) // never block the program's output
		o.cmpDone <- compareOutcome{ok, msg, err}
	}()
	o.stdout = io.MultiWriter(o.preview, pw)
	return o, nil
}

// compared ends the program's output and returns the built-in
// comparison's outcome (the zero outcome for a custom checker).
func (o *testOutput) compared() compareOutcome {
	if o.pw == nil {
		return compareOutcome{}
	}
	_ = o.pw.Close()
	return <-o.cmpDone
}

// close releases the files and the directory of the output.
func (o *testOutput) close() {
	for _, c := range o.closers {
		c()
	}
}

// checkTest saves the program's output and has the custom checker judge
// it, under limits derived from the test's (limits). An ICPC validator
// writes its feedback to fbDir, or to a directory of its own when fbDir is
// "". The error is only for a cancelled context.
func (e *Engine) checkTest(ctx context.Context, tr TestResult, checker Checker, limits Limits, tc TestCase, out *testOutput, fbDir string) (TestResult, error) {
	if err := out.outBuffer.Flush(); err != nil {
		return tr.internal("saving the output: %v", err)
	}
	if err := out.outFile.Close(); err != nil {
		return tr.internal("saving the output: %v", err)
	}
	var co checkerOutcome
	var err error
	if checker.Kind == CheckICPC {
		if fbDir == "" {
			if fbDir, err = e.newFeedbackDir(); err != nil {
				return tr.internal("checker: %v", err)
			}
			defer sandbox.RemoveAll(fbDir)
		}
		co, err = e.runICPCChecker(ctx, checker, limits, tc, out.hostCheck, fbDir)
	} else {
		co, err = e.runChecker(ctx, checker.Program, limits, tc, out.hostCheck, pointsReading{checker.Points, tc.Points})
	}
	if err != nil {
		if ctx.Err() != nil {
			return tr, ctx.Err()
		}
		return tr.internal("checker: %v", err)
	}
	tr.Verdict, tr.Message, tr.Points, tr.Score = co.verdict, co.message, co.points, co.score
	return tr, nil
}

type compareOutcome struct {
	ok  bool
	msg string
	err error
}

// newCheckDir makes a directory only the engine writes, readable by the
// sandbox uids.
func (e *Engine) newCheckDir() (string, error) {
	dir, err := os.MkdirTemp(e.sb.WorkDir(), "check-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// runChecker runs a custom checker on input.txt, output.txt and answer.txt in
// hostDir, under the limits derived from the test's (Engine.authorLimits of
// test), and maps its exit status as testlib defines it (interpretChecker:
// 0 accepted, 1 and 2 wrong answer, 7 points, anything else an internal
// error). The status decides, not what the checker printed: checkers echo
// the contestant's output, and a contestant printing "MemoryError" must not
// turn a wrong answer into a checker that ran out of memory; only exit 7
// reads its message, for the points (read as r says). A checker that did
// not end on its own (a limit, a signal) is an internal error that says so
// (authorFailure).
func (e *Engine) runChecker(ctx context.Context, checker *Program, test Limits, tc TestCase, hostDir string, r pointsReading) (checkerOutcome, error) {
	for _, f := range []struct {
		name string
		data []byte
		file string
	}{{"input.txt", tc.Input, tc.InputFile}, {"answer.txt", tc.Expected, tc.ExpectedFile}} {
		src, err := tc.open(f.data, f.file)
		if err != nil {
			return checkerOutcome{verdict: InternalError}, err
		}
		err = writeNew(filepath.Join(hostDir, f.name), src)
		src.Close()
		if err != nil {
			return checkerOutcome{verdict: InternalError}, err
		}
	}
	inBox := hostDir
	if e.sb.Sandboxed() {
		inBox = sandbox.CheckDir
	}
	test, err := test.withDefaults(DefaultLimits())
	if err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	var out strings.Builder
	rr, err := checker.run(ctx, RunOptions{
		Args:   []string{"{check}/input.txt", "{check}/output.txt", "{check}/answer.txt"},
		Stdout: &cappedWriter{b: &out, n: previewMax},
		Limits: e.authorLimits(test),
	}, true, []sandbox.Mount{{Src: hostDir, Dst: sandbox.CheckDir}}, map[string]string{"check": inBox})
	if err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	comment := strings.TrimSpace(truncate(strings.TrimSpace(out.String())+"\n"+strings.TrimSpace(rr.Stderr), previewMax))
	if msg, failed := authorFailure("checker", rr, comment); failed {
		return checkerOutcome{verdict: InternalError, message: msg}, nil
	}
	return interpretChecker(rr, comment, rr.Stderr, r), nil
}
