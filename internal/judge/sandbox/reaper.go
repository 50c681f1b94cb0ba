package sandbox

import (
	"context"
	"crypto/sha256"
	_ "embed" // the supervisor's source
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

//go:embed reaper/reaper.c
var reaperSource []byte

// reaperPath is where the supervisor is mounted inside the sandbox.
const reaperPath = "/.judge/reaper"

// ensureReaper returns the supervisor binary for this machine, building it
// with the system C compiler the first time (cached in CacheDir by a hash of
// its source, so a pre-warmed cache needs no compiler).
func (sb *Sandbox) ensureReaper() (string, error) {
	sum := sha256.Sum256(reaperSource)
	path := filepath.Join(sb.cacheDir, "reaper-"+hex.EncodeToString(sum[:8]))
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return path, nil
	}
	var cc string
	for _, name := range []string{"gcc", "cc", "clang"} {
		if p, err := LookPath(name); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		return "", fmt.Errorf("%w: the judge's process supervisor is built with the system C compiler and none was found "+
			"(install gcc: apt-get install -y gcc), or pre-build it by running the judge once with a compiler", ErrUnavailable)
	}
	tmp, err := os.MkdirTemp(sb.cacheDir, "reaper-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "reaper.c")
	if err := os.WriteFile(src, reaperSource, 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "reaper")
	var lastErr error
	// Static is smaller and starts faster; fall back to dynamic without libc.a.
	for _, static := range []bool{true, false} {
		args := []string{"-O2", "-o", out, src}
		if static {
			args = append([]string{"-static"}, args...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, cc, args...)
		cmd.Env = []string{"PATH=" + PATH, "LANG=C"}
		b, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			lastErr = nil
			break
		}
		lastErr = fmt.Errorf("%s %s: %v: %s", cc, strings.Join(args, " "), err, b)
	}
	if lastErr != nil {
		return "", fmt.Errorf("%w: building the process supervisor: %v", ErrUnavailable, lastErr)
	}
	if err := os.Chmod(out, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(out, path); err != nil {
		return "", err
	}
	return path, nil
}

// reaperArgs turns limits into the supervisor's key=value options.
func (sb *Sandbox) reaperArgs(l Limits) []string {
	cpu := int64(l.CPU/time.Second) + 2 // backstop only; the watchdog is exact
	args := []string{
		"core=0",
		"nofile=1024",
		"cpu=" + strconv.FormatInt(cpu, 10),
		"fsize=" + strconv.FormatInt(l.FileSize, 10),
	}
	if l.Stack > 0 {
		args = append(args, "stack="+strconv.FormatInt(min(l.Stack, 1<<30), 10))
	}
	if l.AddressSpace > 0 {
		args = append(args, "as="+strconv.FormatInt(l.AddressSpace, 10))
	}
	if l.Data > 0 {
		args = append(args, "data="+strconv.FormatInt(l.Data, 10))
	}
	// RLIMIT_NPROC counts the processes of a uid (per user namespace on current
	// kernels): meaningful only when the run has a namespace or a uid of its
	// own. +1 is the supervisor itself.
	if sb.sandboxed || sb.switchUID {
		args = append(args, "nproc="+strconv.Itoa(l.Processes+1))
	}
	// The runtime's threads must not double as processes (a JVM's thirty
	// threads would otherwise let a program start thirty shells).
	if l.NoFork {
		args = append(args, "nofork=1")
	}
	return args
}

// report is the supervisor's account of the program.
type report struct {
	status  syscall.WaitStatus
	cpu     time.Duration
	maxRSS  int64
	execErr syscall.Errno
	// setupErr is set when a held sandbox could not prepare the run
	// (setupStep says which step of reaper.c's run_child failed).
	setupErr  syscall.Errno
	setupStep int
	// exitNS is when the supervisor reaped the program (CLOCK_MONOTONIC,
	// ns; 0: it did not).
	exitNS int64
}

// parseReport reads the supervisor's one-line report; ok is false when there is
// none (the sandbox failed before the supervisor ran, or it was killed).
func parseReport(b []byte) (report, bool) {
	var r report
	line := strings.TrimSpace(string(b))
	if line == "" {
		return r, false
	}
	seen := 0
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return r, false
		}
		switch k {
		case "status":
			r.status = syscall.WaitStatus(n)
		case "utime_us", "stime_us":
			r.cpu += time.Duration(n) * time.Microsecond
		case "maxrss_kb":
			r.maxRSS = n * 1024
		case "execerr":
			r.execErr = syscall.Errno(n)
		case "setuperr":
			r.setupErr = syscall.Errno(n)
			continue
		case "setupstep":
			r.setupStep = int(n)
			continue
		case "exit_ns":
			r.exitNS = n
			continue
		default:
			continue
		}
		seen++
	}
	return r, seen == 5
}
