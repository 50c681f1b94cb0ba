package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

var benchSources = map[string]string{
	"cpp":    "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << \"\\n\"; }\n",
	"python": "a, b = map(int, input().split())\nprint(a + b)\n",
}

// directCommand builds the same program on the host, with the compiler and
// flags of the engine's language table, and returns the argv that runs it
// without any sandbox.
func directCommand(b *testing.B, lang, source string) []string {
	b.Helper()
	var l judge.Language
	for _, dl := range judge.DefaultLanguages() {
		if dl.ID == lang {
			l = dl
		}
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, l.SourceFile), []byte(source), 0o644); err != nil {
		b.Fatal(err)
	}
	if lang == "python" {
		return []string{"/usr/bin/python3", filepath.Join(dir, l.SourceFile)}
	}
	cmd := exec.Command(l.Compile[0], l.Compile[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	return []string{filepath.Join(dir, "main")}
}

// BenchmarkSandboxOverhead compares, for a trivial C++ and Python A+B over 100
// tests, one run through the sandbox (Program.Run: bubblewrap, supervisor,
// limits, pipes, fresh scratch directory, uid) with the same program run
// directly by os/exec, one at a time; and measures Judge's throughput at full
// concurrency (Config.Workers = NumCPU) on the precompiled program.
//
//	go test -run '^$' -bench SandboxOverhead -benchtime 3x ./internal/judge/
func BenchmarkSandboxOverhead(b *testing.B) {
	e := sharedEngine(b)
	const nTests = 100
	for _, lang := range []string{"cpp", "python"} {
		b.Run(lang, func(b *testing.B) {
			prog := compile(b, e, lang, benchSources[lang])
			direct := directCommand(b, lang, benchSources[lang])
			var tests []judge.TestCase
			for i := range nTests {
				tests = append(tests, judge.TestCase{Input: fmt.Appendf(nil, "%d %d\n", i, i), Expected: fmt.Appendf(nil, "%d\n", 2*i)})
			}
			ctx := context.Background()
			var directRuns, sandboxRuns []time.Duration
			var judgeTime time.Duration
			iterations := 0
			for b.Loop() {
				iterations++
				// Alternate direct and sandboxed runs so that both see the same
				// background load.
				for _, tc := range tests {
					start := time.Now()
					cmd := exec.Command(direct[0], direct[1:]...)
					cmd.Stdin = bytes.NewReader(tc.Input)
					out, err := cmd.Output()
					if err != nil || !bytes.Equal(out, tc.Expected) {
						b.Fatalf("direct run: %q %v", out, err)
					}
					directRuns = append(directRuns, time.Since(start))

					start = time.Now()
					var sout strings.Builder
					rr, err := prog.Run(ctx, judge.RunOptions{Stdin: bytes.NewReader(tc.Input), Stdout: &sout})
					if err != nil || rr.Verdict != judge.Accepted || sout.String() != string(tc.Expected) {
						b.Fatalf("sandboxed run: %+v %q %v", rr, sout.String(), err)
					}
					sandboxRuns = append(sandboxRuns, time.Since(start))
				}

				start := time.Now()
				res, err := e.Judge(ctx, judge.Submission{Program: prog, Tests: tests}, nil)
				if err != nil || res.Verdict != judge.Accepted {
					b.Fatalf("judge: %v %+v", err, res)
				}
				judgeTime += time.Since(start)
			}
			directMed, sandboxMed := median(directRuns), median(sandboxRuns)
			b.ReportMetric(mean(directRuns), "direct-ms/run")
			b.ReportMetric(mean(sandboxRuns), "sandbox-ms/run")
			b.ReportMetric(mean(sandboxRuns)-mean(directRuns), "overhead-ms/run")
			b.ReportMetric(mean(sandboxRuns)/mean(directRuns), "ratio")
			b.ReportMetric(directMed, "direct-median-ms")
			b.ReportMetric(sandboxMed, "sandbox-median-ms")
			b.ReportMetric(sandboxMed-directMed, "overhead-median-ms")
			b.ReportMetric(sandboxMed/directMed, "ratio-median")
			b.ReportMetric(float64(iterations*nTests)/judgeTime.Seconds(), "judge-tests/s")
		})
	}
}

func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(time.Millisecond) / float64(len(ds))
}

func median(ds []time.Duration) float64 {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}
