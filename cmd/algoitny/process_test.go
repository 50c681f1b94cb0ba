package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the algoitny binary once for the tests that run it as
// separate processes.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "algoitny-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "algoitny")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// TestProcesses runs the tests that start `algoitny` processes (API
// replicas, workers, a proxy on a replica's link to PostgreSQL), one at a
// time: each starts two or three servers and bounds how late a replica may
// hear of a change (a second or two), and several of them together would
// load two cores enough to miss those bounds. `make test` (scripts/test.sh)
// runs it in a `go test` of its own, beside the other tests: it spends most
// of its time waiting (River's rescuer, a stalled link's timeout), and as
// top-level sequential tests they ran before the package's parallel ones,
// adding four minutes. Under a plain `go test ./cmd/algoitny` it is one of
// the package's parallel tests.
func TestProcesses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"ReplicasSecurityState", testReplicasSecurityState},
		{"ReplicasDatabaseConnectionsTerminated", testReplicasDatabaseConnectionsTerminated},
		{"ReplicasStalledLink", testReplicasStalledLink},
		{"ReplicasPostgresCut", testReplicasPostgresCut},
		{"ReplicasShareEvents", testReplicasShareEvents},
		{"ReplicasProgressOnceAcrossRescue", testReplicasProgressOnceAcrossRescue},
		{"WorkerKilledMidExecution", testWorkerKilledMidExecution},
	} {
		t.Run(tc.name, tc.run)
	}
}

// rescueTimings are the job runner's timings of the tests that kill a
// worker mid-execution: River rescues a job whose attempt began more than
// ALGOITNY_JOB_RESCUE_AFTER ago (at least the job timeout) when its leader's
// rescuer runs — at once when a worker becomes the leader, then every 30 s.
// The killed worker was the leader; its successor is elected when the
// leadership expires (a claim lasts 15 s, renewed every 5 ± 1 s: 9–22 s
// after the kill), and the killed attempt began about a second before the
// kill: 10 s lets that first pass rescue it nearly always (else the next
// one, 30 s later, does; the tests wait minutes). The rescued attempt (six
// tests of 0.5 s on two judge slots, about 2 s) ends well within 10 s.
func rescueTimings() []string {
	return []string{"ALGOITNY_JOB_TIMEOUT=10s", "ALGOITNY_JOB_RESCUE_AFTER=10s"}
}

// process is a running `algoitny` subcommand.
type process struct {
	cmd  *exec.Cmd
	addr chan string
	mu   sync.Mutex
	log  strings.Builder
}

// env turns a configuration into the environment the binary reads.
func env(cfg Config, extra ...string) []string {
	return append(append(os.Environ(),
		"ALGOITNY_ADDR=127.0.0.1:0", "ALGOITNY_DEV=true",
		"DYNAMODB_ENDPOINT="+cfg.Dynamo.Endpoint, "DYNAMODB_TABLE_PREFIX="+cfg.Dynamo.TablePrefix,
		"DATABASE_URL="+cfg.DatabaseURL, "ALGOITNY_RIVER_SCHEMA="+cfg.RiverSchema,
		"ALGOITNY_PUBSUB_CHANNEL="+cfg.PubsubChannel, "SESSION_SECRET="+cfg.SessionSecret,
		"ALGOITNY_JOB_POLL_INTERVAL=200ms",
		// No warm-up: a worker's compiles of eight toolchains would hold
		// its judge slots and load the machine in every test that starts
		// one (make run's is in TestTryIt).
		"JUDGE_WARM=false",
		"ALGOITNY_CACHE_BOUND="+cfg.CacheBound.String(),
	), extra...)
}

// startProcess runs `algoitny args...` and, for serve, waits for its address.
func startProcess(t testing.TB, environ []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary(t), args...), addr: make(chan string, 1)}
	p.cmd.Env = environ
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if _, rest, ok := strings.Cut(line, " listening on "); ok {
				p.addr <- strings.Fields(rest)[0]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	return p
}

func (p *process) kill(sig syscall.Signal) {
	syscall.Kill(-p.cmd.Process.Pid, sig)
	p.cmd.Wait()
}

func (p *process) url(t testing.TB) string {
	t.Helper()
	select {
	case a := <-p.addr:
		return "http://" + a + "/query"
	case <-time.After(60 * time.Second):
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("server did not start:\n%s", p.log.String())
		return ""
	}
}

// prepare migrates a test's tables and schema and returns a DB on them.
func prepare(t testing.TB, cfg Config) *dynamo.DB {
	t.Helper()
	ctx := context.Background()
	if err := migrate(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := seedPlans(ctx, cfg, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	// A writer on the same tables, as the command line is.
	w, err := openWriter(ctx, cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.DB.DropTables(context.Background()); w.Close() })
	return w.DB
}

// staffOn signs in on a server and makes the user staff directly in storage.
func staffOn(t testing.TB, s *apiServer, db *dynamo.DB, email string) string {
	t.Helper()
	token := s.login(t, email)
	if _, err := db.SetUserStaff(context.Background(), email, true); err != nil {
		t.Fatal(err)
	}
	return token
}

// judgeUIDBases hands each test that counts its judge's processes a uid
// range of its own (JUDGE_UID_BASE), apart from the default one every
// other judge of the run uses: such a test runs in parallel with them.
var judgeUIDBases atomic.Int64

// processesJudgeUIDBase is the judge uid base of TestProcesses's workers:
// between the default range (1,500,000) and ownJudgeUIDBase's.
const processesJudgeUIDBase = 1_600_000

// ownJudgeUIDBase returns a judge uid base no other test of the run uses.
func ownJudgeUIDBase() int {
	return 1_700_000 + int(judgeUIDBases.Add(1))*5000
}

// judgeProcesses counts live processes running as the sandbox users of a
// judge whose uid base is base (zombies are dead: they only wait for a
// parent — here often a container's pid 1 that does not reap — to collect
// them). The toolchain probes of a judge starting at the same moment (`go
// version`, `javac -version`, go's telemetry child) run as those users
// too, briefly, and are not counted; nor are the worker slots' held
// sandboxes (bwrap and its supervisor, which wait for the next run with
// nothing else alive).
func judgeProcesses(t testing.TB, base int) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		zombie, judgeUID := false, false
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) > 1 && f[0] == "State:":
				zombie = f[1] == "Z"
			case len(f) > 1 && f[0] == "Uid:":
				uid, _ := strconv.Atoi(f[1])
				judgeUID = uid >= base && uid <= base+4096
			}
		}
		if judgeUID && !zombie && !isToolchainProbe(e.Name()) && !isHeldSandbox(e.Name()) {
			n++
		}
	}
	return n
}

// isHeldSandbox reports whether process pid is a worker slot's held
// sandbox: bwrap or the supervisor it runs, "/.judge/reaper serve 3".
func isHeldSandbox(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil {
		return false
	}
	return strings.HasSuffix(string(b), "/.judge/reaper\x00serve\x003\x00")
}

// isToolchainProbe reports whether process pid runs a judge's version
// probe (its command line ends with version or -version, or it is the
// telemetry child the go command starts).
func isToolchainProbe(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	last := args[len(args)-1]
	return last == "version" || last == "-version" || last == "--version" || last == "** telemetry **"
}

// testReplicasShareEvents: two API processes and one worker process; a
// subscriber on API A sees a job submitted through API B and run by the worker.
func testReplicasShareEvents(t *testing.T) {
	cfg := testConfig(t)
	db := prepare(t, cfg)
	a := &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	b := &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	startProcess(t, env(cfg), "worker")

	admin := staffOn(t, b, db, "admin@example.com")
	b.createProblem(t, admin, "BAEKJOON", "1000", 3, true)
	alice := b.login(t, "alice@example.com")
	var out struct{ ExecuteCode struct{ ID string } }
	b.query(t, alice, executeMutation, executeInput(aPlusB, nil)).decode(t, &out)

	ws := a.dialWS(t, "graphql-transport-ws", nil)
	ws.init(alice)
	ws.subscribe("j", jobUpdated, map[string]any{"id": out.ExecuteCode.ID})
	evs := ws.collect("j", 90*time.Second)
	if len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1]), `"COMPLETED"`) || !strings.Contains(string(evs[len(evs)-1]), `"ACCEPTED"`) {
		t.Fatalf("subscriber on A saw %s", evs)
	}
}

// testWorkerKilledMidExecution: SIGKILL a worker while it judges; after a new
// worker starts, River rescues the job and it completes — never stuck in PROCESSING.
func testWorkerKilledMidExecution(t *testing.T) {
	cfg := testConfig(t)
	// Not ownJudgeUIDBase: scripts/test.sh runs TestProcesses in a test
	// binary of its own, whose counter would hand out the same ranges as
	// the package's other run.
	uids := processesJudgeUIDBase
	db := prepare(t, cfg)
	api := &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	admin := staffOn(t, api, db, "admin@example.com")
	api.createProblem(t, admin, "BAEKJOON", "1000", 6, true)
	alice := api.login(t, "alice@example.com")
	// Each test sleeps 0.5 s (wall time, not CPU): the job runs for seconds.
	slow := "import time\ntime.sleep(0.5)\na, b = map(int, input().split())\nprint(a + b)\n"
	var out struct{ ExecuteCode struct{ ID string } }
	api.query(t, alice, executeMutation, executeInput(slow, nil)).decode(t, &out)

	timings := append(rescueTimings(), fmt.Sprint("JUDGE_UID_BASE=", uids))
	w1 := startProcess(t, env(cfg, timings...), "worker")
	var j struct{ Job struct{ Status string } }
	if !algoitnytest.PollEvery(context.Background(), 60*time.Second, 100*time.Millisecond, func() bool {
		api.query(t, alice, `query($id: ID!) { job(id: $id) { status } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &j)
		return j.Job.Status == "PROCESSING"
	}) {
		t.Fatalf("job never started: %s", j.Job.Status)
	}
	// Killed mid-execution: while the judge's programs run (on a machine
	// with a judge slot per test, all six end within a second).
	algoitnytest.EventuallyEvery(t, 30*time.Second, 20*time.Millisecond, "the worker to run the tests", func() bool { return judgeProcesses(t, uids) > 0 })
	w1.kill(syscall.SIGKILL)
	time.Sleep(500 * time.Millisecond)
	if n := judgeProcesses(t, uids); n != 0 {
		out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,sid,uid,stat,etime,args").CombinedOutput()
		t.Fatalf("%d sandboxed processes outlived the killed worker\n%s", n, out)
	}
	startProcess(t, env(cfg, timings...), "worker")
	job := api.waitJob(t, alice, out.ExecuteCode.ID, 120*time.Second)
	if job.Status != "COMPLETED" || job.History == nil || job.History.Verdict != "ACCEPTED" {
		t.Fatalf("after the restart: %+v", job)
	}
}

// TestCancelRunningJob: cancelling a job whose program loops forever kills
// its processes at once and leaves it CANCELLED.
func TestCancelRunningJob(t *testing.T) {
	t.Parallel()
	uids := ownJudgeUIDBase()
	s := startAPITuned(t, func(c *Config) { c.Workers, c.JudgeUIDBase = true, uids }, nil)
	admin := s.staff(t, "admin@example.com")
	var p struct{ CreateProblem struct{ ID string } }
	s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
		"platform": "BAEKJOON", "problemId": "loop", "title": "Loop", "language": "PYTHON", "timeLimitMs": 20000,
		"testCases": []map[string]any{{"input": "1\n", "output": "1\n"}, {"input": "2\n", "output": "2\n"}}, "isCompleted": true,
	}}).decode(t, &p)
	alice := s.login(t, "alice@example.com")
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, alice, executeMutation, map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": "loop", "language": "PYTHON", "code": "while True:\n    pass\n"}}).decode(t, &out)
	algoitnytest.EventuallyEvery(t, 60*time.Second, 20*time.Millisecond, "the program to start", func() bool { return judgeProcesses(t, uids) > 0 })
	var c struct{ CancelJob struct{ Status string } }
	s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &c)
	if c.CancelJob.Status != "CANCELLED" {
		t.Fatalf("cancel: %+v", c)
	}
	if !algoitnytest.PollEvery(context.Background(), 3*time.Second, 20*time.Millisecond, func() bool { return judgeProcesses(t, uids) == 0 }) {
		t.Fatalf("%d processes still running 3 s after the cancel", judgeProcesses(t, uids))
	}
	time.Sleep(time.Second) // the worker must not revive it
	if j := s.waitJob(t, alice, out.ExecuteCode.ID, time.Second); j.Status != "CANCELLED" {
		t.Fatalf("job after cancel: %+v", j)
	}
}
