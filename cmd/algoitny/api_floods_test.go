package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/gorilla/websocket"
)

// The floods of issue 29 (items 1 and 2), held against a real server while
// a signed-in user asks `{ me }` from another address. Not parallel: the
// test measures the process's heap, which only means something while no
// other test runs.

// floodServer starts the server the floods run against: production's
// admission and socket caps, client addresses from X-Forwarded-For (the
// test's clients all come from the loopback), and a body timeout longer
// than the test, so that slow bodies are held throughout (that they are
// cut is TestSlowBodyIsCut's).
func floodServer(t *testing.T, tweak func(*Config)) (*apiServer, string) {
	t.Helper()
	s := startAPI(t, func(c *Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
		c.BodyTimeout = 5 * time.Minute
		if tweak != nil {
			tweak(c)
		}
	})
	return s, s.login(t, "alice@example.com")
}

// me asks `{ me { email } }` as token from an address of its own and fails
// the test unless it is answered.
func (s *apiServer) me(t *testing.T, token string) {
	t.Helper()
	r := s.post(t, token, "application/json", []byte(`{"query":"{ me { email } }"}`), http.Header{"X-Forwarded-For": {"203.0.113.77"}})
	if r.Status != http.StatusOK || len(r.Errors) > 0 || !strings.Contains(string(r.Data), "alice@example.com") {
		t.Fatalf("{ me } during the flood: %d %s", r.Status, r.Raw)
	}
}

// heapPeak samples the process's heap in use until stop is called, which
// returns its growth over the heap at the start (after a collection).
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapInuse
	var peak atomic.Uint64
	peak.Store(base)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load() - base
	}
}

// TestSlowBodyFlood: 80 connections from 20 addresses (4 each, within an
// address's share) send their bodies a byte at a time, and 70 more come
// from one address. They hold none of the 16 slots — bodies are read
// before a request asks for one — so `{ me }` is answered while all are
// held; the one address has at most 64 requests waiting, its others are
// answered 429 at once.
func TestSlowBodyFlood(t *testing.T) {
	s, alice := floodServer(t, nil)
	var conns []net.Conn
	open := func(from string) net.Conn {
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nX-Forwarded-For: %s\r\nContent-Length: 100000\r\n\r\n{", from)
		return conn
	}
	for i := range 80 {
		conns = append(conns, open(fmt.Sprintf("198.51.100.%d", 1+i/4)))
	}
	var crowd []net.Conn
	for range 70 {
		crowd = append(crowd, open("192.0.2.1"))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	defer func() {
		for _, c := range append(conns, crowd...) {
			c.Close() // ends the crowd's readers
		}
	}()
	wg.Go(func() { // a byte now and then on every held connection
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			for _, c := range append(conns, crowd...) {
				_, _ = c.Write([]byte(" "))
			}
		}
	})

	// The crowd's requests over its share are refused at once; the others
	// are held with the 80, reading their bodies.
	var refused atomic.Int32
	for _, c := range crowd {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Minute))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
					t.Errorf("a request over its address's share: %s", resp.Status)
				}
				refused.Add(1)
			}
		})
	}
	held := func() float64 {
		return s.metricValue(t, "algoitny_http_requests_reading_body") + s.metricValue(t, "algoitny_http_requests_in_flight") +
			s.metricValue(t, "algoitny_http_requests_queued")
	}
	algoitnytest.Eventually(t, time.Minute, "the flood to be held", func() bool { return refused.Load() == 70-64 && held() == 80+64 })
	s.me(t, alice)
	// ... while every held body is still held, and holds no slot.
	if n := s.metricValue(t, "algoitny_http_requests_reading_body"); n != 80+64 || refused.Load() != 70-64 {
		t.Fatalf("after { me }: %v bodies being read, %d refused", n, refused.Load())
	}
}

// bigTestCase stores a published problem with one test case of 8 MB and
// returns the test case's global id.
func bigTestCase(t *testing.T, s *apiServer) string {
	t.Helper()
	ctx := context.Background()
	p := &algoitny.Problem{Platform: algoitny.PlatformBaekjoon, ProblemID: "9000", Title: "Big", Language: algoitny.LanguagePython,
		Tags: []string{"math"}, TimeLimitMs: 1000, MemoryLimitMB: 256, IsCompleted: true}
	if err := retryUnavailable(func() error { return s.DB.CreateProblem(ctx, p, algoitny.Unlimited) }); err != nil {
		t.Fatal(err)
	}
	tc := &algoitny.TestCase{Input: strings.Repeat("1 2 3 4 5 6 7 8\n", (8<<20)/16), Output: "42\n"}
	if err := retryUnavailable(func() error { return s.DB.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{tc}) }); err != nil {
		t.Fatal(err)
	}
	return globalIDOf("TestCase", string(p.Platform), p.ProblemID, tc.ID)
}

// TestSocketReadFlood: one signed-out socket sends 100 reads of an 8 MB
// test case and does not read the answers (it took the server from 1.85 to
// 2.99 GB). Two run at once (a signed-out socket's cap), the others are
// answered TOO_MANY_REQUESTS; the answers it leaves unread close it with
// 1008 (a budget of 1 MB here); the heap grows by a few answers, not by a
// hundred; `{ me }` is answered while the socket holds its answers.
func TestSocketReadFlood(t *testing.T) {
	s, alice := floodServer(t, func(c *Config) { c.WebsocketMaxUnsentBytes = 1 << 20 })
	id := bigTestCase(t, s)
	grown := heapPeak()
	c := s.dialSlowReader(t)
	c.init("")
	for i := range 100 {
		c.subscribe(fmt.Sprint(i), `query($id: ID!) { node(id: $id) { ... on TestCase { input output } } }`, map[string]any{"id": id})
	}
	s.me(t, alice)
	// The reads done, an answer left unread (or the socket closed over it
	// already): the socket runs nothing any more.
	algoitnytest.Eventually(t, time.Minute, "the reads to end", func() bool {
		return s.metricValue(t, "algoitny_websocket_operations") == 0 &&
			(s.metricValue(t, "algoitny_websocket_unsent_bytes") > 0 || s.metricValue(t, "algoitny_websockets") == 0)
	})
	growth := grown()
	t.Logf("heap grew by %d MB", growth>>20)
	if growth > 250<<20 {
		t.Fatalf("the heap grew by %d MB for one socket's reads", growth>>20)
	}
	// Read now: what was being written, then the close frame.
	c.conn.SetReadDeadline(time.Now().Add(time.Minute))
	answers, refusals := 0, 0
	for {
		var m wsMessage
		err := c.conn.ReadJSON(&m)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != 1008 {
				t.Fatalf("closed with %d, want 1008", ce.Code)
			}
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		switch {
		case m.Type == "next" && strings.Contains(string(m.Payload), "TOO_MANY_REQUESTS"):
			refusals++
		case m.Type == "next":
			answers++
		}
	}
	if answers > 2 {
		t.Fatalf("%d answers (and %d refusals) before the close", answers, refusals)
	}
}

// dialSlowReader opens a signed-out graphql-transport-ws socket with a
// small receive buffer, from an address of its own: what it does not read
// stays with the server (whatever the machine's buffer sizes).
func (s *apiServer) dialSlowReader(t *testing.T) *wsClient {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second,
		NetDialContext: (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			var err error
			if cerr := c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10) }); cerr != nil {
				return cerr
			}
			return err
		}}).DialContext}
	conn, _, err := d.Dial(strings.Replace(s.URL, "http://", "ws://", 1), http.Header{"X-Forwarded-For": {"198.51.100.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}
}

// TestSocketOperationFlood: one signed-out socket sends 2,000 operations
// of a 14 KB query as fast as it can, reading the answers (they made a
// signed-in `{ me }` take 31 and 44 s). At most two run at once, the others
// are answered TOO_MANY_REQUESTS; `{ me }` is answered while they come.
func TestSocketOperationFlood(t *testing.T) {
	s, alice := floodServer(t, nil)
	s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 3, true)
	query := "# " + strings.Repeat("padding ", 1750) + "\n{ problems(first: 50) { edges { node { id title tags } } } }"
	grown := heapPeak()
	c := s.dialWS(t, "graphql-transport-ws", http.Header{"X-Forwarded-For": {"198.51.100.1"}})
	c.init("")
	var most atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // how many operations run at once, sampled
		for {
			if n := int64(s.metricValue(t, "algoitny_websocket_operations")); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	var writing sync.Mutex // the sender's and the pongs' writes
	write := func(v any) error {
		writing.Lock()
		defer writing.Unlock()
		return c.conn.WriteJSON(v)
	}
	sent := make(chan struct{})
	wg.Go(func() {
		defer close(sent)
		for i := range 2000 {
			if err := write(map[string]any{"type": "subscribe", "id": fmt.Sprint(i), "payload": map[string]any{"query": query}}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	answers, refusals, completes := 0, 0, 0
	meAsked := false
	for completes < 2000 {
		m := c.read(time.Minute)
		switch {
		case m.Type == "ping":
			if err := write(map[string]any{"type": "pong"}); err != nil {
				t.Fatal(err)
			}
		case m.Type == "complete":
			completes++
		case m.Type == "next" && strings.Contains(string(m.Payload), "TOO_MANY_REQUESTS"):
			refusals++
		case m.Type == "next" && strings.Contains(string(m.Payload), `"problems"`):
			answers++
		default:
			t.Fatalf("unexpected %s %.200s", m.Type, m.Payload)
		}
		if completes == 500 && !meAsked { // the flood under way
			meAsked = true
			s.me(t, alice)
		}
	}
	<-sent
	close(stop)
	wg.Wait()
	t.Logf("%d answered, %d refused, at most %d at once; heap grew by %d MB", answers, refusals, most.Load(), grown()>>20)
	if most.Load() > 2 || answers < 1 || refusals < 1 || answers+refusals != 2000 {
		t.Fatalf("%d answered, %d refused, at most %d at once", answers, refusals, most.Load())
	}
}
