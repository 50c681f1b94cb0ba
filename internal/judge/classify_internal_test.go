package judge

import (
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// TestClassifyCPUTimeOfATimeLimit: a program the watchdog (or the
// kernel's RLIMIT_CPU backstop) stopped at its CPU limit is shown with at
// least the limit, even when the CPU time read after the run is a few
// milliseconds short of it (seen: 993 ms against 1 s on a loaded machine);
// one under the limit keeps its own.
func TestClassifyCPUTimeOfATimeLimit(t *testing.T) {
	l := effLimits{Limits: sandbox.Limits{CPU: time.Second, Wall: 30 * time.Second, Memory: 64 << 20}, userCPU: time.Second}
	for name, res := range map[string]sandbox.Usage{
		"the watchdog's kill": {CPU: 993 * time.Millisecond, Killed: sandbox.KillCPU},
		"SIGXCPU":             {CPU: 993 * time.Millisecond, Signal: syscall.SIGXCPU},
	} {
		if rr := classify(res, l, Language{}); rr.Verdict != TimeLimitExceeded || rr.CPUTime != time.Second {
			t.Fatalf("%s at 993 ms: %s, CPU %v; want TIME_LIMIT_EXCEEDED at 1s", name, rr.Verdict, rr.CPUTime)
		}
	}
	rr := classify(sandbox.Usage{CPU: 200 * time.Millisecond, Killed: sandbox.KillWall}, l, Language{})
	if rr.Verdict != TimeLimitExceeded || rr.CPUTime != 200*time.Millisecond {
		t.Fatalf("a wall-time kill at 200 ms of CPU: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
	rr = classify(sandbox.Usage{CPU: 1200 * time.Millisecond, Killed: sandbox.KillCPU}, l, Language{})
	if rr.Verdict != TimeLimitExceeded || rr.CPUTime != 1200*time.Millisecond {
		t.Fatalf("killed at 1.2 s: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
	rr = classify(sandbox.Usage{CPU: 300 * time.Millisecond}, l, Language{})
	if rr.Verdict == TimeLimitExceeded || rr.CPUTime != 300*time.Millisecond {
		t.Fatalf("a normal exit at 300 ms: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
}
