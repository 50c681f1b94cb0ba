package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// markerProgram says whether /tmp holds a file an earlier run left, leaves
// one, and adds its two input numbers ("noinput" without input).
const markerProgram = `#include <stdio.h>
int main(void) {
	FILE *f = fopen("/tmp/mark", "r");
	int left = f != NULL, a, b;
	if (f) fclose(f);
	f = fopen("/tmp/mark", "w");
	if (f) { fputs("x", f); fclose(f); }
	if (scanf("%d %d", &a, &b) != 2) { printf("noinput %d\n", left); return 0; }
	printf("%d %d\n", a + b, left);
	return 0;
}
`

// TestHeldSandboxes: a worker slot's sandbox is set up once and serves
// run after run (sandbox/holder.go): the same supervisor runs them, yet each run
// sees a fresh /tmp and its own input and limits; a held sandbox that died
// is replaced by the next run; Close leaves no process behind.
func TestHeldSandboxes(t *testing.T) {
	t.Parallel()
	e, base := newEngine(t, judge.Config{Workers: 1}, "c")
	requireLanguage(t, e, "c")
	if info := e.SandboxInfo(); !e.Sandboxed() || !info.Held {
		t.Fatalf("runs are not held: %+v", info)
	}
	ctx := context.Background()
	prog, err := e.Compile(ctx, "c", markerProgram)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	run := func(in *string) string {
		t.Helper()
		var out bytes.Buffer
		opts := judge.RunOptions{Stdout: &out}
		if in != nil {
			opts.Stdin = strings.NewReader(*in)
		}
		res, err := prog.Run(ctx, opts)
		if err != nil || res.Verdict != judge.Accepted {
			t.Fatalf("run: %v %+v", err, res)
		}
		return out.String()
	}
	input := func(s string) *string { return &s }
	held := func() []int {
		t.Helper()
		pids := judge.HeldPIDs(e)
		if len(pids) != 2 {
			t.Fatalf("held sandbox processes %v, want bwrap and its supervisor (%+v)", pids, e.SandboxInfo())
		}
		procs := sandboxProcesses(base, base+uidsPerEngine, "")
		if os.Geteuid() == 0 && len(procs) != 2 {
			t.Fatalf("processes of the engine's uids between runs: %v, want only the held sandbox %v", procs, pids)
		}
		return pids
	}

	if got := run(input("1 2\n")); got != "3 0\n" {
		t.Fatalf("first run printed %q", got)
	}
	first := held()
	for i, in := range []string{"20 22\n", "2 3\n"} {
		want := []string{"42 0\n", "5 0\n"}[i]
		if got := run(input(in)); got != want {
			t.Fatalf("run %d printed %q, want %q (the sum, and no file left by an earlier run)", i+2, got, want)
		}
		if now := held(); !slices.Equal(now, first) {
			t.Fatalf("run %d: held sandbox %v, want the first run's %v", i+2, now, first)
		}
	}
	if got := run(nil); got != "noinput 0\n" {
		t.Fatalf("run without input printed %q", got)
	}

	// A held sandbox that died: the next run starts another.
	syscall.Kill(first[1], syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", first[0])); err != nil {
			break // bwrap has gone (and been waited for)
		}
	}
	if got := run(input("2 2\n")); got != "4 0\n" {
		t.Fatalf("run after the held sandbox died printed %q", got)
	}
	if now := held(); now[1] == first[1] {
		t.Fatalf("the dead held sandbox %v still serves", first)
	}

	// Limits hold run after run.
	spin, err := e.Compile(ctx, "c", "int main(void) { for (;;) ; }")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res, err := spin.Run(ctx, judge.RunOptions{Limits: judge.Limits{CPUTime: 200 * time.Millisecond}})
		if err != nil || res.Verdict != judge.TimeLimitExceeded || res.CPUTime > time.Second {
			t.Fatalf("spin run %d: %v %+v", i, err, res)
		}
	}
	spin.Close()
	requireNoLeftovers(t, e, base, "")

	prog.Close()
	e.Close()
	if left := sandboxProcesses(base, base+uidsPerEngine, ""); len(left) > 0 {
		t.Fatalf("processes left after Close: %v", left)
	}
}

// TestHeldSandboxIdleAndOff: a held sandbox that no run takes within
// WarmIdle ends (nothing of the engine's stays alive), and a negative
// WarmIdle holds none: every run starts a sandbox of its own.
func TestHeldSandboxIdleAndOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		idle time.Duration
	}{{"Idle", 300 * time.Millisecond}, {"Off", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, base := newEngine(t, judge.Config{Workers: 1, WarmIdle: tc.idle}, "c")
			requireLanguage(t, e, "c")
			if info := e.SandboxInfo(); info.Held != (tc.idle > 0) {
				t.Fatalf("WarmIdle %v: %+v", tc.idle, info)
			}
			ctx := context.Background()
			prog, err := e.Compile(ctx, "c", markerProgram)
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			for range 2 {
				if res, err := prog.Run(ctx, judge.RunOptions{}); err != nil || res.Verdict != judge.Accepted {
					t.Fatalf("run: %v %+v", err, res)
				}
			}
			if held := judge.HeldPIDs(e); (len(held) > 0) != (tc.idle > 0) {
				t.Fatalf("WarmIdle %v: held sandbox after the runs: %v", tc.idle, held)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(sandboxProcesses(base, base+uidsPerEngine, "")) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if left := sandboxProcesses(base, base+uidsPerEngine, ""); len(left) > 0 {
				t.Fatalf("still alive after WarmIdle %v: %v", tc.idle, left)
			}
		})
	}
}

// TestHeldScratchIsFresh: a held sandbox's next run finds /box as new
// whatever the last one did to it (a file, its mode, its times), and no
// /check of a custom checker's earlier run.
func TestHeldScratchIsFresh(t *testing.T) {
	t.Parallel()
	e, base := newEngine(t, judge.Config{Workers: 1}, "python")
	requireLanguage(t, e, "python")
	p := compile(t, e, "python", `import os, stat, sys
st = os.stat("/box")
print(oct(stat.S_IMODE(st.st_mode)), int(st.st_mtime) == 12345, sorted(os.listdir("/box")), sorted(os.listdir("/check")), os.path.ismount("/check"))
what = sys.stdin.read().strip()
if what == "file":
    open("/box/left", "w").write("x")
elif what == "mode":
    os.chmod("/box", 0o700)
elif what == "times":
    os.utime("/box", (12345, 12345))
elif what == "gone":
    open("/box/gone", "w").write("x")
    os.remove("/box/gone")
`)
	fresh := "0o755 False [] [] False\n"
	for _, what := range []string{"file", "mode", "times", "gone", "nothing", "file"} {
		rr, out := run(t, p, what, judge.Limits{})
		requireVerdict(t, what, rr.Verdict, judge.Accepted, rr)
		if out != fresh {
			t.Fatalf("before the run that does %q: /box and /check are %q, want %q", what, out, fresh)
		}
	}
	// A custom checker's run has the test's files at /check; the next
	// test's program must not.
	checker := `import sys
out = open(sys.argv[2]).read()
sys.exit(0 if out.endswith("[] False\n") else 1)
`
	res := judgeSub(t, e, judge.Submission{Program: p, Tests: []judge.TestCase{{Input: []byte("nothing")}, {Input: []byte("nothing")}, {Input: []byte("nothing")}},
		Checker: judge.Checker{Kind: judge.CheckCustom, Language: "python", Source: checker}})
	requireVerdict(t, "/check after a checker's run", res.Verdict, judge.Accepted, res)
	requireNoLeftovers(t, e, base, "")
}
