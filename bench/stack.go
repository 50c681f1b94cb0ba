package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// cleanups run in reverse order when the bench ends, on success, failure
// or a signal, so that no process it started outlives it.
type cleanups struct {
	mu  sync.Mutex
	fns []func()
}

func (c *cleanups) add(f func()) {
	c.mu.Lock()
	c.fns = append(c.fns, f)
	c.mu.Unlock()
}

func (c *cleanups) run() {
	c.mu.Lock()
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// proc is a child process in a process group of its own, killed with its
// group when the bench ends (and by the kernel if the bench dies: Pdeathsig).
type proc struct {
	name string
	cmd  *exec.Cmd
	addr chan string
	done chan struct{}
	mu   sync.Mutex
	tail []string // the last lines of its stdout, for errors
}

var listeningRE = regexp.MustCompile(`listening on (\S+)`)

// startProc runs argv with env; stdout is scanned for "listening on ADDR",
// stderr goes to logPath (the server logs one line per request: a file is
// cheaper than a pipe the bench must drain).
func startProc(c *cleanups, name string, env []string, logPath string, argv ...string) (*proc, error) {
	p := &proc{name: name, cmd: exec.Command(argv[0], argv[1:]...), addr: make(chan string, 1), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p.cmd.Stderr = logf
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c.add(func() { p.stop(); logf.Close() })
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 20 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case p.addr <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitAddr returns the address the process printed, or an error if it
// exited or took longer than timeout.
func (p *proc) waitAddr(timeout time.Duration) (string, error) {
	select {
	case a := <-p.addr:
		return a, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited before listening:\n%s", p.name, p.lastLines())
	case <-time.After(timeout):
		return "", fmt.Errorf("%s did not listen within %s:\n%s", p.name, timeout, p.lastLines())
	}
}

func (p *proc) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the group, then SIGKILL after 5 s.
func (p *proc) stop() {
	if p.cmd.Process == nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// rssBytes reads a process's resident set size from /proc.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

// stack is the real stack the server runs on: DynamoDB Local in memory and a
// PostgreSQL database, with table prefix, River schema and pubsub channel
// of this run's own.
type stack struct {
	dynamoEndpoint string
	dynamoPid      int
	databaseURL    string
	prefix         string // DynamoDB table prefix
	riverSchema    string
	channel        string
	pool           *pgxpool.Pool
}

func startStack(ctx context.Context, c *cleanups, runID string, logf func(string, ...any)) (*stack, error) {
	s := &stack{prefix: runID + "-", riverSchema: runID, channel: runID}
	start := time.Now()
	d, err := devstack.StartDynamo(ctx, devstack.DynamoOptions{LongRunning: true})
	if err != nil {
		return nil, fmt.Errorf("DynamoDB Local: %s", devstack.Describe(err))
	}
	c.add(d.Stop)
	s.dynamoEndpoint, s.dynamoPid = d.Endpoint, d.Pid()
	dir, err := os.MkdirTemp("", "algoitny-bench-pg-")
	if err != nil {
		return nil, err
	}
	_ = os.Chmod(dir, 0o755)
	c.add(func() { os.RemoveAll(dir) })
	pg, err := devstack.EnsurePostgres(ctx, devstack.PostgresOptions{Database: "algoitny_bench", ClusterDir: filepath.Join(dir, "pg")})
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %s", devstack.Describe(err))
	}
	c.add(pg.Stop)
	s.databaseURL = pg.URL
	if s.pool, err = pgxpool.New(ctx, pg.URL); err != nil {
		return nil, err
	}
	c.add(func() {
		// The run's River schemas go with it.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, schema := range []string{s.riverSchema, s.riverSchema + "_direct"} {
			_, _ = s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}
		s.pool.Close()
	})
	logf("stack: DynamoDB Local %s, PostgreSQL (%s) in %s", d.Endpoint, pg.Source, time.Since(start).Round(time.Millisecond))
	return s, nil
}

// serverEnv is the environment of the algoitny processes.
func (s *stack) serverEnv(extra ...string) []string {
	env := append(os.Environ(),
		"ALGOITNY_ADDR=127.0.0.1:0", "ALGOITNY_DEV=true",
		"DYNAMODB_ENDPOINT="+s.dynamoEndpoint, "DYNAMODB_TABLE_PREFIX="+s.prefix,
		"DATABASE_URL="+s.databaseURL, "ALGOITNY_RIVER_SCHEMA="+s.riverSchema,
		"ALGOITNY_PUBSUB_CHANNEL="+s.channel, "SESSION_SECRET=bQ7nW2xZ5cV8mK1lJ4hG9fD3sA6pO0iU7yT2rE5wQ8zX1cB4",
		"JUDGE_SANDBOX=bwrap",
		// Every client of the bench comes from one address, where in
		// production they are many users: the per-address limits would
		// measure the bench's own share.
		"ALGOITNY_WS_MAX_PER_ADDRESS=off", "ALGOITNY_WS_MAX_OPERATIONS_PER_ADDRESS=off", "ALGOITNY_WS_MAX_UNSENT_BYTES_PER_ADDRESS=off",
		"ALGOITNY_MAX_CONCURRENT_REQUESTS_PER_ADDRESS=off", "ALGOITNY_MAX_QUEUED_REQUESTS_PER_ADDRESS=off",
	)
	return append(env, extra...)
}

// runTool runs a one-shot algoitny subcommand (migrate, seed-plans).
func runTool(ctx context.Context, bin string, env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("algoitny %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// buildServer builds the algoitny binary into dir (it serves
// net/http/pprof on ALGOITNY_PPROF_ADDR when that is set).
func buildServer(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "algoitny")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/algoitny")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/algoitny: %v\n%s", err, out)
	}
	return bin, nil
}

// freeAddr returns a 127.0.0.1 address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// fetchProfile collects a CPU profile of seconds from a pprof endpoint.
func fetchProfile(ctx context.Context, addr string, seconds int, path string) error {
	return fetchPprof(ctx, addr, fmt.Sprintf("profile?seconds=%d", seconds), time.Duration(seconds+30)*time.Second, path)
}

// procCPU is the CPU time (user + system) pid has used so far; 0 if unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is the kernel's USER_HZ (/proc's unit of CPU time): 100 on Linux.
const clockTicks = 100

// selfCPU is the CPU time the bench process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
