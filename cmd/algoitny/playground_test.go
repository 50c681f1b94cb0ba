package main

import (
	"context"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/playground"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browser is a headless Chromium (Debian's package) that may reach loopback
// addresses only: every other request is refused and recorded, as on a
// machine without internet.
type browser struct {
	ctx context.Context

	mu         sync.Mutex
	refused    []string // requests to anything but loopback
	served     []string // loopback requests
	exceptions []string // uncaught JavaScript exceptions
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// Large enough that the query editor's lines are on screen.
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		// Names resolve to nothing but loopback: the network is refused
		// before the interception below even sees a request.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	var ctx context.Context
	var cancel context.CancelFunc
	ctx, cancel = chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go b.decide(ctx, e)
		case *runtime.EventExceptionThrown:
			b.mu.Lock()
			msg := e.ExceptionDetails.Text
			if ex := e.ExceptionDetails.Exception; ex != nil {
				msg += " " + ex.Description
			}
			b.exceptions = append(b.exceptions, msg)
			b.mu.Unlock()
		}
	}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b.ctx = ctx
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, runtime.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{})
		return err
	})); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// decide lets a paused request through to a loopback address and refuses
// any other.
func (b *browser) decide(ctx context.Context, e *fetch.EventRequestPaused) {
	u, err := url.Parse(e.Request.URL)
	loopback := err == nil && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost" || u.Hostname() == "::1")
	b.mu.Lock()
	if loopback {
		b.served = append(b.served, u.Path)
	} else {
		b.refused = append(b.refused, e.Request.URL)
	}
	b.mu.Unlock()
	if loopback {
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonInternetDisconnected})
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func (b *browser) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	var err error
	if !algoitnytest.PollEvery(context.Background(), 30*time.Second, 50*time.Millisecond, func() bool {
		var ok bool
		ok, err = chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		return err == nil && ok
	}) {
		editor, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](queryEditor))
		t.Fatalf("%s: not within 30 s (%v); the query editor holds:\n%s\nthe response pane shows:\n%s", what, err, editor, b.response(t))
	}
}

const queryEditor = `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`

const responsePane = `(function(){ var e = document.querySelector('.graphiql-response .CodeMirror'); return e ? e.CodeMirror.getValue() : ''; })()`

func (b *browser) response(t *testing.T) string {
	v, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](responsePane))
	return v
}

// typeAndRun replaces the active tab's operation by typing text into the
// query editor, then runs it with Ctrl+Enter, as a developer would.
func (b *browser) typeAndRun(t *testing.T, text string) {
	t.Helper()
	err := chromedp.Do(b.ctx,
		chromedp.Click(chromedp.CSS(".graphiql-query-editor .CodeMirror-line")),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(kb.Backspace),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: text})
			return err
		}),
	)
	if err != nil {
		t.Fatalf("type %q: %v", text, err)
	}
	// GraphiQL parses the editor's text a moment after an edit (to find
	// the operation and whether it is a subscription); a person sees the
	// editor's marks update before running it.
	b.waitFor(t, "GraphiQL parses the typed operation", `(function(){ var cm = document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror;
		return !!(cm.documentAST && cm.documentAST.loc && cm.documentAST.loc.source.body === cm.getValue()); })()`)
	if err := chromedp.Do(b.ctx, chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
		t.Fatalf("Ctrl+Enter: %v", err)
	}
}

func contains(s string) string {
	return `(` + responsePane + `).includes(` + jsString(s) + `)`
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// TestPlaygroundOffline opens the playground in a real headless Chromium that
// can reach nothing but the server: the page renders from the binary's own
// assets, holds the example operations, runs a query typed into the editor
// with Ctrl+Enter (signed in by the token of a devLogin run from the page),
// and shows a subscription's events over graphql-transport-ws.
func TestPlaygroundOffline(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	b := startBrowser(t)
	base := strings.TrimSuffix(s.URL, "/query")

	if err := chromedp.Do(b.ctx, chromedp.Navigate(base+"/playground")); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "GraphiQL renders", `!!document.querySelector('.graphiql-query-editor .CodeMirror')`)

	// Every example is a tab, the first one active.
	tabs := eval[int](t, b, `document.querySelectorAll('.graphiql-tab').length`)
	if want := len(playground.Examples()); tabs != want {
		t.Fatalf("%d tabs, want %d (one per example)", tabs, want)
	}
	first := eval[string](t, b, queryEditor)
	if !strings.Contains(first, "devLogin") {
		t.Fatalf("first tab:\n%s", first)
	}

	// The schema loaded (introspection within the document limits): the
	// documentation pane shows the root types.
	if err := chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(`[aria-label="Show Documentation Explorer"]`))); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "the documentation pane shows the schema", `(function(){ var d = document.querySelector('.graphiql-doc-explorer'); return !!d && d.innerText.includes('Mutation') && d.innerText.includes('Subscription'); })()`)

	b.typeAndRun(t, `mutation { devLogin(email: "browser@example.com") { token user { email } } }`)
	b.waitFor(t, "devLogin answers", contains(`"email": "browser@example.com"`))

	// The page sends the token it kept: me is the signed-in user.
	b.typeAndRun(t, `{ me { email } }`)
	b.waitFor(t, "me answers as the user signed in from the page", contains(`"me": {`)+` && `+contains(`browser@example.com`))

	// A subscription from the page: a PENDING job of that user (no
	// workers run), then its cancellation.
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	token := s.login(t, "browser@example.com")
	job := s.pendingJob(t, token)
	b.typeAndRun(t, `subscription { jobUpdated(id: "`+job+`") { job { id status } } }`)
	b.waitFor(t, "the subscription's first event", contains(`"status": "PENDING"`))
	var cancelled struct{ CancelJob struct{ Status string } }
	s.query(t, token, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": job}).decode(t, &cancelled)
	b.waitFor(t, "the cancellation's event", contains(`"status": "CANCELLED"`))

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.refused) > 0 {
		t.Errorf("the page asked for addresses beyond the server: %v", b.refused)
	}
	if len(b.exceptions) > 0 {
		t.Errorf("uncaught exceptions in the page: %v", b.exceptions)
	}
	for _, want := range []string{"/playground/graphiql.min.js", "/playground/graphiql.min.css", "/playground/react.production.min.js", "/playground/app.js"} {
		if !strings.Contains(strings.Join(b.served, " "), want) {
			t.Errorf("the page did not load %s from the server: %v", want, b.served)
		}
	}
}

// TestPlaygroundAssets: the page and its files are served with their types
// and charset, a policy that keeps the page on its own server, and 404 for
// anything else under /playground/.
func TestPlaygroundAssets(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	base := strings.TrimSuffix(s.URL, "/query")
	for path, want := range map[string]string{
		"/playground":                             "text/html; charset=utf-8",
		"/playground/graphiql.min.js":             "text/javascript; charset=utf-8",
		"/playground/graphiql.min.css":            "text/css; charset=utf-8",
		"/playground/react-dom.production.min.js": "text/javascript; charset=utf-8",
		"/playground/app.js":                      "text/javascript; charset=utf-8",
		"/playground/LICENSE.graphiql":            "text/plain; charset=utf-8",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
		}
		if path == "/playground" && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("the page's policy: %q", resp.Header.Get("Content-Security-Policy"))
		}
	}
	for _, path := range []string{"/playground/nope.js", "/playground/../go.mod", "/playground/assets/graphiql.min.js"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	// Outside dev mode there is no playground.
	prod := startAPI(t, func(c *Config) { c.Dev = false })
	resp, err := http.Get(strings.TrimSuffix(prod.URL, "/query") + "/playground/graphiql.min.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("production serves the playground: %d", resp.StatusCode)
	}
}
