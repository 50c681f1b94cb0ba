// Package sandbox runs the judge's programs — compilers, users'
// programs, checkers, interactors — in bubblewrap under limits, and
// reports what each used: the judge's one question of it is Run (a
// program, its limits; its usage back). It knows nothing of languages or
// verdicts: package judge chooses the limits and reads the usage.
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
//     re-owned by the sandbox and made read-only after compilation);
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
//   - stdin, stdout and stderr are pipes, and the program alone holds the
//     writing end of its stdout (bubblewrap's and the supervisor's own fd 1
//     is /dev/null; a held sandbox's supervisor closes its copy once the
//     program is started), so its end is read as soon as the program
//     closes it (Request.StdoutEnd); the sandbox never opens a file in a
//     directory the program could write. A custom checker's input, output and
//     answer files live in a directory of the sandbox's that the program never
//     sees (files created O_EXCL|O_NOFOLLOW). This is what defeats the symlink
//     attacks that compromised Judge0 (CVE-2024-28185, CVE-2024-28189).
//
// When the sandbox runs as root, each concurrent run gets a host uid of its own
// (Config.UIDBase+1...), compilers run as UIDBase; without root every run uses
// the sandbox's uid inside its own user namespace.
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
// how the sandbox stops a run without orphaning processes.
//
// # Held sandboxes
//
// Starting bubblewrap (namespaces, the mounts of the read-only system, the
// supervisor) costs ≈ 8–14 ms of CPU and latency per run; a trivial program
// costs ≈ 1–2 ms. So each worker slot (Config.Workers, and the partner
// slot of a sandbox of one worker: Interactive problems) keeps one sandbox,
// set up once by bwrap, whose supervisor ("reaper serve", holder.go) runs
// program after program. The sandbox sends a request on a socket (limits,
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
// every main and TestMain that makes a sandbox, or a second binary to
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
// # Control groups
//
// Where the host offers them (Config.Cgroups, default auto: root, and
// cgroup v2 with the memory and pids controllers delegatable below the
// process's own group, or v1 memory and pids hierarchies — the case of a
// hybrid host), the sandbox makes a group below its own
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
package sandbox
