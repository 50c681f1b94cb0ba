package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

var benchSources = map[string]string{
	"cpp":        "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << \"\\n\"; }\n",
	"python":     "a, b = map(int, input().split())\nprint(a + b)\n",
	"c":          aPlusBC,
	"java":       "import java.util.*;\npublic class Main { public static void main(String[] x) { Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }\n",
	"javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
	"go":         "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar a, b int64\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n",
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

// BenchmarkJudgeOverhead measures what the judge adds to one test of a
// CPU-light program (C A+B, precompiled) and how tests per second scale
// with worker slots:
//
//   - overhead: Program.Run (held sandbox, supervisor, limits, cgroup
//     accounting, pipes) against the very same executable run by os/exec,
//     alternating one of each, one at a time; p50 of each and of the
//     difference;
//   - CPU per run (user+system): the engine's and its held sandbox's tree
//     (supervisor, each run's set-up and teardown, the program) against the
//     benchmark's and its children's for the bare runs;
//   - slots: Judge of 100 tests on an engine with 1 slot and on one with 2,
//     five alternating rounds; median tests/s of each and their ratio. The
//     bare executable run by os/exec 1 and 2 at a time gives the machine's
//     own ratio, for comparison.
//
// The load average is reported with the numbers: on a shared machine they
// mean little without it.
//
//	go test -run '^$' -bench JudgeOverhead -benchtime 3x ./internal/judge/
func BenchmarkJudgeOverhead(b *testing.B) {
	ctx := context.Background()
	engines := map[int]*judge.Engine{}
	progs := map[int]*judge.Program{}
	for _, w := range []int{1, 2} {
		e, err := judge.New(judge.Config{Workers: w, UIDBase: int(nextUIDBase.Add(uidsPerEngine)),
			Languages: []judge.Language{languageByID("c")}})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		engines[w], progs[w] = e, compile(b, e, "c", aPlusBC)
	}
	b.Logf("sandbox: %+v", engines[1].SandboxInfo())
	exe := judge.Executable(progs[1])
	in, want := []byte("20 22\n"), []byte("42\n")
	bare := func() time.Duration {
		start := time.Now()
		cmd := exec.Command(exe)
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, want) {
			b.Fatalf("bare run: %q %v", out, err)
		}
		return time.Since(start)
	}
	sandboxed := func() time.Duration {
		start := time.Now()
		var out bytes.Buffer
		rr, err := progs[1].Run(ctx, judge.RunOptions{Stdin: bytes.NewReader(in), Stdout: &out})
		if err != nil || rr.Verdict != judge.Accepted || !bytes.Equal(out.Bytes(), want) {
			b.Fatalf("sandboxed run: %+v %q %v", rr, out.String(), err)
		}
		return time.Since(start)
	}
	const nTests = 100
	tests := make([]judge.TestCase, nTests)
	for i := range tests {
		tests[i] = judge.TestCase{Input: fmt.Appendf(nil, "%d %d\n", i, i), Expected: fmt.Appendf(nil, "%d\n", 2*i)}
	}
	judgeRound := func(w int) float64 {
		start := time.Now()
		res, err := engines[w].Judge(ctx, judge.Submission{Program: progs[w], Tests: tests}, nil)
		if err != nil || res.Verdict != judge.Accepted {
			b.Fatalf("judge: %v %+v", err, res.Verdict)
		}
		return nTests / time.Since(start).Seconds()
	}
	bareRound := func(w int) float64 {
		start := time.Now()
		var wg sync.WaitGroup
		for g := range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < nTests; i += w {
					bare()
				}
			}()
		}
		wg.Wait()
		return nTests / time.Since(start).Seconds()
	}

	load0 := loadAvg()
	var bareRuns, sandboxRuns, diffs []time.Duration
	var tps1, tps2, bare1, bare2 []float64
	var judgeCPU, bareCPU time.Duration
	var cpuRuns int
	for b.Loop() {
		for range 200 {
			d0, d1 := bare(), sandboxed()
			bareRuns, sandboxRuns, diffs = append(bareRuns, d0), append(sandboxRuns, d1), append(diffs, d1-d0)
		}
		// CPU per run: the engine's own, and its held sandbox's tree
		// (supervisor, the runs' set-up and teardown, the program); bare:
		// the benchmark's own and its children's.
		held := judge.HeldPIDs(engines[1])
		if len(held) == 2 {
			s0, h0 := selfCPU(syscall.RUSAGE_SELF), procTreeCPU(held[1])
			for range 100 {
				sandboxed()
			}
			s1, h1, c1 := selfCPU(syscall.RUSAGE_SELF), procTreeCPU(held[1]), selfCPU(syscall.RUSAGE_CHILDREN)
			for range 100 {
				bare()
			}
			judgeCPU += s1 - s0 + h1 - h0
			bareCPU += selfCPU(syscall.RUSAGE_SELF) - s1 + selfCPU(syscall.RUSAGE_CHILDREN) - c1
			cpuRuns += 100
		}
		for range 5 {
			tps1 = append(tps1, judgeRound(1))
			tps2 = append(tps2, judgeRound(2))
			bare1 = append(bare1, bareRound(1))
			bare2 = append(bare2, bareRound(2))
		}
	}
	b.ReportMetric(median(bareRuns), "bare-p50-ms")
	b.ReportMetric(median(sandboxRuns), "sandbox-p50-ms")
	b.ReportMetric(median(sandboxRuns)-median(bareRuns), "overhead-p50-ms")
	b.ReportMetric(median(diffs), "paired-diff-p50-ms")
	b.ReportMetric(medianF(tps1), "tests/s-1slot")
	b.ReportMetric(medianF(tps2), "tests/s-2slots")
	b.ReportMetric(medianF(tps2)/medianF(tps1), "2/1-slots")
	b.ReportMetric(medianF(bare2)/medianF(bare1), "bare-2/1")
	if cpuRuns > 0 {
		b.ReportMetric(float64(judgeCPU)/float64(cpuRuns)/1e6, "sandbox-cpu-ms/run")
		b.ReportMetric(float64(bareCPU)/float64(cpuRuns)/1e6, "bare-cpu-ms/run")
	}
	b.Logf("overhead p50: bare %.2f ms, sandbox %.2f ms, + %.2f ms (paired p50 %.2f ms); CPU per run: sandbox %.2f ms, bare %.2f ms; tests/s: 1 slot %.0f, 2 slots %.0f (%.2f×; bare os/exec 1 vs 2 at a time: %.0f, %.0f, %.2f×); load average %s → %s",
		median(bareRuns), median(sandboxRuns), median(sandboxRuns)-median(bareRuns), median(diffs),
		float64(judgeCPU)/float64(max(cpuRuns, 1))/1e6, float64(bareCPU)/float64(max(cpuRuns, 1))/1e6,
		medianF(tps1), medianF(tps2), medianF(tps2)/medianF(tps1), medianF(bare1), medianF(bare2), medianF(bare2)/medianF(bare1),
		load0, loadAvg())
}

func languageByID(id string) judge.Language {
	for _, l := range judge.DefaultLanguages() {
		if l.ID == id {
			return l
		}
	}
	panic("no language " + id)
}

func medianF(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// selfCPU is getrusage's user+system time.
func selfCPU(who int) time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(who, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// procTreeCPU is what /proc says process pid and its reaped children used.
func procTreeCPU(pid int) time.Duration {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	var ticks int64
	for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		if k < len(f) {
			v, _ := strconv.ParseInt(f[k], 10, 64)
			ticks += v
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ = 100
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// BenchmarkFirstRun measures, on an engine with a fresh CacheDir (a fresh
// worker), the first compile and run of a small program in each language,
// one language at a time; then, on another fresh engine, Engine.Warm and
// the first compile and run after it. What a cold toolchain costs beyond
// the cache (the page cache, the JIT) is not reset between the two: both
// engines start on a machine that has run them before.
//
//	go test -run '^$' -bench FirstRun -benchtime 1x ./internal/judge/
func BenchmarkFirstRun(b *testing.B) {
	ctx := context.Background()
	langs := []string{"python", "c", "cpp", "java", "javascript", "go"}
	fresh := func() *judge.Engine {
		cache, err := os.MkdirTemp("", "judge-cache-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(cache) })
		_ = os.Chmod(cache, 0o711)
		e, err := judge.New(judge.Config{CacheDir: cache, UIDBase: int(nextUIDBase.Add(uidsPerEngine))})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}
	first := func(e *judge.Engine, lang string) time.Duration {
		start := time.Now()
		p, err := e.Compile(ctx, lang, benchSources[lang])
		if err != nil {
			b.Fatalf("%s: %v", lang, err)
		}
		defer p.Close()
		var out strings.Builder
		rr, err := p.Run(ctx, judge.RunOptions{Stdin: strings.NewReader("20 22\n"), Stdout: &out})
		if err != nil || rr.Verdict != judge.Accepted || strings.TrimSpace(out.String()) != "42" {
			b.Fatalf("%s: %v %+v %q", lang, err, rr, out.String())
		}
		return time.Since(start)
	}
	for b.Loop() {
		load0 := loadAvg()
		cold := fresh()
		var coldLine, warmLine []string
		for _, l := range langs {
			d := first(cold, l)
			coldLine = append(coldLine, fmt.Sprintf("%s %v", l, d.Round(time.Millisecond)))
		}
		warmed := fresh()
		start := time.Now()
		var warmUp []string
		for _, r := range warmed.Warm(ctx) {
			if r.Err != nil {
				b.Fatalf("warm %s: %v", r.Language, r.Err)
			}
			warmUp = append(warmUp, fmt.Sprintf("%s %v", r.Language, r.Duration.Round(time.Millisecond)))
		}
		warmAll := time.Since(start)
		for _, l := range langs {
			d := first(warmed, l)
			warmLine = append(warmLine, fmt.Sprintf("%s %v", l, d.Round(time.Millisecond)))
		}
		b.Logf("first compile+run, fresh worker: %s", strings.Join(coldLine, ", "))
		b.Logf("Warm (concurrent, %v in all): %s", warmAll.Round(time.Millisecond), strings.Join(warmUp, ", "))
		b.Logf("first compile+run after Warm: %s; load average %s → %s", strings.Join(warmLine, ", "), load0, loadAvg())
	}
}
