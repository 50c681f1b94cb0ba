package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// PATH is the fixed PATH of every sandboxed process. Tools are looked up
// here (not in the server's PATH, which may contain shims that do not work in
// the sandbox).
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin"

// Paths inside the sandbox.
const (
	BoxDir     = "/box"   // per-run scratch directory, the only writable place
	ProgDir    = "/prog"  // source and build output
	CacheMount = "/cache" // language cache, compilation only
	CheckDir   = "/check" // input/output/answer for a custom checker
)

// etcAllowlist are the only /etc entries visible in the sandbox: what the
// dynamic linker, the JVM and Python need. /etc as a whole may hold secrets.
var etcAllowlist = []string{
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
	"nsswitch.conf", "java-*-openjdk", "python3*",
}

// etcAccounts are the sandbox's /etc/passwd and /etc/group: user lookups
// work, and the host's accounts (who runs what on it) are not shown.
var etcAccounts = map[string]string{
	"passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	"group":  "root:x:0:\nnogroup:x:65534:\n",
}

// Mount binds a host directory into the sandbox: read-only unless RW (a
// compiler's build directory, a language cache).
type Mount struct {
	Src, Dst string
	RW       bool
}

// KillReason records why the sandbox stopped a run (Usage.Killed).
type KillReason int

// Why a run was stopped.
const (
	KillNone   KillReason = iota // it ended by itself
	KillCPU                      // its CPU time reached Limits.CPU
	KillWall                     // its real time reached Limits.Wall
	KillOutput                   // it wrote more than Limits.Output
	KillMemory                   // its resident set went over Limits.Memory
	KillCancel                   // the context ended
)

// spawnReq is one process to run under the sandbox.
type spawnReq struct {
	argv      []string // command, placeholders already expanded
	env       []string // KEY=VALUE on top of the fixed environment
	dir       string   // working directory inside the sandbox
	hostDir   string   // working directory when unsandboxed
	scratch   string   // host scratch dir when unsandboxed; "" = tmpfs at /box
	mounts    []Mount
	uid       int  // host uid to run as; -1 keeps the sandbox's
	sweepUID  bool // uid is exclusive to this run: kill whatever still has it
	lim       Limits
	stdin     io.Reader // nil = empty
	stdout    io.Writer // nil = discard
	stdoutEnd func()    // called when standard output ends (nil: nothing)
	stderrCap int       // what is kept of standard error
	// boundStderr stops the run (KillOutput) when standard error exceeds
	// lim.Output: for programs. Compilers and checkers (a checker echoes
	// what it judges) are stopped only past maxToolStderr.
	boundStderr bool
}

// maxToolStderr bounds the standard error of compilers and checkers.
const maxToolStderr = 64 << 20

// spawnRes is what the sandbox observed about one process (tree).
type spawnRes struct {
	cpu, wall       time.Duration
	maxRSS          int64         // peak resident set of the largest process
	polledCPU       time.Duration // CPU time of the tree when the watchdog last looked
	polledRSS       int64         // peak resident set of the whole tree seen by the watchdog
	execErr         syscall.Errno // the program could not be executed
	exitCode        int
	signal          syscall.Signal
	killed          KillReason
	stderr          []byte
	stderrTruncated bool
	stdoutBytes     int64
	setupFailed     bool
	leftovers       int
	// polls is how many times the watchdog looked at the running tree, and
	// runnablePolls how many of those times a thread of it was running or
	// waiting for a CPU (not sleeping or blocked): what tells a program the
	// wall limit stopped while it computed on a busy machine from one that
	// slept.
	polls, runnablePolls int
	// cgroupPeak is the run's peak memory as its slot's control group
	// counted it (the whole tree, between polls too).
	cgroupPeak int64
	exitNS     int64 // report.exitNS
}

// fixedEnv is the complete environment of user code: nothing of the server's
// environment (secrets, credentials, DATABASE_URL) reaches it.
func fixedEnv(home string, extra []string) []string {
	env := []string{
		"PATH=" + PATH,
		"HOME=" + home,
		"TMPDIR=" + home,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
	}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, old := range env {
			if strings.HasPrefix(old, k+"=") {
				env[i] = kv
				replaced = true
			}
		}
		if !replaced {
			env = append(env, kv)
		}
	}
	return env
}

// systemMounts returns the read-only view of the host system shared by every
// sandbox: /usr, the /bin-style top-level links or directories, the allowlist
// of /etc (mirrored once into etc, so that it costs one mount per run instead
// of one per entry), and the operator's extra paths.
func systemMounts(etc string, extra []string) []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, name := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + name
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				args = append(args, "--symlink", target, p)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", p, p)
		}
	}
	args = append(args, "--ro-bind", etc, "/etc")
	for _, p := range extra {
		args = append(args, "--ro-bind", p, p)
	}
	return args
}

// mirrorEtc copies the /etc entries matching patterns (etcAllowlist and
// the languages' own) into dir (files are copied, symlinks recreated,
// directories copied recursively) and writes etcAccounts. A host /etc
// that changes later (a new JDK) needs a new Engine.
func mirrorEtc(dir string, patterns []string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for name, content := range etcAccounts {
		if err := WriteNew(filepath.Join(dir, name), strings.NewReader(content)); err != nil {
			return err
		}
	}
	done := map[string]bool{}
	for _, pattern := range patterns {
		matches, _ := filepath.Glob("/etc/" + pattern)
		for _, m := range matches {
			if done[m] {
				continue // matched by another pattern too
			}
			done[m] = true
			err := filepath.WalkDir(m, func(path string, d os.DirEntry, err error) error {
				if err != nil {
					return nil // unreadable entries are simply not mirrored
				}
				dst := filepath.Join(dir, strings.TrimPrefix(path, "/etc/"))
				switch {
				case d.Type()&os.ModeSymlink != 0:
					target, err := os.Readlink(path)
					if err != nil {
						return nil
					}
					return os.Symlink(target, dst)
				case d.IsDir():
					return os.Mkdir(dst, 0o755)
				case d.Type().IsRegular():
					src, err := os.Open(path)
					if err != nil {
						return nil
					}
					defer src.Close()
					return WriteNew(dst, src)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// The descriptors of a sandbox started for one run: the supervisor's
// report, bwrap's status (sandboxed) and the program's standard output,
// which the supervisor hands to the program alone. bwrap and the
// supervisor keep their own fd 1 (/dev/null) until they exit; the
// program's end of output must reach the reader when the program closes
// it (an interactive test's other side waits for it).
const (
	fdReport     = 3
	fdStatus     = 4
	fdStdoutBare = 4 // unsandboxed: no status descriptor
	fdStdout     = 5
)

// commandLine builds the argv that runs r: bwrap + supervisor + command, or
// supervisor + command when unsandboxed (the descriptors above).
func (sb *Sandbox) commandLine(r *spawnReq) (argv []string, dir string, env []string) {
	out := fdStdout
	if !sb.sandboxed {
		out = fdStdoutBare
	}
	sup := append(append([]string{strconv.Itoa(fdReport), "stdout=" + strconv.Itoa(out)}, sb.reaperArgs(r.lim)...), "--")
	if !sb.sandboxed {
		argv = append(append([]string{sb.reaper}, sup...), r.argv...)
		return argv, r.hostDir, fixedEnv(r.scratch, r.env)
	}
	argv = append([]string{sb.bwrap}, sb.bwrapPrefix...)
	for _, m := range r.mounts {
		op := "--ro-bind"
		if m.RW {
			op = "--bind"
		}
		argv = append(argv, op, m.Src, m.Dst)
	}
	// The scratch space is a tmpfs as large as the file size limit: bounded in
	// total (not only per file), invisible from the host, gone with the run.
	argv = append(argv,
		"--ro-bind", sb.reaper, reaperPath,
		"--size", strconv.FormatInt(max(r.lim.FileSize, 1<<20), 10), "--tmpfs", BoxDir,
		"--symlink", BoxDir, "/tmp",
		"--remount-ro", "/dev",
		"--remount-ro", "/",
		"--chdir", r.dir,
		"--clearenv")
	for _, kv := range fixedEnv(BoxDir, r.env) {
		k, v, _ := strings.Cut(kv, "=")
		argv = append(argv, "--setenv", k, v)
	}
	argv = append(append(argv, "--json-status-fd", strconv.Itoa(fdStatus), "--", reaperPath), sup...)
	return append(argv, r.argv...), "/", []string{"PATH=" + PATH}
}

// spawn runs one process tree to completion under the limits, streaming stdin
// and stdout, and reports what happened. It returns an error only when the
// process could not be started or ctx was cancelled (the result is then still
// filled in as far as known).
func (sb *Sandbox) spawn(ctx context.Context, r spawnReq) (spawnRes, error) {
	p, err := sb.start(&r)
	if err != nil {
		return spawnRes{}, err
	}
	return sb.finish(ctx, p, r)
}

// streamPipes are the pipes of a run's standard streams: the child's ends
// and the parent's. files holds every end opened, for close.
type streamPipes struct {
	files                    []*os.File
	stdinR, stdoutW, stderrW *os.File // the child's
	stdinW                   *os.File // ours; nil when stdin is /dev/null
	stdoutR, stderrR         *os.File // ours
}

// pipe opens a pipe whose two ends close closes.
func (sp *streamPipes) pipe() (*os.File, *os.File, error) {
	rd, wr, err := os.Pipe()
	if err == nil {
		sp.files = append(sp.files, rd, wr)
	}
	return rd, wr, err
}

// open opens the pipes of standard output and error, and of standard input
// when withStdin (else it is /dev/null); on failure what it opened is closed.
func (sp *streamPipes) open(withStdin bool) (err error) {
	defer func() {
		if err != nil {
			sp.close()
		}
	}()
	if sp.stdoutR, sp.stdoutW, err = sp.pipe(); err != nil {
		return err
	}
	if sp.stderrR, sp.stderrW, err = sp.pipe(); err != nil {
		return err
	}
	if withStdin {
		sp.stdinR, sp.stdinW, err = sp.pipe()
		return err
	}
	if sp.stdinR, err = os.Open(os.DevNull); err != nil {
		return err
	}
	sp.files = append(sp.files, sp.stdinR)
	return nil
}

// closeChildEnds drops our copies of the child's ends once it has its own,
// so that EOF arrives when the run ends.
func (sp *streamPipes) closeChildEnds() {
	sp.stdoutW.Close()
	sp.stderrW.Close()
	sp.stdinR.Close()
}

func (sp *streamPipes) close() {
	for _, f := range sp.files {
		f.Close()
	}
}

// process is a started run: the sandbox (or, unsandboxed, the supervisor)
// and the parent's ends of its pipes.
type process struct {
	streamPipes
	cmd        *exec.Cmd
	reportR    *os.File
	statusR    *os.File // bwrap's --json-status-fd; nil unsandboxed
	k          *killer
	statusDone chan struct{} // readStatus has returned (closed at once unsandboxed)
}

// start starts the sandbox of r (bwrap, the supervisor, the program).
func (sb *Sandbox) start(r *spawnReq) (*process, error) {
	argv, dir, env := sb.commandLine(r)
	p := &process{statusDone: make(chan struct{})}
	if err := p.open(r.stdin != nil); err != nil {
		return nil, err
	}
	fail := func(err error) (*process, error) {
		p.close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   argv[0],
		Args:   argv,
		Env:    env,
		Dir:    dir,
		Stdin:  p.stdinR,
		Stderr: p.stderrW, // Stdout: /dev/null; the program's goes as a descriptor of its own
	}
	reportR, reportW, err := p.pipe()
	if err != nil {
		return fail(err)
	}
	cmd.ExtraFiles = []*os.File{reportW} // fdReport
	var statusW *os.File
	if sb.sandboxed {
		if p.statusR, statusW, err = p.pipe(); err != nil {
			return fail(err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, statusW) // fdStatus
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, p.stdoutW) // fdStdout (fdStdoutBare)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !sb.sandboxed}
	if r.uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.uid), Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("%w: start %s: %v", ErrFailed, filepath.Base(argv[0]), err))
	}
	// The child has its copies; drop ours so EOF arrives when it exits.
	p.closeChildEnds()
	reportW.Close()
	if statusW != nil {
		statusW.Close()
	}
	p.cmd, p.reportR = cmd, reportR
	p.k = &killer{sandboxed: sb.sandboxed, outer: cmd.Process, exited: make(chan struct{})}
	if p.statusR != nil {
		go func() {
			defer close(p.statusDone)
			p.k.readStatus(p.statusR)
		}()
	} else {
		close(p.statusDone)
	}
	return p, nil
}

// finish feeds p's program r.stdin, enforces the limits and waits for the
// whole tree; see spawn.
func (sb *Sandbox) finish(ctx context.Context, p *process, r spawnReq) (spawnRes, error) {
	var res spawnRes
	defer p.close()
	cmd, k := p.cmd, p.k
	start := time.Now()

	var wg sync.WaitGroup
	pumpStreams(&r, &res, &p.streamPipes, k.kill, &wg)
	var reportBytes []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		reportBytes, _ = readCapped(p.reportR, 4<<10)
	}()
	stopWatch := sb.startWatch(ctx, cmd.Process.Pid, 0, r.lim, k.kill, &res)

	waitErr := cmd.Wait()
	res.wall = time.Since(start)
	close(k.exited)
	stopWatch()
	if p.stdinW != nil {
		p.stdinW.Close()
	}
	// Every process of the run is dead, so the pipes reach EOF; the timeout
	// guards against an unsandboxed grandchild that escaped its process group
	// (the uid sweep below then kills it).
	awaitStreams(func() { wg.Wait(); <-p.statusDone }, p.stdoutR, p.stderrR, p.reportR, p.statusR)

	res.killed = k.reason()
	rep, ok := parseReport(reportBytes)
	// In the sandbox, the supervisor's exit tore down the pid namespace before
	// bwrap could be waited for. Unsandboxed, or when the run did not end on
	// its own, a sweep of the run's uid makes sure (it costs a scan of /proc).
	if r.sweepUID && (!sb.sandboxed || res.killed != KillNone || !ok) {
		res.leftovers = killUID(r.uid)
	}
	switch {
	case ok:
		res.fromReport(rep)
	case res.killed != KillNone:
		// Killed by the sandbox before the supervisor could report: what the
		// watchdog saw last is the best account.
		res.killedUnreported(k.lastCPU, k.lastRSS)
	default:
		res.setupFailed = true
		res.exitCode = -1
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			res.exitCode = ws.ExitStatus()
		}
	}
	if res.killed == KillCancel {
		return res, ctx.Err()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("%w: wait: %v", ErrFailed, waitErr)
	}
	return res, nil
}

// pumpStreams copies a run's standard streams while it runs, in goroutines
// (wg counts the two readers): r.stdin into sp.stdinW (closed at its end),
// standard output to r.stdout and standard error into res.stderr (only the
// start is kept, but all of it is read), each bounded: a program's
// standard error like its standard output, a compiler's or a checker's
// generously, or gigabytes written to it would cost the judge that much
// copying, uncounted. Past a bound the run is killed (KillOutput).
func pumpStreams(r *spawnReq, res *spawnRes, sp *streamPipes, kill func(KillReason), wg *sync.WaitGroup) {
	if sp.stdinW != nil {
		go func() {
			// EPIPE when the program stops reading is expected, not an error.
			_, err := io.Copy(sp.stdinW, r.stdin)
			sp.stdinW.Close()
			if err != nil {
				// What the program will not read is drained: the writer of
				// r.stdin may be another program's output through a pipe
				// (an interactive problem's solution and interactor), which
				// would otherwise block for good on a reader that is gone,
				// and its run with it.
				_, _ = io.Copy(io.Discard, r.stdin)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		res.stdoutBytes = copyLimited(sp.stdoutR, r.stdout, r.lim.Output, func() { kill(KillOutput) })
		if r.stdoutEnd != nil {
			r.stdoutEnd()
		}
	}()
	go func() {
		defer wg.Done()
		var kept strings.Builder
		w := &cappedWriter{b: &kept, n: r.stderrCap}
		limit := int64(maxToolStderr)
		if r.boundStderr {
			limit = r.lim.Output
		}
		copyLimited(sp.stderrR, w, limit, func() { kill(KillOutput) })
		res.stderr, res.stderrTruncated = []byte(kept.String()), w.truncated
	}()
}

// startWatch runs the watchdog (watch) over the tree of pid until stop is
// called; stop waits for it and records what it saw in res.
func (sb *Sandbox) startWatch(ctx context.Context, pid int, base time.Duration, lim Limits, kill func(KillReason), res *spawnRes) (stop func()) {
	done := make(chan struct{})
	watchdogDone := make(chan struct{})
	go func() {
		defer close(watchdogDone)
		w := sb.watch(ctx, pid, base, lim, done, kill)
		res.polledCPU, res.polledRSS, res.polls, res.runnablePolls = w.cpu, w.rss, w.polls, w.runnable
	}()
	return func() {
		close(done)
		<-watchdogDone
	}
}

// awaitStreams waits (wait) for the readers of a run's pipes, which end at
// EOF once every process of the run is dead; after 2 s it closes the
// pipes (nil ones skipped) so that they end, and waits again.
func awaitStreams(wait func(), pipes ...*os.File) {
	ioDone := make(chan struct{})
	go func() { wait(); close(ioDone) }()
	select {
	case <-ioDone:
	case <-time.After(2 * time.Second):
		for _, f := range pipes {
			if f != nil {
				f.Close()
			}
		}
		<-ioDone
	}
}

// fromReport fills res from the supervisor's report on its program.
func (res *spawnRes) fromReport(rep report) {
	res.cpu, res.maxRSS, res.execErr, res.exitNS = rep.cpu, rep.maxRSS, rep.execErr, rep.exitNS
	if rep.status.Signaled() {
		res.signal, res.exitCode = rep.status.Signal(), -1
	} else {
		res.exitCode = rep.status.ExitStatus()
	}
}

// killedUnreported fills res for a run the sandbox killed before its
// supervisor reported: the usage is the larger of what the watchdog and
// the killer saw last.
func (res *spawnRes) killedUnreported(lastCPU time.Duration, lastRSS int64) {
	res.cpu, res.maxRSS = max(res.polledCPU, lastCPU), max(res.polledRSS, lastRSS)
	res.exitCode, res.signal = -1, syscall.SIGKILL
}

// killRecord is what both ways of stopping a run (killer, heldKiller) keep:
// the first reason it was killed for, and the tree's usage just before.
type killRecord struct {
	recMu   sync.Mutex
	why     KillReason
	lastCPU time.Duration
	lastRSS int64
}

func (k *killRecord) reason() KillReason {
	k.recMu.Lock()
	defer k.recMu.Unlock()
	return k.why
}

// record records why, and the usage, unless the run was killed already; it
// reports whether this kill is the first.
func (k *killRecord) record(why KillReason, usage func() (time.Duration, int64)) bool {
	k.recMu.Lock()
	defer k.recMu.Unlock()
	if k.why != KillNone {
		return false
	}
	k.why = why
	k.lastCPU, k.lastRSS = usage()
	return true
}

// escalate runs first after 500ms and last after 2s unless ended is closed
// first (the run ended); nil steps are skipped.
func escalate(ended <-chan struct{}, first, last func()) {
	for _, step := range []struct {
		after time.Duration
		do    func()
	}{{500 * time.Millisecond, first}, {1500 * time.Millisecond, last}} {
		select {
		case <-ended:
			return
		case <-time.After(step.after):
			if step.do != nil {
				step.do()
			}
		}
	}
}

// killer stops a run at a limit (or on cancellation) without leaving orphans:
// it asks the supervisor (SIGTERM) to kill everything else, report and exit,
// so that bwrap reaps it; SIGKILLs follow if that does not happen promptly.
// Killing the outer bwrap first would orphan the sandbox's pid 1, which the
// host's init may never reap.
type killer struct {
	killRecord
	sandboxed bool
	outer     *os.Process
	exited    chan struct{} // closed when the outer process has been waited for

	mu      sync.Mutex
	inner   int  // host pid of the supervisor in the sandbox, once bwrap says
	innerFD int  // a pidfd of inner (0: none): signals never reach a reused pid
	pending bool // a kill arrived before inner was known
}

func (k *killer) kill(why KillReason) {
	if !k.record(why, func() (time.Duration, int64) { return treeUsage(k.outer.Pid) }) {
		return
	}
	k.mu.Lock()
	inner := k.inner
	if k.sandboxed && inner == 0 {
		k.pending = true
	}
	k.mu.Unlock()
	switch {
	case !k.sandboxed:
		_ = k.outer.Signal(syscall.SIGTERM)
		go escalate(k.exited, func() { _ = syscall.Kill(-k.outer.Pid, syscall.SIGKILL) }, nil)
	case inner != 0:
		k.signalInner(syscall.SIGTERM)
		go escalate(k.exited, func() { k.signalInner(syscall.SIGKILL) }, func() { _ = k.outer.Kill() })
	default:
		// bwrap has not started the supervisor yet: it is told as soon as
		// readStatus learns its pid; the outer bwrap is the last resort.
		go escalate(k.exited, nil, func() { _ = k.outer.Kill() })
	}
}

// signalInner sends sig to the supervisor: through its pidfd when there is
// one (bwrap, not the sandbox, reaps the supervisor, so its pid may be reused
// by the time a delayed SIGKILL goes out), else by pid.
func (k *killer) signalInner(sig syscall.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.innerFD > 0:
		_ = unix.PidfdSendSignal(k.innerFD, sig, nil, 0)
	case k.inner != 0 && k.innerFD == 0:
		_ = syscall.Kill(k.inner, sig)
	}
}

// readStatus learns the supervisor's host pid from bwrap's --json-status-fd
// (and opens a pidfd of it); when bwrap closes it, the supervisor is gone.
func (k *killer) readStatus(r io.Reader) {
	defer func() {
		k.mu.Lock()
		if k.innerFD > 0 {
			_ = unix.Close(k.innerFD)
		}
		k.innerFD = -1 // no more signals
		k.mu.Unlock()
	}()
	dec := json.NewDecoder(r)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			_, _ = io.Copy(io.Discard, r)
			return
		}
		if v, ok := m["child-pid"].(float64); ok {
			fd, err := unix.PidfdOpen(int(v), 0)
			k.mu.Lock()
			k.inner = int(v)
			if err == nil {
				k.innerFD = fd
			}
			pending := k.pending
			k.mu.Unlock()
			if pending {
				k.signalInner(syscall.SIGTERM)
				go escalate(k.exited, func() { k.signalInner(syscall.SIGKILL) }, nil)
			}
		}
	}
}

// watch enforces the CPU, wall and (polled) memory limits until done is closed,
// killing the process tree rooted at pid when a limit is crossed or ctx ends. It
// returns the CPU time (less base, what the tree had used before the run: a
// held sandbox's supervisor counts its earlier runs) and the largest tree RSS
// it observed, and how often it found the tree running or runnable.
//
// CPU time is checked when the program could first have used its whole budget
// (CPU time cannot grow faster than wall time for one thread) and then again
// after the remaining budget, so a busy loop is stopped a few milliseconds after
// its limit while a short run is never polled at all.
func (sb *Sandbox) watch(ctx context.Context, pid int, base time.Duration, l Limits, done <-chan struct{}, kill func(KillReason)) watchStats {
	const rssPeriod = 50 * time.Millisecond
	var st watchStats
	wall := time.NewTimer(l.Wall)
	defer wall.Stop()
	// Every 50 ms for every language: the rlimits bound each process, the
	// poll the whole tree (a program's children together may hold more
	// than the limit, and ru_maxrss only knows the largest of them).
	poll := time.NewTimer(min(l.CPU, rssPeriod))
	defer poll.Stop()
	for {
		select {
		case <-done:
			return st
		case <-ctx.Done():
			kill(KillCancel)
			return st
		case <-wall.C:
			kill(KillWall)
			return st
		case <-poll.C:
			s := sampleTree(pid, true)
			s.cpu = max(s.cpu-base, 0)
			st.cpu, st.rss = s.cpu, max(st.rss, s.rss)
			st.polls++
			if s.running {
				st.runnable++
			}
			if s.cpu >= l.CPU {
				kill(KillCPU)
				return st
			}
			if l.Memory > 0 && s.rss > l.Memory {
				kill(KillMemory)
				return st
			}
			poll.Reset(min(max(l.CPU-s.cpu, 5*time.Millisecond), rssPeriod))
		}
	}
}

// watchStats is what the watchdog saw of a run.
type watchStats struct {
	cpu             time.Duration
	rss             int64
	polls, runnable int
}

// copyLimited copies src to dst (nil = discard) up to limit bytes, calls over
// once when src has more, then drains src so the writer never blocks. A failing
// dst stops the copying, not the draining.
func copyLimited(src io.Reader, dst io.Writer, limit int64, over func()) int64 {
	buf := getBuf()
	defer putBuf(buf)
	var total int64
	overCalled := false
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if total+int64(n) > limit {
				keep := max(limit-total, 0)
				chunk = chunk[:keep]
				if !overCalled {
					overCalled = true
					over()
				}
			}
			if dst != nil && len(chunk) > 0 {
				if _, werr := dst.Write(chunk); werr != nil {
					dst = nil
				}
			}
			total += int64(n)
		}
		if err != nil {
			return total
		}
	}
}

// readCapped reads r to EOF keeping at most max bytes.
func readCapped(r io.Reader, max int) ([]byte, bool) {
	var buf bytes.Buffer
	tmp := make([]byte, 32<<10)
	truncated := false
	for {
		n, err := r.Read(tmp)
		if n > 0 {
			room := max - buf.Len()
			if n > room {
				truncated = true
				n = max0(room)
			}
			buf.Write(tmp[:n])
		}
		if err != nil {
			return buf.Bytes(), truncated
		}
	}
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// signalNames maps the signals a judged program typically dies of to the names
// users know; others fall back to "signal N".
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if s == 0 {
		return ""
	}
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
