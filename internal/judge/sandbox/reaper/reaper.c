/*
 * reaper: the process supervisor of the AlgoItny judge (internal/judge).
 *
 * Two modes.
 *
 * One run (compilers, version probes, and every run when the judge starts a
 * sandbox per run): it runs as pid 1 of a sandbox (bwrap --as-pid-1), or as
 * the direct child of the judge when unsandboxed. It sets the resource
 * limits and a system call filter, forks the program, reaps every process
 * that ends up as its child (when the program exits, whatever it left is
 * killed and reaped first, so that their CPU time counts), and reports the
 * program's exit status and resource usage on a pipe the program cannot
 * reach.
 *
 *   reaper FD [key=value...] -- command [args...]
 *
 * Held sandbox ("serve"): pid 1 of a sandbox that bwrap set up once for a
 * worker slot, kept with CAP_SYS_ADMIN and CAP_SETPCAP over its own user
 * namespace only. It serves runs one after another on a SOCK_SEQPACKET
 * socket: a request carries the limits, the mounts, the environment and the
 * command as NUL-terminated key=value tokens, and the program's stdin,
 * stdout and stderr as SCM_RIGHTS. Before a run it makes the sandbox's
 * mounts the run's: /box (the scratch space) a fresh tmpfs of the run's
 * size unless the last run left it untouched (its ctime, which no program
 * can set, unchanged), the program's directories bound read-only at /prog
 * and /check from the engine's work directory (covered by an empty mount at
 * start: bound through a descriptor), /check unmounted when the run has
 * none. Then it clones the program into an IPC namespace of its own, which
 * drops every capability, sets the limits and the filter and execs. When
 * the program exits (or a "kill" message comes), every other process of the
 * sandbox is killed and reaped and the report is sent back; a /box the run
 * changed is replaced after the report. End of file on the socket ends
 * the sandbox.
 *
 *   reaper serve FD
 *
 * Why a separate binary: the judge is a Go program, and Go starts children with
 * vfork, so the kernel records the judge's own peak RSS as the child's
 * ru_maxrss at exec. Only a small process that forks the program itself can
 * measure the program's peak memory.
 *
 * SIGTERM (one-run mode) asks it to kill the program: everything in the
 * sandbox when it is pid 1 of the sandbox's pid namespace, the program's
 * process group otherwise. It still reports (status will show SIGKILL), so
 * the judge learns the usage of a program it stopped at a limit. A held
 * sandbox installs no signal handler: nothing in its namespace can signal
 * pid 1; the judge asks on the socket.
 *
 * Keys: cpu (seconds; hard limit is cpu+1), as, data, fsize, stack (bytes),
 *   nproc, nofile, core; nofork=1 (threads but no process, see nofork);
 *   one-shot only: stdout=FD (the program's standard output, handed to it
 *   alone; the supervisor's own fd 1 stays what it was, /dev/null);
 *   serve only: box (size of /box), bind=DST:REL,
 *   cwd, env=K=V and arg=A (in order).
 * Report (one line): status=N utime_us=N stime_us=N maxrss_kb=N execerr=N
 *   setuperr=N setupstep=N exit_ns=N
 *   status is the raw wait status of the program; execerr the errno of a failed
 *   exec (0 when the program started); setuperr and setupstep (serve) say
 *   which step failed when the run's sandbox could not be prepared; exit_ns
 *   is CLOCK_MONOTONIC when the program was reaped (0: it was not).
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
#include <poll.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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
/* A process the program may not make (nofork): the answer of fork at
 * RLIMIT_NPROC, which every runtime reports as such. */
#define NO_PROCESS (SECCOMP_RET_ERRNO | (EAGAIN & SECCOMP_RET_DATA))
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, DENIED)
#define NEW_NAMESPACES                                                                                     \
	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

/*
 * nofork: the program may make threads but no process. RLIMIT_NPROC counts
 * threads and processes alike, so the threads a runtime needs (a JVM's
 * thirty, Go's and Node's few) would otherwise let its program start as
 * many processes (a shell through ProcessBuilder, os/exec, child_process):
 * clone is allowed with CLONE_THREAD only, fork and vfork are refused, and
 * clone3 already is (the C library falls back to clone).
 */
static int nofork;

static int deny_syscalls(void)
{
	const __u32 process = nofork ? NO_PROCESS : SECCOMP_RET_ALLOW;
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, JUDGE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, DENIED),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 */
		BPF_STMT(BPF_RET | BPF_K, DENIED),
#endif
		/* clone: allowed unless it asks for a new namespace (flags: arg 0);
		 * with nofork, only a thread (CLONE_THREAD). */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NAMESPACES, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, DENIED),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, process),
#ifdef __NR_fork
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fork, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, process),
#endif
#ifdef __NR_vfork
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_vfork, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, process),
#endif
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

/* parse_limit adds the limit "key=value" names to limits; 0 when it is not a
 * limit. */
static int parse_limit(const char *kv, struct limit *limits, int *nlimits)
{
	const char *eq = strchr(kv, '=');
	size_t k, n = eq ? (size_t)(eq - kv) : 0;
	for (k = 0; eq && k < sizeof names / sizeof names[0]; k++) {
		if (strlen(names[k].key) == n && strncmp(names[k].key, kv, n) == 0 && *nlimits < 16) {
			limits[*nlimits].resource = names[k].resource;
			limits[*nlimits].value = (rlim_t)strtoull(eq + 1, NULL, 10);
			(*nlimits)++;
			return 1;
		}
	}
	return 0;
}

/* child_fail reports errno (and the step that failed, in serve mode) on the
 * error pipe and exits. */
static void child_fail(int errfd, int step, int code)
{
	int msg[2] = {errno, step};
	if (write(errfd, msg, sizeof msg) < 0)
		_exit(code);
	_exit(code);
}

/* limit_and_filter sets the limits and the system call filter: the last
 * things before exec. */
static void limit_and_filter(const struct limit *limits, int nlimits, int errfd)
{
	int k;
	for (k = 0; k < nlimits; k++) {
		struct rlimit rl;
		rl.rlim_cur = limits[k].value;
		rl.rlim_max = limits[k].value;
		if (limits[k].resource == RLIMIT_CPU)
			rl.rlim_max = limits[k].value + 1; /* SIGXCPU first, SIGKILL 1s later */
		if (setrlimit(limits[k].resource, &rl) < 0)
			child_fail(errfd, 0, 125);
	}
	if (deny_syscalls() < 0)
		child_fail(errfd, 0, 125);
}

/* mono_ns is CLOCK_MONOTONIC in nanoseconds: one clock for every
 * supervisor of the machine, so the engine can tell which of two programs
 * (an interactive problem's solution and interactor) ended first. */
static long long mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report(int out, int status, const struct rusage *ru, long maxrss, int execerr, int setuperr, int step,
		   long long exit_ns)
{
	dprintf(out, "status=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld execerr=%d setuperr=%d setupstep=%d exit_ns=%lld\n",
		status, (long long)ru->ru_utime.tv_sec * 1000000LL + ru->ru_utime.tv_usec,
		(long long)ru->ru_stime.tv_sec * 1000000LL + ru->ru_stime.tv_usec, maxrss, execerr, setuperr, step, exit_ns);
}

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

static int serve(int sock);

int main(int argc, char **argv)
{
	struct limit limits[16];
	int nlimits = 0, i, out, errpipe[2], execerr = 0, status = 0, stdout_fd = -1;
	long long exit_ns = 0;
	pid_t pid;
	struct rusage ru;

	/* The program runs as the same uid: it must not ptrace its supervisor to
	 * forge the report (nor, held, reach its root and its socket). */
	prctl(PR_SET_DUMPABLE, 0);
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(atoi(argv[2]));
	if (argc < 4) {
		fputs("usage: reaper FD [key=value...] -- command [args...]\n", stderr);
		return 125;
	}
	out = atoi(argv[1]);
	/* Unsandboxed, orphans come back to us instead of the host's init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (fcntl(out, F_SETFD, FD_CLOEXEC) < 0) {
		perror("reaper: report fd");
		return 125;
	}
	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "nofork=1") == 0) {
			nofork = 1;
			continue;
		}
		if (strncmp(argv[i], "stdout=", 7) == 0) {
			/* The program's standard output, which only the program
			 * keeps: its end reaches the reader when the program
			 * closes it, not when this process (or bubblewrap's, which
			 * keep their own fd 1) exits. */
			stdout_fd = atoi(argv[i] + 7);
			if (stdout_fd <= 2 || stdout_fd == out) {
				fputs("reaper: bad stdout fd\n", stderr);
				return 125;
			}
			if (fcntl(stdout_fd, F_SETFD, FD_CLOEXEC) < 0) {
				perror("reaper: stdout fd");
				return 125;
			}
			continue;
		}
		if (!parse_limit(argv[i], limits, &nlimits)) {
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
	if (terminated)
		return 0; /* stopped before the program started: nothing to report */
	pid = fork();
	if (pid < 0) {
		perror("reaper: fork");
		return 125;
	}
	if (pid == 0) {
		close(errpipe[0]);
		setpgid(0, 0);
		if (stdout_fd >= 0 && dup2(stdout_fd, 1) < 0)
			child_fail(errpipe[1], 0, 125);
		limit_and_filter(limits, nlimits, errpipe[1]);
		execvp(argv[i + 1], argv + i + 1);
		child_fail(errpipe[1], 0, 127);
	}
	child = pid;
	if (stdout_fd >= 0)
		close(stdout_fd);
	close(errpipe[1]);
	{
		int msg[2];
		if (read(errpipe[0], msg, sizeof msg) == (ssize_t)sizeof msg)
			execerr = msg[0];
	}
	close(errpipe[0]);
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w == pid) {
			status = st;
			exit_ns = mono_ns();
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
	report(out, status, &ru, ru.ru_maxrss, execerr, 0, 0, exit_ns);
	return 0;
}

/* ---- held sandbox ---- */

#define WORK "/.judge/work" /* the engine's work directory, hidden from programs */
#define MAXREQ (64 << 10)
#define MAXV 4096

/* The steps of a run's set-up, reported with the errno of the one that
 * failed (setupstep). */
enum { STEP_EXEC, STEP_CLONE, STEP_BOX, STEP_BIND, STEP_REMOUNT, STEP_UNBIND, STEP_CWD, STEP_FDS, STEP_CAPS, STEP_INIT };

/* The run's directories mounted from the work directory, by mount point. */
static const char *const bind_points[] = {"/prog", "/check"};
#define NBINDS 2

struct request {
	struct limit limits[16];
	int nlimits;
	int nofork;
	long long box;
	const char *bind_rel[NBINDS]; /* NULL: nothing mounted there for this run */
	const char *cwd;
	char *argv[MAXV + 1], *envp[MAXV + 1];
	int argc, envc;
};

/* What the sandbox's mount namespace holds between runs. */
static struct {
	int workfd;                  /* O_PATH of the work directory, covered */
	char bound[NBINDS][4096];    /* "" when nothing is mounted */
	long long box;               /* size of the /box tmpfs */
	struct timespec box_ctime;   /* /box's ctime when mounted: any change made by a run changes it */
	int box_fresh;               /* /box is as mounted */
} st;

static int parse_request(char *buf, size_t n, struct request *r)
{
	char *p = buf, *end = buf + n;
	memset(r, 0, sizeof *r);
	r->box = 1 << 20;
	r->cwd = "/box";
	while (p < end) {
		char *tok = p, *nul = memchr(p, 0, (size_t)(end - p));
		if (!nul)
			return -1;
		p = nul + 1;
		if (strncmp(tok, "arg=", 4) == 0) {
			if (r->argc >= MAXV)
				return -1;
			r->argv[r->argc++] = tok + 4;
		} else if (strncmp(tok, "env=", 4) == 0) {
			if (r->envc >= MAXV)
				return -1;
			r->envp[r->envc++] = tok + 4;
		} else if (strncmp(tok, "box=", 4) == 0) {
			r->box = strtoll(tok + 4, NULL, 10);
		} else if (strcmp(tok, "nofork=1") == 0) {
			r->nofork = 1;
		} else if (strncmp(tok, "cwd=", 4) == 0) {
			r->cwd = tok + 4;
		} else if (strncmp(tok, "bind=", 5) == 0) {
			char *colon = strchr(tok + 5, ':');
			int k, found = 0;
			if (!colon || strstr(colon + 1, "..") || strlen(colon + 1) >= sizeof st.bound[0])
				return -1;
			*colon = 0;
			for (k = 0; k < NBINDS; k++)
				if (strcmp(tok + 5, bind_points[k]) == 0) {
					r->bind_rel[k] = colon + 1;
					found = 1;
				}
			if (!found)
				return -1;
		} else if (!parse_limit(tok, r->limits, &r->nlimits)) {
			return -1;
		}
	}
	r->argv[r->argc] = NULL;
	r->envp[r->envc] = NULL;
	return r->argc > 0 && r->box > 0 ? 0 : -1;
}

/* mount_box mounts a fresh, empty /box of size bytes (the last one, and
 * whatever a run left in it, goes). */
static int mount_box(long long size)
{
	char opts[64];
	struct stat sb;
	if (st.box > 0 && umount2("/box", MNT_DETACH) < 0)
		return -1;
	st.box = 0;
	snprintf(opts, sizeof opts, "size=%lld,mode=0755", size);
	if (mount("tmpfs", "/box", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOATIME, opts) < 0)
		return -1;
	if (stat("/box", &sb) < 0)
		return -1;
	st.box = size;
	st.box_ctime = sb.st_ctim;
	st.box_fresh = 1;
	return 0;
}

/* box_untouched reports whether the last run left /box as it was mounted:
 * a file made (or removed) in it, a change of its mode, owner, times or
 * attributes all change its ctime, which no program can set. */
static int box_untouched(void)
{
	struct stat sb;
	return st.box_fresh && stat("/box", &sb) == 0 && sb.st_ctim.tv_sec == st.box_ctime.tv_sec &&
	       sb.st_ctim.tv_nsec == st.box_ctime.tv_nsec && (sb.st_mode & 07777) == 0755;
}

/* prepare_mounts gives the run a fresh /box of its size and its
 * directories; it returns the failed step, or 0. */
static int prepare_mounts(const struct request *r)
{
	int k;
	if (!box_untouched() || st.box != r->box) {
		if (st.box_fresh && box_untouched()) {
			char opts[64];
			struct stat sb;
			/* Untouched, only resized. */
			snprintf(opts, sizeof opts, "size=%lld,mode=0755", r->box);
			if (mount("tmpfs", "/box", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOATIME, opts) < 0 ||
			    stat("/box", &sb) < 0)
				return STEP_BOX;
			st.box = r->box;
			st.box_ctime = sb.st_ctim;
		} else if (mount_box(r->box) < 0) {
			return STEP_BOX;
		}
	}
	for (k = 0; k < NBINDS; k++) {
		const char *want = r->bind_rel[k] ? r->bind_rel[k] : "";
		char path[4200];
		struct statvfs sv;
		unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
		if (strcmp(st.bound[k], want) == 0)
			continue;
		if (st.bound[k][0]) {
			if (umount2(bind_points[k], MNT_DETACH) < 0)
				return STEP_UNBIND;
			st.bound[k][0] = 0;
		}
		if (!want[0])
			continue;
		/* Through the descriptor: the work directory itself is covered. */
		snprintf(path, sizeof path, "/proc/self/fd/%d/%s", st.workfd, want);
		if (mount(path, bind_points[k], NULL, MS_BIND, NULL) < 0)
			return STEP_BIND;
		/* Flags the source is locked with (noexec, ...) must be kept. */
		if (statvfs(bind_points[k], &sv) == 0) {
			if (sv.f_flag & ST_NOEXEC)
				flags |= MS_NOEXEC;
			if (sv.f_flag & ST_NOATIME)
				flags |= MS_NOATIME;
			if (sv.f_flag & ST_RELATIME)
				flags |= MS_RELATIME;
		}
		if (mount(NULL, bind_points[k], NULL, flags, NULL) < 0) {
			umount2(bind_points[k], MNT_DETACH);
			return STEP_REMOUNT;
		}
		snprintf(st.bound[k], sizeof st.bound[k], "%s", want);
	}
	return 0;
}

/* drop_caps leaves the program without any capability, now or after exec
 * (bwrap made the holder's capabilities ambient). */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	int cap;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	for (cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	memset(d, 0, sizeof d);
	return (int)syscall(SYS_capset, &h, d);
}

/* run_child execs the program; it never returns. It runs in an IPC
 * namespace of its own. */
static void run_child(struct request *r, int fds[3], int errfd)
{
	int i;
	extern char **environ;
	if (chdir(r->cwd) < 0)
		child_fail(errfd, STEP_CWD, 125);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			child_fail(errfd, STEP_FDS, 125);
	setpgid(0, 0);
	if (drop_caps() < 0)
		child_fail(errfd, STEP_CAPS, 125);
	nofork = r->nofork;
	limit_and_filter(r->limits, r->nlimits, errfd);
	environ = r->envp;
	execvp(r->argv[0], r->argv);
	child_fail(errfd, STEP_EXEC, 127);
}

/* reap_all waits for every child, adding up their usage. */
static void reap_all(struct rusage *sum, long *maxrss, pid_t main_pid, int *status, int *main_done, long long *exit_ns,
		     int block)
{
	for (;;) {
		struct rusage ru;
		int s;
		pid_t w = wait4(-1, &s, block ? 0 : WNOHANG, &ru);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		sum->ru_utime.tv_sec += ru.ru_utime.tv_sec;
		sum->ru_utime.tv_usec += ru.ru_utime.tv_usec;
		sum->ru_stime.tv_sec += ru.ru_stime.tv_sec;
		sum->ru_stime.tv_usec += ru.ru_stime.tv_usec;
		if (ru.ru_maxrss > *maxrss)
			*maxrss = ru.ru_maxrss;
		if (w == main_pid) {
			*status = s;
			*main_done = 1;
			*exit_ns = mono_ns();
		}
	}
}

/* serve_one runs one request; the report goes back on sock. It returns -1
 * when the socket is gone. */
static int serve_one(int sock, int sigfd, struct request *r, int fds[3])
{
	int errpipe[2], msg[2] = {0, STEP_EXEC}, status = 0, main_done = 0, killed = 0, step;
	long maxrss = 0;
	long long exit_ns = 0;
	struct rusage sum;
	pid_t pid = -1;
	char rep[256];
	int n;

	memset(&sum, 0, sizeof sum);
	step = prepare_mounts(r);
	if (step) {
		msg[0] = errno;
		msg[1] = step;
	} else if (pipe2(errpipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		/* Non-blocking: read once the child has ended, never waited on
		 * (an exec that worked closes it and says nothing). */
		msg[0] = errno;
		msg[1] = STEP_CLONE;
	} else {
		st.box_fresh = 0; /* until the run is over and /box is looked at */
		pid = (pid_t)syscall(SYS_clone, CLONE_NEWIPC | SIGCHLD, 0, 0, 0, 0);
		if (pid == 0) {
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			close(errpipe[0]);
			close(sock);
			close(sigfd);
			close(st.workfd);
			run_child(r, fds, errpipe[1]);
		}
		close(errpipe[1]);
		if (pid < 0) {
			msg[0] = errno;
			msg[1] = STEP_CLONE;
			close(errpipe[0]);
		}
	}
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	while (pid > 0 && !main_done) {
		struct pollfd pf[2] = {{sigfd, POLLIN, 0}, {sock, POLLIN, 0}};
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
				;
			reap_all(&sum, &maxrss, pid, &status, &main_done, &exit_ns, 0);
		}
		if (pf[1].revents && !main_done) {
			char buf[16];
			ssize_t k = recv(sock, buf, sizeof buf, MSG_DONTWAIT);
			if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
				kill(-1, SIGKILL);
				return -1; /* the engine is gone */
			}
			if (k > 0 && !killed) {
				killed = 1;
				kill(-1, SIGKILL);
			}
		}
	}
	if (pid > 0) {
		/* Whatever the program left is killed and reaped: its CPU time
		 * counts, and nothing of the run is alive when the next comes. */
		kill(-1, SIGKILL);
		reap_all(&sum, &maxrss, pid, &status, &main_done, &exit_ns, 1);
		if (read(errpipe[0], msg, sizeof msg) != (ssize_t)sizeof msg) {
			msg[0] = 0;
			msg[1] = STEP_EXEC;
		}
		close(errpipe[0]);
		st.box_fresh = 1;
		st.box_fresh = box_untouched();
	}
	while (sum.ru_utime.tv_usec >= 1000000) {
		sum.ru_utime.tv_usec -= 1000000;
		sum.ru_utime.tv_sec++;
	}
	while (sum.ru_stime.tv_usec >= 1000000) {
		sum.ru_stime.tv_usec -= 1000000;
		sum.ru_stime.tv_sec++;
	}
	if (msg[1] != STEP_EXEC) { /* the run could not be set up */
		n = snprintf(rep, sizeof rep, "status=0 utime_us=0 stime_us=0 maxrss_kb=0 execerr=0 setuperr=%d setupstep=%d\n",
			     msg[0], msg[1]);
	} else {
		n = snprintf(rep, sizeof rep,
			     "status=%d utime_us=%lld stime_us=%lld maxrss_kb=%ld execerr=%d setuperr=0 setupstep=0 exit_ns=%lld\n",
			     status, (long long)sum.ru_utime.tv_sec * 1000000LL + sum.ru_utime.tv_usec,
			     (long long)sum.ru_stime.tv_sec * 1000000LL + sum.ru_stime.tv_usec, maxrss, msg[0], exit_ns);
	}
	if (send(sock, rep, (size_t)n, MSG_NOSIGNAL) < 0)
		return -1;
	/* Off the run's path: a /box the run changed is replaced now. */
	if (pid > 0 && !st.box_fresh && mount_box(st.box) < 0)
		return -1; /* the next run would find it as this one left it */
	return 0;
}

/* init_mounts makes the sandbox's mount namespace ready for runs: its own
 * (copied from bwrap's, no propagation), the work directory covered by an empty mount (runs'
 * directories are bound through a descriptor of it), an empty /box. */
static int init_mounts(void)
{
	/* bwrap's mount namespace belongs to the user namespace it made
	 * first (--disable-userns nests the one we run in): a namespace of
	 * our own, copied from it, is ours to mount in. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 1;
	st.workfd = open(WORK, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (st.workfd < 0)
		return 2;
	if (mount("tmpfs", WORK, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0") < 0)
		return 3;
	return mount_box(1 << 20) < 0 ? 4 : 0;
}

static int serve(int sock)
{
	static char buf[MAXREQ];
	static struct request req;
	sigset_t mask;
	int sigfd, step;

	if (fcntl(sock, F_SETFD, FD_CLOEXEC) < 0)
		return 125;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		return 125;
	if ((step = init_mounts()) != 0) {
		char m[128];
		int k = snprintf(m, sizeof m, "set-up step %d: %s\n", step, strerror(errno));
		if (send(sock, m, (size_t)k, MSG_NOSIGNAL) < 0)
			return 125;
		return 125;
	}
	if (send(sock, "ready\n", 6, MSG_NOSIGNAL) < 0)
		return 125;
	for (;;) {
		struct msghdr mh;
		struct iovec iov = {buf, sizeof buf - 1};
		union {
			char b[CMSG_SPACE(3 * sizeof(int))];
			struct cmsghdr align;
		} cbuf;
		struct cmsghdr *c;
		int fds[3] = {-1, -1, -1}, nfds = 0;
		ssize_t n;

		memset(&mh, 0, sizeof mh);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf.b;
		mh.msg_controllen = sizeof cbuf.b;
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the engine closed the socket: the sandbox ends */
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int k, cnt = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				for (k = 0; k < cnt; k++) {
					int fd;
					memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
					if (nfds < 3)
						fds[nfds++] = fd;
					else
						close(fd);
				}
			}
		}
		if (nfds != 3 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
			int k;
			for (k = 0; k < nfds; k++)
				close(fds[k]);
			continue; /* a stray "kill" after its run ended, or garbage */
		}
		buf[n] = 0;
		if (parse_request(buf, (size_t)n, &req) < 0) {
			int k;
			for (k = 0; k < 3; k++)
				close(fds[k]);
			if (send(sock, "status=0 utime_us=0 stime_us=0 maxrss_kb=0 execerr=0 setuperr=22 setupstep=99\n", 79,
				 MSG_NOSIGNAL) < 0)
				break;
			continue;
		}
		if (serve_one(sock, sigfd, &req, fds) < 0)
			break;
	}
	kill(-1, SIGKILL);
	return 0;
}
