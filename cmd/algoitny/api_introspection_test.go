package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/devstack"
)

// The graphql-http audit (npm package graphql-http, with graphql-js), kept
// in .tools-node/ of the repository (ignored by git) and installed by the
// test itself when missing, through npm, like DynamoDB Local in .tools/.
const (
	graphqlHTTPVersion = "1.23.1"
	graphqlJSVersion   = "16.15.0"
	nodeToolsDir       = ".tools-node"
)

var nodeTools struct {
	once    sync.Once
	modules string
	err     error
}

// graphqlHTTPModules returns the node_modules folder that holds graphql-http,
// installing it with npm on first use.
func graphqlHTTPModules(t *testing.T) string {
	t.Helper()
	nodeTools.once.Do(func() {
		root, err := devstack.RepoRoot()
		if err != nil {
			nodeTools.err = err
			return
		}
		dir := filepath.Join(root, nodeToolsDir)
		nodeTools.modules = filepath.Join(dir, "node_modules")
		pkg, err := os.ReadFile(filepath.Join(nodeTools.modules, "graphql-http", "package.json"))
		if err == nil && bytes.Contains(pkg, []byte(`"version": "`+graphqlHTTPVersion+`"`)) {
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			nodeTools.err = fmt.Errorf("npm is needed to install the graphql-http audit (apt-get install -y npm): %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
			"graphql-http@"+graphqlHTTPVersion, "graphql@"+graphqlJSVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			nodeTools.err = fmt.Errorf("npm install graphql-http into %s: %v\n%s", dir, err, out)
		}
	})
	if nodeTools.err != nil {
		t.Fatal(nodeTools.err)
	}
	return nodeTools.modules
}

// auditResult is one result of graphql-http's auditServer.
type auditResult struct {
	ID, Name, Status, Reason string
}

// TestGraphQLOverHTTPAudit runs graphql-http's audit of the GraphQL over
// HTTP spec against the real server in production mode (dev off) with
// ALGOITNY_INTROSPECTION on: every MUST and SHOULD passes (item 7; MUST
// 28B9 introspects __type).
func TestGraphQLOverHTTPAudit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is needed to run the graphql-http audit (apt-get install -y nodejs): %v", err)
	}
	modules := graphqlHTTPModules(t)
	on := true
	s := startAPI(t, func(c *Config) { c.Dev, c.Introspection = false, &on })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "graphql_http_audit.cjs"), s.URL)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("audit: %v\n%s", err, stderr.String())
	}
	var results []auditResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("audit output: %v\n%s", err, out)
	}
	if len(results) < 50 {
		t.Fatalf("only %d audits ran", len(results))
	}
	passed, failed := 0, 0
	for _, r := range results {
		required := strings.HasPrefix(r.Name, "MUST") || strings.HasPrefix(r.Name, "SHOULD")
		switch {
		case r.Status == "ok":
			passed++
		case required:
			failed++
			t.Errorf("%s %s: %s (%s)", r.ID, r.Name, r.Status, r.Reason)
		default:
			t.Logf("%s %s: %s (%s)", r.ID, r.Name, r.Status, r.Reason)
		}
	}
	t.Logf("graphql-http %s audit: %d of %d passed, %d MUST/SHOULD failed", graphqlHTTPVersion, passed, len(results), failed)
}

// TestClientMistakesAreNotErrors: in production mode, introspection (off by
// default) and Google sign-in without GOOGLE_CLIENT_ID answer client error
// codes, and nothing reaches the error log (item 7).
func TestClientMistakesAreNotErrors(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startAPILogged(t, func(c *Config) { c.Dev = false }, logger)
	for q, want := range map[string]string{
		`{ __schema { types { name } } }`:                         "INTROSPECTION_DISABLED",
		`{ __type(name: "Query") { name } }`:                      "INTROSPECTION_DISABLED",
		`mutation { loginWithGoogle(idToken: "x") { token } }`:    "UNAVAILABLE",
		`{ a: __typename b: __schema { queryType { name } } }`:    "INTROSPECTION_DISABLED",
		`query Q { __type(name: "Problem") { fields { name } } }`: "INTROSPECTION_DISABLED",
	} {
		r := s.query(t, "", q, nil)
		if r.code() != want || r.Errors[0].Message == "internal error" {
			t.Errorf("%s: %s, want %s", q, r.Raw, want)
		}
	}
	if r := s.query(t, "", `{ __typename }`, nil); len(r.Errors) > 0 {
		t.Errorf("__typename: %s", r.Raw)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("logged at ERROR: %s", line)
		}
	}
}

// TestIntrospectionSetting: ALGOITNY_INTROSPECTION overrides dev mode's
// default either way; anything but a boolean is refused.
func TestIntrospectionSetting(t *testing.T) {
	for _, c := range []struct {
		dev, introspection string
		want               bool
	}{
		{"true", "", true}, {"false", "", false}, {"", "", false},
		{"false", "true", true}, {"true", "false", false},
	} {
		t.Setenv("ALGOITNY_DEV", c.dev)
		t.Setenv("ALGOITNY_INTROSPECTION", c.introspection)
		cfg, err := configFromEnv()
		if err != nil || cfg.IntrospectionOn() != c.want {
			t.Fatalf("ALGOITNY_DEV=%q ALGOITNY_INTROSPECTION=%q: introspection %v (%v), want %v", c.dev, c.introspection, cfg.IntrospectionOn(), err, c.want)
		}
	}
	t.Setenv("ALGOITNY_INTROSPECTION", "sometimes")
	if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), "ALGOITNY_INTROSPECTION") {
		t.Fatalf("a bad value: %v", err)
	}
}

// startAPILogged is startAPI with the server's logs sent to logger.
func startAPILogged(t testing.TB, tweak func(*Config), logger *slog.Logger) *apiServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig(t)
	cfg.Workers = false
	if tweak != nil {
		tweak(&cfg)
	}
	if err := migrate(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := seedPlans(ctx, cfg, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	m := &Main{Config: cfg, Logger: logger}
	if err := m.Open(ctx, true); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		m.Close()
		m.DB.DropTables(context.Background())
	})
	return &apiServer{Main: m, URL: "http://" + m.Addr() + "/query"}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
