package main

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// tryWS opens a graphql-transport-ws socket as a client at address from
// (sent as X-Forwarded-For; "" = none) and returns it, or the HTTP status
// it was refused with.
func (s *apiServer) tryWS(t testing.TB, from string) (*wsClient, *http.Response) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	h := http.Header{}
	if from != "" {
		h.Set("X-Forwarded-For", from)
	}
	conn, resp, err := d.Dial(strings.Replace(s.URL, "http://", "ws://", 1), h)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}, resp
}

// refusedWith fails unless opening a socket from address from is refused
// with status and a Retry-After.
func (s *apiServer) refusedWith(t testing.TB, from string, status int) {
	t.Helper()
	c, resp := s.tryWS(t, from)
	if c != nil {
		t.Fatalf("a socket from %s was accepted, want %d", from, status)
	}
	if resp.StatusCode != status || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a socket from %s: %s (Retry-After %q), want %d", from, resp.Status, resp.Header.Get("Retry-After"), status)
	}
}

// eventuallyWS opens a socket from address from, retrying while it is
// refused (a closed socket's place is freed once the server has seen it
// close).
func (s *apiServer) eventuallyWS(t testing.TB, from string) *wsClient {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, resp := s.tryWS(t, from)
		if c != nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("a socket from %s still refused: %s", from, resp.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWebsocketCaps (issue 17, item 4): sockets per client address and
// sockets not signed in are capped, over the cap a socket is refused before
// the upgrade (429 per address, 503 in total, with Retry-After) or, signed
// out over its share, closed at connection_init with 1013; signed-in users
// still connect from the reserve; closing sockets frees their places.
func TestWebsocketCaps(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) {
		c.WebsocketMaxPerAddress, c.WebsocketMaxUnauthenticated, c.WebsocketReserve = 3, 5, 2
		c.WebsocketInitTimeout = time.Minute // the sockets that never send connection_init stay
		// The test's clients come "through a proxy" on the loopback and
		// tell their address in X-Forwarded-For.
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
	})
	s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	job := s.pendingJob(t, alice)
	signedOut := func(from string) *wsClient {
		t.Helper()
		c, resp := s.tryWS(t, from)
		if c == nil {
			t.Fatalf("a socket from %s: %s", from, resp.Status)
		}
		c.init("")
		return c
	}

	// Per address: 3 sockets, a 4th is refused; another address is not.
	a := []*wsClient{signedOut("198.51.100.1"), signedOut("198.51.100.1"), signedOut("198.51.100.1")}
	s.refusedWith(t, "198.51.100.1", http.StatusTooManyRequests)
	b := signedOut("198.51.100.2")
	// A forged X-Forwarded-For entry left of the proxy's does not help.
	s.refusedWith(t, "203.0.113.50, 198.51.100.1", http.StatusTooManyRequests)
	// Closing one frees its place.
	a[0].conn.Close()
	a[0] = s.eventuallyWS(t, "198.51.100.1")
	a[0].init("")

	// 5 signed out now (a, b, c): a 6th is accepted (it could sign in),
	// and closed with 1013 when its connection_init has no token.
	c := signedOut("198.51.100.3")
	sixth, resp := s.tryWS(t, "198.51.100.4")
	if sixth == nil {
		t.Fatalf("a socket that may sign in was refused: %s", resp.Status)
	}
	sixth.send(map[string]any{"type": "connection_init", "payload": map[string]any{}})
	if code := sixth.closeCode(5 * time.Second); code != 1013 {
		t.Fatalf("a 6th signed-out socket: close code %d, want 1013", code)
	}

	// A signed-in user still connects (from the reserve), and works.
	user := s.eventuallyWS(t, "198.51.100.5")
	user.init(alice)
	user.subscribe("j", jobUpdated, map[string]any{"id": job})
	if m := user.read(5 * time.Second); m.Type != "next" || !strings.Contains(string(m.Payload), `"PENDING"`) {
		t.Fatalf("the signed-in socket: %+v", m)
	}

	// Sockets that never send connection_init hold the reserve: 5 signed
	// out + 2 waiting fill the 7 places, the next is refused with 503.
	// The signed-in socket does not count.
	w1, _ := s.tryWS(t, "198.51.100.6")
	w2, _ := s.tryWS(t, "198.51.100.7")
	if w1 == nil || w2 == nil {
		t.Fatal("a socket in the reserve was refused")
	}
	s.refusedWith(t, "198.51.100.8", http.StatusServiceUnavailable)
	// Refused sockets hold nothing: HTTP is answered as usual.
	if r := s.query(t, alice, `{ me { email } }`, nil); r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("me while the sockets are full: %s", r.Raw)
	}

	// Closing the signed-out sockets frees their places.
	for _, x := range append(a, b, c, w1, w2) {
		x.conn.Close()
	}
	for i := range 5 { // 5 signed-out sockets fit again
		s.eventuallySignedOut(t, fmt.Sprintf("198.51.100.%d", 20+i))
	}
}

// eventuallySignedOut opens a socket from address from and sends
// connection_init without a token, retrying while the socket is refused or
// closed with 1013 (the places of closed sockets are freed once the server
// has seen them close).
func (s *apiServer) eventuallySignedOut(t testing.TB, from string) *wsClient {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, _ := s.tryWS(t, from)
		if c == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{}})
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var m wsMessage
		err := c.conn.ReadJSON(&m)
		if err == nil && m.Type == "connection_ack" {
			return c
		}
		if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 1013 {
			t.Fatalf("signed-out socket from %s: %+v %v", from, m, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("a signed-out socket from %s is still refused", from)
	return nil
}

// TestWebsocketCapsIgnoreUntrustedForwardedFor: without trusted proxies,
// X-Forwarded-For is the client's own claim and changes nothing: every
// socket counts against the TCP peer.
func TestWebsocketCapsIgnoreUntrustedForwardedFor(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) { c.WebsocketMaxPerAddress = 2 })
	for _, from := range []string{"198.51.100.1", "198.51.100.2"} {
		if c, resp := s.tryWS(t, from); c == nil {
			t.Fatalf("socket from %s: %s", from, resp.Status)
		}
	}
	s.refusedWith(t, "198.51.100.3", http.StatusTooManyRequests)
}

// TestWebsocketSignedOutSubscribe: a subscription on a socket whose
// connection_init had no token closes it with 4401 (both protocols, every
// subscription); queries still run on such a socket.
func TestWebsocketSignedOutSubscribe(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 1, true)
	job := s.pendingJob(t, s.login(t, "alice@example.com"))
	vars := map[string]any{"id": job}
	for _, tc := range []struct {
		name, protocol, query string
	}{
		{"JobUpdated", "graphql-transport-ws", jobUpdated},
		{"ExecutionProgress", "graphql-transport-ws", executionProgress},
		{"LegacyJobUpdated", "graphql-ws", jobUpdated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, tc.protocol, nil)
			c.init("")
			if tc.protocol == "graphql-ws" {
				c.send(map[string]any{"type": "start", "id": "1", "payload": map[string]any{"query": tc.query, "variables": vars}})
			} else {
				c.subscribe("1", tc.query, vars)
			}
			c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				var m wsMessage
				err := c.conn.ReadJSON(&m)
				if ce, ok := err.(*websocket.CloseError); ok {
					if ce.Code != 4401 {
						t.Fatalf("close code %d, want 4401", ce.Code)
					}
					return
				}
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if strings.Contains(string(m.Payload), "PENDING") || strings.Contains(string(m.Payload), "NOT_FOUND") {
					t.Fatalf("a signed-out subscription ran: %s", m.Payload)
				}
			}
		})
	}
	t.Run("QueryRuns", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init("")
		c.subscribe("q", `{ __typename }`, nil)
		evs := c.collect("q", 5*time.Second)
		if len(evs) != 1 || !strings.Contains(string(evs[0]), `"Query"`) {
			t.Fatalf("query on a signed-out socket: %s", evs)
		}
	})
}
