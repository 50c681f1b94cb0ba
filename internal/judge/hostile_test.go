package judge_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// Each hostile program runs on an engine of its own (own uid range) so that
// requireNoLeftovers can prove that nothing it started survived, whatever other
// tests run at the same time.
//
// The suite runs twice: on held sandboxes (the default: one per worker
// slot, set up once, each run forked into it; memory and processes
// accounted with a control group where the host has one) and on a sandbox
// started for every run (Config.WarmIdle < 0, no control groups).

func TestHostile(t *testing.T) {
	t.Parallel()
	hostile(t, func(c judge.Config) judge.Config { return c })
}

func TestHostilePerRunSandbox(t *testing.T) {
	t.Parallel()
	hostile(t, func(c judge.Config) judge.Config { c.WarmIdle = -1; return c })
}

func hostile(t *testing.T, mode func(judge.Config) judge.Config) {

	t.Run("ForkBomb", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "c")
		src := "#include <unistd.h>\nint main(void) { for (;;) fork(); }\n"
		res := judgeSub(t, e, judge.Submission{Language: "c", Source: src,
			Limits: judge.Limits{CPUTime: time.Second, MaxProcesses: 8},
			Tests:  []judge.TestCase{{Input: []byte(""), Expected: []byte("")}}})
		requireVerdict(t, "fork bomb", res.Verdict, judge.TimeLimitExceeded, res)
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("ProcessLimit", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		marker := newMarker(t)
		// Forks as often as allowed; every child becomes a long sleeper carrying
		// the marker, and the parent exits: none of them may survive the run.
		src := `import os
forked = 0
for _ in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execv("/bin/sleep", ["` + marker + `", "1000"])
    forked += 1
print(forked)
`
		p := compile(t, e, "python", src)
		rr, out := run(t, p, "", judge.Limits{MaxProcesses: 8})
		requireVerdict(t, "fork up to the limit", rr.Verdict, judge.Accepted, rr)
		if strings.TrimSpace(out) != "7" { // 8 = the program + 7 children
			t.Fatalf("forked %q children, want 7 (MaxProcesses 8)", out)
		}
		requireNoLeftovers(t, e, base, marker)
	})

	t.Run("Network", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		var accepted atomic.Int64
		tcp, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer tcp.Close()
		abstract := newMarker(t)
		unix, err := net.Listen("unix", "@"+abstract)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close()
		for _, l := range []net.Listener{tcp, unix} {
			go func(l net.Listener) {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					c.Close()
				}
			}(l)
		}
		src := `import socket, sys
port, abstract = int(sys.argv[1]), sys.argv[2]
def tcp_host():
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
def tcp_internet():
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
def udp_internet():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect(("8.8.8.8", 53))
    s.send(b"x")
    s.recv(16)
def unix_abstract():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect("\0" + abstract)
def dns():
    socket.getaddrinfo("example.com", 80)
for name, attempt in [("tcp_host", tcp_host), ("tcp_internet", tcp_internet),
                      ("udp_internet", udp_internet), ("unix_abstract", unix_abstract), ("dns", dns)]:
    try:
        attempt()
        print(name, "CONNECTED")
    except OSError:
        print(name, "blocked")
`
		p := compile(t, e, "python", src)
		port := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
		rr, out := run(t, p, "", judge.Limits{CPUTime: 5 * time.Second}, port, abstract)
		requireVerdict(t, "network attempts", rr.Verdict, judge.Accepted, rr)
		want := "tcp_host blocked\ntcp_internet blocked\nudp_internet blocked\nunix_abstract blocked\ndns blocked\n"
		if out != want {
			t.Fatalf("network from the sandbox:\n%s\nwant:\n%s", out, want)
		}
		if n := accepted.Load(); n != 0 {
			t.Fatalf("the host accepted %d connections from the sandbox", n)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("WriteOutsideScratch", func(t *testing.T) {
		t.Parallel()
		work := tempDir(t)
		e, base := newEngine(t, mode(judge.Config{WorkDir: work}), "python")
		canary := filepath.Join(tempDir(t), "canary.txt")
		if err := os.WriteFile(canary, []byte("original"), 0o666); err != nil {
			t.Fatal(err)
		}
		src := `import sys
targets = sys.stdin.read().split()
for path in targets:
    try:
        with open(path, "w") as f:
            f.write("pwned")
        print(path, "WRITTEN")
    except OSError:
        print(path, "denied")
`
		outside := []string{"/prog/main.py", "/prog/new.txt", "/usr/pwned", "/etc/passwd", "/pwned",
			"/dev/shm/pwned", "/dev/pwned", "/proc/sys/kernel/hostname", canary, filepath.Join(work, "pwned")}
		inside := []string{"/box/ok.txt", "/tmp/ok.txt", "ok.txt"}
		p := compile(t, e, "python", src)
		rr, out := run(t, p, strings.Join(append(outside, inside...), "\n"), judge.Limits{})
		requireVerdict(t, "write attempts", rr.Verdict, judge.Accepted, rr)
		var want strings.Builder
		for _, path := range outside {
			want.WriteString(path + " denied\n")
		}
		for _, path := range inside {
			want.WriteString(path + " WRITTEN\n")
		}
		if out != want.String() {
			t.Fatalf("writes from the sandbox:\n%s\nwant:\n%s", out, want.String())
		}
		if b, _ := os.ReadFile(canary); string(b) != "original" {
			t.Fatalf("canary changed: %q", b)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("ReadOtherSubmission", func(t *testing.T) {
		t.Parallel()
		work := tempDir(t)
		e, base := newEngine(t, mode(judge.Config{WorkDir: work, Workers: 2}), "python")
		secret := newMarker(t)
		victim := compile(t, e, "python", `import sys, time
with open("/box/secret.txt", "w") as f:
    f.write(sys.stdin.read())
print("ready", flush=True)
time.sleep(60)
`)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ready := newSignalWriter("ready")
		victimDone := make(chan error, 1)
		go func() {
			_, err := victim.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(secret), Stdout: ready,
				Limits: judge.Limits{CPUTime: 30 * time.Second}})
			victimDone <- err
		}()
		select {
		case <-ready.seen:
		case <-time.After(time.Minute):
			t.Fatal("victim did not start")
		}
		// The victim's scratch space is a tmpfs of its own: not even the host's
		// work directory holds the secret...
		_ = filepath.WalkDir(work, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
					t.Errorf("the secret is on the host at %s", path)
				}
			}
			return nil
		})
		// ...and another submission cannot reach it by any path.
		thief := compile(t, e, "python", `import glob, os, sys
secret = sys.argv[1]
work = sys.argv[2]
candidates = glob.glob(work + "/box-*/secret.txt") + glob.glob(work + "/*/*/secret.txt")
candidates += ["/box/secret.txt", "/tmp/secret.txt"]
for pid in os.listdir("/proc"):
    if pid.isdigit():
        candidates.append("/proc/%s/root/box/secret.txt" % pid)
        candidates.append("/proc/%s/cwd/secret.txt" % pid)
for root, dirs, files in os.walk("/"):
    if root.startswith(("/proc", "/usr", "/sys", "/dev")):
        dirs[:] = []
        continue
    candidates += [os.path.join(root, f) for f in files]
leaked = False
for path in candidates:
    try:
        with open(path, errors="replace") as f:
            if secret in f.read(1 << 20):
                leaked = True
                print("FOUND", path)
    except OSError:
        pass
print("leaked" if leaked else "safe")
`)
		rr, out := run(t, thief, "", judge.Limits{CPUTime: 10 * time.Second}, secret, work)
		requireVerdict(t, "thief", rr.Verdict, judge.Accepted, rr)
		if out != "safe\n" {
			t.Fatalf("another submission's scratch is readable:\n%s", out)
		}
		cancel()
		select {
		case err := <-victimDone:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("victim run: %v, want context.Canceled", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("cancelled run did not stop")
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("SleepForever", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		p := compile(t, e, "python", "import time\ntime.sleep(1000)\n")
		rr, _ := run(t, p, "", judge.Limits{CPUTime: 500 * time.Millisecond})
		requireVerdict(t, "sleeper", rr.Verdict, judge.TimeLimitExceeded, rr)
		if !strings.Contains(rr.Message, "wall time") || rr.CPUTime >= 500*time.Millisecond {
			t.Fatalf("sleeper should hit the wall-time limit with little CPU: %+v", rr)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("ChildOutlivesParent", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		marker := newMarker(t)
		// A daemonised grandchild in its own session, holding stdout open.
		src := `import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["` + marker + `", "1000"])
    os._exit(0)
os.wait()
print("parent done")
`
		p := compile(t, e, "python", src)
		rr, out := run(t, p, "", judge.Limits{MaxProcesses: 4})
		requireVerdict(t, "parent", rr.Verdict, judge.Accepted, rr)
		if out != "parent done\n" {
			t.Fatalf("output %q", out)
		}
		requireNoLeftovers(t, e, base, marker)
	})

	// Memory no limit sees (System V shared memory and message queues, memfd,
	// userfaultfd) and kernel surface no program needs (io_uring, new
	// namespaces) are refused, as on a kernel without them; threads and
	// fork still work.
	t.Run("RefusedSystemCalls", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "c")
		src := `#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void report(const char *what, long r) { printf("%s %s\n", what, r < 0 && errno == ENOSYS ? "refused" : "ALLOWED"); errno = 0; }
static void *thread(void *arg) { return arg; }
int main(void) {
	report("shmget", shmget(IPC_PRIVATE, 1 << 27, IPC_CREAT | 0600));
	report("msgget", msgget(IPC_PRIVATE, IPC_CREAT | 0600));
	report("memfd_create", memfd_create("hoard", 0));
	report("userfaultfd", syscall(SYS_userfaultfd, 0));
	report("io_uring_setup", syscall(SYS_io_uring_setup, 8, NULL));
	report("unshare", unshare(CLONE_NEWUSER));
	report("clone", syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
	pthread_t t;
	printf("thread %s\n", pthread_create(&t, NULL, thread, NULL) == 0 && pthread_join(t, NULL) == 0 ? "ok" : "FAILED");
	pid_t pid = fork();
	if (pid == 0) _exit(7);
	int st = 0;
	printf("fork %s\n", pid > 0 && waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 7 ? "ok" : "FAILED");
	return 0;
}
`
		want := "shmget refused\nmsgget refused\nmemfd_create refused\nuserfaultfd refused\nio_uring_setup refused\n" +
			"unshare refused\nclone refused\nthread ok\nfork ok\n"
		p := compile(t, e, "c", src)
		rr, out := run(t, p, "", judge.Limits{MaxProcesses: 4})
		requireVerdict(t, "refused system calls", rr.Verdict, judge.Accepted, rr)
		if out != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out, want)
		}
		requireNoLeftovers(t, e, base, "")
	})

	// The sandbox's accounts are its own: the host's users (who runs what
	// on it) are not listed, and a lookup of root still works.
	t.Run("HostAccountsHidden", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		p := compile(t, e, "python", "import pwd\nprint(open('/etc/passwd').read(), end='')\nprint(pwd.getpwuid(0).pw_name)\n")
		rr, out := run(t, p, "", judge.Limits{})
		requireVerdict(t, "read /etc/passwd", rr.Verdict, judge.Accepted, rr)
		want := "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nroot\n"
		if out != want {
			t.Fatalf("the sandbox's /etc/passwd:\n%s\nwant:\n%s", out, want)
		}
		requireNoLeftovers(t, e, base, "")
	})

	// The memory limit holds for the program and its children together:
	// two processes of 40 MB each are over a 64 MB limit, although each is
	// under it (and under its own rlimit).
	t.Run("ChildrenShareTheMemoryLimit", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "c")
		// A pipe makes sure both hold their 40 MB at the same time, however
		// slowly a loaded machine schedules them.
		src := `#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void hold(void) {
	volatile char *p = malloc(40 << 20); /* volatile: the writes stay */
	for (int i = 0; i < 40 << 20; i += 4096)
		p[i] = 1;
}
int main(void) {
	int ready[2];
	if (pipe(ready) != 0)
		return 1;
	pid_t child = fork();
	hold();
	if (child == 0) {
		write(ready[1], "x", 1);
		pause(); /* holds its 40 MB until killed */
		return 0;
	}
	char c;
	read(ready[0], &c, 1); /* both hold 40 MB now */
	usleep(500 * 1000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
`
		p := compile(t, e, "c", src)
		rr, _ := run(t, p, "", judge.Limits{MemoryBytes: 64 << 20, MaxProcesses: 4})
		requireVerdict(t, "2 × 40 MB under a 64 MB limit", rr.Verdict, judge.MemoryLimitExceeded, rr)
		requireNoLeftovers(t, e, base, "")
	})

	// Standard error is bounded like standard output: gigabytes written to
	// it would cost the judge as much copying.
	t.Run("FloodStandardError", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "c")
		src := `#include <stdio.h>
#include <string.h>
int main(void) {
	static char line[1 << 16];
	memset(line, 'e', sizeof line);
	for (int i = 0; i < 1024; i++) /* 64 MB */
		fwrite(line, 1, sizeof line, stderr);
	puts("ok");
	return 0;
}
`
		p := compile(t, e, "c", src)
		rr, _ := run(t, p, "", judge.Limits{OutputBytes: 1 << 20})
		requireVerdict(t, "64 MB on stderr", rr.Verdict, judge.OutputLimitExceeded, rr)
		requireNoLeftovers(t, e, base, "")
	})

	// A child that works for the program and is left behind when it exits
	// is killed and reaped before the usage is read: its CPU time counts.
	t.Run("LeftChildrenCount", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "c")
		src := `#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(void) {
	int fds[2];
	char c;
	if (pipe(fds) < 0) return 1;
	if (fork() == 0) {
		clock_t end = clock() + CLOCKS_PER_SEC * 6 / 10; /* 0.6 s of CPU */
		volatile unsigned long n = 0;
		while (clock() < end) n++;
		write(fds[1], "x", 1);
		pause();
	}
	read(fds[0], &c, 1); /* waits without CPU; never reaps the child */
	puts("42");
	return 0;
}
`
		p := compile(t, e, "c", src)
		rr, out := run(t, p, "", judge.Limits{CPUTime: 5 * time.Second, MaxProcesses: 4})
		requireVerdict(t, "left child", rr.Verdict, judge.Accepted, rr)
		if out != "42\n" || rr.CPUTime < 500*time.Millisecond {
			t.Fatalf("output %q, CPU %v: the child's 0.6 s of CPU must count", out, rr.CPUTime)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("SymlinkReplacement", func(t *testing.T) {
		t.Parallel()
		work := tempDir(t)
		e, base := newEngine(t, mode(judge.Config{WorkDir: work}), "python")
		canaryDir := tempDir(t)
		canary := filepath.Join(canaryDir, "canary.txt")
		if err := os.WriteFile(canary, []byte("original"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Replaces every file a judge could later write or read (run script,
		// output, input, answer, the binary) with symlinks to a host file and
		// directory, then answers correctly (CVE-2024-28185/28189 in Judge0).
		src := `import os, sys
canary = sys.stdin.readline().strip()
a, b = map(int, sys.stdin.readline().split())
names = ["output.txt", "input.txt", "answer.txt", "run.sh", "script.sh", "stdout", "stderr",
         "main", "main.py", "report", "result.txt", "checker"]
for d in ["/box", "/tmp", "/prog", "/check", "."]:
    for name in names:
        path = os.path.join(d, name)
        try:
            os.remove(path)
        except OSError:
            pass
        try:
            os.symlink(canary, path)
        except OSError:
            pass
for d in ["/box/dirlink", "/tmp/dirlink2"]:
    try:
        os.symlink(os.path.dirname(canary), d)
    except OSError:
        pass
print(a + b)
`
		checker := `import sys
inp, out, ans = (open(p).read().split() for p in sys.argv[1:4])
sys.exit(0 if out == ans else 1)
`
		var tests []judge.TestCase
		for i := 1; i <= 3; i++ {
			tests = append(tests, judge.TestCase{
				Input:    []byte(canary + "\n" + strconv.Itoa(i) + " " + strconv.Itoa(i) + "\n"),
				Expected: []byte(strconv.Itoa(2*i) + "\n"),
			})
		}
		for _, c := range []judge.Checker{{}, {Kind: judge.CheckCustom, Language: "python", Source: checker}} {
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: src, Tests: tests, Checker: c})
			requireVerdict(t, "symlink attacker with checker "+string(c.Kind), res.Verdict, judge.Accepted, res)
		}
		if b, err := os.ReadFile(canary); err != nil || string(b) != "original" {
			t.Fatalf("canary changed: %q %v", b, err)
		}
		if entries, _ := os.ReadDir(canaryDir); len(entries) != 1 {
			t.Fatalf("canary directory changed: %v", entries)
		}
		if entries := runEntries(t, work); len(entries) != 0 {
			t.Fatalf("work directory not cleaned up: %v", entries)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("Environment", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{}), "python")
		src := `import os
for k in sorted(os.environ):
    print(k + "=" + os.environ[k])
try:
    print("pid1-environ", open("/proc/1/environ").read())
except OSError:
    print("pid1-environ denied")
print("uid", os.getuid() != 0)
for line in open("/proc/self/status"):
    if line.startswith("CapEff"):
        print("caps", line.split()[1])
`
		p := compile(t, e, "python", src)
		rr, out := run(t, p, "", judge.Limits{})
		requireVerdict(t, "env printer", rr.Verdict, judge.Accepted, rr)
		for k, v := range secretEnv {
			if strings.Contains(out, v) || strings.Contains(out, k) {
				t.Fatalf("the server's %s is visible in the sandbox:\n%s", k, out)
			}
		}
		var keys []string
		for _, line := range strings.Split(out, "\n") {
			if k, _, ok := strings.Cut(line, "="); ok && !strings.Contains(k, " ") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		// PWD is added by bwrap's --chdir.
		want := "HOME LANG LC_ALL PATH PWD PYTHONDONTWRITEBYTECODE PYTHONHASHSEED PYTHONIOENCODING TMPDIR"
		if got := strings.Join(keys, " "); got != want {
			t.Fatalf("environment keys %q, want exactly %q", got, want)
		}
		if !strings.Contains(out, "uid True\n") || !strings.Contains(out, "caps 0000000000000000\n") {
			t.Fatalf("program is privileged:\n%s", out)
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("Cancellation", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, mode(judge.Config{Workers: 2}), "c")
		src := "int main(void) { volatile unsigned long x = 0; for (;;) x++; }\n"
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type outcome struct {
			res judge.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := e.Judge(ctx, judge.Submission{Language: "c", Source: src,
				Limits: judge.Limits{CPUTime: 60 * time.Second},
				Tests:  []judge.TestCase{{}, {}, {}}}, nil)
			done <- outcome{res, err}
		}()
		// Cancel once the programs run (as root: processes with a run uid exist).
		if os.Geteuid() == 0 {
			deadline := time.Now().Add(time.Minute)
			for len(sandboxProcesses(base+1, base+uidsPerEngine, "")) < 2 {
				if time.Now().After(deadline) {
					t.Fatal("the programs did not start")
				}
				time.Sleep(20 * time.Millisecond)
			}
		} else {
			time.Sleep(2 * time.Second)
		}
		cancel()
		var o outcome
		select {
		case o = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Judge did not return after cancellation")
		}
		if !errors.Is(o.err, context.Canceled) {
			t.Fatalf("Judge after cancel: %v (%+v)", o.err, o.res)
		}
		if len(o.res.Tests) != 0 {
			t.Fatalf("cancelled tests reported as finished: %+v", o.res.Tests)
		}
		requireNoLeftovers(t, e, base, "")
	})
}

// signalWriter closes seen when what has been written to it.
type signalWriter struct {
	what string
	mu   sync.Mutex
	buf  strings.Builder
	seen chan struct{}
	once sync.Once
}

func newSignalWriter(what string) *signalWriter {
	return &signalWriter{what: what, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.what) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
