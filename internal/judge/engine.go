package judge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// SandboxMode selects how user code is isolated.
type SandboxMode = sandbox.Mode

const (
	// SandboxBwrap runs every compile and run inside bubblewrap. The default.
	SandboxBwrap = sandbox.Bwrap
	// SandboxNone runs user code as a plain process with rlimits only: for local
	// development on machines without bubblewrap. It needs AllowUnsandboxed.
	SandboxNone = sandbox.None
)

// CgroupMode says whether runs are accounted with control groups
// (sandbox.CgroupMode).
type CgroupMode = sandbox.CgroupMode

const (
	// CgroupAuto (the default) accounts the memory and the processes of
	// held runs with control groups where the host offers them.
	CgroupAuto = sandbox.CgroupAuto
	// CgroupOff never uses control groups: memory and processes are
	// polled and bounded by rlimits.
	CgroupOff = sandbox.CgroupOff
)

// SandboxInfo says how runs are isolated and accounted on an engine.
type SandboxInfo = sandbox.Info

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
	// processes are CheckerLimits' (an interactor's output, the solution's
	// input, at least a program's default). Default: at most 10 s of CPU
	// time, 2 GiB (the ICPC format's validation_memory default), one
	// process with up to AuthorThreads threads.
	CheckerLimits Limits
	// WarmIdle is how long a worker slot's held sandbox (sandbox/holder.go: set up
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
// implementation of limits, verdicts and checkers. The sandbox (package
// sandbox: bubblewrap, the supervisor, held sandboxes, control groups)
// runs each program with its limits and reports its usage; the engine
// keeps the languages, compilation, tests, checkers and interactors. An
// Engine is safe for concurrent use; Close it to remove its work
// directory.
type Engine struct {
	cfg   Config
	sb    *sandbox.Sandbox
	langs []Language

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
		MemoryBytes:   2 << 30,
		OutputBytes:   1 << 20,
		FileSizeBytes: 16 << 20,
		MaxProcesses:  1,
		MaxThreads:    AuthorThreads,
	}
}

// AuthorThreads are the threads a problem author's program (checker,
// interactor, validator, generator) may start: testlib-style programs have
// none, but an interactor in Python or C++ may feed the submission from a
// thread of its own, as the format's examples do.
const AuthorThreads = 16

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
	sb, err := sandbox.New(cfg.sandboxConfig())
	if errors.Is(err, sandbox.ErrInvalidConfig) {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, sb: sb}
	e.cond = sync.NewCond(&e.mu)
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

// sandboxConfig is the sandbox of cfg (with its defaults): its slots, its
// directories, and what the languages need mounted (Language.SandboxEtc,
// Language.SandboxPaths that exist here: a language whose toolchain is
// missing is reported unavailable, not a broken sandbox).
func (cfg Config) sandboxConfig() sandbox.Config {
	sc := sandbox.Config{
		Mode: cfg.Sandbox, AllowUnsandboxed: cfg.AllowUnsandboxed, BwrapPath: cfg.BwrapPath,
		Slots: cfg.Workers, WorkDir: cfg.WorkDir, CacheDir: cfg.CacheDir, UIDBase: cfg.UIDBase,
		ReadOnlyPaths: slices.Clone(cfg.ReadOnlyPaths), WarmIdle: cfg.WarmIdle, Cgroups: cfg.Cgroups,
		ToolLimits:  cfg.CompileLimits.effective(Language{MemoryPolicy: MemoryDataSegment}).Limits,
		ProbeLimits: cfg.CheckerLimits.effective(Language{}).Limits,
	}
	for _, l := range cfg.Languages {
		for _, p := range l.SandboxEtc {
			if !slices.Contains(sc.EtcPatterns, p) {
				sc.EtcPatterns = append(sc.EtcPatterns, p)
			}
		}
		for _, p := range l.SandboxPaths {
			if _, err := os.Stat(p); err == nil && !slices.Contains(sc.ReadOnlyPaths, p) {
				sc.ReadOnlyPaths = append(sc.ReadOnlyPaths, p)
			}
		}
	}
	return sc
}

// SandboxInfo reports how runs are isolated and accounted.
func (e *Engine) SandboxInfo() SandboxInfo { return e.sb.Info() }

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
		if _, err := sandbox.LookPath(tool); err != nil {
			l.Reason = fmt.Sprintf("%s not found in %s", tool, sandbox.PATH)
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
	res, err := e.sb.RunTool(ctx, l.versionArgs(), env, 30*time.Second)
	out := strings.TrimSpace(string(res.Stderr))
	switch {
	case err != nil:
		l.Reason = err.Error()
	case res.SetupFailed || res.ExitCode != 0:
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
func (e *Engine) Sandboxed() bool { return e.sb.Sandboxed() }

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
	e.sb.Close()
	return nil
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
func (e *Engine) acquireSlot(ctx context.Context) (*sandbox.Slot, func(), error) {
	return e.sb.Acquire(ctx)
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
		w.b.Write(p[:max(room, 0)])
	} else {
		w.b.Write(p)
	}
	return len(p), nil
}
