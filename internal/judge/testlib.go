package judge

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The exit codes of a testlib checker (testlib.h's OK_EXIT_CODE …
// POINTS_EXIT_CODE without EJUDGE/CONTESTER/TESTSYS): what a custom checker's
// status means.
const (
	checkerOK     = 0 // _ok: accepted
	checkerWA     = 1 // _wa: wrong answer
	checkerPE     = 2 // _pe: presentation error, judged as a wrong answer
	checkerFail   = 3 // _fail: the checker (or the test) is broken
	checkerPoints = 7 // _points: partial credit, the points in its message
)

// checkerOutcome is what a custom checker said of one test.
type checkerOutcome struct {
	verdict Verdict
	// points is the checker's partial credit as a fraction of the test
	// (exit 7 only), nil otherwise.
	points  *float64
	message string
}

// interpretChecker maps a custom checker's exit status to a verdict as
// testlib defines it: 0 ACCEPTED, 1 WRONG_ANSWER, 2 (presentation error)
// WRONG_ANSWER too — the verdict enum is public and does not grow for it,
// the message says so —, 3 (FAIL) INTERNAL_ERROR, 7 points: the fraction
// of the test in [0, 1] the checker gave, read from its message as
// testlib's quitp writes it ("points 0.50 message" on standard error),
// ACCEPTED when it is 1, WRONG_ANSWER with those points otherwise. Every
// other status, signal or limit is INTERNAL_ERROR: never the contestant's
// fault. comment is what the checker printed (standard output, then
// standard error), already truncated.
func interpretChecker(rr RunResult, comment, stderr string) checkerOutcome {
	failed := func(why string) checkerOutcome {
		return checkerOutcome{verdict: InternalError, message: fmt.Sprintf("checker failed (%s): %s", why, comment)}
	}
	// The exit status decides, not the verdict the run was classified
	// with from the text (a checker echoing "MemoryError" exited 1).
	switch {
	case rr.Verdict == Accepted:
		return checkerOutcome{verdict: Accepted, message: comment}
	case rr.Signal != "" || rr.Verdict == TimeLimitExceeded:
		return failed(fmt.Sprintf("%s: %s", rr.Verdict, rr.Message))
	}
	switch rr.ExitCode {
	case checkerWA:
		return checkerOutcome{verdict: WrongAnswer, message: comment}
	case checkerPE:
		return checkerOutcome{verdict: WrongAnswer, message: strings.TrimSpace("presentation error: " + comment)}
	case checkerFail:
		return failed("FAIL, exit code 3")
	case checkerPoints:
		p, ok := parsePoints(stderr)
		if !ok {
			if p, ok = parsePoints(comment); !ok {
				return failed("exit code 7 without points in [0, 1]")
			}
		}
		out := checkerOutcome{verdict: WrongAnswer, points: &p, message: comment}
		if p >= 1 {
			out.verdict = Accepted
		}
		return out
	}
	return failed(fmt.Sprintf("%s: %s", rr.Verdict, rr.Message))
}

// parsePoints reads the points of testlib's quitp from a checker's
// message: the first line whose first word is "points" followed by a
// number ("points 0.50 partial"), or a message that starts with the number
// itself. The number must be within [0, 1].
func parsePoints(s string) (float64, bool) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "points" {
			return fraction(f[1])
		}
	}
	if f := strings.Fields(s); len(f) > 0 {
		return fraction(f[0])
	}
	return 0, false
}

func fraction(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
		return 0, false
	}
	return v, true
}

// testlibHeader is AlgoItny's testlib-compatible testlib.h (see its header
// comment and README): the checker and interactor interface of testlib,
// written for this project.
//
//go:embed testlib/testlib.h
var testlibHeader []byte

// TestlibHeader returns the testlib.h that C++ checkers and interactors are
// compiled with, for tools that show or check it.
func TestlibHeader() []byte { return bytes.Clone(testlibHeader) }

// CompileChecker compiles a checker (or interactor) like Compile, with
// testlib.h next to the source when the language is C++, so that a Polygon
// checker's `#include "testlib.h"` compiles as is. Its errors are Compile's.
func (e *Engine) CompileChecker(ctx context.Context, language, source string) (*Program, error) {
	var files map[string][]byte
	if language == cppLanguage().ID {
		files = map[string][]byte{"testlib.h": testlibHeader}
	}
	return e.compileWith(ctx, language, source, files)
}
