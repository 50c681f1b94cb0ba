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
//	judge.DetectLanguage(files, e.Languages())   // a package program's language, as problemtools says
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
// Every compile, run and custom-checker run happens inside bubblewrap,
// either in a sandbox started for it or, for runs, in the worker slot's held
// sandbox (below), which gives the same guarantees:
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
// reach, and is not ptrace-able by it (nor can the program signal it: it is
// its pid namespace's init). A separate process is needed because Go
// starts children with vfork, so the kernel would report the judge's own peak
// RSS as every child's ru_maxrss. On SIGTERM (a held sandbox: a "kill"
// message) it kills everything in the sandbox and still reports, which is
// how the engine stops a run without orphaning processes.
//
// # Held sandboxes
//
// Starting bubblewrap (namespaces, the mounts of the read-only system, the
// supervisor) costs ≈ 8–14 ms of CPU and latency per run; a trivial program
// costs ≈ 1–2 ms. So each worker slot (Config.Workers, and the partner
// slot of an engine of one worker: Interactive problems) keeps one sandbox,
// set up once by bwrap, whose supervisor ("reaper serve", holder.go) runs
// program after program. The engine sends a request on a socket (limits,
// mounts, environment, command, and the program's stdin, stdout and stderr
// as file descriptors). The supervisor makes the sandbox's mounts the
// run's: /box a fresh tmpfs of the run's size unless the last run left it
// untouched (its ctime — which any file made or removed, any change of
// mode, owner, times or attributes sets, and no program can — unchanged),
// the program's directories bound read-only at /prog (and a custom
// checker's files at /check, unmounted for a run without them) from the
// work directory, which is covered by an empty mount and reached through
// a descriptor of the supervisor's. Then it clones the program into an IPC
// namespace of its own, which drops every capability, sets the rlimits
// and the system call filter and execs. When the program exits (or the
// engine asks), every other process of the sandbox is killed and reaped
// and the report goes back; a /box the run changed is replaced after it.
// So between runs nothing of the last run is alive, nothing it wrote is
// reachable, its IPC objects went with its IPC namespace, the rest of the
// file system is read-only, and no program could hold a capability to
// change the sandbox's network, hostname or mounts. The mount, pid,
// network and UTS namespaces are the slot's (pids go on counting from one
// run to the next; a loopback port a run used may still be in TIME_WAIT
// for the next): a mount namespace per run cost ≈ 0.4 ms more, and mount
// namespaces are made and torn down under system-wide locks, which kept
// two slots from running twice as many tests as one. The supervisor keeps
// CAP_SYS_ADMIN and CAP_SETPCAP over its own user namespace only (mounts,
// dropping its children's bounding set), never for a program. A held
// sandbox runs as the slot's uid (Config.UIDBase+1...), ends after
// Config.WarmIdle without a run and is restarted by the next; a negative
// WarmIdle, a host where one does not start (New tries), or a compile
// (writable mounts) starts a sandbox per run as before.
// Engine.SandboxInfo says which.
//
// Why not github.com/criyle/go-sandbox (the library under go-judge, whose
// pre-forked container runs programs through vfork at ≈ +1.5 ms here): its
// container init is the judge's own binary re-executed (container.Init in
// every main and TestMain that makes an engine, or a second binary to
// build and ship), a Go runtime per slot; its mounts are fixed when the
// container starts, so every run's program and checker files would be
// copied into it (and out, for compiles) instead of bound read-only; it
// resets the container by deleting files in its work and temporary
// directories and keeps one IPC namespace for all runs; and it brings its
// own seccomp, mount and rlimit layers, to be set up again to match the
// guarantees above (the hostile tests). It would have replaced the warm
// pool and the per-run start (≈ 250 lines) and still needed the rest of
// this package. The same shape here is ≈ 470 lines of C added to the
// supervisor we already had and ≈ 560 of Go (holder.go; control groups,
// cgroup.go, ≈ 370, would be needed either way); it keeps bwrap's tested
// layout and the seccomp filter, and measures ≈ +1 ms p50 per test (2.0–2.8
// ms of CPU against 1.4–2.0 for the bare run) on a loaded 2-core machine
// (BenchmarkJudgeOverhead).
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
//     of the whole tree as the watchdog sees it, or — held runs on a host
//     with control groups — the tree's exact peak as its slot's group
//     counted it, files in /box included), or a death by a failed
//     allocation (std::bad_alloc, MemoryError, OutOfMemoryError, "out of
//     memory", ...), is MEMORY_LIMIT_EXCEEDED; so is a native executable whose
//     static data alone exceeds the limit (checked from its ELF headers).
//   - Output: stdout (or stderr; a compiler's or a checker's only past
//     64 MB) beyond Limits.OutputBytes kills the program
//     (OUTPUT_LIMIT_EXCEEDED); files are bounded by RLIMIT_FSIZE
//     (Limits.FileSizeBytes, SIGXFSZ or "File too large" is
//     OUTPUT_LIMIT_EXCEEDED).
//   - Processes: RLIMIT_NPROC, per user namespace (and per run uid), bounds
//     processes and threads; fork bombs stall at the limit. Held runs with
//     control groups are also bounded by their group's pids.max. It counts
//     threads and processes alike, so the threads a runtime is allowed
//     (Language.ExtraProcesses: a JVM's, Go's, Node's) would let its program
//     start as many processes — a shell through ProcessBuilder, os/exec or
//     child_process. With Limits.MaxProcesses 1 (the default, and every
//     checker's and interactor's) the system call filter therefore refuses
//     any clone that does not make a thread, and fork and vfork (EAGAIN):
//     no program starts a process of its own, in any language.
//   - On a limit, on context cancellation or when the program exits, nothing
//     it started survives: the supervisor is pid 1 of the pid namespace (it
//     kills and reaps what the program left before it reports, so their CPU
//     time counts), and the engine also kills whatever still has the run's
//     uid.
//
// # Control groups
//
// Where the host offers them (Config.Cgroups, default auto: root, and
// cgroup v2 with the memory and pids controllers delegatable below the
// process's own group, or v1 memory and pids hierarchies — the case of a
// hybrid host), the engine makes a group below its own
// (algoitny-judge-<pid>-<n>, nested, so that limits on the server hold for
// its programs) and one per slot (a partner slot included), which its held
// sandbox joins when it starts. Before each run the slot's group gets
// memory.limit = the run's memory limit + its file size limit (tmpfs pages
// are charged) + 64 MiB (a backstop: the kernel stops the tree there) and
// pids.max = processes + 1, and its peak is reset; after the run the peak above what
// the group held before is the tree's peak memory (less what of the
// group's page cache the kernel reclaimed meanwhile, so never more), which
// counts in the verdict like the largest process's ru_maxrss. Without them (CgroupOff,
// not root, no controllers, a v2 host whose group cannot delegate),
// memory is what it was: ru_maxrss and the watchdog's 50 ms polls of the
// tree (a spike between two polls of a multi-process tree is missed), and
// processes RLIMIT_NPROC alone. Engine.SandboxInfo says which.
//
// # Memory per language
//
// The language table is data (languages.json, built in; LoadLanguages
// reads an operator's file on top of it, langfile.go documents the
// format). RLIMIT_AS cannot be used uniformly: the JVM, Go, V8, Mono and
// GHC reserve gigabytes of address space they never touch.
// Language.MemoryPolicy chooses:
//
//   - C, C++, Rust, Python: RLIMIT_AS = limit + allowance + a little slack for
//     shared libraries; RLIMIT_STACK = the limit (deep recursion works).
//     PyPy, Ruby and PHP likewise, with more slack (PyPy's nursery, Ruby's
//     stack reservations) and their own heap limits where they have one
//     (PYPY_GC_MAX, PHP's memory_limit = the limit).
//   - C# (Mono) and Haskell (GHC): RLIMIT_DATA as for Go below, with the
//     runtime's heap bounded by the limit (MONO_GC_PARAMS max-heap-size,
//     GHC's +RTS -M); GHC reserves a terabyte PROT_NONE, so no RLIMIT_AS.
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
//     generous RLIMIT_AS is the backstop. Kotlin runs on the same JVM with
//     the same settings (a jar holding its runtime).
//
// # Checkers
//
// The built-in checkers follow testlib's standard ones and compare streams
// block by block, so very large expected outputs (TestCase.ExpectedFile) are
// never loaded into memory: CheckLines (default: trailing whitespace, CRLF,
// trailing blank lines and a missing final newline are ignored), CheckTokens,
// CheckExact, CheckFloat (absolute or relative error), CheckYesNo. CheckCustom
// runs a checker program in the sandbox as `checker input output answer`,
// its exit status read as testlib's: 0 accepted, 1 wrong answer, 2
// (presentation error) wrong answer, 3 (FAIL) INTERNAL_ERROR, 7 points
// (TestResult.Points, the one case its message is read: "points X" as quitp
// writes it), anything else INTERNAL_ERROR; otherwise the status decides,
// never what it printed. A checker and an interactor are a problem
// author's programs: their limits are derived from the test's (its CPU
// time, at least one second, at most Config.CheckerLimits.CPUTime; wall
// time 2×CPU + 1 s), so one that hangs or spins costs about what the test
// may cost, and one that does not end on its own is INTERNAL_ERROR naming
// it ("checker exceeded its time limit: …", "interactor was killed by
// SIGSEGV"), never the contestant's verdict. C++ checkers compiled through Judge or
// Engine.CompileChecker find a testlib-compatible testlib.h next to their
// source (testlib/testlib.h, embedded).
// Checker.Compare is usable on its own.
//
// # Concurrency
//
// Config.Workers bounds the sandboxed processes of the whole engine (default:
// the number of CPUs), shared by every Judge and Run call — but for the
// interactor that an engine of one worker runs beside its solution (see
// below). Judge compiles once, runs tests concurrently and calls its
// progress callback serially. Cancelling the context kills running
// processes at once.
//
// # Interactive problems
//
// A Submission with an Interactor runs, for each test, the solution and the
// interactor at once on two worker slots (taken together, so interactive
// tests never wait on each other's half), each in its own sandbox with its
// own limits; the engine pipes each one's standard output into the other's
// standard input. An engine of one worker judges them too: it keeps one
// more slot, a partner slot (its own held sandbox, uid and control group,
// like any slot), that only an interactor runs on, so its interactive
// tests run one pair at a time as its other tests run one at a time. The
// interactor is run as testlib runs one, `interactor input output
// answer`, and its exit status is the verdict (0 OK, 1 WA, 2 PE, 3 FAIL,
// 7 points, 8 unexpected EOF). The solution's own failures (limits,
// crashes) win over the interactor's rejection unless they came after it;
// the interactor failing is INTERNAL_ERROR; the solution's wall time is
// the idleness limit of a pair waiting on each other, and a solution still
// running a second after the interactor ended is killed. When the solution
// is stopped while it waited, an interactor that was waiting for it ends
// at the end of its output (the solution is TIME_LIMIT_EXCEEDED); one that
// does not was stuck itself, and is stopped at its own limits: a judge
// failure, "interactor exceeded its time limit".
//
// # Benchmark
//
//	go test -run '^$' -bench JudgeOverhead -benchtime 1x -count 5 ./internal/judge/
//
// alternates a Program.Run of a precompiled C A+B with the very same
// executable run by os/exec and reports the p50 of each and of their
// difference, then Judge's tests/s on 200 tests with 1 and with 2 worker
// slots (alternating rounds; the bare executable 1 and 2 at a time gives
// the machine's own ratio), with the load average.
//
//	go test -run '^$' -bench SandboxOverhead -benchtime 3x ./internal/judge/
//
// compares sandboxed runs of C++ and Python with the same programs built
// and run directly and reports Judge's throughput at full concurrency.
package judge
