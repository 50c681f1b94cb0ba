package judge_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

// TestCheckerTestlibExitCodes: a custom checker's status means what it
// means to testlib: 0 OK, 1 WA, 2 PE (a wrong answer), 3 FAIL (the judge's
// fault), 7 points read from its message as quitp writes it.
func TestCheckerTestlibExitCodes(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	tests := []judge.TestCase{{Input: []byte("1\n"), Expected: []byte("1\n")}}
	exit := func(code int, stderr string) judge.Checker {
		return judge.Checker{Kind: judge.CheckCustom, Language: "python",
			Source: "import sys\nsys.stderr.write(" + pyQuote(stderr) + ")\nsys.exit(" + itoa(code) + ")\n"}
	}
	half := 0.5
	for _, tc := range []struct {
		name    string
		checker judge.Checker
		want    judge.Verdict
		points  *float64
		message string
	}{
		{"OK", exit(0, "ok 1 number"), judge.Accepted, nil, "ok 1 number"},
		{"WA", exit(1, "wrong answer 1 differs"), judge.WrongAnswer, nil, "wrong answer 1 differs"},
		{"PE", exit(2, "wrong output format extra token"), judge.WrongAnswer, nil, "presentation error: wrong output format"},
		{"FAIL", exit(3, "FAIL answer is wrong"), judge.InternalError, nil, "checker failed (FAIL"},
		{"Points", exit(7, "points 0.50 half of it\n"), judge.WrongAnswer, &half, "half of it"},
		{"PointsFull", exit(7, "points 1.0 all of it\n"), judge.Accepted, ptr(1.0), "all of it"},
		{"PointsBare", exit(7, "0.5"), judge.WrongAnswer, &half, "0.5"},
		{"PointsMissing", exit(7, "no number here"), judge.InternalError, nil, "without points"},
		{"PointsOutOfRange", exit(7, "points 50 too many"), judge.InternalError, nil, "without points"},
		{"Dirt", exit(4, "wrong output format Extra information in the output file"), judge.WrongAnswer, nil, "presentation error: wrong output format"},
		{"UnexpectedEOF", exit(8, "unexpected eof Unexpected end of file - int32 expected"), judge.WrongAnswer, nil, "unexpected end of the output: unexpected eof"},
		{"OtherExitCode", exit(5, "what"), judge.InternalError, nil, "checker failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: "print(input())\n", Tests: tests, Checker: tc.checker})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			tr := res.Tests[0]
			if !strings.Contains(tr.Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", tr.Message, tc.message)
			}
			if (tr.Points == nil) != (tc.points == nil) || (tr.Points != nil && *tr.Points != *tc.points) {
				t.Fatalf("points %v, want %v", show(tr.Points), show(tc.points))
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

func show(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func itoa(n int) string { return strconv.Itoa(n) }

func pyQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "\n", `\n`) + "'"
}

// polygonChecker is a checker as Polygon has it: testlib.h included, points
// for half an answer.
const polygonChecker = `#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    long long want = ans.readLong();
    long long got = ouf.readLong(-1000000000LL, 1000000000LL, "answer");
    if (got == want) quitf(_ok, "n=%d correct", n);
    if (got == want / 2) quitp(0.5, "half of %lld", want);
    quitf(_wa, "expected %lld, found %lld", want, got);
}
`

// TestTestlibPolygonChecker: a C++ checker including testlib.h compiles
// as is and its quitp gives points.
func TestTestlibPolygonChecker(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	requireLanguage(t, e, "cpp")
	checker := judge.Checker{Kind: judge.CheckCustom, Language: "cpp", Source: polygonChecker}
	tests := []judge.TestCase{{ID: "a", Input: []byte("3\n"), Expected: []byte("10\n")}}
	for _, tc := range []struct {
		name, output string
		want         judge.Verdict
		points       *float64
		message      string
	}{
		{"OK", "10", judge.Accepted, nil, "ok n=3 correct"},
		{"Points", "5", judge.WrongAnswer, ptr(0.5), "points 0.5 half of 10"}, // testlib writes %.10f without trailing zeros
		{"WA", "7", judge.WrongAnswer, nil, "wrong answer expected 10, found 7"},
		{"PE", "x", judge.WrongAnswer, nil, "presentation error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: "print(" + pyQuote(tc.output) + ")\n", Tests: tests, Checker: checker})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			tr := res.Tests[0]
			if !strings.Contains(tr.Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", tr.Message, tc.message)
			}
			if (tr.Points == nil) != (tc.points == nil) || (tr.Points != nil && *tr.Points != *tc.points) {
				t.Fatalf("points %v, want %v", show(tr.Points), show(tc.points))
			}
		})
	}
	if !strings.Contains(string(judge.TestlibHeader()), "quitp") {
		t.Fatal("TestlibHeader has no quitp")
	}
}

// pointsChecker gives the points the contestant printed: quitp(p).
const pointsChecker = `#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    double p = ouf.readDouble();
    quitp(p, "partial");
}
`

// TestCheckerPointsScale: a testlib checker's points are read as the
// problem says — a fraction of the test, a percentage, or the test's own
// points — and turned into the fraction of the test; points beyond what
// the scale allows are the checker's fault, and the message keeps the
// points as the checker gave them.
func TestCheckerPointsScale(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	requireLanguage(t, e, "cpp")
	prog, err := e.CompileAuthor(t.Context(), "cpp", "", pointsChecker, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	for _, tc := range []struct {
		name    string
		scale   judge.PointsScale
		worth   float64
		output  string
		want    judge.Verdict
		points  *float64
		message string
	}{
		{"TestHalf", judge.PointsOfTest, 10, "5", judge.WrongAnswer, ptr(0.5), "5 of 10 points: points 5.0 partial"},
		{"TestFull", judge.PointsOfTest, 10, "10", judge.Accepted, ptr(1), "10 of 10 points"},
		{"TestZero", judge.PointsOfTest, 10, "0", judge.WrongAnswer, ptr(0), "0 of 10 points"},
		{"TestOverMax", judge.PointsOfTest, 10, "12", judge.InternalError, nil, "the checker gave 12 points to a test worth 10"},
		{"TestWithoutPointsFraction", judge.PointsOfTest, 0, "0.25", judge.WrongAnswer, ptr(0.25), "points 0.25 partial"},
		{"TestWithoutPointsOver1", judge.PointsOfTest, 0, "5", judge.InternalError, nil, "to a test without points of its own"},
		{"PercentHalf", judge.PointsPercent, 10, "50", judge.WrongAnswer, ptr(0.5), "50% of the test: points 50.0 partial"},
		{"PercentFull", judge.PointsPercent, 0, "100", judge.Accepted, ptr(1), "100% of the test"},
		{"PercentOver", judge.PointsPercent, 0, "150", judge.InternalError, nil, "150% of a test, more than 100%"},
		{"FractionHalf", judge.PointsFraction, 10, "0.5", judge.WrongAnswer, ptr(0.5), "points 0.5 partial"},
		{"FractionOver1", judge.PointsFraction, 10, "5", judge.InternalError, nil, "without points in [0, 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tests := []judge.TestCase{{ID: "a", Input: []byte("1\n"), Expected: []byte("1\n"), Points: tc.worth}}
			checker := judge.Checker{Kind: judge.CheckCustom, Program: prog, Points: tc.scale}
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: "print(" + pyQuote(tc.output) + ")\n", Tests: tests, Checker: checker})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			tr := res.Tests[0]
			if !strings.Contains(tr.Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", tr.Message, tc.message)
			}
			if (tr.Points == nil) != (tc.points == nil) || (tr.Points != nil && *tr.Points != *tc.points) {
				t.Fatalf("points %v, want %v", show(tr.Points), show(tc.points))
			}
		})
	}
}

// TestCheckerPointsNotANumber: negative or non-finite points (which
// testlib's own quitp refuses, but a checker may write) are the checker's
// fault, whatever the scale.
func TestCheckerPointsNotANumber(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	tests := []judge.TestCase{{Input: []byte("1\n"), Expected: []byte("1\n"), Points: 10}}
	for _, tc := range []struct{ name, stderr, message string }{
		{"Negative", "points -1 less", "negative points (-1)"},
		{"NaN", "points nan what", "NaN points, not a finite number"},
		{"Inf", "points inf what", "+Inf points, not a finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checker := judge.Checker{Kind: judge.CheckCustom, Language: "python", Points: judge.PointsOfTest,
				Source: "import sys\nsys.stderr.write(" + pyQuote(tc.stderr) + ")\nsys.exit(7)\n"}
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: "print(input())\n", Tests: tests, Checker: checker})
			requireVerdict(t, tc.name, res.Verdict, judge.InternalError, res)
			if tr := res.Tests[0]; !strings.Contains(tr.Message, tc.message) || tr.Points != nil {
				t.Fatalf("message %q points %v, want %q and none", tr.Message, show(tr.Points), tc.message)
			}
		})
	}
	_, err := e.Judge(t.Context(), judge.Submission{Language: "python", Source: "print(1)\n", Tests: tests,
		Checker: judge.Checker{Kind: judge.CheckCustom, Language: "python", Source: "pass\n", Points: "permille"}}, nil)
	if !errors.Is(err, judge.ErrInvalidInput) {
		t.Fatalf("an unknown scale: %v, want ErrInvalidInput", err)
	}
}
