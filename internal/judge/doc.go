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
// Every compile, run and custom-checker run happens in package sandbox
// (internal/judge/sandbox): bubblewrap, the C supervisor, the slots' held
// sandboxes, control groups, the per-run uids. Its one question is run a
// program with limits and report its usage (sandbox.Runner); the engine
// keeps the languages, compilation, tests, checkers and interactors, and
// turns each usage into a verdict (classify). sandbox's package
// documentation says what a program can and cannot do in it.
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
//     no program starts a process of its own, in any language. Threads of
//     the program's own are Limits.MaxThreads (none for a submission by
//     default; AuthorThreads for checkers, interactors, validators and
//     generators).
//   - On a limit, on context cancellation or when the program exits, nothing
//     it started survives: the supervisor is pid 1 of the pid namespace (it
//     kills and reaps what the program left before it reports, so their CPU
//     time counts), and the engine also kills whatever still has the run's
//     uid.
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
// writes it, read with the Checker's PointsScale — a fraction, a
// percentage or the test's own TestCase.Points — and reported as the
// fraction of the test; points beyond what the scale allows are
// INTERNAL_ERROR), anything else INTERNAL_ERROR; otherwise the status decides,
// never what it printed. A checker and an interactor are a problem
// author's programs: their limits are derived from the test's (its CPU
// time, at least one second, at most Config.CheckerLimits.CPUTime; wall
// time 2×CPU + 1 s), so one that hangs or spins costs about what the test
// may cost, and one that does not end on its own is INTERNAL_ERROR naming
// it ("checker exceeded its time limit: …", "interactor was killed by
// SIGSEGV"), never the contestant's verdict. C++ author programs — checkers
// and interactors compiled through Judge, anything compiled with
// Engine.CompileAuthor (validators, generators) — find a testlib-compatible
// testlib.h next to their source (testlib/testlib.h, embedded) unless they
// bring their own.
// CheckICPC runs an ICPC output validator (42 accepted, 43 wrong answer,
// its feedback directory's files read); with Checker.Passes (or
// Interactor.Passes for an ICPC interactive validator) a test is
// multi-pass: while the validator accepts and leaves nextpass.in, the
// program runs again on it (runPasses), the feedback directory kept.
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
// 7 points, 8 unexpected EOF). Either side reads the end of its input
// when the other closes its output, as through a plain pipe, even while the
// other goes on running (a solution that closes its output and waits for
// the interactor to close its own): 200 ms after that close if the closer
// still runs, at once once it has ended (its supervisor's report says when,
// on the machine's monotonic clock). The solution's own failures (limits,
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
