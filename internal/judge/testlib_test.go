package judge_test

import (
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
