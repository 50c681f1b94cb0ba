package devstack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultLocalURL is the machine's own PostgreSQL server, tried when
// DATABASE_URL is not set.
const DefaultLocalURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Postgres is a reachable PostgreSQL database.
type Postgres struct {
	// URL connects to the database.
	URL string
	// Source says where it came from: "DATABASE_URL", "local server" or "private cluster".
	Source string
	stop   func()
}

// Stop stops a private cluster started by EnsurePostgres; a no-op otherwise.
func (p *Postgres) Stop() {
	if p.stop != nil {
		p.stop()
	}
}

// PostgresOptions configures EnsurePostgres.
type PostgresOptions struct {
	// Database is created if missing (on the local server or private cluster;
	// with DATABASE_URL the URL's database is used as it is).
	Database string
	// ClusterDir holds a private cluster when no server is reachable.
	ClusterDir string
}

// EnsurePostgres finds or starts PostgreSQL: DATABASE_URL if set; else the
// machine's server on 127.0.0.1:5432 (started with pg_ctlcluster if it is
// installed but down); else a private cluster in opts.ClusterDir made with
// initdb and pg_ctl. It returns a *MissingToolError when none is possible.
func EnsurePostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		if err := ping(ctx, u); err != nil {
			return nil, fmt.Errorf("DATABASE_URL is set but unreachable: %w", err)
		}
		return &Postgres{URL: u, Source: "DATABASE_URL"}, nil
	}
	if ping(ctx, DefaultLocalURL) != nil {
		startClusters(ctx)
	}
	if ping(ctx, DefaultLocalURL) == nil {
		u, err := ensureDatabase(ctx, DefaultLocalURL, opts.Database)
		return &Postgres{URL: u, Source: "local server"}, err
	}
	if opts.ClusterDir == "" {
		return nil, errors.New("no PostgreSQL reachable and no directory for a private cluster")
	}
	return startPrivateCluster(ctx, opts)
}

func ping(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	return conn.Ping(ctx)
}

// startClusters starts the machine's Debian clusters if pg_ctlcluster exists.
func startClusters(ctx context.Context) {
	ctl, err := exec.LookPath("pg_ctlcluster")
	if err != nil {
		return
	}
	versions, _ := os.ReadDir("/etc/postgresql")
	for _, v := range versions {
		_ = exec.CommandContext(ctx, ctl, "--skip-systemctl-redirect", v.Name(), "main", "start").Run()
	}
	for i := 0; i < 20 && ping(ctx, DefaultLocalURL) != nil; i++ {
		time.Sleep(250 * time.Millisecond)
	}
}

// ensureDatabase creates db on the server of base if missing and returns its URL.
func ensureDatabase(ctx context.Context, base, db string) (string, error) {
	if db == "" {
		return base, nil
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close(ctx) }()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil && !strings.Contains(err.Error(), "already exists") {
			return "", fmt.Errorf("create database %s: %w", db, err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}

// pgBinary finds a PostgreSQL server binary on PATH or in Debian's versioned directories.
func pgBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) == 0 {
		return "", &MissingToolError{Tool: "PostgreSQL server binaries (" + name + ")", Install: "apt-get install -y postgresql   (or set DATABASE_URL)"}
	}
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}

// startPrivateCluster runs initdb (once) and pg_ctl start in opts.ClusterDir.
// PostgreSQL refuses to run as root, so as root the cluster belongs to the
// "postgres" system user.
func startPrivateCluster(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	initdb, err := pgBinary("initdb")
	if err != nil {
		return nil, err
	}
	pgctl, err := pgBinary("pg_ctl")
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.ClusterDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, &MissingToolError{Tool: "a non-root user to own a private PostgreSQL cluster", Install: "useradd --system postgres   (or set DATABASE_URL)"}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", filepath.Base(name), err, out)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		if err := run(initdb, "-D", dir, "-U", "postgres", "--auth=trust", "--no-sync"); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := run(pgctl, "-D", dir, "-l", filepath.Join(dir, "server.log"), "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", port, dir), "start"); err != nil {
		return nil, err
	}
	base := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	stop := func() { _ = run(pgctl, "-D", dir, "-m", "fast", "-w", "stop") }
	u, err := ensureDatabase(ctx, base, opts.Database)
	if err != nil {
		stop()
		return nil, err
	}
	return &Postgres{URL: u, Source: "private cluster", stop: stop}, nil
}

// PostgresForTests returns a database URL for a test package: DATABASE_URL
// (set by `make test`), else the local server's algoitny_test database, else
// a private cluster that stop shuts down. Tests isolate themselves further by
// using a schema of their own.
func PostgresForTests(ctx context.Context) (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "algoitny-pg-")
	if err != nil {
		return "", nil, err
	}
	_ = os.Chmod(dir, 0o755)
	pg, err := EnsurePostgres(ctx, PostgresOptions{Database: "algoitny_test", ClusterDir: filepath.Join(dir, "pg")})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return pg.URL, func() { pg.Stop(); os.RemoveAll(dir) }, nil
}
