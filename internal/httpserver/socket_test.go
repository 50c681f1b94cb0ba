package httpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/httpserver"
	"github.com/gorilla/websocket"
)

// socketServer serves the whole handler with websockets capped by limits,
// the client address taken from X-Forwarded-For; logout holds its
// operation until the test lets it go.
func socketServer(t *testing.T, limits httpserver.SocketLimits) (string, *heldAccounts) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	acc := &heldAccounts{release: make(chan struct{})}
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
	limits.TrustedProxies = trusted
	ws := httpserver.NewWebsocket(httpserver.WebsocketConfig{Limits: limits, Logger: logger})
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{Accounts: acc}, httpserver.GraphQLConfig{Logger: logger, Websocket: ws}))
	srv := httptest.NewServer(httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, TrustedProxies: trusted,
		Ready: func(context.Context) error { return nil }}))
	t.Cleanup(func() {
		close(acc.release)
		srv.Close()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/query", acc
}

type testSocket struct {
	t    *testing.T
	conn *websocket.Conn
}

// signedOut opens a graphql-transport-ws socket from address from and
// sends connection_init without a token.
func signedOut(t *testing.T, url, from string) *testSocket {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial(url, http.Header{"X-Forwarded-For": {from}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &testSocket{t: t, conn: conn}
	s.send(map[string]any{"type": "connection_init"})
	if m := s.read(); m.Type != "connection_ack" {
		t.Fatalf("expected connection_ack, got %+v", m)
	}
	return s
}

type socketMessage struct {
	Type    string
	ID      string
	Payload json.RawMessage
}

func (s *testSocket) send(v any) {
	s.t.Helper()
	if err := s.conn.WriteJSON(v); err != nil {
		s.t.Fatal(err)
	}
}

func (s *testSocket) read() socketMessage {
	s.t.Helper()
	s.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var m socketMessage
	if err := s.conn.ReadJSON(&m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// run sends operation id and returns its first message.
func (s *testSocket) run(id, query string) socketMessage {
	s.t.Helper()
	s.send(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query}})
	for {
		if m := s.read(); m.ID == id {
			return m
		}
	}
}

// TestSocketOperationCaps: a signed-out socket runs at most
// MaxOperationsSignedOut operations at once and the sockets of one address
// at most MaxOperationsPerAddress; one more is answered TOO_MANY_REQUESTS,
// the socket stays and runs operations again once one has ended; another
// address is not affected.
func TestSocketOperationCaps(t *testing.T) {
	t.Parallel()
	url, acc := socketServer(t, httpserver.SocketLimits{MaxOperationsSignedOut: 2, MaxOperationsPerAddress: 3})
	a1, a2 := signedOut(t, url, "198.51.100.1"), signedOut(t, url, "198.51.100.1")
	a1.send(map[string]any{"type": "subscribe", "id": "h1", "payload": map[string]any{"query": held}})
	a1.send(map[string]any{"type": "subscribe", "id": "h2", "payload": map[string]any{"query": held}})
	algoitnytest.Eventually(t, 30*time.Second, "two operations to run", func() bool { return acc.entered.Load() == 2 })
	if m := a1.run("q", "{ __typename }"); m.Type != "next" || !strings.Contains(string(m.Payload), "TOO_MANY_REQUESTS") {
		t.Fatalf("a third operation on a signed-out socket: %+v", m)
	}
	a2.send(map[string]any{"type": "subscribe", "id": "h3", "payload": map[string]any{"query": held}})
	algoitnytest.Eventually(t, 30*time.Second, "three operations to run", func() bool { return acc.entered.Load() == 3 })
	if m := a2.run("q", "{ __typename }"); m.Type != "next" || !strings.Contains(string(m.Payload), "TOO_MANY_REQUESTS") {
		t.Fatalf("a fourth operation of the address: %+v", m)
	}
	if m := signedOut(t, url, "198.51.100.2").run("q", "{ __typename }"); m.Type != "next" || !strings.Contains(string(m.Payload), `"Query"`) {
		t.Fatalf("another address: %+v", m)
	}
	acc.release <- struct{}{} // one of a1's ends
	for {
		if m := a1.read(); m.Type == "complete" && (m.ID == "h1" || m.ID == "h2") {
			break
		}
	}
	if m := a1.run("q2", "{ __typename }"); m.Type != "next" || !strings.Contains(string(m.Payload), `"Query"`) {
		t.Fatalf("after an operation ended: %+v", m)
	}
}
