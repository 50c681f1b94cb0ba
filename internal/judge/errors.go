package judge

import (
	"errors"
	"fmt"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// Sentinel errors returned by the engine. Callers test them with errors.Is and map
// them to their own error vocabulary once, at their boundary.
var (
	// ErrSandboxUnavailable is returned by New when bubblewrap is missing or does
	// not work on this machine, or when the unsandboxed mode was requested without
	// Config.AllowUnsandboxed. The engine never runs user code in that case.
	ErrSandboxUnavailable = sandbox.ErrUnavailable
	// ErrSandboxFailed is returned when a sandbox could not be set up for one run
	// (bwrap failed before the program started). It is the judge's fault; a judged
	// test gets the INTERNAL_ERROR verdict.
	ErrSandboxFailed = sandbox.ErrFailed
	// ErrUnknownLanguage is returned for a language ID the engine does not know.
	ErrUnknownLanguage = errors.New("judge: unknown language")
	// ErrLanguageUnavailable is returned for a known language whose compiler or
	// runtime is not installed (or not visible inside the sandbox) on this machine.
	ErrLanguageUnavailable = errors.New("judge: language unavailable")
	// ErrCompilation is matched by a *CompileError: the source did not compile.
	ErrCompilation = errors.New("judge: compilation failed")
	// ErrInvalidInput is returned when the caller passed something unusable:
	// negative limits, a submission without tests, an unknown checker kind, a
	// custom checker without source, an unreadable test file.
	ErrInvalidInput = errors.New("judge: invalid input")
	// ErrClosed is returned by an Engine or Program used after Close.
	ErrClosed = errors.New("judge: closed")
	// ErrCompilerTimeout is returned when a compiler did not finish within
	// Config.CompileLimits (CPU or wall time). It is not a compilation
	// error: what makes a compiler that slow is nearly always the machine
	// (a cold build cache, a host busy with other work), so the caller
	// treats it as a failure of the judge and tries again later, and says
	// so to the user if it persists — never COMPILATION_ERROR with the
	// user's code at fault.
	ErrCompilerTimeout = errors.New("judge: the compiler did not finish within its time limit")
)

// CompileError is the error returned by Engine.Compile (and Engine.Run) when the
// compiler rejects the source. It exists so the caller can show the compiler's
// message; errors.Is(err, ErrCompilation) is true for it.
type CompileError struct {
	// Language is the language ID that was compiled.
	Language string
	// Output is the compiler's message (standard output then standard error),
	// truncated to a few KiB.
	Output string
	// Reason says why compilation stopped when it was not a plain compiler
	// failure, e.g. "compiler exceeded the memory limit"; empty otherwise.
	Reason string
}

// Error implements error.
func (e *CompileError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("judge: compilation failed (%s): %s", e.Language, e.Reason)
	}
	return fmt.Sprintf("judge: compilation failed (%s)", e.Language)
}

// Is makes errors.Is(err, ErrCompilation) true.
func (e *CompileError) Is(target error) bool { return target == ErrCompilation }
