package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
)

var dynamoEndpoint, databaseURL string

// Most tests here are parallel. Those that start `algoitny` processes
// run one after another inside one of them (TestProcesses).
func TestMain(m *testing.M) {
	ctx := context.Background()
	ep, stopDynamo, err := devstack.DynamoForTests(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, devstack.Describe(err))
		os.Exit(1)
	}
	pg, stopPG, err := devstack.PostgresForTests(ctx)
	if err != nil {
		stopDynamo()
		fmt.Fprintln(os.Stderr, devstack.Describe(err))
		os.Exit(1)
	}
	dynamoEndpoint, databaseURL = ep, boundedPool(pg)
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	stopPG()
	stopDynamo()
	os.Exit(code)
}

// testPoolConns bounds each test server's PostgreSQL pool (River, live
// events): the package runs several servers at once, some with replicas
// and worker processes, against one PostgreSQL whose max_connections may
// be 100. A test server's load needs few connections.
const testPoolConns = 4

// boundedPool returns the database URL with pool_max_conns set to
// testPoolConns; worker processes started by tests inherit it through
// DATABASE_URL.
func boundedPool(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := parsed.Query()
	q.Set("pool_max_conns", strconv.Itoa(testPoolConns))
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

// testConfig returns a configuration on tables and a River schema of the test's own.
func testConfig(t testing.TB) Config {
	t.Helper()
	id := fmt.Sprintf("e2e%d", time.Now().UnixNano()%1e10)
	return Config{
		Addr: "127.0.0.1:0", Dev: true, Workers: true,
		Dynamo:      dynamo.Config{Endpoint: dynamoEndpoint, TablePrefix: id + "-"},
		DatabaseURL: databaseURL, RiverSchema: id, PubsubChannel: id,
		JudgeSandbox:  "bwrap",
		SessionSecret: "Zr8mQ2vX9kLp4Tn7Wc1Bd6Hf3Js5Ye0Ua8Io2Ek4Ng7Rq1",
		// The default: display data is kept at most 1 s.
		CacheBound: time.Second,
	}
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t)
	var out bytes.Buffer
	if err := migrate(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, cfg, &out); err != nil { // idempotent
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "applied 0 migrations") {
		t.Fatalf("second migrate output:\n%s", out.String())
	}
	if err := seedPlans(ctx, cfg, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	m := &Main{Config: cfg}
	defer m.Close()
	if err := m.Open(ctx, true); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	base := "http://" + m.Addr()

	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/playground": 200} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Post(base+"/query", "application/json", strings.NewReader(`{"query":"{ plans { name maxHintsPerDay maxExecutionsPerDay } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Data struct {
			Plans []struct {
				Name                string
				MaxHintsPerDay      int
				MaxExecutionsPerDay int
			}
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(body.Data.Plans) != 3 || body.Data.Plans[1].Name != "Free" || body.Data.Plans[1].MaxExecutionsPerDay != 10 {
		t.Fatalf("plans = %+v", body.Data.Plans)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("no graceful shutdown")
	}
}

// TestServeLeavesGCToTheRuntime: serve sets no garbage-collector settings
// of its own: GOGC and GOMEMLIMIT are the deployment's (docs/operations.md).
func TestServeLeavesGCToTheRuntime(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t)
	cfg.Workers = false
	if err := migrate(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	settings := func() [2]uint64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
		metrics.Read(s)
		return [2]uint64{s[0].Value.Uint64(), s[1].Value.Uint64()}
	}
	before := settings()
	serving := make(chan [2]uint64, 1)
	var stderr bytes.Buffer
	code := serveThen(ctx, cfg, io.Discard, &stderr, func(string) error {
		serving <- settings()
		cancel()
		return nil
	})
	if code != 0 {
		t.Fatalf("serve exited with %d: %s", code, stderr.String())
	}
	if got := <-serving; got != before {
		t.Fatalf("GOGC and GOMEMLIMIT while serving: %v, before: %v", got, before)
	}
}

func TestReadyzFailsWithoutDynamo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t)
	cfg.Workers = false
	cfg.Dynamo.MaxAttempts = 1 // tables were never created
	m := &Main{Config: cfg}
	defer m.Close()
	if err := m.Open(ctx, true); err != nil {
		t.Fatal(err)
	}
	go func() { _ = m.Run(ctx) }()
	resp, err := http.Get("http://" + m.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz = %d without tables", resp.StatusCode)
	}
}

func TestCommandLine(t *testing.T) {
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := dispatch(context.Background(), args, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	if code, out := run("bogus"); code != 2 || !strings.Contains(out, `unknown command "bogus"`) || !strings.Contains(out, "seed-plans") {
		t.Fatalf("bogus: %d %q", code, out)
	}
	if code, _ := run(); code != 2 {
		t.Fatalf("no command: %d", code)
	}
	if code, out := run("version"); code != 0 || !strings.HasPrefix(out, "algoitny ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _ := run("serve", "--no-such-flag"); code != 2 {
		t.Fatalf("bad flag: %d", code)
	}
	t.Setenv("ALGOITNY_WORKERS", "maybe")
	if code, out := run("migrate"); code != 1 || !strings.Contains(out, "ALGOITNY_WORKERS") {
		t.Fatalf("bad env: %d %q", code, out)
	}
}
