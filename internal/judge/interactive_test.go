package judge_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// guessInteractorC is guess-the-number the testlib way: the secret and the
// query budget in the input file (argv[1]); the solution asks "? x" and
// hears "<", ">" or "=", and answers "! x".
const guessInteractorC = `#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	FILE *in = fopen(argv[1], "r");
	int secret, budget;
	if (!in || fscanf(in, "%d %d", &secret, &budget) != 2) { fprintf(stderr, "bad input"); return 3; }
	FILE *res = fopen(argv[2], "w");
	if (!res) { fprintf(stderr, "cannot write the result file"); return 3; }
	printf("%d\n", budget); fflush(stdout);
	for (int q = 0; ; q++) {
		char op[8]; int x;
		if (scanf("%7s %d", op, &x) != 2) { fprintf(stderr, "unexpected end of the output"); return 8; }
		if (strcmp(op, "!") == 0) {
			if (x != secret) { fprintf(stderr, "answered %d, the number was %d", x, secret); return 1; }
			fprintf(stderr, "ok, %d queries", q); fprintf(res, "ok\n"); return 0;
		}
		if (q >= budget) { fprintf(stderr, "more than %d queries", budget); return 1; }
		printf("%s\n", x < secret ? ">" : x > secret ? "<" : "="); fflush(stdout);
	}
}
`

// guessInteractorPython is the same interactor in Python.
const guessInteractorPython = `import sys
secret, budget = map(int, open(sys.argv[1]).read().split())
open(sys.argv[2], "w").write("")
print(budget, flush=True)
q = 0
while True:
    line = sys.stdin.readline().split()
    if len(line) != 2:
        sys.stderr.write("unexpected end of the output")
        sys.exit(8)
    op, x = line[0], int(line[1])
    if op == "!":
        if x != secret:
            sys.stderr.write("answered %d, the number was %d" % (x, secret))
            sys.exit(1)
        sys.stderr.write("ok, %d queries" % q)
        sys.exit(0)
    if q >= budget:
        sys.stderr.write("more than %d queries" % budget)
        sys.exit(1)
    q += 1
    print(">" if x < secret else "<" if x > secret else "=", flush=True)
`

// binarySearchPython guesses the number in [1, 1000] by bisection.
const binarySearchPython = `budget = int(input())
lo, hi = 1, 1000
while lo < hi:
    mid = (lo + hi) // 2
    print("?", mid, flush=True)
    r = input()
    if r == "=":
        lo = hi = mid
    elif r == ">":
        lo = mid + 1
    else:
        hi = mid - 1
print("!", lo, flush=True)
`

// guessInteractorTestlib is guess-the-number as a Polygon interactor
// written with testlib.h: the secret from inf, the solution's queries from
// ouf, a line to tout (the output file).
const guessInteractorTestlib = `#include "testlib.h"
#include <iostream>
int main(int argc, char *argv[]) {
    registerInteraction(argc, argv);
    int secret = inf.readInt(), budget = inf.readInt();
    std::cout << budget << std::endl;
    for (int q = 0; ; q++) {
        std::string op = ouf.readToken();
        int x = ouf.readInt(1, 1000, "x");
        if (op == "!") {
            if (x != secret) quitf(_wa, "answered %d, the number was %d", x, secret);
            tout << q << std::endl;
            quitf(_ok, "found in %d queries", q);
        }
        if (q >= budget) quitf(_wa, "more than %d queries", budget);
        std::cout << (x < secret ? ">" : x > secret ? "<" : "=") << std::endl;
    }
}
`

var guessTests = []judge.TestCase{
	{Input: []byte("1 10\n")}, {Input: []byte("1000 10\n")}, {Input: []byte("437 10\n")},
}

func TestInteractive(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	requireLanguage(t, e, "c")
	requireLanguage(t, e, "python")
	cInteractor := compile(t, e, "c", guessInteractorC)
	fast := judge.Limits{CPUTime: time.Second, WallTime: 3 * time.Second}
	for _, tc := range []struct {
		name       string
		source     string
		interactor judge.Interactor
		limits     judge.Limits
		want       judge.Verdict
		message    string
	}{
		{"AcceptedCInteractor", binarySearchPython, judge.Interactor{Program: cInteractor}, fast, judge.Accepted, "ok, "},
		{"AcceptedPythonInteractor", binarySearchPython, judge.Interactor{Language: "python", Source: guessInteractorPython}, fast, judge.Accepted, "ok, "},
		{"WrongAnswer", "input()\nprint('! 5', flush=True)\n", judge.Interactor{Program: cInteractor}, fast, judge.WrongAnswer, "answered 5"},
		// A Polygon interactor includes testlib.h (tout writes the output file).
		{"TestlibInteractor", binarySearchPython, judge.Interactor{Language: "cpp", Source: guessInteractorTestlib}, fast, judge.Accepted, ""},
		{"TestlibInteractorWrongAnswer", "input()\nprint('! 5', flush=True)\n", judge.Interactor{Language: "cpp", Source: guessInteractorTestlib}, fast, judge.WrongAnswer, "answered 5"},
		{"TooManyQueries", "input()\nwhile True:\n    print('? 1', flush=True)\n    input()\n", judge.Interactor{Program: cInteractor}, fast, judge.WrongAnswer, "more than 10 queries"},
		{"EndsWithoutAnswer", "input()\n", judge.Interactor{Program: cInteractor}, fast, judge.WrongAnswer, "unexpected end"},
		// Waiting for an answer the interactor waits for too: the
		// solution's wall time is the idleness limit.
		{"NeverAnswers", "import sys\ninput()\nsys.stdin.read()\n", judge.Interactor{Program: cInteractor}, fast, judge.TimeLimitExceeded, "wall time"},
		{"SolutionCrashes", "input()\nraise SystemExit(4)\n", judge.Interactor{Program: cInteractor}, fast, judge.RuntimeError, "exit code 4"},
		// Output the interactor never reads is bounded like any output.
		{"Floods", "import sys\nwhile True:\n    sys.stdout.write('? 1 ' * 10000)\n", judge.Interactor{Language: "python",
			Source: "import sys\nsys.stdin.buffer.read()\n"}, judge.Limits{CPUTime: 2 * time.Second, OutputBytes: 1 << 20}, judge.OutputLimitExceeded, "output exceeded"},
		// Both sides write without reading until both pipes are full: the
		// solution's wall time ends it, and what neither reads any more is
		// drained so that both runs end (the judge once hung here for good).
		{"BothFlood", "import sys\nwhile True:\n    sys.stdout.write('? 1\\n' * 1000)\n", judge.Interactor{Language: "python",
			Source: "import sys\nfor line in sys.stdin:\n    sys.stdout.write('<\\n')\nsys.exit(8)\n"}, fast, judge.TimeLimitExceeded, ""},
		// A problem author's program may start threads (never processes):
		// an interactor that talks to the solution from a thread of its own.
		{"InteractorThread", binarySearchPython, judge.Interactor{Language: "python", Source: strings.Replace(guessInteractorPython,
			"print(budget, flush=True)", "import threading\nt = threading.Thread(target=print, args=(budget,), kwargs={'flush': True})\nt.start()\nt.join()", 1)},
			fast, judge.Accepted, "ok, "},
		// An interactor's output is the solution's input, as large as an
		// input may be: not bounded like a checker's message.
		{"InteractorFeedsMegabytes", "import sys\nn = int(sys.stdin.readline())\nprint(sum(int(sys.stdin.readline()) for _ in range(n)), flush=True)\n",
			judge.Interactor{Language: "python", Source: "import sys\nn = 600000\nsys.stdout.write('%d\\n' % n + '1\\n' * n)\nsys.stdout.flush()\n" +
				"if sys.stdin.readline().split() != [str(n)]:\n    sys.exit(1)\nsys.stderr.write('ok, the sum')\n"},
			judge.Limits{CPUTime: 5 * time.Second}, judge.Accepted, "ok, the sum"},
		{"InteractorCrashes", binarySearchPython, judge.Interactor{Language: "python",
			Source: "import sys\nprint(10, flush=True)\nraise SystemExit(3)\n"}, fast, judge.InternalError, "interactor failed"},
		{"InteractorKilled", binarySearchPython, judge.Interactor{Language: "c",
			Source: "int main(void) { return *(volatile int *)0; }\n"}, fast, judge.InternalError, "interactor was killed by SIGSEGV"},
		// A solution that closes its output and then waits for the
		// interactor to close its own: the interactor sees the end of the
		// solution's output at once, not when the solution exits (the
		// protocol of Kattis' interactive problems; a judge whose sandbox
		// keeps a copy of the pipe open deadlocks here).
		{"SolutionClosesOutput", "import os, sys\nn = input()\nprint('done', flush=True)\nos.close(1)\nsys.stdin.read()\n",
			judge.Interactor{Language: "python", Source: "import sys\nprint(7, flush=True)\nif sys.stdin.readline().strip() != 'done':\n    sys.exit(1)\n" +
				"if sys.stdin.read() != '':\n    sys.exit(1)\nsys.stdout.close()\nsys.stderr.write('ok, end of output seen')\n"},
			fast, judge.Accepted, "end of output seen"},
		// And the other way round: the solution reads its whole input,
		// which ends when the interactor closes its output, then answers.
		{"InteractorClosesOutput", "import sys\nprint(sum(map(int, sys.stdin.read().split())), flush=True)\n",
			judge.Interactor{Language: "python", Source: "import os, sys\nprint('1 2 3', flush=True)\nos.close(1)\n" +
				"if sys.stdin.readline().strip() != '6':\n    sys.exit(1)\nsys.stderr.write('ok, the sum after the end of input')\n"},
			fast, judge.Accepted, "the sum after the end of input"},
		{"SolutionOutlivesInteractor", "import time\ninput()\nprint('! 1', flush=True)\nwhile True: pass\n", judge.Interactor{Program: cInteractor},
			judge.Limits{CPUTime: 10 * time.Second}, judge.TimeLimitExceeded, "did not exit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it := tc.interactor
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: tc.source, Tests: guessTests[:1],
				Limits: tc.limits, Interactor: &it})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			if !strings.Contains(res.Tests[0].Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", res.Tests[0].Message, tc.message)
			}
		})
	}
	// An interactor gives partial credit as a checker does: quitp, exit 7.
	t.Run("Points", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name    string
			it      judge.Interactor
			verdict judge.Verdict
			points  float64
		}{
			// Full points for at most 5 queries, half otherwise: bisection
			// over 1…1000 takes 9.
			{"Testlib", judge.Interactor{Language: "cpp", Source: strings.Replace(guessInteractorTestlib,
				`quitf(_ok, "found in %d queries", q);`, `quitp(q <= 5 ? 1.0 : 0.5, "found in %d queries", q);`, 1)}, judge.WrongAnswer, 0.5},
			{"Python", judge.Interactor{Language: "python", Source: strings.Replace(guessInteractorPython,
				`sys.stderr.write("ok, %d queries" % q)
        sys.exit(0)`, `sys.stderr.write("points 1 in %d queries" % q)
        sys.exit(7)`, 1)}, judge.Accepted, 1},
		} {
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: binarySearchPython, Tests: guessTests[:1], Limits: fast, Interactor: &c.it})
			requireVerdict(t, c.name, res.Verdict, c.verdict, res)
			if p := res.Tests[0].Points; p == nil || *p != c.points {
				t.Fatalf("%s: points %v, want %v (%+v)", c.name, p, c.points, res.Tests[0])
			}
		}
		// Points are not a rejection: the solution's own failure after
		// them wins, as after an ACCEPTED.
		full := judge.Interactor{Language: "python", Source: "import sys\nprint(10, flush=True)\nsys.stdin.readline()\nsys.stderr.write('points 1')\nsys.exit(7)\n"}
		res := judgeSub(t, e, judge.Submission{Language: "python", Source: "import sys, time\ninput()\nprint('! 1', flush=True)\ntime.sleep(0.3)\nsys.exit(4)\n",
			Tests: guessTests[:1], Limits: fast, Interactor: &full})
		requireVerdict(t, "a crash after full points", res.Verdict, judge.RuntimeError, res)
		bad := judge.Interactor{Language: "python", Source: "import sys\nprint(10, flush=True)\nsys.stderr.write('points 2')\nsys.exit(7)\n"}
		res = judgeSub(t, e, judge.Submission{Language: "python", Source: binarySearchPython, Tests: guessTests[:1], Limits: fast, Interactor: &bad})
		requireVerdict(t, "points out of range", res.Verdict, judge.InternalError, res)
		// In the test's own points: 5 of a test worth 10 is half of it,
		// 12 more than it is worth.
		worth := append([]judge.TestCase{}, guessTests[:1]...)
		worth[0].Points = 10
		for _, c := range []struct {
			given, message string
			verdict        judge.Verdict
			points         *float64
		}{
			{"5", "5 of 10 points: points 5", judge.WrongAnswer, ptr(0.5)},
			{"12", "the interactor gave 12 points to a test worth 10", judge.InternalError, nil},
		} {
			it := judge.Interactor{Language: "python", Points: judge.PointsOfTest,
				Source: "import sys\nprint(10, flush=True)\nsys.stdin.readline()\nsys.stderr.write('points " + c.given + "')\nsys.exit(7)\n"}
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: "input()\nprint('! 1', flush=True)\n", Tests: worth, Limits: fast, Interactor: &it})
			requireVerdict(t, c.given+" points of 10", res.Verdict, c.verdict, res)
			tr := res.Tests[0]
			if !strings.Contains(tr.Message, c.message) || (tr.Points == nil) != (c.points == nil) || (tr.Points != nil && *tr.Points != *c.points) {
				t.Fatalf("%s points of 10: message %q points %v, want %q and %v", c.given, tr.Message, show(tr.Points), c.message, show(c.points))
			}
		}
	})
	t.Run("EveryTest", func(t *testing.T) {
		t.Parallel()
		res := judgeSub(t, e, judge.Submission{Language: "python", Source: binarySearchPython, Tests: guessTests,
			Limits: fast, Interactor: &judge.Interactor{Program: cInteractor}})
		requireVerdict(t, "every test", res.Verdict, judge.Accepted, res)
		if res.Passed != len(guessTests) || !strings.HasPrefix(res.Tests[2].Output, "? 500") {
			t.Fatalf("passed %d of %d, output %q", res.Passed, len(guessTests), res.Tests[2].Output)
		}
	})
}

func TestInteractiveErrors(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		it   judge.Interactor
	}{
		{"ErrInvalidInput_NoProgram", judge.Interactor{Language: "python"}},
		{"ErrInvalidInput_DoesNotCompile", judge.Interactor{Language: "c", Source: "int main( {"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.Judge(ctx, judge.Submission{Language: "python", Source: "pass", Tests: guessTests[:1], Interactor: &tc.it}, nil)
			if !errors.Is(err, judge.ErrInvalidInput) {
				t.Fatalf("err %v, want ErrInvalidInput", err)
			}
		})
	}
}

// TestInteractiveOneWorker: an engine of one worker (a worker on a
// one-CPU machine) judges interactive problems, the interactor on its
// partner slot, a held sandbox like the worker slot's; two interactive
// submissions at once on it both finish (neither holds half a pair while
// waiting for the other's); Close ends the partner's sandbox too.
func TestInteractiveOneWorker(t *testing.T) {
	t.Parallel()
	// WarmIdle: the held sandboxes outlive the checks below.
	e, base := newEngine(t, judge.Config{Workers: 1, WarmIdle: time.Hour}, "c", "python")
	requireLanguage(t, e, "c")
	requireLanguage(t, e, "python")
	interactor := compile(t, e, "c", guessInteractorC)
	it := judge.Interactor{Program: interactor}
	sub := judge.Submission{Language: "python", Source: binarySearchPython, Tests: guessTests,
		Limits: judge.Limits{CPUTime: time.Second, WallTime: 3 * time.Second}, Interactor: &it}

	res := judgeSub(t, e, sub)
	requireVerdict(t, "one worker", res.Verdict, judge.Accepted, res)
	if res.Passed != len(guessTests) || !strings.HasPrefix(res.Tests[0].Message, "ok, ") {
		t.Fatalf("passed %d of %d, first message %q", res.Passed, len(guessTests), res.Tests[0].Message)
	}
	if info := e.SandboxInfo(); info.Held {
		// bwrap and the supervisor of the worker slot's sandbox and of the
		// partner slot's.
		if held := judge.HeldPIDs(e); len(held) != 4 {
			t.Fatalf("held sandbox processes %v, want two sandboxes (%+v)", held, info)
		}
		if os.Geteuid() == 0 { // each slot's sandbox runs as a uid of its own
			procs := sandboxProcesses(base, base+uidsPerEngine, "")
			uids := map[string]bool{}
			for _, p := range procs {
				uids[strings.Fields(p)[1]] = true
			}
			if len(uids) != 2 {
				t.Fatalf("processes of the engine's uids between runs: %v, want two held sandboxes of two uids", procs)
			}
		}
	}

	var wg sync.WaitGroup
	results, errs := make([]judge.Result, 2), make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			results[i], errs[i] = e.Judge(ctx, sub, nil)
		}()
	}
	wg.Wait()
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("submission %d of 2 at once: %v", i+1, errs[i])
		}
		requireVerdict(t, "two at once", res.Verdict, judge.Accepted, res)
	}
	requireNoLeftovers(t, e, base, "")

	interactor.Close()
	e.Close()
	if left := sandboxProcesses(base, base+uidsPerEngine, ""); len(left) > 0 {
		t.Fatalf("processes left after Close: %v", left)
	}
}
