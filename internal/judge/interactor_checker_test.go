package judge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

// relayInteractor sends the input file's number to the solution and
// writes the solution's answer to its output file (argv[2]), leaving the
// checking to the checker, as many Polygon interactors do; it rejects
// only an answer that is not a number.
const relayInteractor = `#include <stdio.h>
int main(int argc, char **argv) {
	FILE *in = fopen(argv[1], "r"), *out = fopen(argv[2], "w");
	long n, got;
	if (!in || !out || fscanf(in, "%ld", &n) != 1) return 3;
	printf("%ld\n", n); fflush(stdout);
	if (scanf("%ld", &got) != 1) { fprintf(stderr, "no number"); return 1; }
	fprintf(out, "%ld\n", got);
	fprintf(stderr, "relayed");
	return 0;
}
`

// doubleChecker accepts an output equal to the answer file's number.
const doubleChecker = `#include <stdio.h>
int main(int argc, char **argv) {
	FILE *out = fopen(argv[2], "r"), *ans = fopen(argv[3], "r");
	long got, want;
	if (!ans || fscanf(ans, "%ld", &want) != 1) return 3;
	if (!out || fscanf(out, "%ld", &got) != 1) { fprintf(stderr, "no number"); return 2; }
	if (got != want) { fprintf(stderr, "expected %ld, found %ld", want, got); return 1; }
	fprintf(stderr, "ok %ld", got);
	return 0;
}
`

// TestInteractorWithChecker: a testlib interactor that accepts hands its
// output file to the problem's checker, which decides, as Polygon judges
// an interactive problem; without a custom checker the interactor alone
// decides, as before.
func TestInteractorWithChecker(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	it := &judge.Interactor{Language: "c", Source: relayInteractor}
	checker := judge.Checker{Kind: judge.CheckCustom, Language: "c", Source: doubleChecker}
	for _, c := range []struct {
		name, code string
		checker    judge.Checker
		verdict    judge.Verdict
		message    string
	}{
		{"Right", "n = int(input())\nprint(2 * n, flush=True)\n", checker, judge.Accepted, "ok 42"},
		{"WrongForTheChecker", "n = int(input())\nprint(n, flush=True)\n", checker, judge.WrongAnswer, "expected 42, found 21"},
		{"RejectedByTheInteractor", "input()\nprint('x', flush=True)\n", checker, judge.WrongAnswer, "no number"},
		{"NoChecker", "n = int(input())\nprint(n, flush=True)\n", judge.Checker{}, judge.Accepted, "relayed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: c.code, Interactor: it, Checker: c.checker,
				Tests: []judge.TestCase{{Input: []byte("21\n"), Expected: []byte("42\n")}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[0]
			if tr.Verdict != c.verdict || !strings.Contains(tr.Message, c.message) {
				t.Fatalf("%s %q, want %s %q", tr.Verdict, tr.Message, c.verdict, c.message)
			}
		})
	}
}
