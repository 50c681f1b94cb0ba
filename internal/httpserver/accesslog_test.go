package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/httpserver"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAccessLog: every request but the probes and /metrics is logged
// through the Logger, one JSON line (slog's handler) with the request's
// id, method, path, status, bytes, duration and GraphQL operation.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{}, httpserver.GraphQLConfig{Logger: logger, Observe: httpserver.ObserveOperation}))
	srv := httptest.NewServer(httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, Ready: func(context.Context) error { return nil }}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", strings.NewReader(`{"query":"query Hello { __typename }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "req-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err := http.Get(srv.URL + "/healthz"); err == nil {
		resp.Body.Close()
	}
	srv.Close() // the handlers have returned: their lines are written
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line (the probe is not logged), got %q", lines)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatalf("%v: %s", err, lines[0])
	}
	for k, want := range map[string]any{"level": "INFO", "msg": "request", "request_id": "req-42", "method": "POST", "path": "/query",
		"status": float64(200), "bytes": float64(resp.ContentLength), "operation": "Hello"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v (%s)", k, line[k], want, lines[0])
		}
	}
	if d, ok := line["duration"].(float64); !ok || d <= 0 {
		t.Errorf("duration %v", line["duration"])
	}
}
