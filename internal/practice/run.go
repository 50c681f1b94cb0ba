// Package practice runs a user's code in the judge's sandbox outside of
// judging: once on the user's own input (RunCode, CODE_RUN jobs), and
// against the reference solution on generated inputs until the two
// disagree (FindCounterexample, COUNTEREXAMPLE jobs) — the stress test a
// problem setter runs with a generator, offered to the person whose
// submission failed. Inputs come from the problem's kept generator with
// fresh seeds, so that the problem's stored (hidden) tests are never shown.
package practice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
)

// Runner runs practice work on a judge engine.
type Runner struct {
	Engine *judge.Engine
}

// RunCode compiles code and runs it once on stdin under the given limits
// (0: the judge's defaults). A compilation error, a limit or a crash is a
// verdict in the result, not an error. Errors: EINVALID (a language this
// judge does not run), EUNAVAILABLE (the compiler did not finish in time:
// the machine was overloaded; retry), EINTERNAL (the sandbox failed).
func (r *Runner) RunCode(ctx context.Context, lang algoitny.Language, code string, p algoitny.CodeRunParams) (*algoitny.CodeRunResult, error) {
	lim := limits(p.TimeLimitMs, p.MemoryLimitMB)
	res := &algoitny.CodeRunResult{TimeLimitMs: int(lim.CPUTime.Milliseconds()), MemoryLimitMB: int(lim.MemoryBytes >> 20)}
	prog, err := r.Engine.Compile(ctx, string(lang), code)
	var ce *judge.CompileError
	if errors.As(err, &ce) {
		res.Verdict, res.CompileMessage, res.ExitCode = algoitny.RunCompilationError, compileMessage(ce), -1
		return res, nil
	}
	if err != nil {
		return nil, compileFailure(err, "your code", lang)
	}
	defer prog.Close()
	out := &capped{max: algoitny.CodeRunOutputMax}
	rr, err := prog.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(p.Stdin), Stdout: out, Limits: lim})
	if err != nil {
		return nil, algoitny.Internal(err, "run the code")
	}
	if rr.Verdict == judge.InternalError {
		return nil, algoitny.Internal(errors.New(rr.Message), "run the code")
	}
	res.Verdict = runVerdict(rr.Verdict)
	res.Stdout = strings.ToValidUTF8(out.buf.String(), "\uFFFD")
	res.Stderr = strings.ToValidUTF8(rr.Stderr, "\uFFFD")
	stderrCut := len(res.Stderr) > algoitny.CodeRunStderrMax
	if stderrCut {
		res.Stderr = strings.ToValidUTF8(res.Stderr[:algoitny.CodeRunStderrMax], "")
	}
	res.Truncated = out.cut || stderrCut
	res.ExitCode, res.Signal, res.Message = rr.ExitCode, rr.Signal, rr.Message
	res.TimeMs, res.MemoryKB = int(rr.CPUTime.Milliseconds()), int(rr.MemoryBytes>>10)
	return res, nil
}

// limits are a run's limits from a problem's (0: the judge's defaults).
func limits(timeMs, memoryMB int) judge.Limits {
	d := judge.DefaultLimits()
	lim := judge.Limits{CPUTime: d.CPUTime, MemoryBytes: d.MemoryBytes}
	if timeMs > 0 {
		lim.CPUTime = time.Duration(timeMs) * time.Millisecond
	}
	if memoryMB > 0 {
		lim.MemoryBytes = int64(memoryMB) << 20
	}
	return lim
}

// runVerdict is a run's verdict from the judge's (not INTERNAL_ERROR).
func runVerdict(v judge.Verdict) algoitny.RunVerdict {
	switch v {
	case judge.Accepted:
		return algoitny.RunOK
	case judge.TimeLimitExceeded:
		return algoitny.RunTimeLimitExceeded
	case judge.MemoryLimitExceeded:
		return algoitny.RunMemoryLimitExceeded
	case judge.OutputLimitExceeded:
		return algoitny.RunOutputLimitExceeded
	}
	return algoitny.RunRuntimeError
}

func compileMessage(ce *judge.CompileError) string {
	if ce.Reason != "" {
		return strings.TrimSpace(ce.Reason + "\n" + ce.Output)
	}
	return ce.Output
}

// compileFailure is the error of a program (what names it) that could not
// be compiled for another reason than its source.
func compileFailure(err error, what string, lang algoitny.Language) error {
	switch {
	case errors.Is(err, judge.ErrUnknownLanguage), errors.Is(err, judge.ErrLanguageUnavailable):
		return algoitny.Invalid("language", "%s: %s is not available on this server", what, lang)
	case errors.Is(err, judge.ErrCompilerTimeout):
		return &algoitny.Error{Code: algoitny.EUNAVAILABLE, Err: err,
			Message: fmt.Sprintf("the compiler of %s did not finish within its time limit: the judge is overloaded (not an error in the code)", what)}
	}
	return algoitny.Internal(err, "compile %s", what)
}

// capped keeps the first max bytes written to it and says whether more came.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
