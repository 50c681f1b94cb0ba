package main

import (
	"fmt"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// pendingJob submits an execution that stays PENDING (no workers run).
func (s *apiServer) pendingJob(t testing.TB, token string) string {
	t.Helper()
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, token, executeMutation, executeInput("print(1)", nil)).decode(t, &out)
	return out.ExecuteCode.ID
}

func TestWebsocketProtocol(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) {
		c.WebsocketPing, c.WebsocketInitTimeout = 300*time.Millisecond, 400*time.Millisecond
		c.CORSOrigins = []string{"https://app.algoitny.dev"}
	})
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	job := s.pendingJob(t, alice)
	vars := map[string]any{"id": job}

	closeCases := []struct {
		name string
		code int
		do   func(c *wsClient)
	}{
		{"4400InvalidMessage", 4400, func(c *wsClient) {
			c.init(alice)
			_ = c.conn.WriteMessage(websocket.TextMessage, []byte("not json"))
		}},
		{"4400InitPayloadNotAnObject", 4400, func(c *wsClient) {
			c.send(map[string]any{"type": "connection_init", "payload": "Bearer " + alice})
		}},
		{"4400UnknownType", 4400, func(c *wsClient) {
			c.init(alice)
			c.send(map[string]any{"type": "next", "id": "1"})
		}},
		{"4401SubscribeBeforeInit", 4401, func(c *wsClient) { c.subscribe("1", jobUpdated, vars) }},
		{"4403RejectedToken", 4403, func(c *wsClient) {
			c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer forged"}})
		}},
		{"4408NoInitInTime", 4408, func(c *wsClient) {}},
		{"4409DuplicateID", 4409, func(c *wsClient) {
			c.init(alice)
			c.subscribe("same", jobUpdated, vars)
			c.subscribe("same", jobUpdated, vars)
		}},
		{"4429SecondInit", 4429, func(c *wsClient) {
			c.init(alice)
			c.send(map[string]any{"type": "connection_init", "payload": map[string]any{}})
		}},
	}
	for _, tc := range closeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, "graphql-transport-ws", nil)
			tc.do(c)
			if code := c.closeCode(5 * time.Second); code != tc.code {
				t.Fatalf("close code %d, want %d", code, tc.code)
			}
		})
	}

	t.Run("ReusingACompletedID", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(alice)
		c.subscribe("a", jobUpdated, vars)
		if m := c.event(30 * time.Second); m.Type != "next" {
			t.Fatalf("first event %+v", m)
		}
		// The id is free as soon as the client completes it (the protocol
		// allows its reuse at once); the old operation's own end, which
		// gqlgen still writes, must not end the new one.
		c.send(map[string]any{"type": "complete", "id": "a"})
		c.subscribe("a", jobUpdated, vars)
		for { // event answers the server's pings: unanswered, they close the socket after two periods
			m := c.event(5 * time.Second)
			if m.Type == "next" && m.ID == "a" {
				return
			}
			if m.Type != "complete" {
				t.Fatalf("unexpected %+v", m)
			}
		}
	})

	t.Run("ReusingAnIDTheServerCompleted", func(t *testing.T) {
		t.Parallel()
		finished := s.pendingJob(t, alice)
		s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": finished})
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(alice)
		for round := range 2 { // a final job: its state, then "complete" from the server
			c.subscribe("f", jobUpdated, map[string]any{"id": finished})
			var types []string
			for len(types) == 0 || types[len(types)-1] != "complete" {
				m := c.read(5 * time.Second)
				if m.Type == "ping" {
					c.send(map[string]any{"type": "pong"})
					continue
				}
				if m.ID != "f" {
					t.Fatalf("round %d: unexpected %+v", round, m)
				}
				types = append(types, m.Type)
			}
			if len(types) != 2 || types[0] != "next" {
				t.Fatalf("round %d: messages %v, want [next complete]", round, types)
			}
		}
	})

	t.Run("KeepAlivePings", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(alice)
		if m := c.read(30 * time.Second); m.Type != "ping" {
			t.Fatalf("expected a ping, got %+v", m)
		}
		c.send(map[string]any{"type": "pong"})
		legacy := s.dialWS(t, "graphql-ws", nil)
		legacy.init(alice)
		if m := legacy.read(30 * time.Second); m.Type != "ka" {
			t.Fatalf("expected ka, got %+v", m)
		}
	})

	t.Run("LegacyGraphQLWS", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, "graphql-ws", nil)
		c.init(alice)
		c.send(map[string]any{"type": "start", "id": "1", "payload": map[string]any{"query": jobUpdated, "variables": vars}})
		for {
			m := c.read(5 * time.Second)
			if m.Type == "data" && m.ID == "1" {
				if !strings.Contains(string(m.Payload), `"PENDING"`) {
					t.Fatalf("data %s", m.Payload)
				}
				break
			}
		}
		c.send(map[string]any{"type": "stop", "id": "1"})
	})

	t.Run("OriginCheck", func(t *testing.T) {
		t.Parallel()
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		url := strings.Replace(s.URL, "http://", "ws://", 1)
		if _, resp, err := d.Dial(url, http.Header{"Origin": {"https://evil.example"}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("foreign origin: %v %v", err, resp)
		}
		conn, _, err := d.Dial(url, http.Header{"Origin": {"https://app.algoitny.dev"}})
		if err != nil {
			t.Fatalf("allowed origin: %v", err)
		}
		conn.Close()
	})

	t.Run("AnonymousCannotFollowJobs", func(t *testing.T) {
		t.Parallel()
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init("")
		c.subscribe("1", jobUpdated, vars)
		// A subscription on a signed-out socket closes it
		// (TestWebsocketSignedOutSubscribe).
		if code := c.closeCode(5 * time.Second); code != 4401 {
			t.Fatalf("close code %d, want 4401", code)
		}
	})
}

func TestWebsocketSessionExpiry(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) { c.SessionLifetime = 2 * time.Second })
	token := s.login(t, "short@example.com")
	c := s.dialWS(t, "graphql-transport-ws", nil)
	c.init(token)
	start := time.Now()
	if code := c.closeCode(30 * time.Second); code != 4403 {
		t.Fatalf("close code %d after expiry", code)
	}
	if time.Since(start) > 20*time.Second { // the session lasts 2 s
		t.Fatalf("closed only after %v", time.Since(start))
	}
}

// A socket does not keep the identity it signed in with: once the session
// is logged out, the periodic check closes the socket, and an operation sent
// before that check fails with UNAUTHENTICATED and closes it too.
func TestWebsocketLogoutClosesSocket(t *testing.T) {
	t.Parallel()
	t.Run("PeriodicCheck", func(t *testing.T) {
		t.Parallel()
		s := startAPI(t, func(c *Config) { c.WebsocketRecheck = 300 * time.Millisecond })
		s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 1, true)
		token := s.login(t, "leaver@example.com")
		job := s.pendingJob(t, token)
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(token)
		c.subscribe("1", jobUpdated, map[string]any{"id": job})
		if m := c.read(5 * time.Second); m.Type != "next" {
			t.Fatalf("first event %+v", m)
		}
		s.query(t, token, `mutation { logout }`, nil)
		if code := c.closeCode(10 * time.Second); code != 4403 {
			t.Fatalf("close code %d after logout", code)
		}
	})
	// An account change closes the sockets it ends at once, in every
	// replica, not at their next periodic check (an hour here): a logout on
	// the same replica, a deactivation made on another one. A socket of
	// another session of the same user stays open.
	t.Run("AtOnceInEveryReplica", func(t *testing.T) {
		t.Parallel()
		a := startAPI(t, func(c *Config) { c.WebsocketRecheck = time.Hour })
		b := startAPI(t, func(c *Config) { *c = a.Config })
		admin := a.staff(t, "admin@example.com")
		a.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
		subscribed := func(s *apiServer, token, job string) *wsClient {
			c := s.dialWS(t, "graphql-transport-ws", nil)
			c.init(token)
			c.subscribe("1", jobUpdated, map[string]any{"id": job})
			if m := c.read(5 * time.Second); m.Type != "next" {
				t.Fatalf("first event %+v", m)
			}
			return c
		}
		closedAtOnce := func(c *wsClient, what string) {
			t.Helper()
			start := time.Now()
			if code := c.closeCode(10 * time.Second); code != 4403 {
				t.Fatalf("close code %d after %s", code, what)
			}
			t.Logf("closed %v after %s", time.Since(start).Round(time.Millisecond), what)
		}
		leaver := a.login(t, "leaver@example.com")
		stayer := a.login(t, "leaver@example.com") // another session
		job := a.pendingJob(t, leaver)
		gone, stays := subscribed(a, leaver, job), subscribed(a, stayer, job)
		a.query(t, leaver, `mutation { logout }`, nil)
		closedAtOnce(gone, "a logout")
		if r := a.query(t, stayer, `{ me { email } }`, nil); r.Status != 200 || len(r.Errors) > 0 {
			t.Fatalf("the other session: %s", r.Raw)
		}
		stays.subscribe("2", jobUpdated, map[string]any{"id": job})
		if m := stays.read(5 * time.Second); m.Type != "next" {
			t.Fatalf("the other session's socket after the logout: %+v", m)
		}

		bob := b.login(t, "bob@example.com")
		onA := subscribed(a, bob, a.pendingJob(t, bob))
		b.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { isActive } }`,
			map[string]any{"id": globalIDOf("User", b.user(t, "bob@example.com").ID)})
		closedAtOnce(onA, "a deactivation on another replica")
	})
	t.Run("NextOperation", func(t *testing.T) {
		t.Parallel()
		s := startAPI(t, func(c *Config) { c.WebsocketRecheck = time.Hour })
		s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 1, true)
		token := s.login(t, "leaver@example.com")
		job := s.pendingJob(t, token)
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(token)
		s.query(t, token, `mutation { logout }`, nil)
		c.subscribe("1", jobUpdated, map[string]any{"id": job})
		c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			var m wsMessage
			err := c.conn.ReadJSON(&m)
			if ce, ok := err.(*websocket.CloseError); ok {
				if ce.Code != 4403 {
					t.Fatalf("close code %d", ce.Code)
				}
				break
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			// The operation's UNAUTHENTICATED error may come before the
			// close frame; the job itself must not.
			if strings.Contains(string(m.Payload), "PENDING") {
				t.Fatalf("logged-out socket got the job: %s", m.Payload)
			}
		}
	})
}

// TestWebsocketFanOut: one job's events reach 200 subscribers, each from
// an address of its own (one address holds a share of the admission's
// slots only: TestAdmission).
func TestWebsocketFanOut(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
		// 200 subscriptions start at once and wait for the admission's
		// slots: on a loaded machine longer than the default 5 s (then
		// SERVER_BUSY, which a client retries; this test is about delivery).
		c.Admission.QueueTimeout = 2 * time.Minute
	})
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	job := s.pendingJob(t, alice)

	const n = 200
	clients := make([]*wsClient, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.dialWS(t, "graphql-transport-ws", http.Header{"X-Forwarded-For": {fmt.Sprintf("198.51.100.%d", i)}})
			c.init(alice)
			c.subscribe("j", jobUpdated, map[string]any{"id": job})
			// Generous: 200 sockets subscribe at once on a loaded machine;
			// the deadline only stops a test that hangs.
			if m := c.event(90 * time.Second); m.Type != "next" || !strings.Contains(string(m.Payload), "PENDING") {
				t.Errorf("subscriber %d first event %+v", i, m)
			}
			clients[i] = c
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Cancelling the job is its completion event.
	s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": job})
	var mu sync.Mutex
	got := 0
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			evs := c.collect("j", 90*time.Second)
			if len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1]), "CANCELLED") {
				t.Errorf("subscriber %d got %s", i, evs)
				return
			}
			mu.Lock()
			got++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if got != n {
		t.Fatalf("%d of %d subscribers saw the final event", got, n)
	}
}

// TestWebsocketNoGoroutineLeak is not parallel: it counts the process's
// goroutines, which only means something while no other test runs.
func TestWebsocketNoGoroutineLeak(t *testing.T) {
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	job := s.pendingJob(t, alice)
	c := s.dialWS(t, "graphql-transport-ws", nil)
	c.init(alice)
	cycle := func(i int) {
		id := fmt.Sprint(i)
		c.subscribe(id, jobUpdated, map[string]any{"id": job})
		for {
			m := c.read(10 * time.Second)
			if m.Type == "next" && m.ID == id {
				break
			}
			if m.Type == "ping" { // unanswered, the socket is closed after two periods (1000 "terminated")
				c.send(map[string]any{"type": "pong"})
			}
		}
		c.send(map[string]any{"type": "complete", "id": id})
	}
	for i := range 20 { // warm up pools and caches
		cycle(i)
	}
	settle := func() int {
		time.Sleep(300 * time.Millisecond)
		runtime.GC()
		return runtime.NumGoroutine()
	}
	before := settle()
	for i := 20; i < 1020; i++ {
		cycle(i)
	}
	after := settle()
	for tries := 0; after > before+10 && tries < 20; tries++ {
		after = settle()
	}
	if after > before+10 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("goroutines: %d before, %d after 1,000 subscribe/unsubscribe cycles\n%s", before, after, buf[:n])
	}
}

// TestSubscriptionsOfOneJob: sockets of both protocols following the same
// job each start with its current state; another user's subscription to
// the job gets its own NOT_FOUND; a subscriber that leaves or disconnects
// does not end the others, who see the job end; one that left may follow
// the finished job again (its state, then complete).
func TestSubscriptionsOfOneJob(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	bob := s.login(t, "bob@example.com")
	job := s.pendingJob(t, alice)
	vars := map[string]any{"id": job}
	next := func(c *wsClient, id string) string {
		t.Helper()
		for {
			m := c.read(10 * time.Second)
			if m.Type == "ping" {
				c.send(map[string]any{"type": "pong"})
				continue
			}
			if m.Type == "ka" {
				continue
			}
			if m.ID != id || (m.Type != "next" && m.Type != "data") {
				t.Fatalf("expected an event of %s, got %+v", id, m)
			}
			return string(m.Payload)
		}
	}
	var clients []*wsClient
	for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
		for i := range 3 {
			c := s.dialWS(t, protocol, nil)
			c.init(alice)
			if protocol == "graphql-ws" {
				c.send(map[string]any{"type": "start", "id": "j", "payload": map[string]any{"query": jobUpdated, "variables": vars}})
			} else {
				c.subscribe("j", jobUpdated, vars)
			}
			if p := next(c, "j"); !strings.Contains(p, `"PENDING"`) {
				t.Fatalf("%s subscriber %d started with %s", protocol, i, p)
			}
			clients = append(clients, c)
		}
	}

	other := s.dialWS(t, "graphql-transport-ws", nil)
	other.init(bob)
	other.subscribe("b", jobUpdated, vars)
	if p := next(other, "b"); !strings.Contains(p, "NOT_FOUND") || strings.Contains(p, "PENDING") {
		t.Fatalf("bob following alice's job got %s", p)
	}

	clients[0].send(map[string]any{"type": "complete", "id": "j"})
	clients[1].conn.Close()
	s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": job})
	for i, c := range clients[2:] {
		evs := c.collect("j", 20*time.Second)
		if len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1]), `"CANCELLED"`) {
			t.Fatalf("subscriber %d saw %s", i, evs)
		}
	}
	// The first subscriber left before the end: it gets nothing more, and
	// may follow the finished job again.
	clients[0].subscribe("j", jobUpdated, vars)
	if evs := clients[0].collect("j", 10*time.Second); len(evs) != 1 || !strings.Contains(string(evs[0]), `"CANCELLED"`) {
		t.Fatalf("following the finished job again: %s", evs)
	}
}
