package httpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/httpserver"
)

// blockingAccounts answers logout by waiting for the request's context to
// end; nothing else is called.
type blockingAccounts struct {
	graph.Accounts
	calls   atomic.Int32
	entered chan struct{}
	// err and cause are the first call's context's, once it ended.
	err, cause atomic.Value
}

func (a *blockingAccounts) Logout(ctx context.Context) error {
	first := a.calls.Add(1) == 1
	if first {
		close(a.entered)
	}
	<-ctx.Done()
	if first {
		a.err.Store(ctx.Err())
		a.cause.Store(context.Cause(ctx))
	}
	return ctx.Err()
}

// stoppingServer serves a GraphQL handler over blockingAccounts; done is
// closed when the server has finished with the first request.
func stoppingServer(t *testing.T, timeout time.Duration) (url string, acc *blockingAccounts, done chan struct{}) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	acc = &blockingAccounts{entered: make(chan struct{})}
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{Accounts: acc}, httpserver.GraphQLConfig{Logger: logger}))
	h := httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, RequestTimeout: timeout, Ready: func(context.Context) error { return nil }})
	done = make(chan struct{})
	var once atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if once.CompareAndSwap(false, true) {
			close(done)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/query", acc, done
}

// Mutation fields run one after the other: when the client goes away
// during the first, the second is not started.
func TestClientGoneStopsTheRequest(t *testing.T) {
	t.Parallel()
	url, acc, done := stoppingServer(t, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-acc.entered
		cancel() // the client hangs up
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"query":"mutation { a: logout b: logout }"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the request was answered (%d) instead of cancelled", resp.StatusCode)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not finish the request after the client left")
	}
	if n := acc.calls.Load(); n != 1 {
		t.Fatalf("logout ran %d times after the client left; want 1 (the one running then)", n)
	}
}

// The request timeout stops a request the same way, and the answer says so.
func TestTimeoutStopsTheRequest(t *testing.T) {
	t.Parallel()
	url, acc, _ := stoppingServer(t, 300*time.Millisecond)
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"query":"mutation { a: logout b: logout c: logout }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data   json.RawMessage
		Errors []struct{ Extensions map[string]any }
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "REQUEST_TIMEOUT" || string(body.Data) != "null" {
		t.Fatalf("answer %s", raw)
	}
	if n := acc.calls.Load(); n != 1 {
		t.Fatalf("logout ran %d times; the timeout should have stopped the request after the first", n)
	}
	// What the request's work sees: a deadline exceeded, which says why
	// (the DynamoDB and PostgreSQL clients tell a timeout by the first).
	if err, cause := acc.err.Load(), acc.cause.Load(); err != context.DeadlineExceeded || fmt.Sprint(cause) != "the request timed out" {
		t.Fatalf("the stopped request's context: Err() %v, cause %v", err, cause)
	}
}
