package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"
)

// clientsDir is the npm project of front-end clients (clients/), its
// dependencies installed (`make clients-deps`, which `make test` runs).
func clientsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@apollo", "client")); err != nil {
		t.Fatalf("the clients' npm packages are not installed: run `make clients-deps` (%v)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed (.ci/run installs it)")
	}
	return dir
}

// deployment is a server with workers behind a load balancer (a TCP
// proxy), redeployed as a rolling deploy does: a new server starts, the
// balancer sends new connections to it, the old one stops (SIGTERM's
// graceful shutdown). Both use the same tables and queue.
type deployment struct {
	t    *testing.T
	cfg  Config
	logs *syncBuffer
	*apiServer

	front   net.Listener
	backend atomic.Value // the address new connections go to
	cur     *running
	grace   time.Duration // each server's ShutdownGrace
}

// running is one server of a deployment.
type running struct {
	m      *Main
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed when it starts taking executions; nil: at once
	once   sync.Once
}

func startDeployment(t *testing.T, grace time.Duration, tweak func(*Config)) *deployment {
	t.Helper()
	cfg := testConfig(t)
	cfg.Workers = true
	if tweak != nil {
		tweak(&cfg)
	}
	ctx := context.Background()
	if err := migrate(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := seedPlans(ctx, cfg, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	d := &deployment{t: t, cfg: cfg, logs: &syncBuffer{}, grace: grace}
	var err error
	if d.front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go d.balance()
	d.cur = d.start(nil)
	d.route(d.cur)
	t.Cleanup(func() {
		d.front.Close()
		d.cur.stop()
		d.DB.DropTables(context.Background())
	})
	return d
}

// balance forwards each connection to the current backend.
func (d *deployment) balance() {
	for {
		c, err := d.front.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			b, err := net.Dial("tcp", d.backend.Load().(string))
			if err != nil {
				return
			}
			defer b.Close()
			go func() { _, _ = io.Copy(b, c); b.Close() }()
			_, _ = io.Copy(c, b)
		}()
	}
}

// start opens and runs a server and waits for its caches to warm. With a
// ready channel its workers take no executions until it is closed (the
// judge's queue opens then, as after a warm-up): a standby for a
// redeploy, started ahead.
func (d *deployment) start(ready chan struct{}) *running {
	t := d.t
	t.Helper()
	var out io.Writer = d.logs
	if os.Getenv("ALGOITNY_TEST_LOGS") != "" {
		out = io.MultiWriter(d.logs, os.Stderr)
	}
	m := &Main{Config: d.cfg, Logger: slog.New(slog.NewJSONHandler(out, nil)), ShutdownGrace: d.grace,
		Tune: func(j *jobs.Config) {
			j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
			if ready != nil {
				j.JudgeReady = ready
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Open(ctx, true); err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &running{m: m, cancel: cancel, done: make(chan struct{}), ready: ready}
	t.Cleanup(r.stop)
	go func() { defer close(r.done); _ = m.Run(ctx) }()
	return r
}

// route makes r the balancer's backend, and the one the test's helpers
// call.
func (d *deployment) route(r *running) {
	d.backend.Store(r.m.Addr())
	d.apiServer = &apiServer{Main: r.m, URL: "http://" + d.front.Addr().String() + "/query"}
	if r.ready != nil {
		close(r.ready)
		r.ready = nil
	}
	d.cur = r
}

// redeploy routes to next (started ahead) and stops the old server (before
// runs between).
func (d *deployment) redeploy(next *running, before func()) {
	old := d.cur
	d.route(next)
	before()
	old.stop()
}

// stop shuts a server down as SIGTERM does (once).
func (r *running) stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
		r.m.Close()
	})
}

// nodeEvent is a line a client script writes on stdout.
type nodeEvent map[string]any

// runNode runs a client script in dir with the server's URL and returns
// its events, failing the test unless it exits 0 after "done". onEvent
// sees each event as it comes (the script waits for nothing in return).
func runNode(t *testing.T, dir, apiURL string, onEvent func(nodeEvent), name string, args ...string) []nodeEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // only against a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ALGOITNY_URL="+apiURL, "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var events []nodeEvent
	var other strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev nodeEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev["event"] == nil {
			other.WriteString(sc.Text() + "\n")
			continue
		}
		events = append(events, ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
	err = cmd.Wait()
	if err != nil || len(events) == 0 || events[len(events)-1]["event"] != "done" {
		t.Fatalf("%s %s: %v\nevents: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, events, other.String(), stderr.String())
	}
	return events
}

// TestClients runs the clients front-end teams use against a real server
// with workers (clients/, an npm project): graphql-codegen's client preset
// and `tsc --strict` over its types, urql with Graphcache (queries as GET),
// a page on another origin in headless Chromium, and Apollo Client with
// graphql-ws through the main flow across a server restart while its job
// runs. Before them, the server's side of each: GET variables typed by the
// schema, errors before execution in the media type asked for, CORS.
func TestClients(t *testing.T) {
	t.Parallel()
	dir := clientsDir(t)
	// Pages on origins of their own (loopback addresses other than
	// 127.0.0.1): one configured, one not.
	allowedPage, refusedPage := pageServer(t, dir, "127.0.0.2"), pageServer(t, dir, "127.0.0.3")
	localPage := strings.Replace(pageServer(t, dir, "127.0.0.1"), "127.0.0.1", "localhost", 1)
	// A grace far shorter than the job of Apollo (12 tests of 1.5 s): the
	// old server hands it back rather than finishing it.
	s := startDeployment(t, 300*time.Millisecond, func(c *Config) { c.CORSOrigins = []string{allowedPage} })
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 12, true)
	for _, id := range []string{"1001", "1002", "1003"} {
		s.createProblem(t, admin, "BAEKJOON", id, 1, true)
	}

	t.Run("GETVariables", func(t *testing.T) {
		q := url.Values{"query": {`query($n: Int!) { problems(first: $n) { edges { node { problemId } } } }`}, "variables": {`{"n":2}`}}
		req, _ := http.NewRequest(http.MethodGet, s.URL+"?"+q.Encode(), nil)
		r := s.send(t, req)
		var out struct {
			Problems struct {
				Edges []struct{ Node struct{ ProblemID string } }
			}
		}
		r.decode(t, &out)
		if len(out.Problems.Edges) != 2 {
			t.Fatalf("GET with an Int variable: %s", r.Raw)
		}
		for _, bad := range []string{`{"n":2}x`, `{"n":2}{}`, `[2]`, `{"n":2.5}`} {
			q.Set("variables", bad)
			req, _ := http.NewRequest(http.MethodGet, s.URL+"?"+q.Encode(), nil)
			if r := s.send(t, req); len(r.Errors) == 0 {
				t.Fatalf("GET with variables %s: %s", bad, r.Raw)
			}
		}
	})

	t.Run("ErrorMediaType", func(t *testing.T) {
		for _, accept := range []string{"application/graphql-response+json", "application/graphql-response+json, application/json;q=0.9", "application/json", ""} {
			r := s.post(t, "forged", "application/json", []byte(`{"query":"{ me { id } }"}`), http.Header{"Accept": {accept}})
			want := "application/graphql-response+json"
			if !strings.Contains(accept, want) {
				want = "application/json"
			}
			if ct := r.Header.Get("Content-Type"); r.Status != http.StatusUnauthorized || !strings.HasPrefix(ct, want) || r.code() != "UNAUTHENTICATED" {
				t.Fatalf("Accept %q: %d %s %s", accept, r.Status, ct, r.Raw)
			}
		}
	})

	t.Run("CORS", func(t *testing.T) {
		preflight := func(origin, headers string) *http.Response {
			req, _ := http.NewRequest(http.MethodOptions, s.URL, nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", headers)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		asked := "content-type,authorization,apollographql-client-name,apollographql-client-version,sentry-trace,baggage"
		// Dev mode: a dev server on this machine needs no configuration.
		for _, origin := range []string{"http://localhost:5173", "http://127.0.0.1:3000", allowedPage} {
			resp := preflight(origin, asked)
			allow := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
			if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != origin {
				t.Fatalf("preflight from %s: %d %v", origin, resp.StatusCode, resp.Header)
			}
			for _, h := range strings.Split(asked, ",") {
				if !strings.Contains(allow, h) {
					t.Fatalf("preflight from %s: %s not allowed (%s)", origin, h, allow)
				}
			}
		}
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://localhost:5173")
		r := s.send(t, req)
		if exposed := r.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "Retry-After") || !strings.Contains(exposed, "X-Request-Id") {
			t.Fatalf("exposed headers %q", exposed)
		}
		// Refused, and logged as JSON with the origin: preflights and
		// websockets.
		if resp := preflight("https://evil.example", "content-type"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("preflight from evil: %d", resp.StatusCode)
		}
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
		wsURL := "ws" + strings.TrimPrefix(s.URL, "http")
		if _, resp, err := d.Dial(wsURL, http.Header{"Origin": {"https://evil-socket.example"}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("websocket from evil: %v %v", resp, err)
		}
		if c, _, err := d.Dial(wsURL, http.Header{"Origin": {"http://localhost:5173"}}); err != nil {
			t.Fatalf("websocket from a local dev server: %v", err)
		} else {
			c.Close()
		}
		for _, want := range []string{`"origin":"https://evil.example","request":"preflight"`, `"origin":"https://evil-socket.example","request":"websocket"`} {
			if !logLine(s.logs.String(), want) {
				t.Fatalf("no JSON log line with %s in:\n%s", want, s.logs.String())
			}
		}
	})

	t.Run("Codegen", func(t *testing.T) {
		runNode(t, dir, s.URL, nil, "sh", "-c", "node_modules/.bin/graphql-codegen --config codegen.ts && node_modules/.bin/tsc --strict --noEmit -p tsconfig.json && echo '{\"event\":\"done\"}'")
	})

	t.Run("Urql", func(t *testing.T) {
		runNode(t, dir, s.URL, nil, "node", "urql.mjs")
	})

	t.Run("Browser", func(t *testing.T) {
		bob := s.login(t, "browser@example.com")
		var out struct{ ExecuteCode struct{ ID string } }
		s.query(t, bob, executeMutation, executeInput(aPlusB, nil)).decode(t, &out)
		b := startPlainBrowser(t)
		page := func(origin string) map[string]any {
			u := origin + "/page.html?" + url.Values{"api": {s.URL}, "token": {bob}, "job": {out.ExecuteCode.ID}}.Encode()
			if err := chromedp.Do(b, chromedp.Navigate(u)); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				v, err := chromedp.Run(b, chromedp.Evaluate[string](`window.result ? JSON.stringify(window.result) : ""`))
				if err == nil && v != "" {
					var res map[string]any
					if err := json.Unmarshal([]byte(v), &res); err != nil {
						t.Fatalf("window.result %s: %v", v, err)
					}
					return res
				}
				if time.Now().After(deadline) {
					t.Fatalf("the page on %s did not finish: %v", origin, err)
				}
			}
		}
		for _, origin := range []string{allowedPage, localPage} {
			res := page(origin)
			body, _ := json.Marshal(res)
			if res["status"] != float64(200) || !strings.Contains(string(body), `"email":"browser@example.com"`) || res["requestId"] == nil ||
				!strings.Contains(string(body), `"jobUpdated":{"job":{"status":`) {
				t.Fatalf("page on %s: %s", origin, body)
			}
		}
		res := page(refusedPage)
		body, _ := json.Marshal(res)
		if res["fetchError"] == nil || res["wsError"] == nil {
			t.Fatalf("page on a refused origin: %s", body)
		}
		if !logLine(s.logs.String(), `"origin":"`+refusedPage+`"`) {
			t.Fatalf("the refused page's origin is not logged")
		}
	})

	t.Run("Apollo", func(t *testing.T) {
		restarted := false
		next := s.start(make(chan struct{}))
		events := runNode(t, dir, s.URL, func(ev nodeEvent) {
			if ev["event"] != "restart" {
				return
			}
			// A rolling deploy: the new server up, then the old one stopped
			// while it runs the job (handed back after the grace).
			s.redeploy(next, func() {
				job, err := s.DB.GetJob(context.Background(), mustJobID(t, ev["jobId"]))
				if err != nil || job.Status.Final() {
					t.Errorf("the old server stops with the job %+v (%v): not mid-job", job, err)
				}
			})
			restarted = true
		}, "node", "apollo.mjs")
		if !restarted {
			t.Fatalf("no restart: %v", events)
		}
		if !logLine(s.logs.String(), `"msg":"job handed back: the worker stops"`) {
			t.Fatalf("the old server did not hand its job back")
		}
		t.Logf("apollo: %v", events)
	})
}

// TestClientsDrain: a server stopped (SIGTERM) while it runs a job that
// fits in its grace lets the job finish — COMPLETED, no error message —
// and closes its sockets with 1012 Service Restart, without a "complete"
// for the subscription of a job not finished.
func TestClientsDrain(t *testing.T) {
	t.Parallel()
	d := startDeployment(t, time.Minute, nil)
	admin := d.staff(t, "admin@example.com")
	d.createProblem(t, admin, "BAEKJOON", "1000", 4, true)
	alice := d.login(t, "alice@example.com")
	var out struct{ ExecuteCode struct{ ID string } }
	slow := "import time\na, b = map(int, input().split())\ntime.sleep(1)\nprint(a + b)\n"
	d.query(t, alice, executeMutation, executeInput(slow, nil)).decode(t, &out)
	ws := d.dialWS(t, "graphql-transport-ws", nil)
	ws.init(alice)
	ws.subscribe("job", jobUpdated, map[string]any{"id": out.ExecuteCode.ID})
	for {
		m := ws.event(60 * time.Second)
		if m.Type != "next" {
			t.Fatalf("before the stop: %+v %s", m, m.Payload)
		}
		var ev jobEventPayload
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			t.Fatalf("event %s: %v", m.Payload, err)
		}
		if ev.Data.JobUpdated.Job.Status == "PROCESSING" {
			break
		}
		if ev.Data.JobUpdated.Job.Status != "PENDING" {
			t.Fatalf("job %s before the stop", m.Payload)
		}
	}
	stopped := make(chan struct{})
	go func() { defer close(stopped); d.cur.stop() }()
	// The socket closes with 1012, and nothing before says the
	// subscription is over.
	ws.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		var m wsMessage
		err := ws.conn.ReadJSON(&m)
		if ce, ok := err.(*websocket.CloseError); ok {
			if ce.Code != 1012 {
				t.Fatalf("closed with %d %q, want 1012", ce.Code, ce.Text)
			}
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if m.Type == "complete" || m.Type == "error" {
			t.Fatalf("%s before the job's end: %s", m.Type, m.Payload)
		}
	}
	<-stopped
	// Finished by the stopped server, before a new one could run it.
	d.route(d.start(nil))
	var after struct{ Job jobState }
	d.query(t, alice, `query($id: ID!) { job(id: $id) { status errorMessage history { verdict } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &after)
	if j := after.Job; j.Status != "COMPLETED" || j.ErrorMessage != "" || j.History == nil || j.History.Verdict != "ACCEPTED" {
		t.Fatalf("job after the stop: %+v", j)
	}
	// One attempt: neither retried nor handed back.
	var trail struct {
		Job struct {
			Progress struct {
				Edges []struct{ Node struct{ Step string } }
			}
		}
	}
	d.query(t, alice, `query($id: ID!) { job(id: $id) { progress(first: 100) { edges { node { step } } } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &trail)
	for _, e := range trail.Job.Progress.Edges {
		if e.Node.Step == "retrying" || e.Node.Step == "requeued" {
			t.Fatalf("the job was not drained: %+v", trail)
		}
	}
}

// mustJobID is the job id of a global id the API gave.
func mustJobID(t *testing.T, v any) string {
	t.Helper()
	s, _ := v.(string)
	id, typ := parseGlobalID(s)
	if typ != "Job" {
		t.Fatalf("not a job id: %v", v)
	}
	return id
}

// logLine reports whether a JSON log line holds want.
func logLine(logs, want string) bool {
	for _, l := range strings.Split(logs, "\n") {
		if strings.HasPrefix(l, "{") && strings.Contains(l, want) && json.Valid([]byte(l)) {
			return true
		}
	}
	return false
}

// pageServer serves the browser test's page (clients/page.html) and
// graphql-ws's browser build on host, returning its origin.
func pageServer(t *testing.T, dir, host string) string {
	t.Helper()
	l, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "page.html"))
	})
	mux.HandleFunc("GET /graphql-ws.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "node_modules", "graphql-ws", "umd", "graphql-ws.min.js"))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// startPlainBrowser starts a headless Chromium (Debian's package) that
// reaches loopback addresses only.
func startPlainBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1 , EXCLUDE 127.0.0.2 , EXCLUDE 127.0.0.3"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}
