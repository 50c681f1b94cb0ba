package judge

import (
	"syscall"
	"testing"
	"time"
)

// TestClassifyCPUTimeOfATimeLimit: a program the watchdog (or the
// kernel's RLIMIT_CPU backstop) stopped at its CPU limit is shown with at
// least the limit, even when the CPU time read after the run is a few
// milliseconds short of it (seen: 993 ms against 1 s on a loaded machine);
// one under the limit keeps its own.
func TestClassifyCPUTimeOfATimeLimit(t *testing.T) {
	l := effLimits{cpu: time.Second, userCPU: time.Second, wall: 30 * time.Second, memory: 64 << 20}
	for name, res := range map[string]spawnRes{
		"the watchdog's kill": {cpu: 993 * time.Millisecond, killed: killCPU},
		"SIGXCPU":             {cpu: 993 * time.Millisecond, signal: syscall.SIGXCPU},
	} {
		if rr := classify(res, l, Language{}); rr.Verdict != TimeLimitExceeded || rr.CPUTime != time.Second {
			t.Fatalf("%s at 993 ms: %s, CPU %v; want TIME_LIMIT_EXCEEDED at 1s", name, rr.Verdict, rr.CPUTime)
		}
	}
	rr := classify(spawnRes{cpu: 200 * time.Millisecond, killed: killWall}, l, Language{})
	if rr.Verdict != TimeLimitExceeded || rr.CPUTime != 200*time.Millisecond {
		t.Fatalf("a wall-time kill at 200 ms of CPU: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
	rr = classify(spawnRes{cpu: 1200 * time.Millisecond, killed: killCPU}, l, Language{})
	if rr.Verdict != TimeLimitExceeded || rr.CPUTime != 1200*time.Millisecond {
		t.Fatalf("killed at 1.2 s: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
	rr = classify(spawnRes{cpu: 300 * time.Millisecond}, l, Language{})
	if rr.Verdict == TimeLimitExceeded || rr.CPUTime != 300*time.Millisecond {
		t.Fatalf("a normal exit at 300 ms: %s, CPU %v", rr.Verdict, rr.CPUTime)
	}
}
