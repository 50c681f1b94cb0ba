// Command bench measures the AlgoItny API under load against baselines
// measured in the same run on the same machine, and prints every figure as a
// ratio to its baseline (absolute numbers on shared machines are noise).
//
// It starts the real stack (DynamoDB Local in memory, PostgreSQL), builds
// and starts the `algoitny` server as a separate process, loads a data set
// (1,000 problems with 20 test cases, 200 users, 50,000 executions, a third
// public; -scale shrinks it), and drives the server over HTTP and websockets
// on 127.0.0.1 only, every loop bounded in count and time. Baselines that
// are servers (a plain net/http JSON handler, a raw gorilla broadcast loop,
// a bare gorilla echo server) run as separate processes of this binary.
//
//	go run ./bench                          # everything, full scale
//	go run ./bench -quick                    # a quick run (about 2 minutes)
//	go run ./bench -quick -fail-on-target    # the same, exit status 3 if a target is missed
//	go run ./bench -scenarios problem,typename -clients 16
//	go run ./bench -out docs/benchmarks.md   # also write the report
//
// Scenarios: problem, typename, history, usage, stale, judge, river,
// execute, fanout, mixed, overload. -profile SCENARIO builds the server
// with a net/http/pprof
// endpoint and writes a CPU profile of it during that scenario.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
)

var allScenarios = []string{"problem", "typename", "history", "usage", "stale", "judge", "river", "execute", "fanout", "mixed", "overload"}

type options struct {
	clients       int
	duration      time.Duration
	scale         float64
	scenarios     []string
	out           string
	maxOps        int64
	subscribers   []int // fan-out sizes, one row each
	fanRounds     int
	judgeRuns     int
	riverJobs     int
	executeRuns   int
	mixedDuration time.Duration
	mixedRPS      int
	// overloadClients and overloadDuration shape the overload scenario.
	overloadClients  int
	overloadDuration time.Duration
	drainTimeout     time.Duration
	timeout          time.Duration
	writers          int
	profile          string
	profileOut       string
	serverEnv        []string // -server-env KEY=VALUE, repeatable
	bin              string
	verbose          bool
	failOnTarget     bool
	staleTrials      int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// parseFlags reads the command line into options (with -quick's preset
// under any flag given, and the timed scenarios' lengths from -duration);
// baseline is the internal -baseline mode, scenarios the -scenarios list.
func parseFlags(args []string) (o options, scenarios, baseline string, err error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.clients, "clients", 8, "concurrent clients of the closed-loop scenarios")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measuring time of each closed-loop scenario (split between baseline and target)")
	fs.Float64Var(&o.scale, "scale", 1.0, "fraction of the data set (1.0 = 1,000 problems, 200 users, 50,000 executions; 0.05 for a quick run)")
	fs.StringVar(&scenarios, "scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run")
	fs.StringVar(&o.out, "out", "", "also write the report (Markdown) to this file")
	fs.Int64Var(&o.maxOps, "max-ops", 1_000_000, "cap on the operations of one measured phase")
	o.subscribers = []int{300, 1000}
	fs.Func("subscribers", "websocket subscribers of the fan-out scenario, a comma list: one row each (default 300,1000)", func(v string) error {
		n, err := parseInts(v)
		o.subscribers = n
		return err
	})
	fs.IntVar(&o.fanRounds, "fan-rounds", 5, "events of the fan-out scenario")
	fs.IntVar(&o.judgeRuns, "judge-runs", 200, "runs of the judge scenario")
	fs.IntVar(&o.riverJobs, "river-jobs", 100, "jobs of each River scenario")
	fs.IntVar(&o.executeRuns, "execute-runs", 20, "executions of the execute scenario")
	fs.IntVar(&o.staleTrials, "stale-trials", 0, "trials of each kind of the stale scenario (default from -duration: 5–30)")
	fs.DurationVar(&o.mixedDuration, "mixed-duration", 0, "length of the sustained mixed load (default 6 × -duration: 60s)")
	fs.IntVar(&o.mixedRPS, "mixed-rps", 10, "arrival rate of the mixed load (requests per second)")
	fs.IntVar(&o.overloadClients, "overload-clients", 200, "closed-loop clients of the overload scenario")
	fs.DurationVar(&o.overloadDuration, "overload-duration", 0, "length of the overload scenario (default 3 × -duration: 30s)")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 10*time.Minute, "how long the mixed load waits for its jobs to finish")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Minute, "bound on the whole run")
	fs.IntVar(&o.writers, "writers", 24, "parallel writers of the data load")
	fs.StringVar(&o.profile, "profile", "", "scenario during which to take a CPU profile of the server (through its ALGOITNY_PPROF_ADDR endpoint)")
	fs.Func("server-env", "KEY=VALUE added to the API server's environment, e.g. GOGC=400 (repeatable)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		o.serverEnv = append(o.serverEnv, v)
		return nil
	})
	fs.StringVar(&o.profileOut, "profile-out", "", "where to write the CPU profile (default bench-SCENARIO.pprof in the log directory)")
	fs.StringVar(&o.bin, "bin", "", "use this algoitny binary instead of building one")
	fs.BoolVar(&o.verbose, "v", false, "print progress details")
	fs.StringVar(&baseline, "baseline", "", "internal: serve a baseline (http, broadcast, echo)")
	quick := fs.Bool("quick", false, "a quick run (about 2 minutes here): a small data set and short, small scenarios; flags given as well win")
	fs.BoolVar(&o.failOnTarget, "fail-on-target", false, "exit with status 3 when a target is missed (for CI; a report is printed either way)")
	if err := fs.Parse(args); err != nil {
		return o, "", "", err
	}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range quickFlags {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					return o, "", "", err
				}
			}
		}
	}
	// Timed scenarios without a length of their own follow -duration.
	if o.mixedDuration == 0 {
		o.mixedDuration = 6 * o.duration
	}
	if o.overloadDuration == 0 {
		o.overloadDuration = 3 * o.duration
	}
	return o, scenarios, baseline, nil
}

func realMain(ctx context.Context, args []string) int {
	o, scenarios, baseline, err := parseFlags(args)
	if err != nil {
		return 2
	}
	if baseline != "" {
		if err := runBaseline(ctx, baseline); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		return 0
	}
	for _, s := range strings.Split(scenarios, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(allScenarios, s) {
			fmt.Fprintf(os.Stderr, "bench: unknown scenario %q (have %s)\n", s, strings.Join(allScenarios, ", "))
			return 2
		}
		o.scenarios = append(o.scenarios, s)
	}
	if o.profile != "" && !slices.Contains(o.scenarios, o.profile) {
		fmt.Fprintf(os.Stderr, "bench: -profile %s is not among -scenarios\n", o.profile)
		return 2
	}
	if o.clients < 1 || o.scale <= 0 || o.scale > 1 || o.duration <= 0 || slices.Min(o.subscribers) < 10 {
		fmt.Fprintln(os.Stderr, "bench: want -clients ≥ 1, 0 < -scale ≤ 1, -duration > 0, -subscribers ≥ 10")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	c := &cleanups{}
	defer c.run()
	missed, err := benchmark(ctx, c, o, args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", devstack.Describe(err))
		return 1
	}
	if missed > 0 && o.failOnTarget {
		fmt.Fprintf(os.Stderr, "bench: %d targets missed (FAIL rows above)\n", missed)
		return 3
	}
	return 0
}

// quickFlags is -quick: every scenario, each small and short (the whole
// run about 2 minutes on 2 cores, most of it building the server and
// starting the stack). Its numbers show that everything works and roughly
// where it stands; targets are judged on full runs.
var quickFlags = map[string]string{
	"scale": "0.02", "duration": "2s", "subscribers": "30,100", "fan-rounds": "3",
	"judge-runs": "30", "river-jobs": "15", "execute-runs": "3", "stale-trials": "2",
	"mixed-duration": "8s", "mixed-rps": "5", "overload-clients": "50", "overload-duration": "4s",
	"drain-timeout": "90s", "writers": "8",
}

// benchmark runs the scenarios and prints the report; it returns how many
// rows missed their target.
func benchmark(ctx context.Context, c *cleanups, o options, args []string) (missed int, err error) {
	started := time.Now()
	b, load0, err := setUp(ctx, c, o)
	if err != nil {
		return 0, err
	}
	if err := b.runScenarios(ctx); err != nil {
		return 0, err
	}
	b.profileWait()
	rss, _ := rssBytes(b.server.pid())
	return b.finishReport(args, started, load0, rss)
}

// logf writes a timestamped line of progress to standard error.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// setUp prepares a run: a directory for the logs, the server built (unless
// o.bin names it), a stack with the data set loaded, the server started and
// warm, and every user signed in. It returns the load average before.
func setUp(ctx context.Context, c *cleanups, o options) (*run, string, error) {
	root, err := devstack.RepoRoot()
	if err != nil {
		return nil, "", err
	}
	logDir, err := os.MkdirTemp("", "algoitny-bench-")
	if err != nil {
		return nil, "", err
	}
	logf("logs in %s", logDir)
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	// Sockets: per subscriber 2 in the bench and 1 in the server, and as
	// many for the baseline's broadcast, plus slack.
	raiseFileLimit(uint64(6*slices.Max(o.subscribers) + 1024))
	load0 := loadAvg()

	bin := o.bin
	if bin == "" {
		t := time.Now()
		if bin, err = buildServer(ctx, root, logDir); err != nil {
			return nil, "", err
		}
		logf("built the server in %s", time.Since(t).Round(time.Millisecond))
	}
	b := &run{opts: o, c: c, self: self, logDir: logDir, logf: logf, bin: bin}
	if err := b.prepareData(ctx); err != nil {
		return nil, "", err
	}
	if err := b.startServer(ctx); err != nil {
		return nil, "", err
	}
	// The workers warm every language's toolchain at start (seconds of
	// compiling, on the same cores): measure after it, not during it.
	b.waitJudgeWarm(ctx)
	b.tokens = make([]string, len(b.ds.users))
	if err := parallel(ctx, 8, len(b.ds.users), func(i int) error {
		var err error
		b.tokens[i], err = b.api.login(ctx, b.ds.users[i].Email)
		return err
	}); err != nil {
		return nil, "", fmt.Errorf("devLogin: %w", err)
	}
	return b, load0, nil
}

// prepareData starts the stack, migrates it, seeds the plans and loads the
// data set.
func (b *run) prepareData(ctx context.Context) error {
	runID := fmt.Sprintf("bench%d", time.Now().UnixNano()%1e9)
	st, err := startStack(ctx, b.c, runID, logf)
	if err != nil {
		return err
	}
	env := st.serverEnv()
	for _, cmd := range [][]string{{"migrate"}, {"seed-plans"}} {
		if err := runTool(ctx, b.bin, env, cmd...); err != nil {
			return err
		}
	}
	db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: st.dynamoEndpoint, TablePrefix: st.prefix})
	if err != nil {
		return err
	}
	ds, err := loadData(ctx, db, b.opts.scale, b.opts.writers, logf)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	logf("data set loaded in %s", ds.loadTime.Round(time.Millisecond))
	b.stack, b.db, b.ds = st, db, ds
	return nil
}

// startServer starts `algoitny serve` on the stack, with a pprof address
// (CPU profiles with -profile; a forced GC before each memory sample), and
// the clients of it.
func (b *run) startServer(ctx context.Context) error {
	pprofAddr, err := freeAddr()
	if err != nil {
		return err
	}
	// serverEnv is also the replicas' (without the pprof address: theirs
	// would clash).
	serverEnv := b.stack.serverEnv(b.opts.serverEnv...)
	srv, err := startProc(b.c, "algoitny serve", append(slices.Clone(serverEnv), "ALGOITNY_PPROF_ADDR="+pprofAddr), filepath.Join(b.logDir, "server.log"), b.bin, "serve")
	if err != nil {
		return err
	}
	addr, err := srv.waitAddr(60 * time.Second)
	if err != nil {
		return err
	}
	logf("server (pid %d) listening on %s", srv.pid(), addr)
	sdk, err := newSDKClient(ctx, b.stack.dynamoEndpoint)
	if err != nil {
		return err
	}
	b.server, b.base, b.sdk = srv, "http://"+addr, sdk
	b.api = &api{url: "http://" + addr + "/query", client: newHTTPClient(max(b.opts.clients, 64))}
	b.wsURL = "ws://" + addr + "/query"
	b.pprofAddr, b.serverEnv = pprofAddr, serverEnv
	return nil
}

// runScenarios runs the chosen scenarios in order, logging their rows.
func (b *run) runScenarios(ctx context.Context) error {
	scenarios := map[string]func(context.Context){
		"problem": b.scenarioProblem, "typename": b.scenarioTypename, "history": b.scenarioHistory,
		"usage": b.scenarioUsage, "judge": b.scenarioJudge, "river": b.scenarioRiver,
		"execute": b.scenarioExecute, "fanout": b.scenarioFanout, "mixed": b.scenarioMixed,
		"stale": b.scenarioStale, "overload": b.scenarioOverload,
	}
	for _, name := range b.opts.scenarios {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t := time.Now()
		logf("scenario %s ...", name)
		before := len(b.rows)
		scenarios[name](ctx)
		for _, r := range b.rows[before:] {
			logf("  %s: p50 %s p99 %s, %s → %s", r.scenario, cell(r.p50), cell(r.p99), cell(r.ratio), verdict(r))
		}
		logf("scenario %s done in %s", name, time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// finishReport prints the report (and writes it to o.out) and returns how
// many rows missed their target.
func (b *run) finishReport(args []string, started time.Time, load0 string, rss int64) (missed int, err error) {
	report := b.report(args, started, load0, rss)
	fmt.Println()
	fmt.Print(report)
	if b.opts.out != "" {
		if err := os.WriteFile(b.opts.out, []byte(report), 0o644); err != nil {
			return 0, err
		}
		logf("report written to %s", b.opts.out)
	}
	for _, r := range b.rows {
		if r.pass != nil && !*r.pass {
			missed++
		}
	}
	return missed, nil
}

// report renders the results with the machine, the command and the data set.
func (b *run) report(args []string, started time.Time, load0 string, rss int64) string {
	var s strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&s, "## Run of %s\n\n", started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&s, "Command: `go run ./bench %s`\n\n", strings.Join(args, " "))
	fmt.Fprintf(&s, "- Machine: %s, %d CPUs (%s), %s RAM, %s, %s; host %s\n", cpuModel(), runtime.NumCPU(), runtime.GOARCH, memTotal(), kernel(), runtime.Version(), host)
	fmt.Fprintf(&s, "- Load average at start: %s; at end: %s. Everything (DynamoDB Local, PostgreSQL, the server, the judge, the clients, the baselines) shares these CPUs.\n", load0, loadAvg())
	fmt.Fprintf(&s, "- Data set: %d problems + 1 (%d test cases), %d users, %d executions (%d public); loaded in %s with %d parallel writers\n",
		b.ds.nProblems, b.ds.nTestCases, b.ds.nUsers, b.ds.nHistory, b.ds.nPublic, b.ds.loadTime.Round(time.Second), b.opts.writers)
	fmt.Fprintf(&s, "- Clients: %d concurrent (closed loop), %s per scenario split in 4 alternating baseline/target rounds; server RSS at the end %.0f MB; total time %s\n\n",
		b.opts.clients, b.opts.duration, float64(rss)/(1<<20), time.Since(started).Round(time.Second))
	s.WriteString(table(b.rows))
	if n := notes(b.rows); n != "" {
		s.WriteString("\nNotes:\n\n" + n)
	}
	if b.profilePath != "" {
		fmt.Fprintf(&s, "\nCPU profile of the server during `%s`: %s\n", b.opts.profile, b.profilePath)
		if top := pprofTop(b.profilePath); top != "" {
			s.WriteString("\n```\n" + top + "```\n")
		}
	}
	return s.String()
}

func pprofTop(path string) string {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", path).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func raiseFileLimit(want uint64) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return
	}
	if l.Cur < want {
		l.Cur = min(want, l.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

func readFirst(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return string(b)
}

func loadAvg() string {
	f := strings.Fields(readFirst("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	for _, line := range strings.Split(readFirst("/proc/cpuinfo"), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	for _, line := range strings.Split(readFirst("/proc/meminfo"), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			_, _ = fmt.Sscan(rest, &kb)
			return fmt.Sprintf("%.0f GB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func kernel() string {
	return "Linux " + strings.TrimSpace(readFirst("/proc/sys/kernel/osrelease"))
}

func discardLogger() *slog.Logger {
	if os.Getenv("BENCH_RIVER_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// parseInts reads a comma list of positive integers.
func parseInts(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("want a comma list of positive integers, got %q", v)
		}
		out = append(out, n)
	}
	return out, nil
}
