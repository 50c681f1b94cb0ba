package judge_test

import (
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// TestWallLimitOnABusyMachine: a busy loop that the wall limit stops because
// competing processes left it too little CPU is told so — not that it was
// sleeping — while a program that sleeps under the same load still is (issue
// 17 item 13). The load: 6 busy processes per core, for a few seconds. Not
// parallel: the load would disturb the other tests' verdicts.
func TestWallLimitOnABusyMachine(t *testing.T) {
	e, base := newEngine(t, judge.Config{}, "c")
	requireLanguage(t, e, "c")
	busy := compile(t, e, "c", "int main(void){volatile unsigned long x=0;for(;;)x++;}\n")
	sleeper := compile(t, e, "c", "#include <unistd.h>\nint main(void){for(;;)sleep(1);}\n")
	limits := judge.Limits{CPUTime: time.Second, WallTime: 3 * time.Second}

	load(t, 6*runtime.NumCPU())
	rr, _ := run(t, busy, "", limits)
	requireVerdict(t, "busy loop", rr.Verdict, judge.TimeLimitExceeded, rr)
	if strings.Contains(rr.Message, "sleeping") {
		t.Fatalf("a busy loop was told it slept: %+v", rr)
	}
	if !strings.Contains(rr.Message, "machine was busy") {
		// The load was not enough to keep it under its CPU limit: the
		// case this test is about did not happen.
		t.Fatalf("the busy loop was not stopped by the wall limit under load (a stronger load is needed): %+v", rr)
	}
	t.Logf("busy loop under load: %s (CPU %v, wall %v)", rr.Message, rr.CPUTime, rr.WallTime)
	rr, _ = run(t, sleeper, "", limits)
	requireVerdict(t, "sleeper", rr.Verdict, judge.TimeLimitExceeded, rr)
	if !strings.Contains(rr.Message, "sleeping or waiting") {
		t.Fatalf("a sleeper under load: %+v", rr)
	}
	t.Logf("sleeper under load: %s", rr.Message)
	requireNoLeftovers(t, e, base, "")
}

// load starts n busy-looping processes, each in a session of its own,
// stopped when the test ends. A sandboxed run is a session of its own too,
// and with the scheduler's autogroups (on by default) CPU time is shared
// between sessions first: each busy session takes as much as the run.
func load(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}
