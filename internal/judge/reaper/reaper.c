/*
 * reaper: the process supervisor of the AlgoItny judge (internal/judge).
 *
 * It runs as pid 1 of the sandbox (bwrap --as-pid-1), or as the direct child of
 * the judge when unsandboxed. It sets the resource limits and a system call
 * filter, forks the program, reaps every process that ends up as its child
 * (when the program exits, whatever it left is killed and reaped first, so
 * that their CPU time counts), and reports the program's exit status and
 * resource usage on a pipe the program cannot reach.
 *
 * Why a separate binary: the judge is a Go program, and Go starts children with
 * vfork, so the kernel records the judge's own peak RSS as the child's
 * ru_maxrss at exec. Only a small process that forks the program itself can
 * measure the program's peak memory.
 *
 * SIGTERM asks it to kill the program: everything in the sandbox when it is
 * pid 1 of the sandbox's pid namespace, the program's process group otherwise.
 * It still reports (status will show SIGKILL), so the judge learns the usage of
 * a program it stopped at a limit.
 *
 * Usage: reaper FD [key=value...] -- command [args...]
 *   FD   file descriptor receiving the report (closed before exec)
 *   keys cpu (seconds; hard limit is cpu+1), as, data, fsize, stack (bytes),
 *        nproc, nofile, core; and wait=FD: read one byte from FD before
 *        starting the program, exit 0 without starting it (and without a
 *        report) on end of file — the judge starts sandboxes ahead of need
 *        and lets them go when a run comes
 * Report (one line): status=N utime_us=N stime_us=N maxrss_kb=N execerr=N
 *   status is the raw wait status of the program; execerr the errno of a failed
 *   exec (0 when the program started).
 *
 * Built once per machine by the judge with the system C compiler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

/*
 * The system calls the program (and the compiler) may not make: they answer
 * ENOSYS, as on a kernel without them, and runtimes fall back.
 *   - memory that no limit sees and no RSS shows: System V shared memory and
 *     message queues (the sandbox's IPC namespace has no bound of its own),
 *     memfd (file memory counted against nothing), userfaultfd;
 *   - kernel surface no judged program needs: io_uring, bpf,
 *     perf_event_open, the keyrings, mounts, and new namespaces (unshare,
 *     setns, clone with a CLONE_NEW* flag; clone3, whose flags a filter
 *     cannot read, so that the C library falls back to clone).
 * Other ABIs (32-bit, x32) get nothing.
 */
#if defined(__x86_64__)
#define JUDGE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define JUDGE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the judge's supervisor knows the system calls of x86_64 and aarch64 only"
#endif

#define DENIED (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, DENIED)
#define NEW_NAMESPACES                                                                                     \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

static int deny_syscalls(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, JUDGE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, DENIED),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 */
		BPF_STMT(BPF_RET | BPF_K, DENIED),
#endif
		/* clone: allowed unless it asks for a new namespace (flags: arg 0). */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NAMESPACES, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, DENIED),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		DENY(__NR_clone3),
		DENY(__NR_unshare),
		DENY(__NR_setns),
		DENY(__NR_shmget),
		DENY(__NR_msgget),
		DENY(__NR_memfd_create),
		DENY(__NR_userfaultfd),
#ifdef __NR_memfd_secret
		DENY(__NR_memfd_secret),
#endif
		DENY(__NR_io_uring_setup),
		DENY(__NR_io_uring_enter),
		DENY(__NR_io_uring_register),
		DENY(__NR_bpf),
		DENY(__NR_perf_event_open),
		DENY(__NR_add_key),
		DENY(__NR_request_key),
		DENY(__NR_keyctl),
		DENY(__NR_mount),
		DENY(__NR_umount2),
		DENY(__NR_pivot_root),
		DENY(__NR_open_tree),
		DENY(__NR_move_mount),
		DENY(__NR_fsopen),
		DENY(__NR_fsmount),
		DENY(__NR_fspick),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

struct named_limit {
	const char *key;
	int resource;
};

static const struct named_limit names[] = {
	{"cpu", RLIMIT_CPU},     {"as", RLIMIT_AS},       {"data", RLIMIT_DATA},
	{"fsize", RLIMIT_FSIZE}, {"stack", RLIMIT_STACK}, {"nproc", RLIMIT_NPROC},
	{"nofile", RLIMIT_NOFILE}, {"core", RLIMIT_CORE},
};

struct limit {
	int resource;
	rlim_t value;
};

static volatile pid_t child;
static volatile sig_atomic_t terminated;

static void on_term(int sig)
{
	(void)sig;
	terminated = 1;
	if (getpid() == 1)
		kill(-1, SIGKILL); /* every other process of the namespace */
	else if (child > 0)
		kill(-child, SIGKILL);
}

int main(int argc, char **argv)
{
	struct limit limits[16];
	int nlimits = 0, i, out, errpipe[2], execerr = 0, status = 0, waitfd = -1;
	pid_t pid;
	struct rusage ru;

	if (argc < 4) {
		fputs("usage: reaper FD [key=value...] -- command [args...]\n", stderr);
		return 125;
	}
	out = atoi(argv[1]);
	/* The program runs as the same uid: it must not ptrace its supervisor to
	 * forge the report. */
	prctl(PR_SET_DUMPABLE, 0);
	/* Unsandboxed, orphans come back to us instead of the host's init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (fcntl(out, F_SETFD, FD_CLOEXEC) < 0) {
		perror("reaper: report fd");
		return 125;
	}
	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		char *eq = strchr(argv[i], '=');
		size_t k, n = eq ? (size_t)(eq - argv[i]) : 0;
		int found = 0;
		if (eq && n == 4 && strncmp(argv[i], "wait", 4) == 0) {
			waitfd = atoi(eq + 1);
			if (fcntl(waitfd, F_SETFD, FD_CLOEXEC) < 0) {
				perror("reaper: wait fd");
				return 125;
			}
			continue;
		}
		for (k = 0; eq && k < sizeof names / sizeof names[0]; k++) {
			if (strlen(names[k].key) == n && strncmp(names[k].key, argv[i], n) == 0 &&
			    nlimits < (int)(sizeof limits / sizeof limits[0])) {
				limits[nlimits].resource = names[k].resource;
				limits[nlimits].value = (rlim_t)strtoull(eq + 1, NULL, 10);
				nlimits++;
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "reaper: bad limit %s\n", argv[i]);
			return 125;
		}
	}
	if (i >= argc - 1) {
		fputs("reaper: missing command\n", stderr);
		return 125;
	}
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		perror("reaper: pipe");
		return 125;
	}
	{
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, NULL);
	}
	if (waitfd >= 0) {
		char go;
		ssize_t n;
		do
			n = read(waitfd, &go, 1);
		while (n < 0 && errno == EINTR);
		close(waitfd);
		if (n != 1)
			return 0; /* discarded: nothing ran, nothing to report */
	}
	if (terminated)
		return 0; /* stopped before the program started: nothing to report */
	pid = fork();
	if (pid < 0) {
		perror("reaper: fork");
		return 125;
	}
	if (pid == 0) {
		int k, e;
		close(errpipe[0]);
		setpgid(0, 0);
		for (k = 0; k < nlimits; k++) {
			struct rlimit rl;
			rl.rlim_cur = limits[k].value;
			rl.rlim_max = limits[k].value;
			if (limits[k].resource == RLIMIT_CPU)
				rl.rlim_max = limits[k].value + 1; /* SIGXCPU first, SIGKILL 1s later */
			if (setrlimit(limits[k].resource, &rl) < 0) {
				e = errno;
				if (write(errpipe[1], &e, sizeof e) < 0)
					_exit(125);
				_exit(125);
			}
		}
		if (deny_syscalls() < 0) {
			e = errno;
			if (write(errpipe[1], &e, sizeof e) < 0)
				_exit(125);
			_exit(125);
		}
		execvp(argv[i + 1], argv + i + 1);
		e = errno;
		if (write(errpipe[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	child = pid;
	close(errpipe[1]);
	if (read(errpipe[0], &execerr, sizeof execerr) != (ssize_t)sizeof execerr)
		execerr = 0;
	close(errpipe[0]);
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w == pid) {
			status = st;
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
	}
	/* The program's background processes end with it, and what they used
	 * counts: every process left is killed (the whole pid namespace in the
	 * sandbox, the program's process group otherwise) and reaped before the
	 * usage is read (orphans come back to us, pid 1 or subreaper). */
	if (getpid() == 1) {
		kill(-1, SIGKILL);
		for (;;) {
			pid_t w = waitpid(-1, NULL, 0);
			if (w < 0 && errno != EINTR)
				break;
		}
	} else {
		/* Unsandboxed, a process that left the group (setsid) is not
		 * killed: reap what dies within 100 ms, never wait for it. */
		int idle = 0;
		kill(-pid, SIGKILL);
		while (idle < 100) {
			pid_t w = waitpid(-1, NULL, WNOHANG);
			if (w < 0 && errno != EINTR)
				break;
			if (w <= 0) {
				usleep(1000);
				idle++;
			}
		}
	}
	getrusage(RUSAGE_CHILDREN, &ru);
	dprintf(out, "status=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld execerr=%d\n", status,
		(long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
		(long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec, (long)ru.ru_maxrss,
		execerr);
	return 0;
}
