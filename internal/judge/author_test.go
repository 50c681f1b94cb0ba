package judge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// TestAuthorProgramFailures: a problem author's program (a custom checker,
// an interactor) that hangs, spins or crashes is a judge failure that names
// the program — INTERNAL_ERROR, never the contestant's TIME_LIMIT_EXCEEDED
// or WRONG_ANSWER — and is stopped at limits derived from the test's (CPU
// time the test's, at least a second; wall time 2×CPU + 1 s), not at a
// fixed 10 s of CPU and 30 s of wall time per test.
func TestAuthorProgramFailures(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	requireLanguage(t, e, "python")
	requireLanguage(t, e, "c")
	second := judge.Limits{CPUTime: time.Second}
	aPlusB := "a, b = map(int, input().split())\nprint(a + b)\n"
	sum := []judge.TestCase{{Input: []byte("1 2\n"), Expected: []byte("3\n")}}

	for _, tc := range []struct {
		name    string
		checker string
		lang    string
		message []string
	}{
		// Its wall time is the test's 2×1 s + 1 s.
		{"CheckerHangs", "import time\ntime.sleep(1000)\n", "python", []string{"checker exceeded its time limit", "wall time limit 3s"}},
		// On a busy machine its wall time can run out before its CPU time:
		// either limit is the checker's.
		{"CheckerSpins", "while True:\n    pass\n", "python", []string{"checker exceeded its time limit", "time limit"}},
		{"CheckerCrashes", "int main(void) { return *(volatile int *)0; }\n", "c", []string{"checker was killed by SIGSEGV"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: aPlusB, Tests: sum, Limits: second,
				Checker: judge.Checker{Kind: judge.CheckCustom, Language: tc.lang, Source: tc.checker}})
			requireVerdict(t, tc.name, res.Verdict, judge.InternalError, res)
			requireMessage(t, res.Tests[0].Message, tc.message...)
		})
	}

	for _, tc := range []struct {
		name       string
		solution   string
		interactor string
		want       judge.Verdict
		message    []string
	}{
		// The solution waits for the interactor's first line, which never
		// comes: the interactor is the one stuck, and it does not even end
		// when the solution's output does.
		{"InteractorHangs", binarySearchPython, "import time\ntime.sleep(1000)\n",
			judge.InternalError, []string{"interactor exceeded its time limit"}},
		{"InteractorSpins", binarySearchPython, "while True:\n    pass\n",
			judge.InternalError, []string{"interactor exceeded its time limit"}},
		{"InteractorHangsAfterTheAnswer", "input()\nprint('! 1', flush=True)\n",
			"import sys, time\nprint(10, flush=True)\nsys.stdin.readline()\ntime.sleep(1000)\n",
			judge.InternalError, []string{"interactor exceeded its time limit"}},
		{"InteractorCrashes", binarySearchPython, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
			judge.InternalError, []string{"interactor was killed by SIGSEGV"}},
		// The solution failed on its own first (CPU time): what the
		// interactor does once its input ended is not the verdict.
		{"SolutionFailsFirst", "input()\nwhile True:\n    pass\n",
			"import sys, time\nprint(10, flush=True)\nsys.stdin.read()\ntime.sleep(1000)\n",
			judge.TimeLimitExceeded, []string{"time limit"}},
		// Both wait for the other: the interactor reads the solution's
		// output and ends when it ends, so the solution is the one that
		// did not answer.
		{"SolutionNeverAnswers", "import sys\ninput()\nsys.stdin.read()\n", guessInteractorPython,
			judge.TimeLimitExceeded, []string{"wall time"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it := judge.Interactor{Language: "python", Source: tc.interactor}
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: tc.solution, Tests: guessTests[:1],
				Limits: second, Interactor: &it})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			requireMessage(t, res.Tests[0].Message, tc.message...)
		})
	}
}

// requireMessage fails the test unless msg contains every part.
func requireMessage(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("message %q, want it to contain %q", msg, p)
		}
	}
}
