// Package judge is AlgoItny's sandboxed engine that compiles users' programs,
// runs them against test cases under resource limits and judges their output.
// It knows nothing of DynamoDB, GraphQL or jobs: the API server, the River
// workers (code execution, test generation) and the `algoitny judge` CLI all
// use it the same way.
//
// # API
//
//	e, err := judge.New(judge.Config{})          // checks bwrap and the toolchains
//	defer e.Close()
//	e.Languages()                                // every language, Available or not (and why)
//
//	// Judge a submission: compile once, run every test (in parallel), check.
//	res, err := e.Judge(ctx, judge.Submission{
//		Language: "cpp", Source: src,
//		Tests:    []judge.TestCase{{Input: in, Expected: out}, {InputFile: "7.in", ExpectedFile: "7.out"}},
//		Limits:   judge.Limits{CPUTime: time.Second, MemoryBytes: 256 << 20},
//		Checker:  judge.Checker{Kind: judge.CheckFloat, AbsEps: 1e-6},
//	}, func(tr judge.TestResult) { /* progress: one call per finished test */ })
//
//	// The reusable unit underneath: compile once, run many times (test
//	// generation runs a generator with a seed, then the reference solution).
//	p, err := e.Compile(ctx, "python", gen)
//	defer p.Close()
//	rr, err := p.Run(ctx, judge.RunOptions{Args: []string{"42"}, Stdout: w, Limits: lim})
//
// Verdicts (Verdict) are ACCEPTED, WRONG_ANSWER, TIME_LIMIT_EXCEEDED,
// MEMORY_LIMIT_EXCEEDED, RUNTIME_ERROR, OUTPUT_LIMIT_EXCEEDED, COMPILATION_ERROR
// and INTERNAL_ERROR. A compilation error is a Result, not an error; limit
// violations and crashes are per-test verdicts. Errors are the sentinels in
// errors.go (ErrSandboxUnavailable, ErrUnknownLanguage, ErrLanguageUnavailable,
// ErrCompilation via *CompileError, ErrInvalidInput, ErrSandboxFailed,
// ErrClosed) and the context's error, for the caller to map once.
//
// # Sandbox
//
// Every compile, run and custom-checker run happens inside bubblewrap:
//
//   - new user, pid, network, IPC, UTS and cgroup namespaces (only loopback,
//     no way out; no nested user namespaces; the program runs without any
//     capability);
//   - a read-only view of /usr, the /bin-style links and an allowlist of /etc
//     (dynamic linker, JVM and Python configuration; a passwd and group of
//     its own, root and nobody) — never /etc as a whole, the host's
//     accounts, the home directories or the server's files; the root and
//     /dev are remounted read-only;
//   - one writable directory, /box (also /tmp and $HOME): a tmpfs of its own
//     for every run, capped at Limits.FileSizeBytes in total, never visible on
//     the host and gone with the run (unsandboxed: a fresh host directory,
//     removed with os.RemoveAll, which never follows symlinks);
//   - the program's directory /prog read-only (output of the compiler,
//     re-owned by the engine and made read-only after compilation);
//   - a fixed environment: PATH, HOME, TMPDIR, LANG, LC_ALL (and PWD set by
//     bwrap) plus the language's own variables. Nothing of the server's
//     environment (session secret, API keys, AWS credentials, DATABASE_URL)
//     reaches user code;
//   - a system call filter (seccomp, set by the supervisor before the
//     program starts; it holds for compilers and checkers too): System V
//     shared memory and message queues, memfd and userfaultfd — memory that
//     no rlimit bounds and no RSS shows, which could exhaust the host — and
//     io_uring, bpf, perf events, the keyrings, mounts and new namespaces
//     (so no nested user namespace even with a bubblewrap older than 0.8)
//     fail with ENOSYS, as on a kernel without them;
//   - stdin, stdout and stderr are pipes; the engine never opens a file in a
//     directory the program could write. A custom checker's input, output and
//     answer files live in a directory of the engine's that the program never
//     sees (files created O_EXCL|O_NOFOLLOW). This is what defeats the symlink
//     attacks that compromised Judge0 (CVE-2024-28185, CVE-2024-28189).
//
// When the engine runs as root, each concurrent run gets a host uid of its own
// (Config.UIDBase+1...), compilers run as UIDBase; without root every run uses
// the engine's uid inside its own user namespace.
//
// Without bubblewrap New returns ErrSandboxUnavailable (with the command that
// installs it). Config{Sandbox: SandboxNone, AllowUnsandboxed: true} runs code
// as plain processes with the same limits, for local development only: no
// isolation of files or network, and without root no process-count limit.
//
// # Supervisor
//
// A small C program (reaper/reaper.c, embedded and built once per machine
// with the system C compiler into Config.CacheDir) is the sandbox's pid 1. It
// sets the rlimits, forks the program, reaps every process and reports the
// exit status and rusage (CPU time, peak RSS) on a pipe the program cannot
// reach, and is not ptrace-able by it. A separate process is needed because Go
// starts children with vfork, so the kernel would report the judge's own peak
// RSS as every child's ru_maxrss. On SIGTERM it kills everything in the
// sandbox and still reports, which is how the engine stops a run without
// orphaning processes.
//
// # Sandboxes started ahead of need
//
// Setting a sandbox up (namespaces, mounts, the supervisor) is most of what
// a run costs beyond the program itself. A Program run again with the same
// command, limits and mounts (the tests of a submission) gets a sandbox that
// was started while its previous run went on: the supervisor has set up
// everything and waits for one byte on a pipe before it forks the program
// (warm.go). Each sandbox still serves one run; at most Workers wait per
// Program, for at most 10 s, and Close discards them.
//
// # Limits
//
// Limits are per test; the language adds its allowance (Language.ExtraTime,
// ExtraMemoryBytes, ExtraProcesses).
//
//   - CPU time (user+system of every process and thread) decides
//     TIME_LIMIT_EXCEEDED, so tests running in parallel do not distort each
//     other's verdicts. A watchdog reads the process tree's CPU time and
//     resident set from /proc every 50 ms (sooner near the end of the
//     budget) and stops it a few milliseconds past the limit; RLIMIT_CPU is
//     a backstop.
//   - Wall time (at least 2×CPU; default 2×CPU+1s) catches sleeping or blocked
//     programs; they get TIME_LIMIT_EXCEEDED with a message saying so. The
//     watchdog also notes, at each look, whether a thread of the program
//     is running or waiting for a CPU: a program the wall limit stops while
//     it was so at least half the time was computing on a busy machine, and
//     its message says that (with the CPU time it got) instead.
//   - Memory: see below. Peak RSS above the limit (of the largest process,
//     or of the whole tree as the watchdog sees it), or a death by a failed
//     allocation (std::bad_alloc, MemoryError, OutOfMemoryError, "out of
//     memory", ...), is MEMORY_LIMIT_EXCEEDED; so is a native executable whose
//     static data alone exceeds the limit (checked from its ELF headers).
//   - Output: stdout (or stderr; a compiler's or a checker's only past
//     64 MB) beyond Limits.OutputBytes kills the program
//     (OUTPUT_LIMIT_EXCEEDED); files are bounded by RLIMIT_FSIZE
//     (Limits.FileSizeBytes, SIGXFSZ or "File too large" is
//     OUTPUT_LIMIT_EXCEEDED).
//   - Processes: RLIMIT_NPROC, per user namespace (and per run uid), bounds
//     processes and threads; fork bombs stall at the limit.
//   - On a limit, on context cancellation or when the program exits, nothing
//     it started survives: the supervisor is pid 1 of the pid namespace (it
//     kills and reaps what the program left before it reports, so their CPU
//     time counts), and the engine also kills whatever still has the run's
//     uid.
//
// # Memory per language
//
// RLIMIT_AS cannot be used uniformly: the JVM, Go and V8 reserve gigabytes of
// address space they never touch. Language.MemoryPolicy chooses:
//
//   - C, C++, Python: RLIMIT_AS = limit + allowance + a little slack for
//     shared libraries; RLIMIT_STACK = the limit (deep recursion works).
//   - Go: RLIMIT_DATA (private writable memory, which excludes PROT_NONE
//     reservations) = limit + slack, GOMEMLIMIT = limit, GOMAXPROCS=1,
//     a generous RLIMIT_AS as backstop.
//   - JavaScript: RLIMIT_DATA as for Go, --max-old-space-size = limit,
//     --v8-pool-size=1. Node writes to a pipe asynchronously: a program that
//     prints in a busy loop with process.stdout.write only queues output;
//     fs.writeSync(1, ...) is the reliable way.
//   - Java: -Xmx = limit, -Xss64m, SerialGC, ActiveProcessorCount=1, one
//     second of extra CPU time and 96 MiB for the JVM itself; no RLIMIT_DATA
//     (every thread's -Xss64m stack counts against it), so the watchdog polls
//     the resident set every 50 ms and kills the run above the limit; a
//     generous RLIMIT_AS is the backstop.
//
// # Checkers
//
// The built-in checkers follow testlib's standard ones and compare streams
// block by block, so very large expected outputs (TestCase.ExpectedFile) are
// never loaded into memory: CheckLines (default: trailing whitespace, CRLF,
// trailing blank lines and a missing final newline are ignored), CheckTokens,
// CheckExact, CheckFloat (absolute or relative error), CheckYesNo. CheckCustom
// runs a checker program in the sandbox as `checker input output answer`:
// exit 0 accepted, 1 wrong answer, anything else INTERNAL_ERROR; the status
// decides, never what it printed.
// Checker.Compare is usable on its own.
//
// # Concurrency
//
// Config.Workers bounds the sandboxed processes of the whole engine (default:
// the number of CPUs), shared by every Judge and Run call. Judge compiles once,
// runs tests concurrently and calls its progress callback serially.
// Cancelling the context kills running processes at once.
//
// # Benchmark
//
//	go test -run '^$' -bench SandboxOverhead -benchtime 3x ./internal/judge/
//
// compares a sandboxed run with the same program run directly and reports
// Judge's throughput at full concurrency.
package judge
