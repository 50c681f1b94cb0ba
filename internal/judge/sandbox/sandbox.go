package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Errors of the sandbox. The judge maps them to its own (judge's
// ErrSandboxUnavailable and ErrSandboxFailed are these).
var (
	// ErrUnavailable: bubblewrap is missing or does not work on this
	// machine, or running unsandboxed was asked for without
	// Config.AllowUnsandboxed. Nothing runs.
	ErrUnavailable = errors.New("judge: sandbox unavailable")
	// ErrFailed: a sandbox could not be set up for one run (bwrap failed
	// before the program started). The machine's fault, not the program's.
	ErrFailed = errors.New("judge: sandbox failed")
	// ErrInvalidConfig: an unusable configuration (an unknown mode, a
	// relative path, a directory the sandbox uids cannot reach).
	ErrInvalidConfig = errors.New("judge: invalid sandbox configuration")
)

// Mode selects how programs are isolated.
type Mode string

const (
	// Bwrap runs every program inside bubblewrap. The default.
	Bwrap Mode = "bwrap"
	// None runs programs as plain processes with rlimits only: for local
	// development on machines without bubblewrap. It needs AllowUnsandboxed.
	None Mode = "none"
)

// Runner is what the judge asks of a sandbox: run one program under limits
// and report what it used. *Sandbox is the one implementation; the rest of
// its methods (slots, directories, tools) serve the judge's set-up.
type Runner interface {
	Run(ctx context.Context, r Request) (Usage, error)
}

var _ Runner = (*Sandbox)(nil)

// Limits are the limits one run is held to, as enforced (the judge adds a
// language's allowances before): the supervisor's rlimits, the watchdog's
// CPU, wall and resident-memory limits, the output bounds.
type Limits struct {
	// CPU is the CPU time of the whole tree (the watchdog stops it a few
	// milliseconds past it; RLIMIT_CPU is a backstop); Wall the real time.
	CPU, Wall time.Duration
	// Memory is the resident set the watchdog (and a slot's control group)
	// allows the tree: it is killed above it.
	Memory int64
	// AddressSpace, Data and Stack are RLIMIT_AS, RLIMIT_DATA and
	// RLIMIT_STACK; 0: not set.
	AddressSpace, Data, Stack int64
	// Output bounds standard output (and a program's standard error);
	// FileSize is RLIMIT_FSIZE and the size of /box.
	Output, FileSize int64
	// Processes is RLIMIT_NPROC: processes and threads; NoFork refuses
	// every new process, threads alone allowed (see reaper.c).
	Processes int
	NoFork    bool
}

// Request is one run of a program.
type Request struct {
	// Argv is the command, Env extra KEY=VALUE pairs on top of the fixed
	// environment (PATH, HOME, TMPDIR, LANG, LC_ALL).
	Argv, Env []string
	// Dir is the working directory inside the sandbox; HostDir the one on
	// the host when unsandboxed ("": the run's own scratch directory).
	Dir, HostDir string
	// Mounts are the host directories bound into the sandbox.
	Mounts []Mount
	Limits Limits
	// Stdin is fed to the program (nil: empty); Stdout receives its
	// standard output (nil: discarded).
	Stdin  io.Reader
	Stdout io.Writer
	// StdoutEnd, if set, is called when the program's standard output
	// ends — it closed it, or every process of the run is gone — which may
	// be before the program exits: an interactive problem's interactor
	// reads the end of the solution's output then, as with a plain pipe.
	StdoutEnd func()
	// StderrCap is how much of standard error is kept; BoundStderr stops
	// the run (KillOutput) when standard error exceeds Limits.Output, as
	// for standard output (programs; compilers and checkers only past 64
	// MB).
	StderrCap   int
	BoundStderr bool
	// Slot, when set, is a slot the caller holds (Acquire): its held
	// sandbox runs the request when it can (no writable mount).
	Slot *Slot
	// AsCompiler runs the request as the compile uid (Config.UIDBase), as
	// compilers and toolchain checks run; writable mounts are allowed.
	AsCompiler bool
}

// Usage is what one run did, as the sandbox observed it.
type Usage struct {
	// CPU and Wall are the tree's CPU time and the run's real time.
	CPU, Wall time.Duration
	// MaxRSS is the peak resident set of its largest process (or of the
	// whole tree, as a slot's control group counted it); PolledRSS the
	// largest the watchdog saw of the whole tree.
	MaxRSS, PolledRSS int64
	// ExecErr is the errno of a program that could not be executed.
	ExecErr syscall.Errno
	// ExitCode is the exit status (-1 when killed by a signal: Signal).
	ExitCode int
	Signal   syscall.Signal
	// Killed is why the sandbox stopped the run (KillNone: it ended).
	Killed KillReason
	// Stderr is the start of standard error (StderrCap bytes), whether it
	// was cut (StderrTruncated); StdoutBytes how much it wrote to
	// standard output.
	Stderr          []byte
	StderrTruncated bool
	StdoutBytes     int64
	// SetupFailed: the sandbox could not be set up; Stderr says why.
	SetupFailed bool
	// Polls is how often the watchdog looked at the tree, RunnablePolls
	// how often a thread of it was running or waiting for a CPU.
	Polls, RunnablePolls int
	// ExitedAt is when the supervisor reaped the program, on the
	// machine's monotonic clock (CLOCK_MONOTONIC, ns): comparable between
	// the runs of one machine, to tell which of two programs ended first.
	// 0 when unknown (the supervisor did not report).
	ExitedAt int64
}

// Running reports whether a run was computing rather than sleeping or
// blocked, by the watchdog's looks at it: running or ready to run in at
// least half of them (and it looked a few times).
func (u Usage) Running() bool { return u.Polls >= 3 && 2*u.RunnablePolls >= u.Polls }

// usage exports what spawn observed.
func (res spawnRes) usage() Usage {
	return Usage{CPU: res.cpu, Wall: res.wall, MaxRSS: res.maxRSS, PolledRSS: res.polledRSS, ExecErr: res.execErr,
		ExitCode: res.exitCode, Signal: res.signal, Killed: res.killed, Stderr: res.stderr, StderrTruncated: res.stderrTruncated,
		StdoutBytes: res.stdoutBytes, SetupFailed: res.setupFailed, Polls: res.polls, RunnablePolls: res.runnablePolls,
		ExitedAt: res.exitNS}
}

// Config configures a Sandbox. The judge fills it (judge.Config has the
// defaults and the meaning of each setting).
type Config struct {
	Mode             Mode
	AllowUnsandboxed bool
	BwrapPath        string
	// Slots is how many programs run at once; with fewer than two, one
	// more slot is kept for the partner of a pair (AcquirePair).
	Slots int
	// WorkDir holds the runs' directories (default: a fresh directory of
	// its own, removed by Close); CacheDir the persistent caches (the
	// supervisor's build, language caches).
	WorkDir, CacheDir string
	// UIDBase is the compile uid when running as root; runs use the uids
	// above it, one each.
	UIDBase int
	// ReadOnlyPaths are host directories bound read-only into every
	// sandbox besides /usr; EtcPatterns /etc entries mirrored into it
	// besides the allowlist.
	ReadOnlyPaths, EtcPatterns []string
	// WarmIdle is how long a slot's held sandbox waits for its next run
	// (negative: none held).
	WarmIdle time.Duration
	Cgroups  CgroupMode
	// ToolLimits bound RunTool (the judge's compile limits); ProbeLimits
	// the held sandbox's first run and a control group's first
	// preparation (the judge's checker limits).
	ToolLimits, ProbeLimits Limits
}

// Sandbox runs programs in bubblewrap (or, for local development, as plain
// processes): the work directories, the supervisor, the slots and their
// held sandboxes and control groups, the uids. It is safe for concurrent
// use.
type Sandbox struct {
	cfg         Config
	sandboxed   bool
	switchUID   bool
	bwrap       string
	bwrapPrefix []string
	reaper      string
	workDir     string
	ownWorkDir  bool
	workLock    *os.File // held while the sandbox lives (sweepWorkDirs)
	sysDir      string   // the mirror of the /etc allowlist
	cacheDir    string
	compileUID  int
	slots       chan *Slot    // the worker slots
	partner     chan *Slot    // a one-slot sandbox's partner slot, only for pairs; nil with more
	allSlots    []*Slot       // the worker slots, then the partner slot if any
	pairing     chan struct{} // a token held while taking two slots (AcquirePair)
	// holders is set when runs are held in the slots' sandboxes (holder.go);
	// holderReason says why not.
	holders      bool
	holderReason string
	cgroups      *cgroupRoot // nil: polling only
	cgroupReason string
	heldErr      atomic.Value // string: why a held sandbox last failed to start
}

// New checks the sandbox (bubblewrap works, the supervisor is built) and
// prepares the work directories and the held sandboxes. Errors:
// ErrUnavailable, ErrInvalidConfig, or the host's.
func New(cfg Config) (*Sandbox, error) {
	sb := newSandbox(cfg)
	if err := sb.choose(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := sb.prepareHost(); err != nil {
		sb.removeWorkDir()
		return nil, err
	}
	return sb, nil
}

// newSandbox returns a sandbox of cfg and its slots, before anything on
// the host is looked at.
func newSandbox(cfg Config) *Sandbox {
	sb := &Sandbox{
		cfg:        cfg,
		switchUID:  os.Geteuid() == 0,
		compileUID: cfg.UIDBase,
		slots:      make(chan *Slot, max(cfg.Slots, 1)),
		pairing:    make(chan struct{}, 1),
	}
	for i := range max(cfg.Slots, 1) {
		s := &Slot{idx: i, uid: -1}
		sb.allSlots = append(sb.allSlots, s)
		sb.slots <- s
	}
	if cfg.Slots < 2 {
		// A slot like the others (its own index, so its own control group;
		// its own held sandbox and uid), closed with them.
		s := &Slot{idx: max(cfg.Slots, 1), uid: -1}
		sb.allSlots = append(sb.allSlots, s)
		sb.partner = make(chan *Slot, 1)
		sb.partner <- s
	}
	return sb
}

// choose applies the mode: bwrap must be found, and running unsandboxed
// must be allowed. It fails with ErrUnavailable, or ErrInvalidConfig for
// an unknown mode.
func (sb *Sandbox) choose() error {
	switch sb.cfg.Mode {
	case Bwrap, "":
		sb.sandboxed = true
		path := cmp.Or(sb.cfg.BwrapPath, "bwrap")
		var err error
		if sb.bwrap, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("%w: bubblewrap (%s) not found: install it (Debian/Ubuntu: apt-get install -y bubblewrap)",
				ErrUnavailable, path)
		}
	case None:
		if !sb.cfg.AllowUnsandboxed {
			return fmt.Errorf("%w: refusing to run user code without a sandbox: set AllowUnsandboxed for local development",
				ErrUnavailable)
		}
	default:
		return fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalidConfig, sb.cfg.Mode)
	}
	return nil
}

// validate checks the cgroup mode and the read-only paths; it fails with
// ErrInvalidConfig.
func (cfg Config) validate() error {
	switch cfg.Cgroups {
	case "", CgroupAuto, CgroupOff:
	default:
		return fmt.Errorf("%w: unknown cgroup mode %q", ErrInvalidConfig, cfg.Cgroups)
	}
	for _, p := range cfg.ReadOnlyPaths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%w: read-only path %q is not absolute", ErrInvalidConfig, p)
		}
	}
	return nil
}

// prepareHost makes the work directories and the supervisor, and in the
// sandbox checks that bwrap works and sets up the held sandboxes. The
// caller removes the work directory when it fails.
func (sb *Sandbox) prepareHost() error {
	if err := sb.setupDirs(); err != nil {
		return err
	}
	var err error
	if sb.reaper, err = sb.ensureReaper(); err != nil {
		return err
	}
	if sb.sandboxed {
		if err := sb.probeSandbox(); err != nil {
			return err
		}
		sb.setupHolders()
	}
	return nil
}

// Sandboxed reports whether programs run inside bubblewrap. It is false
// only in the explicitly allowed local-development mode.
func (sb *Sandbox) Sandboxed() bool { return sb.sandboxed }

// WorkDir is the directory of the runs' files (programs' build
// directories, checkers' files): reachable by the sandbox uids, removed by
// Close when the sandbox made it.
func (sb *Sandbox) WorkDir() string { return sb.workDir }

// CacheDir is the directory of persistent caches, shared by processes.
func (sb *Sandbox) CacheDir() string { return sb.cacheDir }

// CompileUID is the host uid compilers run as and switched whether runs
// change uid at all (only as root); a build directory is given to it
// before a compile and taken back after.
func (sb *Sandbox) CompileUID() (uid int, switched bool) { return sb.compileUID, sb.switchUID }

// Fingerprint is what a toolchain check in this sandbox depends on: the
// mode, bwrap, uid switching and what is mounted (the judge's toolchain
// cache keys include it).
func (sb *Sandbox) Fingerprint() []any {
	return []any{sb.sandboxed, sb.bwrap, sb.switchUID, sb.cfg.ReadOnlyPaths, sb.etcPatterns()}
}

// etcPatterns are the /etc entries every sandbox sees: the allowlist and
// Config.EtcPatterns.
func (sb *Sandbox) etcPatterns() []string {
	out := slices.Clone(etcAllowlist)
	for _, p := range sb.cfg.EtcPatterns {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Info says how runs are isolated and accounted.
type Info struct {
	// Held is true when runs are held in the worker slots' long-lived
	// sandboxes; HeldReason says why not.
	Held       bool
	HeldReason string
	// HeldError is why a held sandbox last failed to start (that run
	// started a sandbox of its own), if one did.
	HeldError string
	// Cgroup is "v1" or "v2" when held runs are accounted with control
	// groups, "" when the sandbox polls; CgroupReason says why not.
	Cgroup       string
	CgroupReason string
}

// Info reports how runs are isolated and accounted.
func (sb *Sandbox) Info() Info {
	info := Info{Held: sb.holders, HeldReason: sb.holderReason, CgroupReason: sb.cgroupReason}
	info.HeldError, _ = sb.heldErr.Load().(string)
	if sb.cgroups != nil {
		info.Cgroup = sb.cgroups.version()
	}
	if !sb.sandboxed {
		info.HeldReason = "unsandboxed"
	}
	return info
}

// HeldPIDs returns the host pids of the held sandboxes (bwrap and the
// supervisor of each): the processes of the sandbox's uids that live
// between runs, for tests and operators.
func (sb *Sandbox) HeldPIDs() []int {
	var out []int
	for _, s := range sb.allSlots {
		s.mu.Lock()
		if s.h != nil && s.h.alive() {
			out = append(out, s.h.cmd.Process.Pid, s.h.pid)
		}
		s.mu.Unlock()
	}
	return out
}

// Close ends the held sandboxes, removes the control groups and the work
// directory the sandbox made. The caller makes sure nothing runs.
func (sb *Sandbox) Close() {
	for _, s := range sb.allSlots {
		s.mu.Lock()
		if s.idle != nil {
			s.idle.Stop()
		}
		sb.dropHolder(s)
		s.mu.Unlock()
	}
	sb.removeCgroups()
	sb.removeWorkDir()
}

// Run runs one program and reports its usage: in the held sandbox of
// r.Slot when it can, else in a sandbox started for it, with a uid (and,
// unsandboxed, a scratch directory) of its own, or the compile uid for
// r.AsCompiler. Limits crossed and crashes are in the Usage; the error is
// ErrFailed when no sandbox could be set up, another error of the host
// when the run could not be prepared, or ctx's when it ended (the
// processes are killed at once).
func (sb *Sandbox) Run(ctx context.Context, r Request) (Usage, error) {
	req := spawnReq{
		argv: r.Argv, env: r.Env, dir: r.Dir, hostDir: r.HostDir, mounts: r.Mounts, lim: r.Limits,
		stdin: r.Stdin, stdout: r.Stdout, stdoutEnd: r.StdoutEnd, stderrCap: r.StderrCap, boundStderr: r.BoundStderr,
	}
	if r.AsCompiler {
		res, err := sb.runAs(ctx, req, sb.compileUID, false)
		return res.usage(), err
	}
	if r.Slot != nil {
		if res, handled, err := sb.runHeld(ctx, r.Slot, req); handled {
			return res.usage(), err
		}
	}
	uid, releaseUID, err := sb.acquireRunUID()
	if err != nil {
		return Usage{}, err
	}
	defer releaseUID()
	res, err := sb.runAs(ctx, req, uid, uid >= 0)
	return res.usage(), err
}

// runAs spawns req as uid (when switching uids) with a scratch directory
// of its own when unsandboxed; sweep: uid is the run's alone.
func (sb *Sandbox) runAs(ctx context.Context, req spawnReq, uid int, sweep bool) (spawnRes, error) {
	scratch, err := sb.newScratch(uid)
	if err != nil {
		return spawnRes{}, err
	}
	defer removeScratch(scratch)
	req.uid, req.sweepUID, req.scratch = sb.uidOr(uid), sweep, scratch
	if req.hostDir == "" {
		req.hostDir = scratch
	}
	return sb.spawn(ctx, req)
}

// RunTool runs a trusted command (a toolchain's version check) in the
// sandbox as the compiler does, with Config.ToolLimits and wall as its
// wall time; its standard output comes first in Usage.Stderr (4 KiB of
// each kept).
func (sb *Sandbox) RunTool(ctx context.Context, argv, env []string, wall time.Duration) (Usage, error) {
	res, err := sb.runTool(ctx, argv, env, wall)
	return res.usage(), err
}

func (sb *Sandbox) runTool(ctx context.Context, argv, env []string, wall time.Duration) (spawnRes, error) {
	lim := sb.cfg.ToolLimits
	lim.Wall = wall
	var out strings.Builder
	res, err := sb.runAs(ctx, spawnReq{
		argv: argv, env: env, dir: BoxDir, lim: lim,
		stdout: &cappedWriter{b: &out, n: 4096}, stderrCap: 4096,
	}, sb.compileUID, false)
	res.stderr = append([]byte(out.String()), res.stderr...)
	return res, err
}

// Acquire waits for one of the worker slots; release gives it back.
func (sb *Sandbox) Acquire(ctx context.Context) (*Slot, func(), error) {
	return sb.acquireFrom(ctx, sb.slots)
}

// acquireFrom waits for a slot of pool (the worker slots, or the partner
// slot) and returns it with its release, which puts it back in pool.
func (sb *Sandbox) acquireFrom(ctx context.Context, pool chan *Slot) (*Slot, func(), error) {
	select {
	case s := <-pool:
		s.mu.Lock()
		s.busy = true
		s.mu.Unlock()
		return s, func() { sb.markUsed(s); pool <- s }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// AcquirePair takes two slots for two programs that run at once and talk
// to each other (an interactive test's solution and interactor): a worker
// slot, and another worker slot or, with one worker slot, the partner
// slot. So any sandbox runs pairs, and one of several slots runs as many
// pairs at once as its slots allow.
//
// It cannot deadlock. Only the caller holding the pairing token waits
// while holding a slot, so two pairs can never each hold one and wait for
// the other's; every other holder of a worker slot releases it without
// waiting for another. The partner slot is only ever taken here, by the
// token's holder and after its worker slot, and its holder has its whole
// pair: it waits for nothing before releasing it.
func (sb *Sandbox) AcquirePair(ctx context.Context) (first, second *Slot, release func(), err error) {
	select { // the turn to wait holding a slot; given up on cancellation
	case sb.pairing <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, ctx.Err()
	}
	defer func() { <-sb.pairing }()
	first, releaseFirst, err := sb.Acquire(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	pool := sb.slots
	if sb.partner != nil {
		pool = sb.partner
	}
	second, releaseSecond, err := sb.acquireFrom(ctx, pool)
	if err != nil {
		releaseFirst()
		return nil, nil, nil, err
	}
	return first, second, func() { releaseSecond(); releaseFirst() }, nil
}

// markUsed frees the slot and ends its held sandbox if no run comes
// within WarmIdle.
func (sb *Sandbox) markUsed(s *Slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	s.lastUsed = time.Now()
	if s.h == nil {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(sb.cfg.WarmIdle, func() { sb.idleCheck(s) })
	} else {
		s.idle.Reset(sb.cfg.WarmIdle)
	}
}

func (sb *Sandbox) idleCheck(s *Slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || s.h == nil {
		return
	}
	if wait := sb.cfg.WarmIdle - time.Since(s.lastUsed); wait > 0 {
		s.idle.Reset(wait)
		return
	}
	sb.dropHolder(s)
}

// uidOr returns uid when the sandbox switches uids, -1 otherwise.
func (sb *Sandbox) uidOr(uid int) int {
	if sb.switchUID {
		return uid
	}
	return -1
}

// LookPath finds a tool in the fixed sandbox PATH.
func LookPath(tool string) (string, error) {
	if filepath.IsAbs(tool) {
		return exec.LookPath(tool)
	}
	for _, dir := range filepath.SplitList(PATH) {
		p := filepath.Join(dir, tool)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found", tool)
}

// SignalName is the name users know of a signal a program dies of
// ("SIGSEGV"); "" for none.
func SignalName(s syscall.Signal) string { return signalName(s) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// cappedWriter keeps the first n bytes written to it and discards the rest.
type cappedWriter struct {
	b         *strings.Builder
	n         int
	truncated bool
}

// Write keeps what fits and reports everything as written.
func (w *cappedWriter) Write(p []byte) (int, error) {
	room := w.n - w.b.Len()
	if len(p) > room {
		w.truncated = true
		w.b.Write(p[:max0(room)])
	} else {
		w.b.Write(p)
	}
	return len(p), nil
}

// WriteNew creates path (which must not exist, and is never followed if
// it is a symlink) and copies r into it: how files are written where a
// sandboxed program could have written before.
func WriteNew(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runPool keeps the copy buffers of the runs' streams (64 KiB each):
// pooled, not garbage.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func getBuf() []byte { return *bufPool.Get().(*[]byte) }

func putBuf(b []byte) {
	if cap(b) == 64<<10 {
		b = b[:cap(b)]
		bufPool.Put(&b)
	}
}
