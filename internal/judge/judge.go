package judge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
	// Checker judges outputs; the zero value compares lines.
	Checker Checker
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
// Errors: ErrUnknownLanguage, ErrLanguageUnavailable, ErrInvalidInput (no tests,
// bad limits or checker, a custom checker that does not compile), ErrClosed,
// ErrSandboxFailed when compilation could not be sandboxed, and ctx's error
// when ctx ends: running processes are killed at once and the Result holds the
// tests finished so far.
func (e *Engine) Judge(ctx context.Context, sub Submission, onTest func(TestResult)) (Result, error) {
	res := Result{Total: len(sub.Tests)}
	if len(sub.Tests) == 0 {
		return res, fmt.Errorf("%w: submission has no tests", ErrInvalidInput)
	}
	if _, err := sub.Limits.withDefaults(DefaultLimits()); err != nil {
		return res, err
	}
	if err := sub.Checker.validate(); err != nil {
		return res, err
	}
	var ce *CompileError
	prog := sub.Program
	if prog == nil {
		if _, err := e.language(sub.Language); err != nil {
			return res, err
		}
		p, err := e.Compile(ctx, sub.Language, sub.Source)
		if errors.As(err, &ce) {
			res.Verdict, res.CompileOutput = CompilationError, ce.Output
			if ce.Reason != "" {
				res.CompileOutput = strings.TrimSpace(ce.Reason + "\n" + ce.Output)
			}
			return res, nil
		}
		if err != nil {
			res.Verdict = InternalError
			return res, err
		}
		defer p.Close()
		prog = p
	}

	checker := sub.Checker
	if checker.Kind == CheckCustom && checker.Program == nil {
		cp, err := e.Compile(ctx, checker.Language, checker.Source)
		if err != nil {
			res.Verdict = InternalError
			if errors.As(err, &ce) {
				return res, fmt.Errorf("%w: the checker does not compile: %s", ErrInvalidInput, ce.Output)
			}
			return res, fmt.Errorf("checker: %w", err)
		}
		defer cp.Close()
		checker.Program = cp
	}

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
	if runErr != nil && len(results) < len(sub.Tests) && res.Verdict == Accepted {
		res.Verdict = InternalError
	}
	return res, runErr
}

// runTest runs test i and judges its output. The error is only for a cancelled
// context; every other failure is an INTERNAL_ERROR result.
func (e *Engine) runTest(ctx context.Context, prog *Program, checker Checker, sub Submission, i int) (TestResult, error) {
	tc := sub.Tests[i]
	tr := TestResult{Index: i, TestID: tc.ID}
	if tr.TestID == "" {
		tr.TestID = strconv.Itoa(i + 1)
	}
	internal := func(format string, args ...any) (TestResult, error) {
		tr.Verdict, tr.Message = InternalError, fmt.Sprintf(format, args...)
		return tr, nil
	}
	in, err := tc.open(tc.Input, tc.InputFile)
	if err != nil {
		return internal("cannot read the input: %v", err)
	}
	defer in.Close()

	preview := &cappedWriter{b: &strings.Builder{}, n: previewMax}
	var (
		stdout    io.Writer
		cmpDone   chan compareOutcome
		pw        *io.PipeWriter
		hostCheck string
		outFile   *os.File
		outBuffer *bufio.Writer
	)
	if checker.Kind == CheckCustom {
		// The custom checker reads files: they live in a directory of the
		// engine's that the program never sees (it writes through a pipe).
		if hostCheck, err = e.newCheckDir(); err != nil {
			return internal("%v", err)
		}
		defer removeAll(hostCheck)
		if outFile, err = os.OpenFile(filepath.Join(hostCheck, "output.txt"),
			os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644); err != nil {
			return internal("%v", err)
		}
		defer outFile.Close()
		outBuffer = bufio.NewWriterSize(outFile, 64<<10)
		stdout = io.MultiWriter(preview, outBuffer)
	} else {
		exp, err := tc.open(tc.Expected, tc.ExpectedFile)
		if err != nil {
			return internal("cannot read the expected output: %v", err)
		}
		defer exp.Close()
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		cmpDone = make(chan compareOutcome, 1)
		go func() {
			ok, msg, err := checker.Compare(exp, pr)
			_, _ = io.Copy(io.Discard, pr) // never block the program's output
			cmpDone <- compareOutcome{ok, msg, err}
		}()
		stdout = io.MultiWriter(preview, pw)
	}

	rr, err := prog.Run(ctx, RunOptions{Stdin: in, Stdout: stdout, Limits: sub.Limits})
	var cmp compareOutcome
	if pw != nil {
		pw.Close()
		cmp = <-cmpDone
	}
	tr.Verdict, tr.Message = rr.Verdict, rr.Message
	tr.CPUTime, tr.WallTime, tr.MemoryBytes = rr.CPUTime, rr.WallTime, rr.MemoryBytes
	tr.ExitCode, tr.Signal = rr.ExitCode, rr.Signal
	tr.Output, tr.Stderr = truncate(preview.b.String(), previewMax), truncate(rr.Stderr, previewMax)
	if err != nil {
		if ctx.Err() != nil {
			return tr, ctx.Err()
		}
		return internal("%v", err)
	}
	if rr.Verdict != Accepted {
		return tr, nil
	}
	if checker.Kind != CheckCustom {
		switch {
		case cmp.err != nil:
			return internal("checker: %v", cmp.err)
		case cmp.ok:
			tr.Verdict, tr.Message = Accepted, ""
		default:
			tr.Verdict, tr.Message = WrongAnswer, cmp.msg
		}
		return tr, nil
	}
	if err := outBuffer.Flush(); err != nil {
		return internal("saving the output: %v", err)
	}
	if err := outFile.Close(); err != nil {
		return internal("saving the output: %v", err)
	}
	verdict, msg, err := e.runChecker(ctx, checker.Program, tc, hostCheck)
	if err != nil {
		if ctx.Err() != nil {
			return tr, ctx.Err()
		}
		return internal("checker: %v", err)
	}
	tr.Verdict, tr.Message = verdict, msg
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
	dir, err := os.MkdirTemp(e.workDir, "check-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// runChecker runs a custom checker on input.txt, output.txt and answer.txt in
// hostDir and maps its exit status: 0 accepted, 1 wrong answer, anything
// else an internal error (returned as INTERNAL_ERROR with the reason; 2
// too: testlib's presentation error, but also what Python exits with when
// the checker itself is broken). The status decides, not what the checker
// printed: checkers echo the contestant's output, and a contestant printing
// "MemoryError" must not turn a wrong answer into a checker that ran out of
// memory.
func (e *Engine) runChecker(ctx context.Context, checker *Program, tc TestCase, hostDir string) (Verdict, string, error) {
	for _, f := range []struct {
		name string
		data []byte
		file string
	}{{"input.txt", tc.Input, tc.InputFile}, {"answer.txt", tc.Expected, tc.ExpectedFile}} {
		src, err := tc.open(f.data, f.file)
		if err != nil {
			return InternalError, "", err
		}
		err = writeNew(filepath.Join(hostDir, f.name), src)
		src.Close()
		if err != nil {
			return InternalError, "", err
		}
	}
	inBox := hostDir
	if e.sandboxed {
		inBox = checkDir
	}
	var out strings.Builder
	rr, err := checker.run(ctx, RunOptions{
		Args:   []string{"{check}/input.txt", "{check}/output.txt", "{check}/answer.txt"},
		Stdout: &cappedWriter{b: &out, n: previewMax},
		Limits: e.cfg.CheckerLimits,
	}, true, []mount{{src: hostDir, dst: checkDir}}, map[string]string{"check": inBox})
	if err != nil {
		return InternalError, "", err
	}
	comment := strings.TrimSpace(truncate(strings.TrimSpace(out.String())+"\n"+strings.TrimSpace(rr.Stderr), previewMax))
	switch {
	case rr.Verdict == Accepted:
		return Accepted, comment, nil
	case rr.Signal == "" && rr.ExitCode == 1 && rr.Verdict != TimeLimitExceeded:
		return WrongAnswer, comment, nil
	}
	return InternalError, fmt.Sprintf("checker failed (%s: %s): %s", rr.Verdict, rr.Message, comment), nil
}
