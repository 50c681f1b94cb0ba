package judge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

// multiPassValidator is an ICPC output validator of a multi-pass
// problem: the output must be twice the pass's input file; the first
// pass (no "state" in the feedback directory yet) asks for a second with
// its output plus one as the input. Its argument "always" asks for
// another pass every time, "reject-next" rejects and still leaves
// nextpass.in.
const multiPassValidator = `#include <stdio.h>
#include <string.h>
#include "feedback.h"
int main(int argc, char **argv) {
	FILE *in = fopen(argv[1], "r");
	long x, got;
	char path[4096], next[64];
	if (!in || fscanf(in, "%ld", &x) != 1) return 1;
	int always = argc > 4 && strcmp(argv[4], "always") == 0;
	int rejectNext = argc > 4 && strcmp(argv[4], "reject-next") == 0;
	snprintf(path, sizeof path, "%sstate", argv[3]);
	FILE *st = fopen(path, "r");
	int first = st == NULL;
	if (st) fclose(st);
	if (scanf("%ld", &got) != 1) verdict(argv[3], 43, "no number");
	snprintf(next, sizeof next, "%ld\n", got + 1);
	if (rejectNext) { write(argv[3], "nextpass.in", next); verdict(argv[3], 43, "rejected"); }
	if (got != 2 * x) verdict(argv[3], 43, "not twice the input");
	if (first || always) {
		write(argv[3], "state", "1");
		write(argv[3], "nextpass.in", next);
	}
	verdict(argv[3], 42, "twice");
}
`

func TestMultiPass(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	checker := judge.Checker{Kind: judge.CheckICPC, Language: "c", Source: multiPassValidator, Passes: 2,
		Files: map[string][]byte{"feedback.h": []byte(icpcFeedbackHeader)}}
	const double = "x = int(input())\nprint(2 * x)\n"
	for _, c := range []struct {
		name, code string
		args       []string
		verdict    judge.Verdict
		message    string
	}{
		// 5 → 10, then 11 → 22.
		{"Accepted", double, nil, judge.Accepted, "twice"},
		{"WrongOnTheSecondPass", "x = int(input())\nprint(2 * x if x < 10 else x)\n", nil, judge.WrongAnswer, "pass 2: not twice the input"},
		{"FailsOnTheSecondPass", "x = int(input())\nassert x < 10\nprint(2 * x)\n", nil, judge.RuntimeError, "pass 2"},
		{"WrongOnTheFirstPass", "print(3)\n", nil, judge.WrongAnswer, "not twice the input"},
		{"OnePassTooMany", double, []string{"always"}, judge.InternalError, "limits.validation_passes"},
		{"RejectedWithANextPass", double, []string{"reject-next"}, judge.InternalError, "rejected pass 1 and left nextpass.in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: c.code, Checker: checker,
				Tests: []judge.TestCase{{Input: []byte("5\n"), CheckerArgs: c.args}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[0]
			if tr.Verdict != c.verdict || !strings.Contains(tr.Message, c.message) {
				t.Fatalf("%s %q, want %s %q", tr.Verdict, tr.Message, c.verdict, c.message)
			}
		})
	}
	t.Run("OnePassWithoutPasses", func(t *testing.T) {
		t.Parallel()
		// The same validator in a problem that is not multi-pass: its
		// nextpass.in is ignored and the first pass decides.
		one := checker
		one.Passes = 0
		res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: "print(10)\n", Checker: one,
			Tests: []judge.TestCase{{Input: []byte("5\n")}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr := res.Tests[0]; tr.Verdict != judge.Accepted {
			t.Fatalf("%s %q, want ACCEPTED", tr.Verdict, tr.Message)
		}
	})
}

// multiPassInteractor is an ICPC interactive validator of a multi-pass
// problem: it sends the number of the pass's input file and wants it
// plus one back; the first pass asks for a second, whose input is the
// answer it got times ten.
const multiPassInteractor = `#include <stdio.h>
#include "feedback.h"
int main(int argc, char **argv) {
	FILE *in = fopen(argv[1], "r");
	long x, got;
	char path[4096], next[64];
	if (!in || fscanf(in, "%ld", &x) != 1) return 1;
	snprintf(path, sizeof path, "%sstate", argv[3]);
	FILE *st = fopen(path, "r");
	int first = st == NULL;
	if (st) fclose(st);
	printf("%ld\n", x); fflush(stdout);
	if (scanf("%ld", &got) != 1) verdict(argv[3], 43, "no number");
	if (got != x + 1) verdict(argv[3], 43, "not the next number");
	if (argc > 4) write(argv[3], "score_multiplier.txt", "0.5");
	if (first) {
		write(argv[3], "state", "1");
		snprintf(next, sizeof next, "%ld\n", got * 10);
		write(argv[3], "nextpass.in", next);
	}
	verdict(argv[3], 42, "next");
}
`

func TestMultiPassInteractive(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	it := &judge.Interactor{Language: "c", Source: multiPassInteractor, Protocol: judge.InteractICPC, Passes: 3,
		Files: map[string][]byte{"feedback.h": []byte(icpcFeedbackHeader)}}
	for _, c := range []struct {
		name, code string
		verdict    judge.Verdict
		message    string
	}{
		// 4 → 5, then 50 → 51.
		{"Accepted", "x = int(input())\nprint(x + 1, flush=True)\n", judge.Accepted, "next"},
		{"WrongOnTheSecondPass", "x = int(input())\nprint(x + 1 if x < 10 else x, flush=True)\n", judge.WrongAnswer, "pass 2: not the next number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: c.code, Interactor: it,
				Tests: []judge.TestCase{{Input: []byte("4\n")}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[0]
			if tr.Verdict != c.verdict || !strings.Contains(tr.Message, c.message) {
				t.Fatalf("%s %q, want %s %q", tr.Verdict, tr.Message, c.verdict, c.message)
			}
		})
	}
	t.Run("PartialScoreThenAnotherPass", func(t *testing.T) {
		t.Parallel()
		// Accepted with half the score (WRONG_ANSWER with points) and a next
		// pass asked for: the next pass runs, and its score counts.
		half := *it
		half.Args = []string{"half"}
		res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: "x = int(input())\nprint(x + 1, flush=True)\n",
			Interactor: &half, Tests: []judge.TestCase{{Input: []byte("4\n")}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr := res.Tests[0]; tr.Verdict == judge.InternalError || tr.Points == nil || *tr.Points != 0.5 {
			t.Fatalf("%s %q points %v, want half the points", tr.Verdict, tr.Message, tr.Points)
		}
	})
}
