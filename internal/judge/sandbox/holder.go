package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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

// Slot is a worker slot: it runs one program at a time. In the sandbox, each slot
// keeps a held sandbox: bwrap sets up the namespaces and the read-only
// system once, and its pid 1 (the supervisor in serve mode, reaper.c)
// forks program after program, each with a fresh /box and an IPC
// namespace of its own; see doc.go, "Held sandboxes".
type Slot struct {
	idx int
	cg  *cgroupSlot // nil without cgroup accounting

	mu         sync.Mutex
	busy       bool
	h          *holder // nil until the first run, after an idle period or a failure
	uid        int     // the held sandbox's host uid (-1: the sandbox's)
	releaseUID func()
	lastUsed   time.Time
	idle       *time.Timer
}

// holder is one held sandbox.
type holder struct {
	cmd    *exec.Cmd
	conn   *net.UnixConn
	pid    int // host pid of the supervisor (pid 1 inside)
	pidfd  int
	exited chan struct{} // bwrap has been waited for

	mu      sync.Mutex // orders what is sent
	running bool       // a run is in progress: a "kill" may be sent
}

// errHolderGone: the held sandbox was gone when a run was sent to it.
var errHolderGone = errors.New("held sandbox gone")

// holderStartTimeout bounds a held sandbox's start-up.
const holderStartTimeout = 10 * time.Second

// holderArgs is the bwrap command line of a held sandbox: the system of
// every sandbox (bwrapPrefix, less --die-with-parent: the sandbox ends
// when its socket does, whatever thread started it), the work directory
// hidden at /.judge/work, mount points for the run's directories, and
// the two capabilities the supervisor needs in its own user namespace
// (mounts; dropping the bounding set of its programs).
func (sb *Sandbox) holderArgs() []string {
	argv := []string{sb.bwrap}
	for _, a := range sb.bwrapPrefix {
		if a != "--die-with-parent" {
			argv = append(argv, a)
		}
	}
	argv = append(argv,
		"--ro-bind", sb.workDir, "/.judge/work",
		"--ro-bind", sb.reaper, reaperPath,
		"--dir", BoxDir, "--dir", ProgDir, "--dir", CheckDir,
		"--symlink", BoxDir, "/tmp",
		"--remount-ro", "/dev",
		"--remount-ro", "/",
		"--chdir", "/",
		"--clearenv", "--setenv", "PATH", PATH,
		"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
		"--json-status-fd", "4",
		"--", reaperPath, "serve", "3")
	return argv
}

// startHolder starts a held sandbox running as uid (-1: the sandbox's).
func (sb *Sandbox) startHolder(uid int) (*holder, error) {
	conn, theirs, err := holderSocket()
	if err != nil {
		return nil, err
	}
	defer theirs.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	argv := sb.holderArgs()
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Env: []string{"PATH=" + PATH}, Dir: "/",
		ExtraFiles: []*os.File{theirs, statusW}}
	sw := &syncWriter{w: &bytes.Buffer{}}
	cmd.Stderr = sw
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	}
	if err := cmd.Start(); err != nil {
		_ = conn.Close()
		statusR.Close()
		statusW.Close()
		return nil, fmt.Errorf("%w: start bwrap: %v", ErrFailed, err)
	}
	statusW.Close()
	h := &holder{cmd: cmd, conn: conn, pidfd: -1, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(h.exited)
	}()
	pidCh := make(chan int, 1)
	go sendChildPid(statusR, pidCh)
	if err := h.awaitReady(pidCh); err != nil {
		h.stop()
		return nil, fmt.Errorf("%w: held sandbox: %v: %s", ErrFailed, err, firstLine(sw.String()))
	}
	return h, nil
}

// holderSocket returns the two ends of a held sandbox's socket: ours, and
// the one its supervisor gets (fd 3), which the caller closes once it is
// handed over.
func holderSocket() (*net.UnixConn, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "holder"), os.NewFile(uintptr(fds[1]), "holder-child")
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, nil, err
	}
	return fc.(*net.UnixConn), theirs, nil
}

// sendChildPid reads bwrap's --json-status-fd and sends the supervisor's
// host pid on pidCh once, or 0 if bwrap ends without saying it; it closes
// status at its end.
func sendChildPid(status *os.File, pidCh chan<- int) {
	defer status.Close()
	dec := json.NewDecoder(status)
	sent := false
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if !sent {
				pidCh <- 0
			}
			_, _ = io.Copy(io.Discard, status)
			return
		}
		if v, ok := m["child-pid"].(float64); ok && !sent {
			pidCh <- int(v)
			sent = true
		}
	}
}

// awaitReady waits for the supervisor's pid (from sendChildPid), opens a
// pidfd of it and waits for its "ready", each within holderStartTimeout.
func (h *holder) awaitReady(pidCh <-chan int) error {
	select {
	case h.pid = <-pidCh:
	case <-time.After(holderStartTimeout):
		return errors.New("bwrap did not start the supervisor")
	}
	if h.pid == 0 {
		<-h.exited
		return errors.New("bwrap failed")
	}
	if fd, err := unix.PidfdOpen(h.pid, 0); err == nil {
		h.pidfd = fd
	}
	_ = h.conn.SetReadDeadline(time.Now().Add(holderStartTimeout))
	buf := make([]byte, 64)
	n, err := h.conn.Read(buf)
	_ = h.conn.SetReadDeadline(time.Time{})
	if err != nil || string(buf[:n]) != "ready\n" {
		return fmt.Errorf("no ready from the supervisor (%q, %v)", buf[:n], err)
	}
	return nil
}

// alive reports whether the held sandbox still runs.
func (h *holder) alive() bool {
	select {
	case <-h.exited:
		return false
	default:
		return true
	}
}

// stop ends the held sandbox: the supervisor reads end of file, kills
// whatever is left and exits (bwrap with it); killed after 2 s.
func (h *holder) stop() {
	_ = h.conn.Close()
	select {
	case <-h.exited:
	case <-time.After(2 * time.Second):
		h.signal(syscall.SIGKILL)
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
	if h.pidfd >= 0 {
		_ = unix.Close(h.pidfd)
		h.pidfd = -1
	}
}

// signal signals the supervisor through its pidfd (bwrap, not the sandbox,
// reaps it: its pid could be reused).
func (h *holder) signal(sig syscall.Signal) {
	if h.pidfd >= 0 {
		_ = unix.PidfdSendSignal(h.pidfd, sig, nil, 0)
	}
}

// syncWriter is a goroutine-safe bounded buffer for bwrap's messages.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.Len() < 4096 {
		s.w.Write(p[:min(len(p), 4096-s.w.Len())])
	}
	return len(p), nil
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// holderRequest encodes r for the supervisor: limits, the scratch size,
// the mounts (relative to the work directory), the working directory, the
// environment and the command, each a NUL-terminated token. ok is false
// when r cannot run in a held sandbox (a writable mount, or one outside
// the work directory: compilers' runs).
func (sb *Sandbox) holderRequest(r *spawnReq) (req []byte, ok bool) {
	var b bytes.Buffer
	tok := func(s string) bool {
		if strings.IndexByte(s, 0) >= 0 {
			return false
		}
		b.WriteString(s)
		b.WriteByte(0)
		return true
	}
	for _, a := range sb.reaperArgs(r.lim) {
		tok(a)
	}
	tok("box=" + strconv.FormatInt(max(r.lim.FileSize, 1<<20), 10))
	for _, m := range r.mounts {
		rel, err := filepath.Rel(sb.workDir, m.Src)
		if err != nil || m.RW || rel == "." || strings.HasPrefix(rel, "..") || strings.Contains(m.Dst, ":") ||
			(m.Dst != ProgDir && m.Dst != CheckDir) {
			return nil, false
		}
		tok("bind=" + m.Dst + ":" + rel)
	}
	tok("cwd=" + r.dir)
	for _, kv := range append(fixedEnv(BoxDir, r.env), "PWD="+r.dir) {
		if !tok("env=" + kv) {
			return nil, false
		}
	}
	for _, a := range r.argv {
		if !tok("arg=" + a) {
			return nil, false
		}
	}
	if b.Len() > 60<<10 {
		return nil, false
	}
	return b.Bytes(), true
}

// holderFor returns the slot's held sandbox, starting one if needed. The
// slot is the caller's, and s.mu is held.
func (sb *Sandbox) holderFor(s *Slot) (*holder, error) {
	if s.h != nil && s.h.alive() {
		return s.h, nil
	}
	sb.dropHolder(s)
	uid, releaseUID, err := sb.acquireRunUID()
	if err != nil {
		return nil, err
	}
	h, err := sb.startHolder(uid)
	if err != nil {
		releaseUID()
		return nil, err
	}
	if s.cg != nil {
		if err := s.cg.join(h.pid); err != nil {
			h.stop()
			releaseUID()
			return nil, fmt.Errorf("%w: cgroup: %v", ErrFailed, err)
		}
	}
	s.h, s.uid, s.releaseUID = h, uid, releaseUID
	return h, nil
}

// dropHolder stops the slot's held sandbox (if any) and frees its uid;
// s.mu is held.
func (sb *Sandbox) dropHolder(s *Slot) {
	if s.h == nil {
		return
	}
	s.h.stop()
	if s.uid >= 0 {
		killUID(s.uid) // nothing may outlive it
	}
	s.releaseUID()
	s.h, s.uid, s.releaseUID = nil, -1, nil
}

// runHeld runs r in the slot's held sandbox. handled is false when r
// cannot run there (see holderRequest) or no held sandbox can be started:
// the caller then starts a sandbox for the run.
func (sb *Sandbox) runHeld(ctx context.Context, s *Slot, r spawnReq) (res spawnRes, handled bool, err error) {
	if !sb.holders {
		return res, false, nil
	}
	req, ok := sb.holderRequest(&r)
	if !ok {
		return res, false, nil
	}
	var h *holder
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		h, err = sb.holderFor(s)
		s.mu.Unlock()
		if err != nil {
			sb.heldErr.Store(err.Error())
			return res, false, nil // this run starts a sandbox of its own
		}
		// The group's limit may not go below what it holds: the last run's
		// scratch space is freed by its supervisor just after its report, so
		// a lower limit right after may be refused for a moment. A run whose
		// group cannot be prepared is accounted by polling alone.
		accounted := false
		if s.cg != nil {
			for try := 0; try < 20 && !accounted; try++ {
				if try > 0 {
					time.Sleep(5 * time.Millisecond)
				}
				accounted = s.cg.prepare(r.lim) == nil
			}
		}
		res, err = sb.runIn(ctx, h, r, req)
		if errors.Is(err, errHolderGone) {
			// It ended between two runs (its end not yet seen): another
			// one takes the run, once.
			s.mu.Lock()
			sb.dropHolder(s)
			s.mu.Unlock()
			if attempt == 0 {
				continue
			}
			return res, false, nil
		}
		if accounted && !res.setupFailed {
			if peak, cerr := s.cg.result(); cerr == nil {
				res.cgroupPeak = peak
				res.maxRSS = max(res.maxRSS, peak)
			}
		}
		break
	}
	if !h.alive() || res.setupFailed {
		s.mu.Lock()
		sb.dropHolder(s)
		s.mu.Unlock()
	}
	return res, true, err
}

// runIn is spawn for a held sandbox: the program's standard streams go
// with the request, the watchdog watches the supervisor's tree (less what
// it had used before), a kill is a message, and the report is the answer.
func (sb *Sandbox) runIn(ctx context.Context, h *holder, r spawnReq, req []byte) (spawnRes, error) {
	var res spawnRes
	var sp streamPipes
	if err := sp.open(r.stdin != nil); err != nil {
		return res, err
	}
	defer sp.close()
	k, start, err := h.send(req, &sp)
	if err != nil {
		return res, err
	}
	var wg sync.WaitGroup
	pumpStreams(&r, &res, &sp, k.kill, &wg)
	stopWatch := sb.startWatch(ctx, h.pid, k.base, r.lim, k.kill, &res)

	buf := make([]byte, 512)
	n, readErr := h.conn.Read(buf)
	res.wall = time.Since(start)
	h.mu.Lock()
	h.running = false
	h.mu.Unlock()
	close(k.done)
	stopWatch()
	if sp.stdinW != nil {
		sp.stdinW.Close()
	}
	if readErr != nil {
		// The supervisor died (or was killed): its pid namespace, and every
		// process of the run, went with it.
		h.signal(syscall.SIGKILL)
		<-h.exited
	}
	awaitStreams(wg.Wait, sp.stdoutR, sp.stderrR)
	res.killed = k.reason()
	res.fromAnswer(buf[:max(n, 0)], readErr, k)
	if res.killed == KillCancel {
		return res, ctx.Err()
	}
	return res, nil
}

// send hands a run to the held sandbox: the request, with the child's ends
// of the standard streams. It returns the run's killer and the time it
// started, or errHolderGone when the supervisor could not be written to
// (it is then killed).
func (h *holder) send(req []byte, sp *streamPipes) (*heldKiller, time.Time, error) {
	base := time.Duration(0)
	if p, ok := readProcStat(h.pid); ok {
		base = time.Duration(p.ticks) * (time.Second / clockTicks)
	}
	k := &heldKiller{h: h, base: base, done: make(chan struct{})}
	h.mu.Lock()
	h.running = true
	start := time.Now()
	_, _, err := h.conn.WriteMsgUnix(req, syscall.UnixRights(int(sp.stdinR.Fd()), int(sp.stdoutW.Fd()), int(sp.stderrW.Fd())), nil)
	h.mu.Unlock()
	// The supervisor has its copies; drop ours so EOF arrives when the run ends.
	sp.closeChildEnds()
	if err != nil {
		h.signal(syscall.SIGKILL)
		return nil, start, errHolderGone
	}
	return k, start, nil
}

// fromAnswer fills res (res.killed set) from the supervisor's answer to a
// run, or from readErr when it died before answering.
func (res *spawnRes) fromAnswer(answer []byte, readErr error, k *heldKiller) {
	rep, ok := parseReport(answer)
	switch {
	case readErr == nil && ok && rep.setupErr != 0:
		res.setupFailed, res.exitCode = true, -1
		res.stderr = []byte(fmt.Sprintf("held sandbox: run set-up step %d: %v", rep.setupStep, rep.setupErr))
	case readErr == nil && ok:
		res.fromReport(rep)
	case res.killed != KillNone:
		res.killedUnreported(k.lastCPU, k.lastRSS)
	default:
		// The supervisor died without a kill of ours: its program was
		// killed with it (by the kernel at the group's memory limit, say).
		res.cpu, res.maxRSS = res.polledCPU, res.polledRSS
		res.exitCode, res.signal = -1, syscall.SIGKILL
		if readErr == nil {
			res.setupFailed = true
			res.stderr = []byte(fmt.Sprintf("held sandbox: bad report %q", answer))
		}
	}
}

// heldKiller stops a run in a held sandbox: a "kill" message makes the
// supervisor kill every other process of its namespace and report; if
// that does not happen within 2 s, the supervisor itself is killed, which
// ends its namespace and everything in it.
type heldKiller struct {
	killRecord
	h    *holder
	base time.Duration
	done chan struct{} // the report came (or the supervisor is gone)
}

func (k *heldKiller) kill(why KillReason) {
	first := k.record(why, func() (time.Duration, int64) {
		cpu, rss := treeUsage(k.h.pid)
		return max(cpu-k.base, 0), rss
	})
	if !first {
		return
	}
	k.h.mu.Lock()
	if k.h.running {
		_, _ = k.h.conn.Write([]byte("kill"))
	}
	k.h.mu.Unlock()
	go escalate(k.done, nil, func() { k.h.signal(syscall.SIGKILL) })
}
