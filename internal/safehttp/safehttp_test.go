package safehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
)

func TestRefusesNonPublicDestinations(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer srv.Close()
	c := safehttp.New(safehttp.Config{})
	for _, u := range []string{
		srv.URL,             // 127.0.0.1
		"http://localhost/", // loopback name
		"http://169.254.169.254/latest/meta-data", // cloud metadata
		"http://10.0.0.1/", "http://192.168.1.1/", "http://[::1]/", "http://[fd00::1]/",
		"http://100.64.0.1/", "http://0.0.0.0/",
		"http://localtest.me/",       // a public name that resolves to 127.0.0.1
		"http://example.com:22/",     // odd port
		"http://[::ffff:127.0.0.1]/", // IPv4-mapped loopback
	} {
		_, err := c.Get(context.Background(), u)
		if err == nil {
			t.Fatalf("%s was fetched", u)
		}
		if u == "http://localtest.me/" && !errors.Is(err, safehttp.ErrForbidden) && !strings.Contains(err.Error(), "no such host") {
			// Without DNS on the machine the lookup fails first: refused either way.
			t.Fatalf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"file:///etc/passwd", "gopher://x/", "http://user:pw@example.com/", "not a url"} {
		if _, err := c.Get(context.Background(), u); err == nil {
			t.Fatalf("%s was fetched", u)
		}
	}
}

func TestRedirectsAreRechecked(t *testing.T) {
	t.Parallel()
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("internal")) }))
	defer inner.Close()
	outer := httptest.NewServer(http.RedirectHandler("http://169.254.169.254/latest/meta-data/", http.StatusFound))
	defer outer.Close()
	// The first hop is allow-listed (a test server), the redirect target is not.
	c := safehttp.New(safehttp.Config{AllowHosts: []string{strings.TrimPrefix(outer.URL, "http://")}})
	_, err := c.Get(context.Background(), outer.URL)
	if err == nil || !errors.Is(err, safehttp.ErrForbidden) {
		t.Fatalf("redirect to metadata: %v", err)
	}
}

// TestAllowListPort: an allow-listed "host:port" opens that port only, even
// to a client that may use any port of a public host.
func TestAllowListPort(t *testing.T) {
	t.Parallel()
	ok := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }
	allowed, other := httptest.NewServer(http.HandlerFunc(ok)), httptest.NewServer(http.HandlerFunc(ok))
	defer allowed.Close()
	defer other.Close()
	c := safehttp.New(safehttp.Config{AllowHosts: []string{strings.TrimPrefix(allowed.URL, "http://")}, AnyPort: true})
	if _, err := c.Get(context.Background(), allowed.URL); err != nil {
		t.Fatalf("the allow-listed port: %v", err)
	}
	if _, err := c.Get(context.Background(), other.URL); !errors.Is(err, safehttp.ErrForbidden) {
		t.Fatalf("another port of the same host: %v, want ErrForbidden", err)
	}
}

func TestAllowListAndCap(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == "" {
			w.WriteHeader(400)
		}
		w.Write([]byte(strings.Repeat("x", 5000)))
	}))
	defer srv.Close()
	c := safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, MaxBodyBytes: 1000})
	resp, err := c.Get(context.Background(), srv.URL)
	if err != nil || resp.StatusCode != 200 || len(resp.Body) != 1000 || !resp.Truncated {
		t.Fatalf("%+v %v", resp, err)
	}
}

func TestPerHostRateLimit(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, MinHostInterval: 100 * time.Millisecond})
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = c.Get(context.Background(), srv.URL) }()
	}
	wg.Wait()
	// Four requests to one host, each slot 100 ms after the previous: the
	// last cannot start before 300 ms (a lower bound the limiter guarantees
	// whatever the machine's load).
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond || hits.Load() != 4 {
		t.Fatalf("4 requests in %v (%d arrived)", elapsed, hits.Load())
	}
}

// TestAnyPort: a client with AnyPort accepts public addresses on any port
// and still refuses non-public ones on every port; without it, only 80 and
// 443 are accepted.
func TestAnyPort(t *testing.T) {
	t.Parallel()
	anyPort := safehttp.New(safehttp.Config{AnyPort: true})
	for _, u := range []string{"http://example.com:8080/health", "https://93.184.216.34:8443/", "http://example.com:1/", "https://example.com:65535/"} {
		if err := anyPort.CheckURL(u); err != nil {
			t.Fatalf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{
		"http://127.0.0.1:8080/", "http://10.0.0.1:22/", "http://localhost:9000/", "http://[::1]:5432/",
		"http://169.254.169.254:80/", "http://example.com:0/", "http://example.com:65536/",
	} {
		if err := anyPort.CheckURL(u); err == nil {
			t.Fatalf("%s accepted", u)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if _, err := anyPort.Get(context.Background(), srv.URL); !errors.Is(err, safehttp.ErrForbidden) {
		t.Fatalf("loopback on its port: %v", err)
	}
	if err := safehttp.New(safehttp.Config{}).CheckURL("http://example.com:8080/"); !errors.Is(err, safehttp.ErrForbidden) {
		t.Fatalf("default client on :8080: %v", err)
	}
}

// TestPostIsNotRedirected: a webhook that answers 307 does not get its
// signed body and headers sent on to where it points; the 307 is the answer.
func TestPostIsNotRedirected(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}})
	resp, err := c.Post(context.Background(), srv.URL, http.Header{"X-Signature": {"sha256=00"}}, []byte(`{"a":1}`))
	if err != nil || resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("%+v %v", resp, err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the POST was sent on %d times", n)
	}
	// A GET still follows it.
	if resp, err := c.Get(context.Background(), srv.URL); err != nil || resp.StatusCode != 200 || elsewhere.Load() != 1 {
		t.Fatalf("GET: %+v %v", resp, err)
	}
}

// TestRefusesOwnAddresses: a public address of the server itself is
// refused on any port (a check on http://<server-ip>:6060/ would reach its
// own services from inside its firewall). The refusal comes before the
// connection, so no network is needed.
func TestRefusesOwnAddresses(t *testing.T) {
	t.Parallel()
	own := netip.MustParseAddr("93.184.216.34")
	c := safehttp.New(safehttp.Config{AnyPort: true, OwnAddresses: []netip.Addr{own}, Timeout: 2 * time.Second})
	for _, u := range []string{"http://93.184.216.34:6060/debug/pprof/", "https://93.184.216.34/", "http://[::ffff:93.184.216.34]:8000/"} {
		_, err := c.Get(context.Background(), u)
		var ae *algoitny.Error
		if !errors.As(err, &ae) || !errors.Is(err, safehttp.ErrForbidden) || ae.Err == nil || !strings.Contains(ae.Err.Error(), "own address") {
			t.Fatalf("%s: %v", u, err)
		}
	}
}

// TestEmbeddedIPv4: an IPv6 address that carries an IPv4 address is judged
// by it — IPv4-compatible, mapped, NAT64, 6to4, Teredo —, site-local
// addresses are not public, and every refusal of a destination says the
// same words whether it comes from the URL check or the dial (so that
// neither tells which destinations get dialled).
func TestEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	c := safehttp.New(safehttp.Config{AnyPort: true, Timeout: 2 * time.Second})
	refused := []string{
		"http://[::127.0.0.1]:" + port + "/",             // IPv4-compatible loopback
		"http://[::7f00:1]:" + port + "/",                // the same, written in hex
		"http://[::ffff:127.0.0.1]:" + port + "/",        // IPv4-mapped
		"http://[::10.0.0.1]/",                           // IPv4-compatible private
		"http://[64:ff9b::a9fe:a9fe]/",                   // NAT64 of 169.254.169.254
		"http://[64:ff9b:1::1]/",                         // local-use NAT64
		"http://[2002:7f00:1::]:" + port + "/",           // 6to4 of 127.0.0.1
		"http://[2002:c0a8:101::1]/",                     // 6to4 of 192.168.1.1
		"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", // Teredo: client 127.0.0.1 (inverted)
		"http://[2001:0:a00:1::1]/",                      // Teredo: server 10.0.0.1
		"http://[fec0::1]/",                              // site-local
		"http://[fed0:1::1]/",
	}
	for _, u := range refused {
		err := c.CheckURL(u)
		var ae *algoitny.Error
		if !errors.As(err, &ae) || ae.Message != safehttp.NotPublicMessage || !errors.Is(err, safehttp.ErrForbidden) {
			t.Errorf("CheckURL(%s) = %v, want %q", u, err, safehttp.NotPublicMessage)
		}
		if _, err := c.Get(context.Background(), u); !errors.As(err, &ae) || ae.Message != safehttp.NotPublicMessage {
			t.Errorf("Get(%s) = %v, want %q", u, err, safehttp.NotPublicMessage)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the local server was reached %d times", n)
	}
	// An address that carries a public IPv4 address is public.
	for _, u := range []string{"http://[2002:5db8:d822::1]/", "http://[64:ff9b::5db8:d822]/", "https://[2606:4700::1111]/"} {
		if err := c.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v", u, err)
		}
	}
}
