package judge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// The uids the tests' engines may use: each engine gets its own range, away
// from the default UIDBase that other packages' tests (running at the same
// time in other processes) use. Each test process has a window of its own
// (by its pid): two checkouts' suites running at once on one machine must
// not see — and kill, as leftovers — each other's processes.
const (
	uidWindow     = 1_000_000
	uidsPerEngine = 10_000
)

var (
	uidRangeStart = 2_000_000 + (os.Getpid()%2000)*uidWindow
	uidRangeEnd   = uidRangeStart + uidWindow
)

var (
	nextUIDBase atomic.Int64
	markers     atomic.Int64
)

func init() { nextUIDBase.Store(int64(uidRangeStart)) }

// installHint says how to install a language's toolchain on Debian, for the
// loud failure when one is missing.
var installHint = map[string]string{
	"python":     "apt-get install -y python3",
	"c":          "apt-get install -y gcc",
	"cpp":        "apt-get install -y g++",
	"java":       "apt-get install -y openjdk-17-jdk-headless",
	"go":         "install Go from https://go.dev/dl/ into /usr/local/go",
	"javascript": "apt-get install -y nodejs",
	"rust":       "apt-get install -y rustc",
	"kotlin":     "apt-get install -y kotlin",
	"cpp20":      "apt-get install -y g++",
	"pypy3":      "apt-get install -y pypy3",
	"csharp":     "apt-get install -y mono-mcs",
	"ruby":       "apt-get install -y ruby",
	"php":        "apt-get install -y php-cli",
	"haskell":    "apt-get install -y ghc",
}

var shared struct {
	once sync.Once
	e    *judge.Engine
	base int
	err  error
}

// sharedEngine is the engine most tests use, as a server would: one engine,
// many concurrent submissions. It has every language and Workers = NumCPU.
func sharedEngine(t testing.TB) *judge.Engine {
	t.Helper()
	shared.once.Do(func() {
		shared.base = int(nextUIDBase.Add(uidsPerEngine))
		shared.e, shared.err = judge.New(judge.Config{UIDBase: shared.base})
	})
	if shared.err != nil {
		t.Fatalf("judge.New: %v", shared.err)
	}
	return shared.e
}

func closeSharedEngine() {
	if shared.e != nil {
		shared.e.Close()
	}
}

// newEngine returns a dedicated engine with its own uid range (returned), so a
// test can assert that none of its processes is left, whatever runs in
// parallel. Only the listed languages are configured (faster start-up).
func newEngine(t *testing.T, cfg judge.Config, langs ...string) (*judge.Engine, int) {
	t.Helper()
	base := int(nextUIDBase.Add(uidsPerEngine))
	cfg.UIDBase = base
	if len(langs) > 0 {
		cfg.Languages = nil
		for _, l := range judge.DefaultLanguages() {
			for _, id := range langs {
				if l.ID == id {
					cfg.Languages = append(cfg.Languages, l)
				}
			}
		}
	}
	e, err := judge.New(cfg)
	if err != nil {
		t.Fatalf("judge.New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, base
}

// requireLanguage fails loudly when a toolchain the tests need is missing.
func requireLanguage(t *testing.T, e *judge.Engine, id string) {
	t.Helper()
	for _, l := range e.Languages() {
		if l.ID == id {
			if !l.Available {
				t.Fatalf("language %s is not available on this machine (%s): %s", id, l.Reason, installHint[id])
			}
			return
		}
	}
	t.Fatalf("language %s is not configured", id)
}

// compile compiles source or fails the test.
func compile(t testing.TB, e *judge.Engine, lang, source string) *judge.Program {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := e.Compile(ctx, lang, source)
	if err != nil {
		var ce *judge.CompileError
		if errors.As(err, &ce) {
			t.Fatalf("compile %s: %v\n%s", lang, err, ce.Output)
		}
		t.Fatalf("compile %s: %v", lang, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// run runs p once with input and returns the result and the output.
func run(t *testing.T, p *judge.Program, input string, limits judge.Limits, args ...string) (judge.RunResult, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rr, err := p.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(input), Stdout: &out, Limits: limits, Args: args})
	if err != nil {
		t.Fatalf("run: %v (%+v)", err, rr)
	}
	return rr, out.String()
}

// judgeSub judges a submission or fails the test.
func judgeSub(t *testing.T, e *judge.Engine, sub judge.Submission) judge.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := e.Judge(ctx, sub, nil)
	if err != nil {
		t.Fatalf("judge: %v", err)
	}
	return res
}

// requireVerdict fails the test when a result has another verdict.
func requireVerdict(t *testing.T, what string, got, want judge.Verdict, details any) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: verdict %s, want %s\n%+v", what, got, want, details)
	}
}

// sandboxProcesses lists live processes whose real uid is in [lo, hi) or whose
// command line contains marker (when not empty), as "pid uid cmdline".
func sandboxProcesses(lo, hi int, marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "status"))
		if err != nil {
			continue
		}
		uid := -1
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Uid:" {
				uid, _ = strconv.Atoi(f[1])
			}
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		cmd := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		if (uid >= lo && uid < hi) || (marker != "" && strings.Contains(cmd, marker)) {
			out = append(out, fmt.Sprintf("%d uid=%d %q", pid, uid, cmd))
		}
	}
	return out
}

// requireNoLeftovers asserts that no process of the engine e with uid base
// (or carrying marker in its command line) is alive but e's held
// sandboxes, which wait for the next run: bwrap and the supervisor, pid 1
// of their namespace, which has killed and reaped every process of the
// last run before it reported.
func requireNoLeftovers(t *testing.T, e *judge.Engine, base int, marker string) {
	t.Helper()
	lo, hi := base, base+uidsPerEngine
	if os.Geteuid() != 0 {
		lo, hi = -1, -1 // without root every run has the test's own uid
	}
	held := map[int]bool{}
	for _, pid := range judge.HeldPIDs(e) {
		held[pid] = true
	}
	var left []string
	for _, p := range sandboxProcesses(lo, hi, marker) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err != nil || !held[pid] {
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		for _, l := range left {
			if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("processes left behind: %v", left)
	}
}

// newMarker returns a string unique to the test, for finding its processes.
func newMarker(t *testing.T) string {
	return fmt.Sprintf("algoitny-marker-%d-%d", os.Getpid(), markers.Add(1))
}

// tempDir is a directory the sandbox uids can reach (t.TempDir is 0700 under a
// 0700 parent).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "judge-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runEntries lists what compiles, runs and checkers left in an engine's work
// directory (the engine's own set-up, such as its /etc mirror, excluded).
func runEntries(t *testing.T, work string) []string {
	t.Helper()
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		for _, prefix := range []string{"box-", "prog-", "check-"} {
			if strings.HasPrefix(e.Name(), prefix) {
				out = append(out, e.Name())
			}
		}
	}
	return out
}
