package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
			var directTime, sandboxTime, judgeTime time.Duration
			iterations := 0
			for b.Loop() {
				iterations++
				start := time.Now()
				for _, tc := range tests {
					cmd := exec.Command(direct[0], direct[1:]...)
					cmd.Stdin = bytes.NewReader(tc.Input)
					out, err := cmd.Output()
					if err != nil || !bytes.Equal(out, tc.Expected) {
						b.Fatalf("direct run: %q %v", out, err)
					}
				}
				directTime += time.Since(start)

				start = time.Now()
				for _, tc := range tests {
					var out strings.Builder
					rr, err := prog.Run(ctx, judge.RunOptions{Stdin: bytes.NewReader(tc.Input), Stdout: &out})
					if err != nil || rr.Verdict != judge.Accepted || out.String() != string(tc.Expected) {
						b.Fatalf("sandboxed run: %+v %q %v", rr, out.String(), err)
					}
				}
				sandboxTime += time.Since(start)

				start = time.Now()
				res, err := e.Judge(ctx, judge.Submission{Program: prog, Tests: tests}, nil)
				if err != nil || res.Verdict != judge.Accepted {
					b.Fatalf("judge: %v %+v", err, res)
				}
				judgeTime += time.Since(start)
			}
			runs := float64(iterations * nTests)
			perRun := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / runs }
			b.ReportMetric(perRun(directTime), "direct-ms/run")
			b.ReportMetric(perRun(sandboxTime), "sandbox-ms/run")
			b.ReportMetric(perRun(sandboxTime)-perRun(directTime), "overhead-ms/run")
			b.ReportMetric(perRun(sandboxTime)/perRun(directTime), "ratio")
			b.ReportMetric(runs/judgeTime.Seconds(), "judge-tests/s")
		})
	}
}
