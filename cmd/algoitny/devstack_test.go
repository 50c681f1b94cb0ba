package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/playground"
	"github.com/jackc/pgx/v5"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// makeRun is a `make run` started by a test on a data directory of its own,
// the way a developer starts it (the Makefile's recipe: build bin/algoitny,
// exec `algoitny dev --exit-with-parent`).
type makeRun struct {
	cmd   *exec.Cmd
	dir   string // the data directory
	bin   string // the binary the recipe built
	state devstack.State
	done  chan struct{}

	mu  sync.Mutex
	out bytes.Buffer
}

// devEnv is the environment of a developer's shell: no DynamoDB endpoint or
// database given (the tests' own are removed), the data directory dir.
func devEnv(dir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DYNAMODB_ENDPOINT", "DATABASE_URL", "ALGOITNY_DEV", "MAKEFLAGS", "MAKELEVEL", "MFLAGS":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "ALGOITNY_DATA_DIR="+dir), extra...)
}

func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := devstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// startMakeRun runs `make run` with the API and DynamoDB Local on free ports
// and waits until it prints the playground's URL; extra is more of its
// environment.
func startMakeRun(t *testing.T, dir string, extra ...string) *makeRun {
	t.Helper()
	m := &makeRun{dir: dir, bin: filepath.Join(dir, "bin", "algoitny"), done: make(chan struct{})}
	m.cmd = exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot(t), "run", "BIN="+m.bin)
	m.cmd.Env = devEnv(dir, append([]string{"ALGOITNY_ADDR=127.0.0.1:0", "ALGOITNY_DYNAMODB_PORT=0"}, extra...)...)
	// Its own process group, as a terminal's job: signals below go to one
	// process only, never to the test.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m.cmd.Stderr = &lockedBuffer{mu: &m.mu, b: &m.out}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		var once sync.Once
		for sc.Scan() {
			m.mu.Lock()
			m.out.WriteString(sc.Text() + "\n")
			m.mu.Unlock()
			if strings.HasPrefix(sc.Text(), "playground: ") {
				once.Do(func() { close(ready) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		if m.state.Pid != 0 {
			syscall.Kill(m.state.Pid, syscall.SIGKILL)
		}
		if m.state.DynamoDBPid != 0 {
			syscall.Kill(-m.state.DynamoDBPid, syscall.SIGKILL)
		}
		<-m.done
		dropDatabase(devstack.DatabaseName(dir))
	})
	select {
	case <-ready:
	case <-m.done:
		t.Fatalf("make run ended before it served:\n%s", m.output())
	case <-time.After(4 * time.Minute):
		t.Fatalf("make run did not serve within 4 minutes:\n%s", m.output())
	}
	st, err := devstack.Running(dir)
	if err != nil || st == nil {
		t.Fatalf("no running stack on %s (%v):\n%s", dir, err, m.output())
	}
	m.state = *st
	return m
}

func (m *makeRun) output() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.out.String()
}

// gone reports whether pid has ended (a zombie no one reaped counts).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// stopAndCheck sends sig to pid and checks that make, the server and
// DynamoDB Local all end, and that the data directory is free again.
func (m *makeRun) stopAndCheck(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("make still runs 60 s after %v to pid %d:\n%s", sig, pid, m.output())
	}
	for _, p := range []struct {
		name string
		pid  int
	}{{"the server", m.state.Pid}, {"DynamoDB Local", m.state.DynamoDBPid}} {
		if !algoitnytest.PollEvery(context.Background(), 30*time.Second, 50*time.Millisecond, func() bool { return gone(p.pid) }) {
			t.Fatalf("%s (pid %d) still runs 30 s after make ended (%v to pid %d):\n%s", p.name, p.pid, sig, pid, m.output())
		}
	}
	if st, err := devstack.Running(m.dir); err != nil || st != nil {
		t.Fatalf("the data directory is still claimed: %+v %v", st, err)
	}
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// dropDatabase removes a database a `make run` of a test created.
func dropDatabase(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, devstack.DefaultLocalURL)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// readmeSnippets returns the ```sh blocks of README.md's section heading.
func readmeSnippets(t *testing.T, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestTryIt follows the README as a new developer would: `make run`, then
// every snippet of "Try it" in order (sign in, `bin/algoitny admin grant`
// finding the running stack with no environment given, a problem, an
// execution, hints, quotas), then the playground's example operations over
// HTTP and websockets. It also checks what else a developer meets: a second
// `make run` on the same data says what runs, and a subcommand refuses to
// reach AWS when no stack runs.
func TestTryIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := startMakeRun(t, dir)

	t.Run("SecondMakeRunSaysWhatRuns", func(t *testing.T) {
		cmd := exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot(t), "run", "BIN="+filepath.Join(t.TempDir(), "algoitny"))
		cmd.Env = devEnv(dir, "ALGOITNY_ADDR=127.0.0.1:0", "ALGOITNY_DYNAMODB_PORT=0")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "already running") || !strings.Contains(string(out), fmt.Sprint(m.state.Pid)) {
			t.Fatalf("second make run: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "DynamoDB Local: ") {
			t.Fatalf("a second DynamoDB Local was started:\n%s", out)
		}
	})

	t.Run("NoStackNoAWS", func(t *testing.T) {
		cmd := exec.Command(m.bin, "admin", "grant", "you@example.com")
		cmd.Env = devEnv(t.TempDir())
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "DYNAMODB_ENDPOINT=aws") {
			t.Fatalf("admin without a stack: %v\n%s", err, out)
		}
	})

	t.Run("Snippets", func(t *testing.T) {
		snippets := readmeSnippets(t, "Try it")
		if len(snippets) < 5 {
			t.Fatalf("Try it has %d snippets", len(snippets))
		}
		work := t.TempDir() // bin/algoitny is the binary make run built
		if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(m.bin, filepath.Join(work, "bin", "algoitny")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.Join(snippets, "\n"))
		cmd.Dir = work
		cmd.Env = devEnv(dir, "API="+m.state.API)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the README's snippets failed: %v\n%s", err, out)
		}
		for _, want := range []string{
			"you@example.com is staff now",
			`"createProblem":{`, `"testCaseCount":2`,
			`"status":"COMPLETED"`, `"verdict":"WRONG_ANSWER"`,
			`"hints":["`,
			`{"action":"EXECUTION","used":1,`, `{"action":"HINT","used":1,`,
			`"codeRun":{"verdict":"OK","stdout":"42\n"`, `"counterexampleSearch":{"found":true`,
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the snippets' output has no %s:\n%s", want, out)
			}
		}
	})

	t.Run("PlaygroundExamples", func(t *testing.T) {
		s := &apiServer{URL: m.state.API}
		token := s.login(t, "you@example.com")
		vars := map[string]any{}
		for _, ex := range playground.Examples() {
			want := map[string]any{}
			if ex.Variables != "" {
				if err := json.Unmarshal([]byte(ex.Variables), &want); err != nil {
					t.Fatalf("%s: variables %s: %v", ex.Name, ex.Variables, err)
				}
			}
			for name := range want {
				if vars[name] == nil {
					t.Fatalf("%s needs %s, which no earlier example gave", ex.Name, name)
				}
			}
			if strings.Contains(ex.Query, "subscription ") {
				c := s.dialWS(t, "graphql-transport-ws", nil)
				c.init(token)
				c.subscribe("1", ex.Query, vars)
				events := c.collect("1", 60*time.Second)
				if len(events) == 0 {
					t.Fatalf("%s: no events", ex.Name)
				}
				for _, e := range events {
					if bytes.Contains(e, []byte(`"errors"`)) {
						t.Fatalf("%s: %s", ex.Name, e)
					}
				}
				if id := regexp.MustCompile(`"history":\{"id":"([^"]+)"`).FindSubmatch(events[len(events)-1]); id != nil {
					vars["historyId"] = string(id[1])
				}
				continue
			}
			r := s.query(t, token, ex.Query, vars)
			if len(r.Errors) > 0 && !(ex.Name == "02-create-problem" && r.code() == "CONFLICT") { // the snippets created it
				t.Fatalf("%s: %s", ex.Name, r.Raw)
			}
			switch ex.Name {
			case "01-sign-in":
				var out struct{ DevLogin struct{ Token string } }
				r.decode(t, &out)
				token = out.DevLogin.Token
			case "03-execute-code":
				var out struct{ ExecuteCode struct{ ID string } }
				r.decode(t, &out)
				vars["jobId"] = out.ExecuteCode.ID
			}
		}
	})

	// SIGTERM to make alone (not its process group): nothing is left.
	m.stopAndCheck(t, m.cmd.Process.Pid, syscall.SIGTERM)
}

// TestMakeRunStops: whichever of `make` and the server gets SIGTERM or
// SIGINT (or make SIGKILL), the server and DynamoDB Local end and the data directory is free
// (TestTryIt ends with SIGTERM to make alone). SIGINT reaches make as a
// terminal sends it, to the whole foreground process group (Ctrl-C): make
// given SIGINT alone waits for its recipe, as GNU make does.
func TestMakeRunStops(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		who  string // make's process group, or the server
		sig  syscall.Signal
	}{
		{"CtrlC", "group", syscall.SIGINT},
		// make cannot pass SIGKILL on: the server hears of its death
		// from the kernel (--exit-with-parent).
		{"SIGKILLToMake", "make", syscall.SIGKILL},
		{"SIGTERMToServer", "server", syscall.SIGTERM},
		{"SIGINTToServer", "server", syscall.SIGINT},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// No warm-up (TestTryIt has one): eight toolchains' compiles,
			// four times over, would only load the machine.
			m := startMakeRun(t, t.TempDir(), "JUDGE_WARM=false")
			pid := -m.cmd.Process.Pid
			switch c.who {
			case "make":
				pid = m.cmd.Process.Pid
			case "server":
				pid = m.state.Pid
			}
			m.stopAndCheck(t, pid, c.sig)
		})
	}
}

// TestReadmeListsEverySetting: every environment variable the code reads
// is in README.md.
func TestReadmeListsEverySetting(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`"((?:ALGOITNY|ATCODER|DYNAMODB|LLM|GEMINI|OPENAI|JUDGE|SESSION|GOOGLE|DATABASE|AWS)_[A-Z0-9_]+)"`)
	seen := map[string]bool{}
	for _, dir := range []string{"cmd", "internal"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range name.FindAllSubmatch(src, -1) {
				seen[string(m[1])] = true
			}
			return nil
		})
	}
	if len(seen) < 30 {
		t.Fatalf("found only %d settings: %v", len(seen), seen)
	}
	for v := range seen {
		if !bytes.Contains(readme, []byte("`"+v+"`")) {
			t.Errorf("README.md does not list %s", v)
		}
	}
}

// TestReadmeOperations: every GraphQL operation README.md and docs/api.md
// show is valid against the schema.
func TestReadmeOperations(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	// The README and docs/api.md (its API notes and "Try more").
	var readme []byte
	for _, name := range []string{"README.md", "docs/api.md"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	schemaSrc, err := os.ReadFile(filepath.Join(root, "schema.graphqls"))
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(schemaSrc)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	blocks := regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 2 {
		t.Fatalf("README.md shows %d GraphQL blocks", len(blocks))
	}
	for _, b := range blocks {
		if _, errs := gqlparser.LoadQuery(schema, b[1]); len(errs) > 0 {
			t.Errorf("README.md operation does not validate: %v\n%s", errs, b[1])
		}
	}
}
