package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportExitTime: the supervisor reports when it reaped the program on
// the machine's monotonic clock, so two runs' ends compare: the run that
// ended first has the smaller ExitedAt.
func TestReportExitTime(t *testing.T) {
	rep, ok := parseReport([]byte("status=0 utime_us=1 stime_us=2 maxrss_kb=3 execerr=0 setuperr=0 setupstep=0 exit_ns=123\n"))
	if !ok || rep.exitNS != 123 {
		t.Fatalf("parseReport: %+v, %v", rep, ok)
	}
	// A directory the sandbox's uids can reach, and uids of this test's
	// own (the judge's tests take windows from 2,000,000 up).
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := New(Config{CacheDir: filepath.Join(dir, "cache"), WorkDir: filepath.Join(dir, "work"), Slots: 1, UIDBase: 1_900_000})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	run := func(seconds string) Usage {
		u, err := sb.Run(context.Background(), Request{Argv: []string{"sleep", seconds}, Dir: BoxDir, Limits: Limits{CPU: 5 * time.Second, Wall: 5 * time.Second}})
		if err != nil || u.ExitCode != 0 || u.ExitedAt == 0 {
			t.Fatalf("run: %+v, %v", u, err)
		}
		return u
	}
	before := run("0")
	after := run("0.05")
	if d := time.Duration(after.ExitedAt - before.ExitedAt); d < 50*time.Millisecond {
		t.Fatalf("the second run ended %v after the first, want ≥ 50ms (%s)", d, strings.TrimSpace(string(after.Stderr)))
	}
}
