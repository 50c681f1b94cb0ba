package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
)

// newFlags returns a flag set whose usage goes to stderr and whose errors are returned.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: algoitny %s\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// fail prints err for an operator (tool problems as install hints) and returns exit code 1.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "algoitny %s: %s\n", cmd, devstack.Describe(err))
	return 1
}

// loadConfig reads the configuration of a subcommand that touches data;
// where the environment does not say where the data is, it takes the
// running `make run` stack's (Config.resolveStack).
func loadConfig(stderr io.Writer, cmd string) (Config, bool) {
	cfg, err := configFromEnv()
	if err == nil {
		err = cfg.resolveStack(stderr)
	}
	if err != nil {
		fail(stderr, cmd, err)
		return cfg, false
	}
	return cfg, true
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "serve [--no-workers]", stderr)
	noWorkers := fs.Bool("no-workers", false, "serve the API only; run jobs in `algoitny worker` processes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig(stderr, "serve")
	if !ok {
		return 1
	}
	if *noWorkers {
		cfg.Workers = false
	}
	return serve(ctx, cfg, stdout, stderr)
}

func serve(ctx context.Context, cfg Config, stdout, stderr io.Writer) int {
	return serveThen(ctx, cfg, stdout, stderr, nil)
}

// serveThen is serve with listening called with the API's URL once the
// server listens.
func serveThen(ctx context.Context, cfg Config, stdout, stderr io.Writer, listening func(api string) error) int {
	m := &Main{Config: cfg}
	defer m.Close()
	if err := m.Open(ctx, true); err != nil {
		return fail(stderr, "serve", err)
	}
	host, port, _ := net.SplitHostPort(m.Addr())
	if host == "" || host == "::" || host == "0.0.0.0" {
		host = "localhost"
	}
	base := "http://" + net.JoinHostPort(host, port)
	if listening != nil {
		if err := listening(base + "/query"); err != nil {
			return fail(stderr, "serve", err)
		}
	}
	// Clients may reach the server elsewhere (a published container port,
	// a proxy): the URLs printed are theirs.
	if cfg.PublicURL != "" {
		base = cfg.PublicURL
	}
	fmt.Fprintf(stdout, "algoitny %s listening on %s (workers: %v), API %s/query\n", version, m.Addr(), cfg.Workers, base)
	if cfg.Dev {
		fmt.Fprintf(stdout, "playground: %s/playground\n", base)
		// The judge's warm-up logs a line per language after the one above;
		// start-up ends with the URL again, alone on its line.
		if warmed := m.warmDone; warmed != nil {
			rctx, stop := context.WithCancel(ctx)
			printed := make(chan struct{})
			defer func() { stop(); <-printed }()
			go func() {
				defer close(printed)
				select {
				case <-warmed:
					if rctx.Err() == nil {
						fmt.Fprintf(stdout, "ready, every language warmed; the playground:\n%s/playground\n", base)
					}
				case <-rctx.Done():
				}
			}()
		}
	}
	if err := m.Run(ctx); err != nil {
		return fail(stderr, "serve", err)
	}
	return 0
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("worker", "worker", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig(stderr, "worker")
	if !ok {
		return 1
	}
	cfg.Workers = true
	m := &Main{Config: cfg}
	defer m.Close()
	if err := m.Open(ctx, false); err != nil {
		return fail(stderr, "worker", err)
	}
	fmt.Fprintln(stdout, "algoitny worker running")
	if err := m.Run(ctx); err != nil {
		return fail(stderr, "worker", err)
	}
	return 0
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", "migrate", stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig(stderr, "migrate")
	if !ok {
		return 1
	}
	if err := migrate(ctx, cfg, stdout); err != nil {
		return fail(stderr, "migrate", err)
	}
	return 0
}

// migrate creates or upgrades the DynamoDB tables and applies River's migrations.
func migrate(ctx context.Context, cfg Config, stdout io.Writer) error {
	db, err := dynamo.Open(ctx, cfg.Dynamo)
	if err != nil {
		return err
	}
	rep, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	t := db.Tables()
	fmt.Fprintf(stdout, "DynamoDB: tables %s, %s, %s ready", t.Main, t.Users, t.Plans)
	if n := len(rep.Created) + len(rep.IndexesAdded) + len(rep.TTLEnabled); n > 0 {
		fmt.Fprintf(stdout, " (created %v, indexes added %v, TTL enabled %v)", rep.Created, rep.IndexesAdded, rep.TTLEnabled)
	}
	fmt.Fprintln(stdout)
	pool, err := openPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	applied, err := jobs.Migrate(ctx, pool, cfg.RiverSchema)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "River: schema up to date (applied %d migrations)\n", len(applied))
	if err := pubsub.Migrate(ctx, pool); err != nil {
		return err
	}
	return nil
}

func runSeedPlans(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("seed-plans", "seed-plans [--force]", stderr)
	force := fs.Bool("force", false, "reset existing default plans to their default values")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, ok := loadConfig(stderr, "seed-plans")
	if !ok {
		return 1
	}
	if err := seedPlans(ctx, cfg, *force, stdout); err != nil {
		return fail(stderr, "seed-plans", err)
	}
	return 0
}

func seedPlans(ctx context.Context, cfg Config, force bool, stdout io.Writer) error {
	w, err := openWriter(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer w.Close()
	changed, err := w.DB.SeedPlans(ctx, algoitny.DefaultPlans(), force)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		fmt.Fprintln(stdout, "plans: Free, Pro and Admin already exist (use --force to reset them)")
	} else {
		fmt.Fprintf(stdout, "plans: wrote %s\n", strings.Join(changed, ", "))
	}
	return nil
}

// runDev is `make run`: a persistent local stack (DynamoDB Local with data in
// .data/dynamodb, PostgreSQL), migrations, default plans, and the server in
// dev mode with in-process workers. It holds the data directory's lock while
// it runs, so a second `make run` there says what is running instead of
// starting a second DynamoDB Local on the same data, and it publishes where
// its stack is (devstack.State) for the other subcommands of the checkout.
//
// With --exit-with-parent (what `make run` passes) it stops, and stops
// DynamoDB Local, when its parent dies: a SIGTERM to `make` alone leaves
// nothing behind.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("dev", "dev [--exit-with-parent]   (what `make run` runs)", stderr)
	exitWithParent := fs.Bool("exit-with-parent", false, "stop when the parent process (make) dies")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *exitWithParent {
		if err := dieWithParent(); err != nil {
			return fail(stderr, "dev", err)
		}
	}
	if os.Getenv("ALGOITNY_DEV") == "" {
		_ = os.Setenv("ALGOITNY_DEV", "true")
	}
	cfg, err := configFromEnv()
	if err != nil {
		return fail(stderr, "dev", err)
	}
	data, err := devstack.DataDir()
	if err != nil {
		return fail(stderr, "dev", err)
	}
	claim, err := devstack.ClaimDataDir(data)
	if err != nil {
		return fail(stderr, "dev", err)
	}
	defer claim.Release()
	state := devstack.State{Pid: os.Getpid(), TablePrefix: cfg.Dynamo.TablePrefix, RiverSchema: cfg.RiverSchema,
		PubsubChannel: cfg.PubsubChannel, Started: time.Now().UTC()}
	if cfg.Dynamo.Endpoint == "" && !cfg.DynamoAWS {
		port, err := devDynamoPort()
		if err != nil {
			return fail(stderr, "dev", err)
		}
		d, err := devstack.StartDynamo(ctx, devstack.DynamoOptions{DBPath: filepath.Join(data, "dynamodb"), Port: port, LongRunning: true})
		if err != nil {
			return fail(stderr, "dev", err)
		}
		defer d.Stop()
		cfg.Dynamo.Endpoint, state.DynamoDBPid = d.Endpoint, d.Pid()
		fmt.Fprintf(stdout, "DynamoDB Local: %s (data in %s)\n", d.Endpoint, filepath.Join(data, "dynamodb"))
	}
	state.DynamoDB = cmp.Or(cfg.Dynamo.Endpoint, "aws")
	pg, err := devstack.EnsurePostgres(ctx, devstack.PostgresOptions{Database: devstack.DatabaseName(data), ClusterDir: filepath.Join(data, "postgres")})
	if err != nil {
		return fail(stderr, "dev", err)
	}
	defer pg.Stop()
	cfg.DatabaseURL, state.DatabaseURL = pg.URL, pg.URL
	fmt.Fprintf(stdout, "PostgreSQL: %s (%s)\n", redact(pg.URL), pg.Source)
	if err := migrate(ctx, cfg, stdout); err != nil {
		return fail(stderr, "dev", err)
	}
	if err := seedPlans(ctx, cfg, false, stdout); err != nil {
		return fail(stderr, "dev", err)
	}
	return serveThen(ctx, cfg, stdout, stderr, func(api string) error {
		state.API = api
		return claim.Publish(state)
	})
}

// devDynamoPort is DynamoDB Local's port under `make run`:
// ALGOITNY_DYNAMODB_PORT (0 = any free port), else 8000 if it is free.
func devDynamoPort() (int, error) {
	v := strings.TrimSpace(os.Getenv("ALGOITNY_DYNAMODB_PORT"))
	if v == "" {
		if portFree(8000) {
			return 8000, nil
		}
		return 0, nil
	}
	port, err := strconv.Atoi(v)
	if err != nil || port < 0 || port > 65535 {
		return 0, fmt.Errorf("ALGOITNY_DYNAMODB_PORT=%q: want a port number (0 for any free port)", v)
	}
	if port != 0 && !portFree(port) {
		return 0, fmt.Errorf("ALGOITNY_DYNAMODB_PORT=%d is in use: choose another (0 for any free port)", port)
	}
	return port, nil
}

// runStack is `make test`: throw-away DynamoDB Local (in memory) and a
// PostgreSQL test database, exported to the command it runs.
func runStack(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "Usage: algoitny stack -- COMMAND [ARGS...]")
		return 2
	}
	d, err := devstack.StartDynamo(ctx, devstack.DynamoOptions{})
	if err != nil {
		return fail(stderr, "stack", err)
	}
	defer d.Stop()
	pgURL, stopPG, err := devstack.PostgresForTests(ctx)
	if err != nil {
		return fail(stderr, "stack", err)
	}
	defer stopPG()
	fmt.Fprintf(stdout, "stack: DynamoDB Local %s, PostgreSQL %s\n", d.Endpoint, redact(pgURL))
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), "DYNAMODB_ENDPOINT="+d.Endpoint, "DATABASE_URL="+pgURL)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return fail(stderr, "stack", err)
	}
	return 0
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// redact hides a password in a database URL.
func redact(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if at := strings.Index(u[i+3:], "@"); at >= 0 {
			cred := u[i+3 : i+3+at]
			if user, _, ok := strings.Cut(cred, ":"); ok {
				return u[:i+3] + user + ":***" + u[i+3+at:]
			}
		}
	}
	return u
}
