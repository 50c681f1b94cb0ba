package judge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// icpcValidator is an ICPC output validator of two files: the answer is
// an integer, the output must equal it; it writes its verdict to the
// feedback directory and scores "7" with score.txt, halves with
// score_multiplier.txt when asked by its argument, and misbehaves on
// demand (exit 0 is not a verdict in the format).
const icpcValidator = `#include <stdio.h>
#include <string.h>
#include "feedback.h"
int main(int argc, char **argv) {
	FILE *ans = fopen(argv[2], "r");
	long want, got;
	if (!ans || fscanf(ans, "%ld", &want) != 1) return 1;
	if (scanf("%ld", &got) != 1) verdict(argv[3], 43, "no number");
	if (got == -1) return 0;
	if (got != want) verdict(argv[3], 43, "wrong number");
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "half") == 0) write(argv[3], "score_multiplier.txt", "0.5");
		if (strcmp(argv[i], "seven") == 0) write(argv[3], "score.txt", "7");
	}
	verdict(argv[3], 42, "right");
}
`

const icpcFeedbackHeader = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void write(const char *dir, const char *name, const char *text) {
	char path[4096];
	snprintf(path, sizeof path, "%s%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) { fputs(text, f); fclose(f); }
}
static void verdict(const char *dir, int code, const char *msg) {
	write(dir, "judgemessage.txt", msg);
	exit(code);
}
`

func TestICPCOutputValidator(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	checker := judge.Checker{Kind: judge.CheckICPC, Language: "c", Source: icpcValidator,
		Files: map[string][]byte{"feedback.h": []byte(icpcFeedbackHeader)}}
	cases := []struct {
		name, output string
		args         []string
		verdict      judge.Verdict
		message      string
		points       float64 // -1: none
		score        float64 // -1: none
	}{
		{"Accepted", "42", nil, judge.Accepted, "right", -1, -1},
		{"WrongAnswer", "41", nil, judge.WrongAnswer, "wrong number", -1, -1},
		{"ExitZeroIsTheValidatorsFault", "-1", nil, judge.InternalError, "expected 42 or 43", -1, -1},
		{"ScoreMultiplier", "42", []string{"half"}, judge.Accepted, "right", 0.5, -1},
		{"Score", "42", []string{"seven"}, judge.Accepted, "right", -1, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code := "print(" + c.output + ")\n"
			res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: code, Checker: checker,
				Tests: []judge.TestCase{{Input: []byte("\n"), Expected: []byte("42\n"), CheckerArgs: c.args}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Tests[0]
			if tr.Verdict != c.verdict || !strings.Contains(tr.Message, c.message) {
				t.Fatalf("%s %q, want %s %q", tr.Verdict, tr.Message, c.verdict, c.message)
			}
			if (c.points < 0) != (tr.Points == nil) || (tr.Points != nil && *tr.Points != c.points) {
				t.Fatalf("points %v, want %v", tr.Points, c.points)
			}
			if (c.score < 0) != (tr.Score == nil) || (tr.Score != nil && *tr.Score != c.score) {
				t.Fatalf("score %v, want %v", tr.Score, c.score)
			}
		})
	}
}

// icpcInteractor is guess-the-number as an ICPC interactive validator:
// the secret in the input file, the verdict by exit code 42 or 43.
const icpcInteractor = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	FILE *in = fopen(argv[1], "r");
	int secret;
	if (!in || fscanf(in, "%d", &secret) != 1) return 1;
	for (int q = 0; q < 20; q++) {
		char op[8]; int x;
		if (scanf("%7s %d", op, &x) != 2) return 43;
		if (op[0] == '!') return x == secret ? 42 : 43;
		printf("%s\n", x < secret ? "higher" : x > secret ? "lower" : "correct"); fflush(stdout);
	}
	return 43;
}
`

func TestICPCInteractor(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	it := &judge.Interactor{Language: "c", Source: icpcInteractor, Protocol: judge.InteractICPC}
	search := "lo, hi = 1, 100\nwhile True:\n    m = (lo + hi) // 2\n    print('?', m, flush=True)\n    r = input()\n" +
		"    if r == 'correct':\n        print('!', m, flush=True)\n        break\n    if r == 'lower':\n        hi = m - 1\n    else:\n        lo = m + 1\n"
	for _, c := range []struct {
		name, code string
		verdict    judge.Verdict
	}{
		{"Accepted", search, judge.Accepted},
		{"WrongAnswer", "print('! 1', flush=True)\n", judge.WrongAnswer},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Source: c.code, Interactor: it,
				Tests: []judge.TestCase{{Input: []byte("37\n")}, {Input: []byte("100\n")}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != c.verdict {
				t.Fatalf("%s (%+v), want %s", res.Verdict, res.Tests, c.verdict)
			}
		})
	}
}

// icpcClosingInteractor closes its output before it reads the answer:
// the solution reads its whole input, which ends there, then answers. An
// ICPC interactor runs in a sandbox started for it (its feedback directory
// is writable), where the end of its output must reach the solution as
// soon as it closes it, not when it exits (the solution waits for it).
const icpcClosingInteractor = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	int sum;
	printf("1 2 3\n");
	fflush(stdout);
	close(1);
	if (scanf("%d", &sum) != 1) return 43;
	return sum == 6 ? 42 : 43;
}
`

func TestICPCInteractorClosesOutput(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	it := &judge.Interactor{Language: "c", Source: icpcClosingInteractor, Protocol: judge.InteractICPC}
	res, err := e.Judge(context.Background(), judge.Submission{Language: "python", Interactor: it,
		Source: "import sys\nprint(sum(map(int, sys.stdin.read().split())), flush=True)\n",
		Limits: judge.Limits{CPUTime: time.Second, WallTime: 3 * time.Second},
		Tests:  []judge.TestCase{{Input: []byte("0\n")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != judge.Accepted {
		t.Fatalf("%s (%+v), want ACCEPTED", res.Verdict, res.Tests)
	}
}

// A Java file's name is its public class, as problemtools runs one.
func TestCompileFilesEntryPoint(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	src := "public class Different {\n  public static void main(String[] a) { System.out.println(new Different().hashCode() >= 0 || true); }\n}\n"
	p, err := e.CompileFiles(context.Background(), "java", "Different.java", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out strings.Builder
	rr, err := p.Run(context.Background(), judge.RunOptions{Stdout: &out})
	if err != nil || rr.Verdict != judge.Accepted || strings.TrimSpace(out.String()) != "true" {
		t.Fatalf("%v %s %q %s", err, rr.Verdict, out.String(), rr.Stderr)
	}
	// Compile keeps Main.
	if _, err := e.Compile(context.Background(), "java", src); err == nil {
		t.Fatal("a public class Different compiled as Main.java")
	}
}
