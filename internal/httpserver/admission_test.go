package httpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/httpserver"
)

// heldAccounts answers logout once the test lets it go (or the request
// ends): a request that holds its slot of the admission for as long as the
// test wants.
type heldAccounts struct {
	graph.Accounts
	entered atomic.Int32
	release chan struct{}
}

func (a *heldAccounts) Logout(ctx context.Context) error {
	a.entered.Add(1)
	select {
	case <-a.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// admissionServer serves the whole handler with adm, the client address
// taken from X-Forwarded-For (the test's clients are all on the loopback).
type admissionServer struct {
	url string
	acc *heldAccounts
}

func newAdmissionServer(t *testing.T, adm httpserver.Admission, bodyTimeout time.Duration) *admissionServer {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	acc := &heldAccounts{release: make(chan struct{})}
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{Accounts: acc}, httpserver.GraphQLConfig{Logger: logger}))
	h := httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, Metrics: httpserver.NewMetrics(nil),
		Admission: adm, BodyTimeout: bodyTimeout, Ready: func(context.Context) error { return nil },
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		close(acc.release)
		srv.Close()
	})
	return &admissionServer{url: srv.URL, acc: acc}
}

type answer struct {
	status     int
	retryAfter string
	code       string
}

// post sends query from address from and returns the answer.
func (s *admissionServer) post(t *testing.T, from, query string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/query", strings.NewReader(fmt.Sprintf(`{"query":%q}`, query)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", from)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer resp.Body.Close()
	var body struct {
		Errors []struct{ Extensions map[string]any }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body) // a refusal may have no JSON body: status and Retry-After tell
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if len(body.Errors) > 0 {
		a.code, _ = body.Errors[0].Extensions["code"].(string)
	}
	return a
}

// start sends query from address from in the background.
func (s *admissionServer) start(t *testing.T, from, query string) <-chan answer {
	out := make(chan answer, 1)
	go func() { out <- s.post(t, from, query) }()
	return out
}

// metric reads an unlabelled metric.
func (s *admissionServer) metric(t *testing.T, name string) float64 {
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func (s *admissionServer) waitFor(t *testing.T, name string, want float64) {
	t.Helper()
	algoitnytest.Eventually(t, 10*time.Second, fmt.Sprintf("%s = %v", name, want), func() bool { return s.metric(t, name) == want })
}

const held = "mutation { logout }"

// TestAdmission: past the concurrency limit requests wait in line, and
// past the queue they are turned away at once with 503, Retry-After and
// SERVER_BUSY; one client address holds at most its share of the slots
// (its next request waits while another address's is served at once) and
// has at most its share of requests waiting (429, TOO_MANY_REQUESTS); the
// queued requests are served as slots free up.
func TestAdmission(t *testing.T) {
	t.Parallel()
	s := newAdmissionServer(t, httpserver.Admission{Concurrency: 2, Queue: 2, QueueTimeout: time.Minute, PerAddress: 1, PerAddressQueue: 2}, 0)
	const a, b, c = "198.51.100.1", "198.51.100.2", "198.51.100.3"
	a1 := s.start(t, a, held)
	s.waitFor(t, "algoitny_http_requests_in_flight", 1)
	a2 := s.start(t, a, held) // a holds its share: it waits
	s.waitFor(t, "algoitny_http_requests_queued", 1)
	if got := s.post(t, b, "{ __typename }"); got.status != http.StatusOK {
		t.Fatalf("another address, a slot free: %+v", got)
	}
	a3 := s.start(t, a, held)
	s.waitFor(t, "algoitny_http_requests_queued", 2)
	if got := s.post(t, a, "{ __typename }"); got.status != http.StatusTooManyRequests || got.code != "TOO_MANY_REQUESTS" || got.retryAfter != "1" {
		t.Fatalf("over the address's share of the queue: %+v", got)
	}
	b1 := s.start(t, b, held)
	s.waitFor(t, "algoitny_http_requests_in_flight", 2)
	if got := s.post(t, c, "{ __typename }"); got.status != http.StatusServiceUnavailable || got.code != "SERVER_BUSY" || got.retryAfter != "1" {
		t.Fatalf("the slots taken, the queue full: %+v", got)
	}
	for range 4 { // a1, b1, then a2 and a3 in turn
		s.acc.release <- struct{}{}
	}
	for i, ch := range []<-chan answer{a1, a2, a3, b1} {
		if got := <-ch; got.status != http.StatusOK || got.code != "" {
			t.Fatalf("request %d: %+v", i, got)
		}
	}
}

// TestAdmissionQueueTimeout: a request that waits longer than the queue's
// timeout is turned away with 503 SERVER_BUSY.
func TestAdmissionQueueTimeout(t *testing.T) {
	t.Parallel()
	s := newAdmissionServer(t, httpserver.Admission{Concurrency: 1, QueueTimeout: 200 * time.Millisecond}, 0)
	first := s.start(t, "198.51.100.1", held)
	s.waitFor(t, "algoitny_http_requests_in_flight", 1)
	if got := s.post(t, "198.51.100.2", "{ __typename }"); got.status != http.StatusServiceUnavailable || got.code != "SERVER_BUSY" {
		t.Fatalf("after the queue's timeout: %+v", got)
	}
	s.acc.release <- struct{}{}
	if got := <-first; got.status != http.StatusOK {
		t.Fatalf("the held request: %+v", got)
	}
}

// slowBody opens a connection to s and sends a POST /query whose body
// trickles in, a byte every 50 ms: far below the pace asked for.
func slowBody(t *testing.T, s *admissionServer) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		conn.Close()
	})
	fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nX-Forwarded-For: 198.51.100.1\r\nContent-Length: 100000\r\n\r\n{")
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return conn
}

// TestSlowBodyHoldsNoSlot: a request whose body has not all come holds no
// slot of the admission: the only slot serves another request at once
// (were it taken, that request would be turned away after the queue's
// short timeout).
func TestSlowBodyHoldsNoSlot(t *testing.T) {
	t.Parallel()
	s := newAdmissionServer(t, httpserver.Admission{Concurrency: 1, QueueTimeout: 200 * time.Millisecond}, time.Minute)
	slowBody(t, s)
	for range 3 {
		if got := s.post(t, "198.51.100.2", "{ __typename }"); got.status != http.StatusOK {
			t.Fatalf("the only slot, while a body trickles in: %+v", got)
		}
	}
}

// TestSlowBodyIsCut: a body that comes too slowly is answered 408
// REQUEST_TIMEOUT and its connection closed, although a byte comes now and
// then.
func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	s := newAdmissionServer(t, httpserver.Admission{}, 300*time.Millisecond)
	conn := slowBody(t, s)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the slow body was not answered: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || !strings.Contains(string(body), "REQUEST_TIMEOUT") {
		t.Fatalf("the slow body: %s (close %t) %s", resp.Status, resp.Close, body)
	}
}
