package judge

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// The exit codes of a testlib checker or interactor (testlib.h's
// OK_EXIT_CODE … UNEXPECTED_EOF_EXIT_CODE without EJUDGE/CONTESTER/TESTSYS):
// what a custom checker's or an interactor's status means.
const (
	exitOK            = 0 // _ok: accepted
	exitWrongAnswer   = 1 // _wa: wrong answer
	exitPresentation  = 2 // _pe: presentation error, judged as a wrong answer
	exitFail          = 3 // _fail: the checker (or the test) is broken
	exitDirt          = 4 // _dirt: extra output (testlib reports it with exit 2)
	exitPoints        = 7 // _points: partial credit, the points in its message
	exitUnexpectedEOF = 8 // _unexpected_eof: the output ended too soon
)

// checkerOutcome is what a custom checker said of one test.
type checkerOutcome struct {
	verdict Verdict
	// points is the checker's partial credit as a fraction of the test
	// (exit 7 only, read with its PointsScale), nil otherwise.
	points *float64
	// score is an ICPC validator's absolute score (CheckICPC), nil otherwise.
	score   *float64
	message string
}

// PointsScale is how the points a testlib checker or interactor gives a
// test (quitp, exit code 7) are read. testlib lets quitp give anything
// from 0 to 1E6 because Polygon, where problem packages come from, reads
// them in the test's own points or as a percentage; the judge turns them
// into the fraction of the test TestResult.Points holds, so that nothing
// after it needs to know which.
type PointsScale string

// The scales.
const (
	// PointsFraction (the default) reads the points as the fraction of
	// the test, in [0, 1].
	PointsFraction PointsScale = ""
	// PointsPercent reads them as a percentage of the test, in [0, 100]
	// (Polygon's treat-points-from-checker-as-percent).
	PointsPercent PointsScale = "percent"
	// PointsOfTest reads them in the test's own points, in [0,
	// TestCase.Points] (Polygon's default): quitp(5) on a test worth 10
	// is half of it. A test without points of its own reads points up to
	// 1 as a fraction and refuses more.
	PointsOfTest PointsScale = "test"
)

func (s PointsScale) validate() error {
	switch s {
	case PointsFraction, PointsPercent, PointsOfTest:
		return nil
	}
	return fmt.Errorf("%w: unknown points scale %q", ErrInvalidInput, s)
}

// pointsReading is how one test's exit-7 points are read: the problem's
// scale and the test's own points (0 when it has none).
type pointsReading struct {
	scale PointsScale
	max   float64
}

// pointsSlack is how far points may exceed the most a test allows and
// still count as all of it: a checker printing 10*k/n with %.10f may
// round a hair above 10.
const pointsSlack = 1e-9

// interpretChecker maps a custom checker's exit status to a verdict as
// testlib defines it: 0 ACCEPTED, 1 WRONG_ANSWER, 2 and 4 (presentation
// error, extra output) WRONG_ANSWER too — the verdict enum is public and
// does not grow for it, the message says so —, 8 (unexpected end of the
// output, with ENABLE_UNEXPECTED_EOF) WRONG_ANSWER, 3 (FAIL) INTERNAL_ERROR, 7 points: read from its message as
// testlib's quitp writes it ("points 5 message" on standard error) and
// turned into the fraction of the test with r (pointsOutcome),
// ACCEPTED when that is 1, WRONG_ANSWER with those points otherwise. Every
// other status, signal or limit is INTERNAL_ERROR: never the contestant's
// fault. comment is what the checker printed (standard output, then
// standard error), already truncated.
func interpretChecker(rr RunResult, comment, stderr string, r pointsReading) checkerOutcome {
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
	case exitWrongAnswer:
		return checkerOutcome{verdict: WrongAnswer, message: comment}
	case exitPresentation, exitDirt:
		return checkerOutcome{verdict: WrongAnswer, message: strings.TrimSpace("presentation error: " + comment)}
	case exitUnexpectedEOF:
		return checkerOutcome{verdict: WrongAnswer, message: strings.TrimSpace("unexpected end of the output: " + comment)}
	case exitFail:
		return failed("FAIL, exit code 3")
	case exitPoints:
		out, why := pointsOutcome(stderr, comment, r, "checker")
		if why != "" {
			return failed(why)
		}
		return out
	}
	return failed(fmt.Sprintf("%s: %s", rr.Verdict, rr.Message))
}

// pointsOutcome is the outcome of a checker or interactor (who) that
// exited with exitPoints: the points quitp wrote (on stderr, else in
// comment) as the fraction of the test r reads them as, ACCEPTED when
// that is 1 and WRONG_ANSWER with it otherwise. The message is comment,
// after the points as given when they were not a fraction ("5 of 10
// points: …"), so that what the checker said stays readable. why says
// what is wrong with the points when they cannot be read (none, not
// finite, negative, more than the test allows): the author's fault, not
// the contestant's, and never clamped away.
func pointsOutcome(stderr, comment string, r pointsReading, who string) (out checkerOutcome, why string) {
	p, ok := parsePoints(stderr)
	if !ok {
		if p, ok = parsePoints(comment); !ok {
			return checkerOutcome{}, "exit code 7 without points"
		}
	}
	raw := strconv.FormatFloat(p, 'g', -1, 64)
	switch {
	case math.IsNaN(p) || math.IsInf(p, 0):
		return checkerOutcome{}, fmt.Sprintf("exit code 7: the %s gave %s points, not a finite number", who, raw)
	case p < 0:
		return checkerOutcome{}, fmt.Sprintf("exit code 7: the %s gave negative points (%s)", who, raw)
	}
	var frac, most float64
	message := comment
	switch {
	case r.scale == PointsPercent:
		frac, most = p/100, 100
		message = fmt.Sprintf("%s%% of the test: %s", raw, comment)
	case r.scale == PointsOfTest && r.max > 0:
		frac, most = p/r.max, r.max
		message = fmt.Sprintf("%s of %s points: %s", raw, strconv.FormatFloat(r.max, 'g', -1, 64), comment)
	default:
		frac, most = p, 1
	}
	if p > most*(1+pointsSlack) {
		switch {
		case r.scale == PointsPercent:
			return checkerOutcome{}, fmt.Sprintf("exit code 7: the %s gave %s%% of a test, more than 100%%", who, raw)
		case r.scale == PointsOfTest && r.max > 0:
			return checkerOutcome{}, fmt.Sprintf("exit code 7: the %s gave %s points to a test worth %s", who, raw, strconv.FormatFloat(r.max, 'g', -1, 64))
		case r.scale == PointsOfTest:
			return checkerOutcome{}, fmt.Sprintf("exit code 7: the %s gave %s points to a test without points of its own (read as a fraction of it, points are in [0, 1])", who, raw)
		}
		return checkerOutcome{}, fmt.Sprintf("exit code 7 without points in [0, 1]: the %s gave %s, read as a fraction of the test", who, raw)
	}
	frac = min(max(frac, 0), 1)
	out = checkerOutcome{verdict: WrongAnswer, points: &frac, message: strings.TrimSpace(message)}
	if frac >= 1 {
		out.verdict = Accepted
	}
	return out, ""
}

// parsePoints reads the points of testlib's quitp from a checker's
// message, as they were given (pointsOutcome checks them): the first
// line whose first word is "points" followed by a number ("points 0.50
// partial"), or a message that starts with the number itself.
func parsePoints(s string) (float64, bool) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "points" {
			return number(f[1])
		}
	}
	if f := strings.Fields(s); len(f) > 0 {
		return number(f[0])
	}
	return 0, false
}

func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// testlibHeader is AlgoItny's testlib-compatible testlib.h (see its header
// comment and README): testlib's interface for checkers, interactors,
// validators and generators, written for this project.
//
//go:embed testlib/testlib.h
var testlibHeader []byte

// TestlibHeader returns the testlib.h that C++ author programs are
// compiled with, for tools that show or check it.
func TestlibHeader() []byte { return bytes.Clone(testlibHeader) }

// CompileChecker compiles a checker (or interactor) like CompileAuthor
// without extra files. Its errors are Compile's.
func (e *Engine) CompileChecker(ctx context.Context, language, source string) (*Program, error) {
	return e.CompileAuthor(ctx, language, "", source, nil)
}

// CompileAuthor compiles a problem's own program — checker, interactor,
// validator or generator — like CompileFiles (name is the source's file
// name in its package, or empty), with files (headers, by plain name)
// beside its source, and the project's testlib.h too when the language is C++ (its
// compiler is g++ or clang++), the source includes testlib.h and files
// bring none: a Polygon program's `#include "testlib.h"` compiles as is,
// and a package that ships its own testlib.h keeps it. A contestant's
// submission is compiled with Compile and gets no testlib.h. Its errors
// are CompileFiles'.
func (e *Engine) CompileAuthor(ctx context.Context, language, name, source string, files map[string][]byte) (*Program, error) {
	lang, err := e.language(language)
	if err != nil {
		return nil, err
	}
	all := make(map[string][]byte, len(files)+1)
	for name, data := range files {
		all[name] = data
	}
	if _, ok := all["testlib.h"]; !ok && lang.cxx() && strings.Contains(source, "testlib.h") {
		all["testlib.h"] = testlibHeader
	}
	return e.CompileFiles(ctx, language, name, source, all)
}

// cxx reports whether the language compiles C++ (its compiler is g++,
// c++ or clang++, possibly versioned as g++-12), whose author programs
// may include testlib.h.
func (l Language) cxx() bool {
	if len(l.Compile) == 0 {
		return false
	}
	name := filepath.Base(l.Compile[0])
	for _, c := range []string{"g++", "c++", "clang++"} {
		if name == c || strings.HasPrefix(name, c+"-") {
			return true
		}
	}
	return false
}
