package judge_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

const aPlusBC = `#include <stdio.h>
int main(void) { long long a, b; if (scanf("%lld %lld", &a, &b) != 2) return 1; printf("%lld\n", a + b); return 0; }
`

func TestJudge(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)

	t.Run("ProgressAndSummary", func(t *testing.T) {
		t.Parallel()
		var tests []judge.TestCase
		for i := range 8 {
			want := strconv.Itoa(2 * i)
			if i == 5 {
				want = "wrong"
			}
			tests = append(tests, judge.TestCase{ID: fmt.Sprintf("t%02d", i),
				Input: fmt.Appendf(nil, "%d %d\n", i, i), Expected: []byte(want)})
		}
		var (
			mu   sync.Mutex
			seen = map[int]judge.TestResult{}
		)
		res, err := e.Judge(context.Background(), judge.Submission{Language: "c", Source: aPlusBC, Tests: tests},
			func(tr judge.TestResult) {
				mu.Lock()
				defer mu.Unlock()
				if _, dup := seen[tr.Index]; dup {
					t.Errorf("test %d reported twice", tr.Index)
				}
				seen[tr.Index] = tr
			})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != len(tests) {
			t.Fatalf("progress callback saw %d of %d tests", len(seen), len(tests))
		}
		if res.Verdict != judge.WrongAnswer || res.Passed != 7 || res.Failed != 1 || res.Total != 8 {
			t.Fatalf("summary %s %d/%d/%d, want WRONG_ANSWER 7/1/8", res.Verdict, res.Passed, res.Failed, res.Total)
		}
		for i, tr := range res.Tests {
			if tr.Index != i || tr.TestID != tests[i].ID || seen[i].Verdict != tr.Verdict {
				t.Fatalf("result %d out of order or inconsistent: %+v", i, tr)
			}
			if tr.MemoryBytes <= 0 || tr.WallTime <= 0 {
				t.Fatalf("result %d has no measurements: %+v", i, tr)
			}
		}
		if res.MaxMemoryBytes <= 0 || res.MaxWallTime <= 0 {
			t.Fatalf("summary maxima missing: %+v", res)
		}
	})

	t.Run("CustomChecker", func(t *testing.T) {
		t.Parallel()
		// Print any two non-negative numbers whose sum is n: many valid answers.
		checker := `import sys
n = int(open(sys.argv[1]).read())
out = open(sys.argv[2]).read().split()
if open(sys.argv[3]).read().strip() != "any":
    sys.exit(3)
if len(out) != 2 or not all(x.isdigit() for x in out):
    print("expected two non-negative numbers")
    sys.exit(1)
if int(out[0]) + int(out[1]) != n:
    print("%s + %s != %d" % (out[0], out[1], n))
    sys.exit(1)
print("ok")
`
		tests := []judge.TestCase{{Input: []byte("10\n"), Expected: []byte("any\n")}, {Input: []byte("7\n"), Expected: []byte("any\n")}}
		prog := compile(t, e, "python", checker)
		for _, tc := range []struct {
			name    string
			source  string
			checker judge.Checker
			want    judge.Verdict
			message string
		}{
			{"Accepted", "n = int(input())\nprint(1, n - 1)\n", judge.Checker{Kind: judge.CheckCustom, Language: "python", Source: checker}, judge.Accepted, "ok"},
			{"AcceptedOtherAnswer", "n = int(input())\nprint(n, 0)\n", judge.Checker{Kind: judge.CheckCustom, Program: prog}, judge.Accepted, "ok"},
			{"WrongAnswer", "input()\nprint(0, 0)\n", judge.Checker{Kind: judge.CheckCustom, Program: prog}, judge.WrongAnswer, "0 + 0 != 10"},
			{"CheckerFails", "n = int(input())\nprint(1, n - 1)\n", judge.Checker{Kind: judge.CheckCustom, Language: "python",
				Source: "import sys\nsys.exit(3)\n"}, judge.InternalError, "checker failed"},
			// The exit status decides, not the text: a checker echoing the
			// contestant's "MemoryError" still says wrong answer.
			{"EchoedOutputIsNotTheCheckersError", "input()\nprint('MemoryError: Cannot allocate memory')\n", judge.Checker{Kind: judge.CheckCustom, Language: "python",
				Source: "import sys\nsys.stderr.write('found ' + open(sys.argv[2]).read())\nsys.exit(1)\n"}, judge.WrongAnswer, "found MemoryError"},
			// A checker echoing a long output to stderr is not stopped for it.
			{"LongEchoToStderr", "input()\nprint('x' * 3000000)\n", judge.Checker{Kind: judge.CheckCustom, Language: "python",
				Source: "import sys\nsys.stderr.write(open(sys.argv[2]).read())\nprint('too long')\nsys.exit(1)\n"}, judge.WrongAnswer, "too long"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				res := judgeSub(t, e, judge.Submission{Language: "python", Source: tc.source, Tests: tests, Checker: tc.checker})
				requireVerdict(t, tc.name, res.Verdict, tc.want, res)
				if !strings.Contains(res.Tests[0].Message, tc.message) {
					t.Fatalf("message %q, want it to contain %q", res.Tests[0].Message, tc.message)
				}
			})
		}
	})

	t.Run("FloatChecker", func(t *testing.T) {
		t.Parallel()
		src := "a, b = map(int, input().split())\nprint('%.9f' % (a / b))\n"
		tests := []judge.TestCase{{Input: []byte("1 3\n"), Expected: []byte("0.333333333333\n")},
			{Input: []byte("2 3\n"), Expected: []byte("0.6666666667\n")}}
		res := judgeSub(t, e, judge.Submission{Language: "python", Source: src, Tests: tests,
			Checker: judge.Checker{Kind: judge.CheckFloat, AbsEps: 1e-6}})
		requireVerdict(t, "float with tolerance", res.Verdict, judge.Accepted, res)
		res = judgeSub(t, e, judge.Submission{Language: "python", Source: src, Tests: tests})
		requireVerdict(t, "float compared as lines", res.Verdict, judge.WrongAnswer, res)
	})

	t.Run("LargeExpectedFile", func(t *testing.T) {
		t.Parallel()
		const n = 1_000_000
		dir := t.TempDir()
		writeNumbers := func(name string, last int) string {
			path := filepath.Join(dir, name)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := bufio.NewWriter(f)
			for i := 1; i <= n; i++ {
				v := i
				if i == n && last != 0 {
					v = last
				}
				fmt.Fprintln(w, v)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			return path
		}
		input := filepath.Join(dir, "input.txt")
		if err := os.WriteFile(input, []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		good, bad := writeNumbers("good.ans", 0), writeNumbers("bad.ans", 7)
		src := "#include <stdio.h>\nint main(void) { int n; scanf(\"%d\", &n); for (int i = 1; i <= n; i++) printf(\"%d\\n\", i); }\n"
		// 7 MB through a pipe into the checker: with -race on a loaded
		// machine the judge's own reading can take longer than the default
		// wall limit (2×CPU+1s) while the program waits on the pipe. This
		// test is about comparing large files, not about time.
		res := judgeSub(t, e, judge.Submission{Language: "c", Source: src, Limits: judge.Limits{OutputBytes: 16 << 20, WallTime: time.Minute},
			Tests: []judge.TestCase{{InputFile: input, ExpectedFile: good}, {InputFile: input, ExpectedFile: bad}}})
		requireVerdict(t, "large output", res.Tests[0].Verdict, judge.Accepted, res.Tests[0])
		requireVerdict(t, "large output, last line differs", res.Tests[1].Verdict, judge.WrongAnswer, res.Tests[1])
		if !strings.Contains(res.Tests[1].Message, "line 1000000") {
			t.Fatalf("message %q should locate line 1000000", res.Tests[1].Message)
		}
	})

	t.Run("ErrInvalidInput", func(t *testing.T) {
		t.Parallel()
		for _, sub := range []judge.Submission{
			{Language: "c", Source: aPlusBC},
			{Language: "c", Source: aPlusBC, Tests: []judge.TestCase{{}}, Limits: judge.Limits{CPUTime: -1}},
			{Language: "c", Source: aPlusBC, Tests: []judge.TestCase{{}}, Checker: judge.Checker{Kind: "fuzzy"}},
			{Language: "c", Source: aPlusBC, Tests: []judge.TestCase{{}}, Checker: judge.Checker{Kind: judge.CheckCustom}},
		} {
			if _, err := e.Judge(context.Background(), sub, nil); !errors.Is(err, judge.ErrInvalidInput) {
				t.Fatalf("Judge(%+v): %v, want ErrInvalidInput", sub, err)
			}
		}
		res := judgeSub(t, e, judge.Submission{Language: "c", Source: aPlusBC,
			Tests: []judge.TestCase{{InputFile: "/nonexistent/input.txt"}}})
		requireVerdict(t, "unreadable input file", res.Verdict, judge.InternalError, res)
	})

	t.Run("ErrUnknownLanguage", func(t *testing.T) {
		t.Parallel()
		_, err := e.Judge(context.Background(), judge.Submission{Language: "brainfuck", Tests: []judge.TestCase{{}}}, nil)
		if !errors.Is(err, judge.ErrUnknownLanguage) {
			t.Fatalf("err %v, want ErrUnknownLanguage", err)
		}
	})

	t.Run("CompileOutputTruncated", func(t *testing.T) {
		t.Parallel()
		src := strings.Repeat("int f() { return undefined_name; }\n", 2000)
		res := judgeSub(t, e, judge.Submission{Language: "c", Source: src, Tests: []judge.TestCase{{}}})
		requireVerdict(t, "many errors", res.Verdict, judge.CompilationError, res)
		if len(res.CompileOutput) > 9<<10 || !strings.Contains(res.CompileOutput, "undefined_name") ||
			!strings.Contains(res.CompileOutput, "truncated") {
			t.Fatalf("compile output (%d bytes) not truncated with a note: %.200q", len(res.CompileOutput), res.CompileOutput)
		}
	})
}

func TestProgramRun(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)

	t.Run("ArgsLikeAGenerator", func(t *testing.T) {
		t.Parallel()
		p := compile(t, e, "python", "import random, sys\nrandom.seed(int(sys.argv[1]))\nprint(sys.argv[1], random.randint(1, 10**9))\n")
		_, a := run(t, p, "", judge.Limits{}, "42")
		_, b := run(t, p, "", judge.Limits{}, "42")
		if !strings.HasPrefix(a, "42 ") || a != b {
			t.Fatalf("generator outputs %q and %q", a, b)
		}
	})

	t.Run("MemoryMeasured", func(t *testing.T) {
		t.Parallel()
		src := `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
	int n;
	if (scanf("%d", &n) != 1) return 1;
	char *p = malloc(n);
	memset(p, 1, n);
	long sum = 0;
	for (int i = 0; i < n; i += 4096) sum += p[i];
	printf("%ld\n", sum);
	return 0;
}
`
		p := compile(t, e, "c", src)
		rr, _ := run(t, p, strconv.Itoa(50<<20), judge.Limits{MemoryBytes: 128 << 20})
		requireVerdict(t, "50 MiB", rr.Verdict, judge.Accepted, rr)
		if rr.MemoryBytes < 50<<20 || rr.MemoryBytes > 56<<20 {
			t.Fatalf("peak memory %d bytes for a program touching 50 MiB", rr.MemoryBytes)
		}
	})

	t.Run("StaticArrayTooLarge", func(t *testing.T) {
		t.Parallel()
		src := "static char big[512 << 20];\nint main(void) { big[1] = 1; return big[0]; }\n"
		p := compile(t, e, "c", src)
		rr, _ := run(t, p, "", judge.Limits{MemoryBytes: 64 << 20})
		requireVerdict(t, "512 MiB static array", rr.Verdict, judge.MemoryLimitExceeded, rr)
	})

	t.Run("FileSizeLimit", func(t *testing.T) {
		t.Parallel()
		for lang, src := range map[string]string{
			// C dies of SIGXFSZ; Python ignores the signal and sees EFBIG.
			"c":      "#include <stdio.h>\nint main(void) { FILE *f = fopen(\"big.txt\", \"w\"); for (int i = 0; i < (4 << 20); i++) fputc('x', f); fclose(f); return 0; }\n",
			"python": "with open('big.txt', 'w') as f:\n    f.write('x' * (4 << 20))\n",
			// Many files, each below the limit: the scratch space is bounded too.
			"javascript": "const fs = require('fs');\nfor (let i = 0; i < 64; i++) fs.writeFileSync('f' + i, 'x'.repeat(512 << 10));\n",
		} {
			p := compile(t, e, lang, src)
			rr, _ := run(t, p, "", judge.Limits{FileSizeBytes: 1 << 20})
			requireVerdict(t, lang+" writing a 4 MiB file", rr.Verdict, judge.OutputLimitExceeded, rr)
		}
	})

	t.Run("FreshScratchPerRun", func(t *testing.T) {
		t.Parallel()
		p := compile(t, e, "python", "import os\nprint(len(os.listdir('.')))\nopen('left-over.txt', 'w').write('x')\n")
		for range 2 {
			if _, out := run(t, p, "", judge.Limits{}); out != "0\n" {
				t.Fatalf("scratch directory not fresh: %q entries", out)
			}
		}
	})

	t.Run("CancelledBeforeStart", func(t *testing.T) {
		t.Parallel()
		p := compile(t, e, "c", aPlusBC)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := p.Run(ctx, judge.RunOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("run with a cancelled context: %v", err)
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		t.Parallel()
		p := compile(t, e, "c", aPlusBC)
		p.Close()
		if _, err := p.Run(context.Background(), judge.RunOptions{}); !errors.Is(err, judge.ErrClosed) {
			t.Fatalf("run after Close: %v", err)
		}
	})

	t.Run("OneShotRun", func(t *testing.T) {
		t.Parallel()
		var out strings.Builder
		rr, err := e.Run(context.Background(), "go", "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"hi\") }\n",
			judge.RunOptions{Stdout: &out, Limits: judge.Limits{CPUTime: 2 * time.Second}})
		if err != nil || rr.Verdict != judge.Accepted || out.String() != "hi\n" {
			t.Fatalf("Run: %+v %q %v", rr, out.String(), err)
		}
		_, err = e.Run(context.Background(), "go", "package main\nfunc main() { x := }\n", judge.RunOptions{})
		var ce *judge.CompileError
		if !errors.Is(err, judge.ErrCompilation) || !errors.As(err, &ce) || ce.Output == "" {
			t.Fatalf("Run of a broken program: %v", err)
		}
	})
}
