package judge

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// Output sizes kept for messages and previews.
const (
	compileOutputMax = 8 << 10
	stderrMax        = 8 << 10
)

// Program is a compiled submission: the compile-once, run-many unit that Judge,
// test generation (generators run with a seed, reference solutions producing
// expected output) and the CLI share. Runs may happen concurrently; Close
// removes the build directory and waits for running runs.
type Program struct {
	e     *Engine
	lang  Language
	dir   string // host directory owning the build directory
	build string // host build directory, mounted read-only at /prog
	main  string // the entry point, {main} in the language's commands
	// staticBytes is what a native executable maps before it runs (code, data,
	// bss): a program whose static arrays exceed the limit is refused up front.
	staticBytes int64

	mu     sync.RWMutex
	closed bool
}

// RunOptions describe one run of a Program.
type RunOptions struct {
	// Stdin is fed to the program's standard input; nil means empty input.
	Stdin io.Reader
	// Stdout receives standard output, at most Limits.OutputBytes of it; nil
	// discards it. The engine writes from one goroutine.
	Stdout io.Writer
	// Args are appended to the language's run command (a generator's seed).
	Args []string
	// Limits for this run; zero fields take DefaultLimits.
	Limits Limits

	// slot, when set, is a worker slot the caller already holds: an
	// interactive test takes two at once (acquirePair) so that two tests
	// never each hold one and wait for the other.
	slot *sandbox.Slot
	// stdoutEnd, if set, is called when standard output ends, which may
	// be before the program exits (sandbox.Request.StdoutEnd): an
	// interactive test closes the other program's input then.
	stdoutEnd func()
}

// RunResult is what happened in one run.
type RunResult struct {
	// Verdict is ACCEPTED when the program exited with status 0 within every
	// limit; otherwise TIME_LIMIT_EXCEEDED, MEMORY_LIMIT_EXCEEDED,
	// OUTPUT_LIMIT_EXCEEDED, RUNTIME_ERROR or INTERNAL_ERROR.
	Verdict Verdict
	// CPUTime is user+system time of the program and its children (it includes
	// a few milliseconds of sandbox set-up).
	CPUTime time.Duration
	// WallTime is the real time from start to exit.
	WallTime time.Duration
	// MemoryBytes is the peak resident set size.
	MemoryBytes int64
	// ExitCode is the exit status, or -1 when the program was killed by a
	// signal (Signal then names it).
	ExitCode int
	// Signal is the name of the signal that killed the program, e.g. "SIGSEGV".
	Signal string
	// OutputBytes is how much the program wrote to standard output.
	OutputBytes int64
	// Stderr is the beginning of the program's standard error.
	Stderr string
	// Message explains the verdict for humans, e.g. "CPU time limit 1s exceeded".
	Message string

	// waited: stopped at the wall time limit while it slept or waited
	// (for input, say), not while it computed.
	waited bool
	// exitedAt is when the program ended (sandbox.Usage.ExitedAt: the
	// machine's monotonic clock; 0 unknown).
	exitedAt int64
}

// Compile saves source for the language and builds it once, in the sandbox.
//
// Errors: ErrUnknownLanguage, ErrLanguageUnavailable, a *CompileError
// (errors.Is ErrCompilation) with the compiler's message when the source does
// not compile or the compiler exceeds Config.CompileLimits' memory or output,
// ErrCompilerTimeout when it exceeds their CPU or wall time (the machine's
// failure, not the source's: retry), ErrSandboxFailed, ErrClosed, or ctx's
// error.
func (e *Engine) Compile(ctx context.Context, language, source string) (*Program, error) {
	return e.compileWith(ctx, language, defaultMain, source, nil)
}

// CompileFiles is Compile for a program of several files: files (by name,
// no directories) are written beside the source before it is built —
// headers, modules, a testlib.h. name is the source's own file name in its
// package (e.g. "Different.java"): in a language whose SourceFile names a
// {main} (Java), the file's name without its extension is the entry point
// (the public class), as problemtools runs a Java file, where Compile's is
// always "Main". Its errors are Compile's, and ErrInvalidInput for a file
// name that is not a plain name or collides with the source.
func (e *Engine) CompileFiles(ctx context.Context, language, name, source string, files map[string][]byte) (*Program, error) {
	lang, err := e.language(language)
	if err != nil {
		return nil, err
	}
	main := defaultMain
	if stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)); mainName.MatchString(stem) {
		main = stem
	}
	for f := range files {
		if f == "" || f != filepath.Base(f) || f == "." || f == ".." || f == lang.sourceFile(main) {
			return nil, fmt.Errorf("%w: file name %q", ErrInvalidInput, f)
		}
	}
	return e.compileWith(ctx, language, main, source, files)
}

// defaultMain is the entry point ({main}) of a program compiled from a
// source alone: Java's public class Main.
const defaultMain = "Main"

// mainName is what a file's name must be to name an entry point: a Java
// identifier (letters, digits, '_' and '$', not starting with a digit).
var mainName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// compileWith is Compile with extra files (headers) written next to the
// source before it is built.
func (e *Engine) compileWith(ctx context.Context, language, main, source string, files map[string][]byte) (*Program, error) {
	lang, err := e.language(language)
	if err != nil {
		return nil, err
	}
	leave, err := e.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	dir, err := os.MkdirTemp(e.sb.WorkDir(), "prog-")
	if err != nil {
		return nil, err
	}
	p := &Program{e: e, lang: lang, dir: dir, build: filepath.Join(dir, "build"), main: main}
	if err := p.compile(ctx, source, files); err != nil {
		sandbox.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

func (p *Program) compile(ctx context.Context, source string, files map[string][]byte) error {
	if err := p.writeSource(source); err != nil {
		return err
	}
	for name, data := range files {
		if err := writeNew(filepath.Join(p.build, name), bytes.NewReader(data)); err != nil {
			return err
		}
	}
	if len(p.lang.Compile) == 0 {
		_, switched := p.e.sb.CompileUID()
		return fixBuildPermissions(p.build, switched)
	}
	defer func() { p.staticBytes = staticSize(p.build, p.lang.Run) }()
	var out strings.Builder
	cw := &cappedWriter{b: &out, n: compileOutputMax}
	res, err := p.runCompiler(ctx, cw)
	if err != nil {
		return err
	}
	if res.SetupFailed {
		return fmt.Errorf("%w: compile: %s", ErrSandboxFailed, firstLine(string(res.Stderr)))
	}
	if res.Killed == sandbox.KillCPU || res.Killed == sandbox.KillWall {
		return fmt.Errorf("%w: %s (%v of CPU time, %v of wall time; limits %v and %v)", ErrCompilerTimeout, p.lang.ID,
			res.CPU.Round(time.Millisecond), res.Wall.Round(time.Millisecond), p.e.cfg.CompileLimits.CPUTime, p.e.cfg.CompileLimits.WallTime)
	}
	if res.Killed != sandbox.KillNone || res.ExitCode != 0 || res.Signal != 0 {
		return p.compileError(res, out.String(), cw.truncated)
	}
	_, switched := p.e.sb.CompileUID()
	return fixBuildPermissions(p.build, switched)
}

// writeSource makes the build directory and writes the source into it.
func (p *Program) writeSource(source string) error {
	if _, switched := p.e.sb.CompileUID(); switched {
		if err := os.Chmod(p.dir, 0o711); err != nil {
			return err
		}
	}
	if err := os.Mkdir(p.build, 0o755); err != nil {
		return err
	}
	return writeNew(filepath.Join(p.build, p.lang.sourceFile(p.main)), strings.NewReader(source))
}

// runCompiler runs the language's compiler in the build directory (and its
// cache) on a worker slot, as the compile uid, its standard output going
// to stdout.
func (p *Program) runCompiler(ctx context.Context, stdout io.Writer) (sandbox.Usage, error) {
	e := p.e
	uid, switched := e.sb.CompileUID()
	if switched {
		if err := os.Chown(p.build, uid, uid); err != nil {
			return sandbox.Usage{}, err
		}
	}
	mounts := []sandbox.Mount{{Src: p.build, Dst: sandbox.ProgDir, RW: true}}
	vars := memoryVars(e.cfg.CompileLimits.MemoryBytes)
	vars["dir"], vars["cache"], vars["main"] = sandbox.ProgDir, sandbox.CacheMount, p.main
	if !e.sb.Sandboxed() {
		vars["dir"] = p.build
	}
	if p.lang.CacheDir != "" {
		host, err := e.languageCache(p.lang.CacheDir)
		if err != nil {
			return sandbox.Usage{}, err
		}
		mounts = append(mounts, sandbox.Mount{Src: host, Dst: sandbox.CacheMount, RW: true})
		if !e.sb.Sandboxed() {
			vars["cache"] = host
		}
	}
	_, release, err := e.acquireSlot(ctx)
	if err != nil {
		return sandbox.Usage{}, err
	}
	defer release()
	return e.sb.Run(ctx, sandbox.Request{
		Argv: expandAll(p.lang.Compile, vars), Env: expandAll(p.lang.Env, vars),
		Dir: sandbox.ProgDir, HostDir: p.build, Mounts: mounts, AsCompiler: true,
		Limits: e.cfg.CompileLimits.effective(Language{MemoryPolicy: MemoryDataSegment}).Limits,
		Stdout: stdout, StderrCap: compileOutputMax,
	})
}

// compileError is the CompileError of a compiler that failed: its standard
// output then error (truncated), and the reason when the engine stopped it.
func (p *Program) compileError(res sandbox.Usage, stdout string, stdoutTruncated bool) *CompileError {
	msg := stdout
	if msg != "" && !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	msg += string(res.Stderr)
	truncated := stdoutTruncated || res.StderrTruncated || len(msg) > compileOutputMax
	msg = truncate(msg, compileOutputMax)
	if truncated {
		msg += "\n... (compiler output truncated)"
	}
	ce := &CompileError{Language: p.lang.ID, Output: msg}
	switch {
	case res.Killed == sandbox.KillOutput:
		ce.Reason = "compiler output too large"
	case res.Killed == sandbox.KillMemory:
		ce.Reason = "compiler exceeded the memory limit"
	case res.Signal != 0:
		ce.Reason = "compiler killed by " + sandbox.SignalName(res.Signal)
	}
	return ce
}

// languageCache returns the host directory of a language cache, created owned
// by the compile uid. The uid is part of the name so that engines with
// different UIDBase never share (and fight over) one cache.
func (e *Engine) languageCache(name string) (string, error) {
	uid, switched := e.sb.CompileUID()
	dir := filepath.Join(e.sb.CacheDir(), fmt.Sprintf("%s-%d", name, os.Geteuid()))
	if switched {
		dir = filepath.Join(e.sb.CacheDir(), fmt.Sprintf("%s-%d", name, uid))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	if switched {
		if err := os.Lchown(dir, uid, uid); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// fixBuildPermissions makes the build output owned by the engine and readable
// (not writable) by the run uids: a later run must not be able to alter what
// the next run executes.
func fixBuildPermissions(build string, chown bool) error {
	return filepath.WalkDir(build, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if chown {
			if err := os.Lchown(path, 0, 0); err != nil {
				return err
			}
		}
		switch {
		case d.IsDir():
			return os.Chmod(path, 0o755)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := fi.Mode().Perm()&^0o022 | 0o444
			if mode&0o100 != 0 {
				mode |= 0o111
			}
			return os.Chmod(path, mode)
		}
		return nil
	})
}

// staticSize returns the total size of the loadable segments of the program's
// executable when the run command is an ELF file in the build directory, else 0.
// Loading such a binary under a smaller RLIMIT_AS fails inside execve after the
// point of no return, which looks like an instant SIGSEGV; measuring it here
// gives the honest verdict.
func staticSize(build string, run []string) int64 {
	if len(run) == 0 || !strings.HasPrefix(run[0], "{dir}/") {
		return 0
	}
	f, err := os.OpenFile(filepath.Join(build, strings.TrimPrefix(run[0], "{dir}/")), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return 0
	}
	var total int64
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_LOAD {
			total += int64(prog.Memsz)
		}
	}
	return total
}

// writeNew creates path (which must not exist, and is never followed if it is a
// symlink) and copies r into it (sandbox.WriteNew).
func writeNew(path string, r io.Reader) error { return sandbox.WriteNew(path, r) }

// Language returns the language the program was compiled for.
func (p *Program) Language() Language { return p.lang }

// Run runs the program once with fresh scratch space under opts.Limits.
//
// Limit violations and crashes are verdicts in the RunResult, not errors. The
// error is ErrInvalidInput for bad limits, ErrSandboxFailed when the sandbox
// could not be set up (Verdict INTERNAL_ERROR), ErrClosed, or ctx's error when
// ctx ended (the processes are killed at once).
func (p *Program) Run(ctx context.Context, opts RunOptions) (RunResult, error) {
	return p.run(ctx, opts, false, nil, nil)
}

// run is Run, or with checker set a custom checker's run: with extra
// read-only mounts (its files) and their host/sandbox path pair for
// argument expansion, and standard error kept in part but never a reason to
// stop it (a checker echoes the output it judges there).
func (p *Program) run(ctx context.Context, opts RunOptions, checker bool, extra []sandbox.Mount, pathVars map[string]string) (RunResult, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return RunResult{Verdict: InternalError, Message: "program closed"}, ErrClosed
	}
	e := p.e
	leave, err := e.enter()
	if err != nil {
		return RunResult{Verdict: InternalError, Message: err.Error()}, err
	}
	defer leave()
	lim, err := opts.Limits.withDefaults(DefaultLimits())
	if err != nil {
		return RunResult{Verdict: InternalError, Message: err.Error()}, err
	}
	eff := lim.effective(p.lang)
	if p.staticBytes > eff.Memory {
		return RunResult{Verdict: MemoryLimitExceeded, ExitCode: -1, MemoryBytes: p.staticBytes,
			Message: fmt.Sprintf("the program's static data (%s) exceeds the memory limit %s",
				formatBytes(p.staticBytes), memoryLimitText(eff))}, nil
	}
	vars := memoryVars(lim.MemoryBytes)
	vars["dir"], vars["main"] = sandbox.ProgDir, p.main
	if !e.sb.Sandboxed() {
		vars["dir"] = p.build
	}
	for k, v := range pathVars {
		vars[k] = v
	}
	argv := append(expandAll(p.lang.Run, vars), expandAll(opts.Args, pathVars)...)

	s, release, err := e.slotFor(ctx, opts.slot)
	if err != nil {
		return RunResult{Verdict: InternalError, Message: err.Error()}, err
	}
	defer release()
	res, err := e.sb.Run(ctx, sandbox.Request{
		Argv: argv, Env: expandAll(p.lang.Env, vars), Dir: sandbox.BoxDir,
		Mounts: append([]sandbox.Mount{{Src: p.build, Dst: sandbox.ProgDir}}, extra...), Limits: eff.Limits,
		Stdin: opts.Stdin, Stdout: opts.Stdout, StdoutEnd: opts.stdoutEnd, StderrCap: stderrMax, BoundStderr: !checker, Slot: s,
	})
	rr := classify(res, eff, p.lang)
	if err != nil {
		rr.Verdict, rr.Message = InternalError, err.Error()
	}
	return rr, err
}

// classify turns what the engine observed into a verdict. Order matters: a kill
// by the engine names its reason; then CPU time, peak memory, file size,
// out-of-memory deaths, other crashes.
func classify(res sandbox.Usage, l effLimits, lang Language) RunResult {
	rr := RunResult{
		CPUTime:     res.CPU,
		WallTime:    res.Wall,
		MemoryBytes: res.MaxRSS,
		ExitCode:    res.ExitCode,
		Signal:      sandbox.SignalName(res.Signal),
		OutputBytes: res.StdoutBytes,
		Stderr:      truncate(string(res.Stderr), stderrMax),
		exitedAt:    res.ExitedAt,
	}
	if res.Killed != sandbox.KillNone {
		rr.ExitCode, rr.Signal = -1, "SIGKILL"
	}
	abnormal := res.ExitCode != 0 || res.Signal != 0
	stderr := string(res.Stderr)
	switch {
	case res.SetupFailed:
		rr.Verdict, rr.Message = InternalError, "sandbox set-up failed: "+firstLine(stderr)
		rr.Stderr = ""
	case res.Killed == sandbox.KillOutput:
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("output exceeded %s", formatBytes(l.Output))
	case res.Killed == sandbox.KillMemory:
		rr.MemoryBytes = max(rr.MemoryBytes, res.PolledRSS)
		rr.Verdict, rr.Message = MemoryLimitExceeded, "memory exceeded "+memoryLimitText(l)
	case (res.Killed == sandbox.KillCPU || res.Killed == sandbox.KillWall) && hasAny(stderr, lang.OutOfMemoryMarkers):
		// The runtime had reported a failed allocation when a time limit
		// stopped it (GHC's collector spins at its heap limit before it
		// exits): memory ran out first.
		rr.Verdict, rr.Message = MemoryLimitExceeded, "allocation failed at the memory limit "+memoryLimitText(l)
	case res.Killed == sandbox.KillCPU || res.CPU >= l.CPU || res.Signal == syscall.SIGXCPU:
		rr.Verdict, rr.Message = TimeLimitExceeded, "CPU time limit "+cpuLimitText(l)+" exceeded"
		// The watchdog that stops a program at its limit reads the CPU
		// time of its process tree from /proc; the time reported is the
		// program's own accounting, which can be a few milliseconds short
		// (seen: 993 ms of 1 s). A program stopped for reaching its limit
		// is shown as having reached it.
		rr.CPUTime = max(rr.CPUTime, l.CPU)
	case res.Killed == sandbox.KillWall && res.Running():
		// Computing all along, but other work on the machine left it too
		// little CPU to reach its CPU limit within the wall limit.
		rr.Verdict, rr.Message = TimeLimitExceeded,
			fmt.Sprintf("wall time limit %v exceeded while the machine was busy: the program was running, but got only %v of CPU time (limit %s)",
				l.Wall, res.CPU.Round(time.Millisecond), cpuLimitText(l))
	case res.Killed == sandbox.KillWall:
		rr.Verdict, rr.Message = TimeLimitExceeded,
			fmt.Sprintf("wall time limit %v exceeded (CPU time used %v): the program was sleeping or waiting", l.Wall, res.CPU.Round(time.Millisecond))
		rr.waited = true
	case res.MaxRSS > l.Memory:
		rr.Verdict, rr.Message = MemoryLimitExceeded, fmt.Sprintf("peak memory %s over the limit %s", formatBytes(res.MaxRSS), memoryLimitText(l))
	case res.Signal == syscall.SIGXFSZ:
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("file size limit %s exceeded", formatBytes(l.FileSize))
	case res.ExecErr == syscall.ENOMEM || res.ExecErr == syscall.E2BIG:
		// A binary whose static data alone exceeds the memory limit cannot even
		// be loaded.
		rr.Verdict, rr.Message = MemoryLimitExceeded, "the program does not fit in the memory limit"
	case res.ExecErr != 0:
		rr.Verdict, rr.Message = InternalError, "could not start the program: "+res.ExecErr.Error()
	case abnormal && hasAny(strings.ToLower(stderr), []string{"file too large", "no space left on device"}):
		// Runtimes that ignore SIGXFSZ (Python) see EFBIG instead; ENOSPC is the
		// scratch space (as large as the file size limit) being full.
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("file size limit %s exceeded", formatBytes(l.FileSize))
	case abnormal && hasAny(stderr, lang.OutOfMemoryMarkers):
		rr.Verdict, rr.Message = MemoryLimitExceeded, "allocation failed at the memory limit "+memoryLimitText(l)
	case res.Signal != 0:
		rr.Verdict, rr.Message = RuntimeError, "killed by "+sandbox.SignalName(res.Signal)
	case res.ExitCode != 0:
		rr.Verdict, rr.Message = RuntimeError, fmt.Sprintf("exit code %d", res.ExitCode)
	default:
		rr.Verdict = Accepted
	}
	return rr
}

// Close removes the build directory, after waiting for running runs. Later
// runs return ErrClosed.
func (p *Program) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	sandbox.RemoveAll(p.dir)
	return nil
}

// Run compiles source, runs it once and cleans up: the convenience form of
// Compile + Program.Run for one-shot runs. Errors are those of Compile and
// Program.Run.
func (e *Engine) Run(ctx context.Context, language, source string, opts RunOptions) (RunResult, error) {
	p, err := e.Compile(ctx, language, source)
	if err != nil {
		return RunResult{}, err
	}
	defer p.Close()
	return p.Run(ctx, opts)
}

func hasAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// truncate cuts s to at most n bytes and makes it valid UTF-8 (program output
// may be binary; results end up in JSON).
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}

// cpuLimitText shows the problem's CPU limit and the runtime's allowance.
func cpuLimitText(l effLimits) string {
	if extra := l.CPU - l.userCPU; extra > 0 && l.userCPU > 0 {
		return fmt.Sprintf("%v (+%v for the runtime)", l.userCPU, extra)
	}
	return l.CPU.String()
}

// memoryLimitText shows the problem's limit and the runtime's allowance.
func memoryLimitText(l effLimits) string {
	if extra := l.Memory - l.userMemory; extra > 0 {
		return fmt.Sprintf("%s (+%s for the runtime)", formatBytes(l.userMemory), formatBytes(extra))
	}
	return formatBytes(l.Memory)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
