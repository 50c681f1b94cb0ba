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

// TestWarmSandboxes: a program run again with the same command gets a
// sandbox started ahead of the run (warm.go). The test watches the engine's
// processes: a sandbox waits between runs, the next run consumes it (its
// processes end) and another is started; each run still sees a fresh /tmp,
// input, and limits; a waiting sandbox that died is replaced by a fresh
// start; Close leaves no process behind.
func TestWarmSandboxes(t *testing.T) {
	t.Parallel()
	e, base := newEngine(t, judge.Config{Workers: 1}, "c")
	requireLanguage(t, e, "c")
	if !e.Sandboxed() {
		t.Fatal("the engine is not sandboxed")
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
	waiting := func() []string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			procs := sandboxProcesses(base, base+uidsPerEngine, "")
			if len(procs) > 0 || time.Now().After(deadline) {
				return procs
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	for range 2 { // the first run of a command starts nothing ahead; the second does
		if got := run(input("1 2\n")); got != "3 0\n" {
			t.Fatalf("cold run printed %q", got)
		}
	}
	before := waiting()
	if len(before) == 0 {
		t.Fatal("no sandbox waits after the second run")
	}
	if got := run(input("20 22\n")); got != "42 0\n" {
		t.Fatalf("warm run printed %q (want the sum and no file from earlier runs)", got)
	}
	after := waiting()
	for _, p := range after {
		if slices.Contains(before, p) {
			t.Fatalf("the sandbox that waited before the run still waits (%s): the run did not use it", p)
		}
	}
	if got := run(nil); got != "noinput 0\n" {
		t.Fatalf("warm run without input printed %q", got)
	}

	// A waiting sandbox that died: the next run starts afresh.
	var killed []int
	for _, p := range waiting() {
		var pid int
		if _, err := fmt.Sscan(p, &pid); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	for _, pid := range killed { // dead (a zombie until reaped), its pipes closed
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if f := strings.Fields(string(stat)); err != nil || len(f) > 2 && f[2] == "Z" {
				break
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // the engine reads the end of the status pipe
	if got := run(input("2 2\n")); got != "4 0\n" {
		t.Fatalf("run after the waiting sandbox died printed %q", got)
	}

	// Limits hold in a warm sandbox.
	spin, err := e.Compile(ctx, "c", "int main(void) { for (;;) ; }")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res, err := spin.Run(ctx, judge.RunOptions{Limits: judge.Limits{CPUTime: 200 * time.Millisecond}})
		if err != nil || res.Verdict != judge.TimeLimitExceeded {
			t.Fatalf("spin run %d: %v %+v", i, err, res)
		}
	}
	spin.Close()

	prog.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(sandboxProcesses(base, base+uidsPerEngine, "")) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := sandboxProcesses(base, base+uidsPerEngine, ""); len(left) > 0 {
		t.Fatalf("processes left after Close: %v", left)
	}
}

// TestWarmSandboxIdleAndOff: a sandbox started ahead that no run takes
// within WarmIdle is discarded (nothing of the engine's stays alive), and a
// negative WarmIdle starts none ahead.
func TestWarmSandboxIdleAndOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		idle time.Duration
	}{{"Idle", 300 * time.Millisecond}, {"Off", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, base := newEngine(t, judge.Config{Workers: 1, WarmIdle: tc.idle}, "c")
			requireLanguage(t, e, "c")
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
			// A waiting sandbox appears (Idle) or not (Off), then none is left.
			sawOne := false
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				n := len(sandboxProcesses(base, base+uidsPerEngine, ""))
				sawOne = sawOne || n > 0
				if n == 0 && (sawOne || tc.idle < 0 && time.Until(deadline) < 8*time.Second) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if left := sandboxProcesses(base, base+uidsPerEngine, ""); len(left) > 0 {
				t.Fatalf("still waiting after WarmIdle %v: %v", tc.idle, left)
			}
			if sawOne != (tc.idle > 0) {
				t.Fatalf("WarmIdle %v: a sandbox waited = %v", tc.idle, sawOne)
			}
		})
	}
}
