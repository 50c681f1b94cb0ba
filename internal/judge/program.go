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
	slot *slot
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
	dir, err := os.MkdirTemp(e.workDir, "prog-")
	if err != nil {
		return nil, err
	}
	p := &Program{e: e, lang: lang, dir: dir, build: filepath.Join(dir, "build"), main: main}
	if err := p.compile(ctx, source, files); err != nil {
		removeAll(dir)
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
		return fixBuildPermissions(p.build, p.e.switchUID)
	}
	defer func() { p.staticBytes = staticSize(p.build, p.lang.Run) }()
	var out strings.Builder
	cw := &cappedWriter{b: &out, n: compileOutputMax}
	res, err := p.runCompiler(ctx, cw)
	if err != nil {
		return err
	}
	if res.setupFailed {
		return fmt.Errorf("%w: compile: %s", ErrSandboxFailed, firstLine(string(res.stderr)))
	}
	if res.killed == killCPU || res.killed == killWall {
		return fmt.Errorf("%w: %s (%v of CPU time, %v of wall time; limits %v and %v)", ErrCompilerTimeout, p.lang.ID,
			res.cpu.Round(time.Millisecond), res.wall.Round(time.Millisecond), p.e.cfg.CompileLimits.CPUTime, p.e.cfg.CompileLimits.WallTime)
	}
	if res.killed != killNone || res.exitCode != 0 || res.signal != 0 {
		return p.compileError(res, out.String(), cw.truncated)
	}
	return fixBuildPermissions(p.build, p.e.switchUID)
}

// writeSource makes the build directory and writes the source into it.
func (p *Program) writeSource(source string) error {
	if p.e.switchUID {
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
// cache) on a worker slot, its standard output going to stdout.
func (p *Program) runCompiler(ctx context.Context, stdout io.Writer) (spawnRes, error) {
	e := p.e
	uid := e.compileUID
	if e.switchUID {
		if err := os.Chown(p.build, uid, uid); err != nil {
			return spawnRes{}, err
		}
	}
	mounts := []mount{{src: p.build, dst: progDir, rw: true}}
	vars := memoryVars(e.cfg.CompileLimits.MemoryBytes)
	vars["dir"], vars["cache"], vars["main"] = progDir, cacheDir, p.main
	if !e.sandboxed {
		vars["dir"] = p.build
	}
	if p.lang.CacheDir != "" {
		host, err := e.languageCache(p.lang.CacheDir, uid)
		if err != nil {
			return spawnRes{}, err
		}
		mounts = append(mounts, mount{src: host, dst: cacheDir, rw: true})
		if !e.sandboxed {
			vars["cache"] = host
		}
	}
	_, release, err := e.acquireSlot(ctx)
	if err != nil {
		return spawnRes{}, err
	}
	defer release()
	scratch, err := e.newScratch(uid)
	if err != nil {
		return spawnRes{}, err
	}
	defer removeScratch(scratch)
	return e.spawn(ctx, spawnReq{
		argv: expandAll(p.lang.Compile, vars), env: expandAll(p.lang.Env, vars),
		dir: progDir, hostDir: p.build, scratch: scratch, mounts: mounts,
		uid: e.uidOr(uid), lim: e.cfg.CompileLimits.effective(Language{MemoryPolicy: MemoryDataSegment}),
		stdout: stdout, stderrCap: compileOutputMax,
	})
}

// compileError is the CompileError of a compiler that failed: its standard
// output then error (truncated), and the reason when the engine stopped it.
func (p *Program) compileError(res spawnRes, stdout string, stdoutTruncated bool) *CompileError {
	msg := stdout
	if msg != "" && !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	msg += string(res.stderr)
	truncated := stdoutTruncated || res.stderrTruncated || len(msg) > compileOutputMax
	msg = truncate(msg, compileOutputMax)
	if truncated {
		msg += "\n... (compiler output truncated)"
	}
	ce := &CompileError{Language: p.lang.ID, Output: msg}
	switch {
	case res.killed == killOutput:
		ce.Reason = "compiler output too large"
	case res.killed == killMemory:
		ce.Reason = "compiler exceeded the memory limit"
	case res.signal != 0:
		ce.Reason = "compiler killed by " + signalName(res.signal)
	}
	return ce
}

// languageCache returns the host directory of a language cache, created owned
// by the compile uid. The uid is part of the name so that engines with
// different UIDBase never share (and fight over) one cache.
func (e *Engine) languageCache(name string, uid int) (string, error) {
	dir := filepath.Join(e.cacheDir, fmt.Sprintf("%s-%d", name, os.Geteuid()))
	if e.switchUID {
		dir = filepath.Join(e.cacheDir, fmt.Sprintf("%s-%d", name, uid))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	if e.switchUID {
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
// symlink) and copies r into it.
func writeNew(path string, r io.Reader) error {
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
func (p *Program) run(ctx context.Context, opts RunOptions, checker bool, extra []mount, pathVars map[string]string) (RunResult, error) {
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
	if p.staticBytes > eff.memory {
		return RunResult{Verdict: MemoryLimitExceeded, ExitCode: -1, MemoryBytes: p.staticBytes,
			Message: fmt.Sprintf("the program's static data (%s) exceeds the memory limit %s",
				formatBytes(p.staticBytes), memoryLimitText(eff))}, nil
	}
	vars := memoryVars(lim.MemoryBytes)
	vars["dir"], vars["main"] = progDir, p.main
	if !e.sandboxed {
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
	req := spawnReq{
		argv: argv, env: expandAll(p.lang.Env, vars), dir: boxDir,
		mounts: append([]mount{{src: p.build, dst: progDir}}, extra...), lim: eff,
		stdin: opts.Stdin, stdout: opts.Stdout, stderrCap: stderrMax, boundStderr: !checker,
	}
	res, handled, err := e.runHeld(ctx, s, req)
	if !handled {
		var prepared bool
		if res, prepared, err = p.spawnCold(ctx, req); !prepared {
			return RunResult{Verdict: InternalError, Message: err.Error()}, err
		}
	}
	rr := classify(res, eff, p.lang)
	if err != nil {
		rr.Verdict, rr.Message = InternalError, err.Error()
	}
	return rr, err
}

// spawnCold runs req in a sandbox started for it, with a uid (and,
// unsandboxed, a scratch directory) of its own. prepared is false when the
// run could not be prepared (err says why).
func (p *Program) spawnCold(ctx context.Context, req spawnReq) (res spawnRes, prepared bool, err error) {
	e := p.e
	uid, releaseUID, err := e.acquireRunUID()
	if err != nil {
		return res, false, err
	}
	defer releaseUID()
	scratch, err := e.newScratch(uid)
	if err != nil {
		return res, false, err
	}
	defer removeScratch(scratch)
	req.uid, req.sweepUID, req.hostDir, req.scratch = uid, uid >= 0, scratch, scratch
	res, err = e.spawn(ctx, req)
	return res, true, err
}

// wasRunning says whether a run was computing rather than sleeping or
// blocked, by the watchdog's looks at it: running or ready to run in at
// least half of them (and it looked a few times).
func wasRunning(res spawnRes) bool {
	return res.polls >= 3 && 2*res.runnablePolls >= res.polls
}

// classify turns what the engine observed into a verdict. Order matters: a kill
// by the engine names its reason; then CPU time, peak memory, file size,
// out-of-memory deaths, other crashes.
func classify(res spawnRes, l effLimits, lang Language) RunResult {
	rr := RunResult{
		CPUTime:     res.cpu,
		WallTime:    res.wall,
		MemoryBytes: res.maxRSS,
		ExitCode:    res.exitCode,
		Signal:      signalName(res.signal),
		OutputBytes: res.stdoutBytes,
		Stderr:      truncate(string(res.stderr), stderrMax),
	}
	if res.killed != killNone {
		rr.ExitCode, rr.Signal = -1, "SIGKILL"
	}
	abnormal := res.exitCode != 0 || res.signal != 0
	stderr := string(res.stderr)
	switch {
	case res.setupFailed:
		rr.Verdict, rr.Message = InternalError, "sandbox set-up failed: "+firstLine(stderr)
		rr.Stderr = ""
	case res.killed == killOutput:
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("output exceeded %s", formatBytes(l.output))
	case res.killed == killMemory:
		rr.MemoryBytes = max(rr.MemoryBytes, res.polledRSS)
		rr.Verdict, rr.Message = MemoryLimitExceeded, "memory exceeded "+memoryLimitText(l)
	case res.killed == killCPU || res.cpu >= l.cpu || res.signal == syscall.SIGXCPU:
		rr.Verdict, rr.Message = TimeLimitExceeded, "CPU time limit "+cpuLimitText(l)+" exceeded"
		// The watchdog that stops a program at its limit reads the CPU
		// time of its process tree from /proc; the time reported is the
		// program's own accounting, which can be a few milliseconds short
		// (seen: 993 ms of 1 s). A program stopped for reaching its limit
		// is shown as having reached it.
		rr.CPUTime = max(rr.CPUTime, l.cpu)
	case res.killed == killWall && wasRunning(res):
		// Computing all along, but other work on the machine left it too
		// little CPU to reach its CPU limit within the wall limit.
		rr.Verdict, rr.Message = TimeLimitExceeded,
			fmt.Sprintf("wall time limit %v exceeded while the machine was busy: the program was running, but got only %v of CPU time (limit %s)",
				l.wall, res.cpu.Round(time.Millisecond), cpuLimitText(l))
	case res.killed == killWall:
		rr.Verdict, rr.Message = TimeLimitExceeded,
			fmt.Sprintf("wall time limit %v exceeded (CPU time used %v): the program was sleeping or waiting", l.wall, res.cpu.Round(time.Millisecond))
		rr.waited = true
	case res.maxRSS > l.memory:
		rr.Verdict, rr.Message = MemoryLimitExceeded, fmt.Sprintf("peak memory %s over the limit %s", formatBytes(res.maxRSS), memoryLimitText(l))
	case res.signal == syscall.SIGXFSZ:
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("file size limit %s exceeded", formatBytes(l.fsize))
	case res.execErr == syscall.ENOMEM || res.execErr == syscall.E2BIG:
		// A binary whose static data alone exceeds the memory limit cannot even
		// be loaded.
		rr.Verdict, rr.Message = MemoryLimitExceeded, "the program does not fit in the memory limit"
	case res.execErr != 0:
		rr.Verdict, rr.Message = InternalError, "could not start the program: "+res.execErr.Error()
	case abnormal && hasAny(strings.ToLower(stderr), []string{"file too large", "no space left on device"}):
		// Runtimes that ignore SIGXFSZ (Python) see EFBIG instead; ENOSPC is the
		// scratch space (as large as the file size limit) being full.
		rr.Verdict, rr.Message = OutputLimitExceeded, fmt.Sprintf("file size limit %s exceeded", formatBytes(l.fsize))
	case abnormal && hasAny(stderr, lang.OutOfMemoryMarkers):
		rr.Verdict, rr.Message = MemoryLimitExceeded, "allocation failed at the memory limit "+memoryLimitText(l)
	case res.signal != 0:
		rr.Verdict, rr.Message = RuntimeError, "killed by "+signalName(res.signal)
	case res.exitCode != 0:
		rr.Verdict, rr.Message = RuntimeError, fmt.Sprintf("exit code %d", res.exitCode)
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
	removeAll(p.dir)
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
	if extra := l.cpu - l.userCPU; extra > 0 && l.userCPU > 0 {
		return fmt.Sprintf("%v (+%v for the runtime)", l.userCPU, extra)
	}
	return l.cpu.String()
}

// memoryLimitText shows the problem's limit and the runtime's allowance.
func memoryLimitText(l effLimits) string {
	if extra := l.memory - l.userMemory; extra > 0 {
		return fmt.Sprintf("%s (+%s for the runtime)", formatBytes(l.userMemory), formatBytes(extra))
	}
	return formatBytes(l.memory)
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
