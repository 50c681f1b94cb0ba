package judge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// SandboxMode selects how user code is isolated.
type SandboxMode string

const (
	// SandboxBwrap runs every compile and run inside bubblewrap. The default.
	SandboxBwrap SandboxMode = "bwrap"
	// SandboxNone runs user code as a plain process with rlimits only: for local
	// development on machines without bubblewrap. It needs AllowUnsandboxed.
	SandboxNone SandboxMode = "none"
)

// Config configures an Engine. Every field has a working default.
type Config struct {
	// Sandbox is SandboxBwrap (default) or SandboxNone.
	Sandbox SandboxMode
	// AllowUnsandboxed must be true for SandboxNone; without it New refuses,
	// because unsandboxed user code can read the server's files and network.
	AllowUnsandboxed bool
	// BwrapPath is the bubblewrap binary; default "bwrap" from PATH.
	BwrapPath string
	// Workers is how many sandboxed processes (compiles, runs, checkers) the
	// engine runs at once, across all submissions. Default runtime.NumCPU(): more
	// would not distort CPU-time verdicts but would inflate wall times. An
	// interactive test runs its solution and its interactor at once, on two
	// slots; an engine of one worker keeps one more slot, its partner slot,
	// for the interactor alone, so that a small machine judges interactive
	// problems too (the two programs mostly take turns, each waiting for
	// the other's answer).
	Workers int
	// WorkDir holds per-submission build directories and per-run scratch
	// directories. Default: a fresh directory under os.TempDir(), removed by
	// Close. When running as root it must be reachable by other uids (the engine
	// sets its mode to 0711).
	WorkDir string
	// CacheDir holds persistent language caches (Go's build cache), shared by
	// engines and processes. Default: os.TempDir()/algoitny-judge-cache-<uid>.
	CacheDir string
	// UIDBase is the first of the host uids used for user code when the engine
	// runs as root: UIDBase compiles, UIDBase+1... run, one uid per concurrent
	// run, so RLIMIT_NPROC and leftover-process sweeps are per run. Default
	// 1500000. Processes sharing a range (several judges on one host, tests)
	// coordinate through lock files in os.TempDir()/algoitny-judge-uids.
	UIDBase int
	// Languages replaces DefaultLanguages.
	Languages []Language
	// ReadOnlyPaths are extra host directories made visible (read-only) inside
	// the sandbox, e.g. a toolchain installed under /opt.
	ReadOnlyPaths []string
	// CompileLimits bound compilers. Default: 60s CPU, 120s wall, 2 GiB data,
	// 256 processes/threads.
	CompileLimits Limits
	// CheckerLimits bound custom checkers and interactors, per test. Their
	// CPU time is the test's own limit (at least one second), at most
	// CheckerLimits.CPUTime; their wall time follows from it (2×CPU + 1 s),
	// at most CheckerLimits.WallTime when set; memory, output, files and
	// processes are CheckerLimits'. Default: at most 10 s of CPU time, 512
	// MiB, one process.
	CheckerLimits Limits
	// WarmIdle is how long a worker slot's held sandbox (holder.go: set up
	// once, running program after program) waits for the next run before
	// it ends; the next run starts it again. Default 10s. Negative holds
	// none: every run starts a sandbox of its own (bwrap per run, ~10 ms
	// more per run).
	WarmIdle time.Duration
	// Cgroups is CgroupAuto (default: account each held run's memory and
	// processes with a control group where the host offers one) or
	// CgroupOff (poll, as without cgroups).
	Cgroups CgroupMode
}

// Engine compiles and runs untrusted programs in a sandbox and judges them. It
// exists so that the API server, the job workers and the CLI share one
// implementation of limits, verdicts and checkers. An Engine is safe for
// concurrent use; Close it to remove its work directory.
type Engine struct {
	cfg         Config
	sandboxed   bool
	switchUID   bool
	bwrap       string
	bwrapPrefix []string
	reaper      string
	workDir     string
	ownWorkDir  bool
	workLock    *os.File // held while the engine lives (sweepWorkDirs)
	sysDir      string   // the engine's mirror of the /etc allowlist
	cacheDir    string
	compileUID  int
	slots       chan *slot    // the worker slots
	partner     chan *slot    // an engine of one worker's partner slot, only for interactors (acquirePair); nil with more
	allSlots    []*slot       // the worker slots, then the partner slot if any
	pairing     chan struct{} // a token held while taking two slots (acquirePair)
	langs       []Language
	// holders is set when runs are held in the slots' sandboxes (holder.go);
	// holderReason says why not.
	holders      bool
	holderReason string
	cgroups      *cgroupRoot // nil: polling only
	cgroupReason string
	heldErr      atomic.Value // string: why a held sandbox last failed to start

	mu     sync.Mutex
	cond   *sync.Cond
	active int
	closed bool
}

// DefaultCompileLimits are the limits compilers run under unless
// Config.CompileLimits says otherwise.
func DefaultCompileLimits() Limits {
	return Limits{
		CPUTime:       60 * time.Second,
		WallTime:      120 * time.Second,
		MemoryBytes:   2 << 30,
		OutputBytes:   1 << 20,
		FileSizeBytes: 256 << 20,
		MaxProcesses:  256,
	}
}

// DefaultCheckerLimits are the bounds of a custom checker's or an
// interactor's limits for each test (Config.CheckerLimits) unless the
// configuration says otherwise: CPUTime is a ceiling (the test's own limit
// is used below it), WallTime zero (derived from the CPU time).
func DefaultCheckerLimits() Limits {
	return Limits{
		CPUTime:       10 * time.Second,
		MemoryBytes:   512 << 20,
		OutputBytes:   1 << 20,
		FileSizeBytes: 16 << 20,
		MaxProcesses:  1,
	}
}

// New checks the sandbox and the toolchains and returns a ready Engine.
//
// It returns ErrSandboxUnavailable when bubblewrap is missing or broken (with
// the command to install it), or when SandboxNone is asked for without
// AllowUnsandboxed; ErrInvalidInput for an unusable configuration. Detecting the
// languages runs each toolchain's version command once (about a second).
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := newEngine(cfg)
	if err := e.chooseSandbox(); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := e.prepareHost(); err != nil {
		e.removeWorkDir()
		return nil, err
	}
	e.langs = e.detectLanguages()
	return e, nil
}

// withDefaults returns cfg with its zero fields set to their defaults; it
// fails when the compiler or checker limits are invalid.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Sandbox == "" {
		cfg.Sandbox = SandboxBwrap
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.UIDBase <= 0 {
		cfg.UIDBase = 1_500_000
	}
	if cfg.WarmIdle == 0 {
		cfg.WarmIdle = 10 * time.Second
	}
	if cfg.Languages == nil {
		cfg.Languages = DefaultLanguages()
	}
	var err error
	if cfg.CompileLimits, err = cfg.CompileLimits.withDefaults(DefaultCompileLimits()); err != nil {
		return cfg, err
	}
	if cfg.CheckerLimits, err = cfg.CheckerLimits.withDefaults(DefaultCheckerLimits()); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// newEngine returns an engine of cfg (with its defaults) and its worker
// slots, before anything on the host is looked at.
func newEngine(cfg Config) *Engine {
	e := &Engine{
		cfg:        cfg,
		switchUID:  os.Geteuid() == 0,
		compileUID: cfg.UIDBase,
		slots:      make(chan *slot, cfg.Workers),
		pairing:    make(chan struct{}, 1),
	}
	for i := range cfg.Workers {
		s := &slot{idx: i, uid: -1}
		e.allSlots = append(e.allSlots, s)
		e.slots <- s
	}
	if cfg.Workers < 2 {
		// A slot like the others (its own index, so its own control group;
		// its own held sandbox and uid), closed with them.
		s := &slot{idx: cfg.Workers, uid: -1}
		e.allSlots = append(e.allSlots, s)
		e.partner = make(chan *slot, 1)
		e.partner <- s
	}
	e.cond = sync.NewCond(&e.mu)
	return e
}

// chooseSandbox applies the sandbox mode: bwrap must be found, and running
// unsandboxed must be allowed. It fails with ErrSandboxUnavailable, or
// ErrInvalidInput for an unknown mode.
func (e *Engine) chooseSandbox() error {
	switch e.cfg.Sandbox {
	case SandboxBwrap:
		e.sandboxed = true
		path := cmp.Or(e.cfg.BwrapPath, "bwrap")
		var err error
		if e.bwrap, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("%w: bubblewrap (%s) not found: install it (Debian/Ubuntu: apt-get install -y bubblewrap); "+
				"for local development only, Config{Sandbox: \"none\", AllowUnsandboxed: true} runs code without isolation",
				ErrSandboxUnavailable, path)
		}
	case SandboxNone:
		if !e.cfg.AllowUnsandboxed {
			return fmt.Errorf("%w: refusing to run user code without a sandbox: set AllowUnsandboxed for local development",
				ErrSandboxUnavailable)
		}
	default:
		return fmt.Errorf("%w: unknown sandbox mode %q", ErrInvalidInput, e.cfg.Sandbox)
	}
	return nil
}

// validate checks the cgroup mode and the extra read-only paths; it fails
// with ErrInvalidInput.
func (cfg Config) validate() error {
	switch cfg.Cgroups {
	case "", CgroupAuto, CgroupOff:
	default:
		return fmt.Errorf("%w: unknown cgroup mode %q", ErrInvalidInput, cfg.Cgroups)
	}
	for _, p := range cfg.ReadOnlyPaths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%w: read-only path %q is not absolute", ErrInvalidInput, p)
		}
	}
	return nil
}

// prepareHost makes the work directories and the supervisor, and in the
// sandbox checks that bwrap works and sets up the held sandboxes. The
// caller removes the work directory when it fails.
func (e *Engine) prepareHost() error {
	if err := e.setupDirs(); err != nil {
		return err
	}
	var err error
	if e.reaper, err = e.ensureReaper(); err != nil {
		return err
	}
	if e.sandboxed {
		if err := e.probeSandbox(); err != nil {
			return err
		}
		e.setupHolders()
	}
	return nil
}

// setupHolders decides whether runs are held in the slots' sandboxes (and
// accounted with control groups): it starts slot 0's and runs `true` in
// it, so that a host where that does not work is found at start-up and
// every run starts a sandbox of its own instead.
func (e *Engine) setupHolders() {
	if e.cfg.WarmIdle < 0 {
		e.holderReason = "WarmIdle < 0"
		return
	}
	switch {
	case e.cfg.Cgroups == CgroupOff:
		e.cgroupReason = "Config.Cgroups is off"
	case !e.switchUID:
		e.cgroupReason = "not root"
	default:
		cg, err := newCgroupRoot()
		if err != nil {
			e.cgroupReason = err.Error()
			break
		}
		e.cgroups = cg
		for _, s := range e.allSlots {
			if s.cg, err = cg.slot(s.idx); err == nil {
				err = s.cg.prepare(e.cfg.CheckerLimits.effective(Language{}))
			}
			if err != nil {
				e.cgroupReason = err.Error()
				e.removeCgroups()
				break
			}
		}
	}
	e.holders = true
	s := <-e.slots
	defer func() { e.slots <- s }()
	s.mu.Lock()
	_, err := e.holderFor(s)
	s.mu.Unlock()
	if err != nil {
		e.holders, e.holderReason = false, err.Error()
		e.removeCgroups()
		return
	}
	res, handled, err := e.runHeld(context.Background(), s, spawnReq{
		argv: []string{"true"}, dir: boxDir, lim: e.cfg.CheckerLimits.effective(Language{}), stderrCap: 4096,
	})
	switch {
	case !handled:
		e.holderReason = "a held sandbox does not start here"
	case err != nil:
		e.holderReason = err.Error()
	case res.setupFailed || res.exitCode != 0:
		e.holderReason = fmt.Sprintf("`true` in a held sandbox: exit %d: %s", res.exitCode, firstLine(string(res.stderr)))
	default:
		e.markUsed(s)
		return
	}
	e.holders = false
	s.mu.Lock()
	e.dropHolder(s)
	s.mu.Unlock()
	e.removeCgroups()
}

func (e *Engine) removeCgroups() {
	for _, s := range e.allSlots {
		if s.cg != nil {
			s.cg.remove()
			s.cg = nil
		}
	}
	if e.cgroups != nil {
		e.cgroups.remove()
		e.cgroups = nil
	}
}

// SandboxInfo says how runs are isolated and accounted on this engine.
type SandboxInfo struct {
	// Held is true when runs are held in the worker slots' long-lived
	// sandboxes; HeldReason says why not.
	Held       bool
	HeldReason string
	// HeldError is why a held sandbox last failed to start (that run
	// started a sandbox of its own), if one did.
	HeldError string
	// Cgroup is "v1" or "v2" when held runs are accounted with control
	// groups, "" when the engine polls; CgroupReason says why not.
	Cgroup       string
	CgroupReason string
}

// SandboxInfo reports how runs are isolated and accounted.
func (e *Engine) SandboxInfo() SandboxInfo {
	info := SandboxInfo{Held: e.holders, HeldReason: e.holderReason, CgroupReason: e.cgroupReason}
	info.HeldError, _ = e.heldErr.Load().(string)
	if e.cgroups != nil {
		info.Cgroup = e.cgroups.version()
	}
	if !e.sandboxed {
		info.HeldReason = "unsandboxed"
	}
	return info
}

// setupDirs creates the work and cache directories with modes that let the
// sandbox uids traverse (but not list) them.
func (e *Engine) setupDirs() error {
	dirMode := os.FileMode(0o700)
	if e.switchUID {
		dirMode = 0o711
	}
	if e.cfg.WorkDir == "" {
		sweepWorkDirs()
		dir, err := os.MkdirTemp("", workDirPrefix)
		if err != nil {
			return err
		}
		e.workDir, e.ownWorkDir = dir, true
		if e.workLock, err = lockWorkDir(dir); err != nil {
			removeAll(dir)
			return err
		}
	} else {
		abs, err := filepath.Abs(e.cfg.WorkDir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return err
		}
		e.workDir = abs
	}
	if err := os.Chmod(e.workDir, dirMode); err != nil {
		return err
	}
	e.cacheDir = e.cfg.CacheDir
	if e.cacheDir == "" {
		e.cacheDir = filepath.Join(os.TempDir(), fmt.Sprintf("algoitny-judge-cache-%d", os.Geteuid()))
	}
	if err := ownedDir(e.cacheDir, dirMode); err != nil {
		return err
	}
	if e.switchUID {
		for _, d := range []string{e.workDir, e.cacheDir} {
			if err := checkTraversable(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownedDir makes dir with mode if needed and checks that it is a directory
// of this process's uid, not a symlink: one in a shared place such as /tmp
// may have been made by someone else first (to poison what it holds, or
// to hold its locks). ErrInvalidInput if it is not.
func ownedDir(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || (ok && int(st.Uid) != os.Geteuid()) {
		return fmt.Errorf("%w: %s is not a directory owned by uid %d", ErrInvalidInput, dir, os.Geteuid())
	}
	return os.Chmod(dir, mode)
}

// checkTraversable verifies that every ancestor of dir can be traversed by
// other uids, which bwrap (running as a sandbox uid) needs to bind it.
func checkTraversable(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%w: %s is not reachable by the sandbox uids: %s has mode %v (needs o+x); choose another WorkDir/CacheDir",
				ErrInvalidInput, dir, p, fi.Mode().Perm())
		}
		if p == "/" {
			return nil
		}
	}
}

// probeSandbox runs `true` in the sandbox, falling back to a bwrap without
// --disable-userns (older than 0.8) if needed, so that a broken setup (no user
// namespaces, seccomp-restricted container) is reported at start-up.
func (e *Engine) probeSandbox() error {
	base := []string{"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1",
		"--hostname", "judge"}
	etcParent, err := os.MkdirTemp(e.workDir, "sys-")
	if err != nil {
		return err
	}
	if err := os.Chmod(etcParent, 0o755); err != nil {
		return err
	}
	e.sysDir = etcParent
	etc := filepath.Join(etcParent, "etc")
	if err := mirrorEtc(etc, e.etcPatterns()); err != nil {
		return fmt.Errorf("%w: mirroring /etc: %v", ErrSandboxUnavailable, err)
	}
	sys := systemMounts(etc, e.readOnlyPaths())
	var lastErr error
	for _, extra := range [][]string{{"--disable-userns"}, nil} {
		e.bwrapPrefix = append(append(append([]string{}, base...), extra...), sys...)
		e.bwrapPrefix = append(e.bwrapPrefix, "--proc", "/proc", "--dev", "/dev")
		res, err := e.runTool(context.Background(), []string{"true"}, nil, 10*time.Second)
		if err == nil && res.exitCode == 0 && !res.setupFailed {
			return nil
		}
		lastErr = fmt.Errorf("exit %d: %s", res.exitCode, strings.TrimSpace(string(res.stderr)))
		if err != nil {
			lastErr = err
		}
	}
	return fmt.Errorf("%w: bubblewrap does not work here (%v); it needs unprivileged user namespaces "+
		"(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces>0)", ErrSandboxUnavailable, lastErr)
}

// etcPatterns are the /etc entries every sandbox sees: the engine's
// allowlist and what the configured languages' toolchains read
// (Language.SandboxEtc).
func (e *Engine) etcPatterns() []string {
	out := slices.Clone(etcAllowlist)
	for _, l := range e.cfg.Languages {
		for _, p := range l.SandboxEtc {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// readOnlyPaths are the host directories bound read-only into every
// sandbox besides /usr: Config.ReadOnlyPaths and the configured
// languages' Language.SandboxPaths that exist here (a language whose
// toolchain is missing is reported unavailable, not a broken sandbox).
func (e *Engine) readOnlyPaths() []string {
	out := slices.Clone(e.cfg.ReadOnlyPaths)
	for _, l := range e.cfg.Languages {
		for _, p := range l.SandboxPaths {
			if _, err := os.Stat(p); err == nil && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// runTool runs a trusted command (probe, version check) in the sandbox with
// the compile limits and a throw-away scratch directory.
func (e *Engine) runTool(ctx context.Context, argv, env []string, wall time.Duration) (spawnRes, error) {
	scratch, err := e.newScratch(e.compileUID)
	if err != nil {
		return spawnRes{}, err
	}
	defer removeScratch(scratch)
	lim := e.cfg.CompileLimits
	lim.WallTime = wall
	var out strings.Builder
	res, err := e.spawn(ctx, spawnReq{
		argv: argv, env: env, dir: boxDir, hostDir: scratch, scratch: scratch,
		uid: e.uidOr(e.compileUID), lim: lim.effective(Language{MemoryPolicy: MemoryDataSegment}),
		stdout: &cappedWriter{b: &out, n: 4096}, stderrCap: 4096,
	})
	res.stderr = append([]byte(out.String()), res.stderr...)
	return res, err
}

// detectLanguages fills Available/Version/Reason by running every language's
// version command inside the sandbox, concurrently — except where the
// toolchain's files are those of a check that passed before
// (toolchains.go).
func (e *Engine) detectLanguages() []Language {
	langs := make([]Language, len(e.cfg.Languages))
	copy(langs, e.cfg.Languages)
	now := time.Now()
	known := e.loadToolchains(now)
	var (
		mu      sync.Mutex
		changed bool
		wg      sync.WaitGroup
	)
	for i := range langs {
		wg.Add(1)
		go func(l *Language) {
			defer wg.Done()
			key, keyed := e.toolchainKey(*l)
			mu.Lock()
			check, seen := known[key]
			mu.Unlock()
			if keyed && seen {
				l.Available, l.Version, l.Reason = true, check.Version, ""
				return
			}
			e.checkToolchain(l)
			if keyed && l.Available {
				mu.Lock()
				known[key], changed = toolchainCheck{Version: l.Version, CheckedAt: now}, true
				mu.Unlock()
			}
		}(&langs[i])
	}
	wg.Wait()
	if changed {
		e.saveToolchains(known)
	}
	return langs
}

// checkToolchain runs l's version command in the sandbox and sets
// Available/Version/Reason from what it does.
func (e *Engine) checkToolchain(l *Language) {
	l.Available, l.Version, l.Reason = false, "", ""
	for _, tool := range l.tools() {
		if _, err := lookSandboxPath(tool); err != nil {
			l.Reason = fmt.Sprintf("%s not found in %s", tool, sandboxPATH)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The language's own environment (kotlinc's JAVA_OPTS bound its JVM),
	// without what names a run's directories or limits.
	var env []string
	for _, kv := range l.Env {
		if !strings.Contains(kv, "{") {
			env = append(env, kv)
		}
	}
	res, err := e.runTool(ctx, l.versionArgs(), env, 30*time.Second)
	out := strings.TrimSpace(string(res.stderr))
	switch {
	case err != nil:
		l.Reason = err.Error()
	case res.setupFailed || res.exitCode != 0:
		l.Reason = fmt.Sprintf("%s failed in the sandbox: %s", strings.Join(l.versionArgs(), " "), firstLine(out))
	default:
		l.Available, l.Version = true, firstLine(out)
	}
}

// Languages returns every configured language with its availability on this
// machine. Unavailable languages are listed (with Reason), not omitted, so an
// API can show them greyed out.
func (e *Engine) Languages() []Language {
	out := make([]Language, len(e.langs))
	copy(out, e.langs)
	return out
}

// Sandboxed reports whether user code runs inside bubblewrap. It is false only
// in the explicitly allowed local-development mode.
func (e *Engine) Sandboxed() bool { return e.sandboxed }

// language resolves an ID to an available language.
func (e *Engine) language(id string) (Language, error) {
	for _, l := range e.langs {
		if l.ID == id {
			if !l.Available {
				return l, fmt.Errorf("%w: %s: %s", ErrLanguageUnavailable, id, l.Reason)
			}
			return l, nil
		}
	}
	return Language{}, fmt.Errorf("%w: %q", ErrUnknownLanguage, id)
}

// Close waits for running operations to finish, then removes the work
// directory if the engine created it. Later calls return ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.closed = true
	for e.active > 0 {
		e.cond.Wait()
	}
	e.mu.Unlock()
	for _, s := range e.allSlots {
		s.mu.Lock()
		if s.idle != nil {
			s.idle.Stop()
		}
		e.dropHolder(s)
		s.mu.Unlock()
	}
	e.removeCgroups()
	e.removeWorkDir()
	return nil
}

func (e *Engine) removeWorkDir() {
	if e.ownWorkDir {
		removeAll(e.workDir)
		if e.workLock != nil {
			e.workLock.Close()
		}
	} else if e.sysDir != "" {
		removeAll(e.sysDir)
	}
}

// Work directories the engine makes for itself are named workDirPrefix +
// random, hold a lock file locked while their engine lives, and are swept
// by the next engine when their process died without Close (a crash would
// otherwise leave its programs and scratch space in /tmp for good).
const (
	workDirPrefix = "algoitny-judge-"
	workLockName  = ".lock"
	// staleAfter spares the directory of an engine that is just starting
	// (made, not yet locked).
	staleAfter = time.Minute
)

func lockWorkDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, workLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepWorkDirs removes the work directories of engines whose process is
// gone: ours (same uid), locked by nobody, older than staleAfter.
func sweepWorkDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), workDirPrefix+"*"))
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, workLockName), os.O_RDWR|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // no lock file: not a work directory (the cache, the uid locks) or an old one
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			removeAll(dir) // its engine is gone
		}
		f.Close()
	}
}

// enter registers an operation that uses the work directory.
func (e *Engine) enter() (func(), error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	e.active++
	return func() {
		e.mu.Lock()
		e.active--
		if e.active == 0 {
			e.cond.Broadcast()
		}
		e.mu.Unlock()
	}, nil
}

// acquireSlot waits for one of the Workers slots.
func (e *Engine) acquireSlot(ctx context.Context) (*slot, func(), error) {
	return e.acquireFrom(ctx, e.slots)
}

// acquireFrom waits for a slot of pool (the worker slots, or the partner
// slot) and returns it with its release, which puts it back in pool.
func (e *Engine) acquireFrom(ctx context.Context, pool chan *slot) (*slot, func(), error) {
	select {
	case s := <-pool:
		s.mu.Lock()
		s.busy = true
		s.mu.Unlock()
		return s, func() { e.markUsed(s); pool <- s }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// markUsed frees the slot and ends its held sandbox if no run comes
// within WarmIdle.
func (e *Engine) markUsed(s *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	s.lastUsed = time.Now()
	if s.h == nil {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(e.cfg.WarmIdle, func() { e.idleCheck(s) })
	} else {
		s.idle.Reset(e.cfg.WarmIdle)
	}
}

func (e *Engine) idleCheck(s *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy || s.h == nil {
		return
	}
	if wait := e.cfg.WarmIdle - time.Since(s.lastUsed); wait > 0 {
		s.idle.Reset(wait)
		return
	}
	e.dropHolder(s)
}

// uidOr returns uid when the engine switches uids, -1 otherwise.
func (e *Engine) uidOr(uid int) int {
	if e.switchUID {
		return uid
	}
	return -1
}

// runUIDs hands out the per-run uids; shared by every Engine of the process so
// that two engines never give the same uid to concurrent runs. Other processes
// (another judge, another package's tests) are kept apart by a lock file per
// uid: a uid is only used while its lock is held, so the sweep of one run's
// uid can never kill another process's program.
var runUIDs = struct {
	sync.Mutex
	used map[int]bool
}{used: map[int]bool{}}

// maxRunUIDs bounds the uid range above UIDBase.
const maxRunUIDs = 4096

// uidLockDir holds the per-uid lock files (root only); checked once per
// process (ownedDir).
var (
	uidLockDir      = filepath.Join(os.TempDir(), "algoitny-judge-uids")
	checkUIDLockDir = sync.OnceValue(func() error { return ownedDir(uidLockDir, 0o700) })
)

func (e *Engine) acquireRunUID() (int, func(), error) {
	if !e.switchUID {
		return -1, func() {}, nil
	}
	if err := checkUIDLockDir(); err != nil {
		return 0, nil, err
	}
	runUIDs.Lock()
	defer runUIDs.Unlock()
	for i := 1; i <= maxRunUIDs; i++ {
		uid := e.cfg.UIDBase + i
		if runUIDs.used[uid] {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(uidLockDir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return 0, nil, err
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			lock.Close() // held by another process
			continue
		}
		runUIDs.used[uid] = true
		return uid, func() {
			runUIDs.Lock()
			delete(runUIDs.used, uid)
			runUIDs.Unlock()
			lock.Close()
		}, nil
	}
	return 0, nil, errors.New("judge: no free sandbox uid")
}

// newScratch creates a fresh scratch directory owned by uid (mode 0700) for an
// unsandboxed run. Sandboxed runs get a size-capped tmpfs instead, which never
// exists on the host: "" is returned for them.
func (e *Engine) newScratch(uid int) (string, error) {
	if e.sandboxed {
		return "", nil
	}
	dir, err := os.MkdirTemp(e.workDir, "box-")
	if err != nil {
		return "", err
	}
	if e.switchUID {
		if err := os.Chown(dir, uid, uid); err != nil {
			removeAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// removeScratch removes what newScratch made.
func removeScratch(dir string) {
	if dir != "" {
		removeAll(dir)
	}
}

// removeAll removes a directory the sandbox wrote to. os.RemoveAll never
// follows symlinks; directories the program made unreadable are fixed first.
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// lookSandboxPath finds a tool in the fixed sandbox PATH.
func lookSandboxPath(tool string) (string, error) {
	if filepath.IsAbs(tool) {
		return exec.LookPath(tool)
	}
	for _, dir := range filepath.SplitList(sandboxPATH) {
		p := filepath.Join(dir, tool)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found", tool)
}

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
