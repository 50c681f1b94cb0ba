package watch_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
)

func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Test servers listen on 127.0.0.1, which only the allow-list lets through.
	local := &watch.Prober{Fetch: safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, Timeout: 300 * time.Millisecond, MaxBodyBytes: 4096}), Timeout: 300 * time.Millisecond}
	probe := func(t *testing.T, p *watch.Prober, c *algoitny.Check) (*algoitny.CheckResult, error) {
		t.Helper()
		if c.ID == "" {
			c.ID = "c1"
		}
		return p.Probe(ctx, c)
	}
	down := func(t *testing.T, r *algoitny.CheckResult, wantErr string) {
		t.Helper()
		if r.Status != algoitny.CheckDown || !r.Failed() || !strings.Contains(r.Error, wantErr) {
			t.Fatalf("result %+v, want DOWN with error %q", r, wantErr)
		}
	}

	t.Run("Up", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckAvailability})
		algoitnytest.OK(t, err)
		if r.Status != algoitny.CheckUp || r.HTTPStatus != 200 || r.Failed() || r.KeywordFound != nil || r.CheckID != "c1" || r.CheckedAt.IsZero() {
			t.Fatalf("result %+v", r)
		}
	})

	t.Run("DownHTTP500", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(http.StatusInternalServerError, "oops", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckAvailability})
		algoitnytest.OK(t, err)
		down(t, r, "HTTP 500")
		if r.HTTPStatus != 500 {
			t.Fatalf("http status %d", r.HTTPStatus)
		}
	})

	t.Run("DownConnectionRefused", func(t *testing.T) {
		t.Parallel()
		r, err := probe(t, local, &algoitny.Check{URL: closedURL(t), Type: algoitny.CheckAvailability})
		algoitnytest.OK(t, err)
		down(t, r, "connection refused")
	})

	t.Run("DownTimeout", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(200, "late", 20*time.Second)
		start := time.Now()
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckAvailability})
		algoitnytest.OK(t, err)
		down(t, r, "timed out")
		if took := time.Since(start); took > 10*time.Second { // far below the 20 s answer
			t.Fatalf("a 300 ms timeout took %v", took)
		}
		if r.ResponseTimeMs < 250 {
			t.Fatalf("response time %d ms", r.ResponseTimeMs)
		}
	})

	t.Run("KeywordFound", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(200, "<h1>Registration is OPEN now</h1>", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "registration is open"})
		algoitnytest.OK(t, err)
		if r.Status != algoitny.CheckUp || r.KeywordFound == nil || !*r.KeywordFound {
			t.Fatalf("result %+v", r)
		}
	})

	t.Run("KeywordNotFound", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(200, "<h1>Registration closed</h1>", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "open"})
		algoitnytest.OK(t, err)
		// DOWN, and the run failed: it counts toward DOWN, and says why.
		if r.Status != algoitny.CheckDown || r.KeywordFound == nil || *r.KeywordFound || !r.Failed() ||
			r.Error != `the page does not contain the keyword "open"` {
			t.Fatalf("result %+v", r)
		}
	})

	t.Run("KeywordInverted", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(200, "Sold out", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "sold out", Invert: true})
		algoitnytest.OK(t, err)
		if r.Status != algoitny.CheckDown || !*r.KeywordFound || r.Error != `the page contains the keyword "sold out"` {
			t.Fatalf("inverted, present: %+v", r)
		}
		tg.set(200, "Tickets available", 0)
		r, err = probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "sold out", Invert: true})
		algoitnytest.OK(t, err)
		if r.Status != algoitny.CheckUp || *r.KeywordFound {
			t.Fatalf("inverted, absent: %+v", r)
		}
	})

	t.Run("KeywordOnErrorPage", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(503, "open", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "open"})
		algoitnytest.OK(t, err)
		down(t, r, "HTTP 503")
		if r.KeywordFound != nil {
			t.Fatalf("keyword judged on an error page: %+v", r)
		}
	})

	t.Run("KeywordBeyondBodyCap", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		tg.set(200, strings.Repeat("x", 5000)+"needle", 0)
		r, err := probe(t, local, &algoitny.Check{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "needle"})
		algoitnytest.OK(t, err)
		if *r.KeywordFound {
			t.Fatalf("found past the 4 KB cap: %+v", r)
		}
	})

	t.Run("RefusedWithoutAllowList", func(t *testing.T) {
		t.Parallel()
		tg := newTarget(t)
		p := &watch.Prober{Fetch: safehttp.New(safehttp.Config{Timeout: time.Second}), Timeout: time.Second}
		for _, u := range []string{tg.URL, "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://[::1]/", "http://localhost/"} {
			r, err := probe(t, p, &algoitny.Check{URL: u, Type: algoitny.CheckAvailability})
			if !errors.Is(err, watch.ErrForbidden) {
				t.Fatalf("%s: %v (%+v)", u, err, r)
			}
			down(t, r, "public address")
		}
		if n := tg.hits.Load(); n != 0 {
			t.Fatalf("the local server was hit %d times", n)
		}
	})

	t.Run("RefusedAfterDNS", func(t *testing.T) {
		t.Parallel()
		// A name, not an address: it passes the URL check and is refused
		// when the connection is made to what it resolves to (loopback).
		name := loopbackName(t)
		p := &watch.Prober{Fetch: safehttp.New(safehttp.Config{Timeout: time.Second}), Timeout: time.Second}
		r, err := probe(t, p, &algoitny.Check{URL: "http://" + name + "/", Type: algoitny.CheckAvailability})
		if !errors.Is(err, watch.ErrForbidden) {
			t.Fatalf("%s: %v (%+v)", name, err, r)
		}
		// The same with a live server and the name (not its address)
		// allow-listed with the port: the dial-time check still refuses.
		tg := newTarget(t)
		port := tg.URL[strings.LastIndex(tg.URL, ":")+1:]
		p = &watch.Prober{Fetch: safehttp.New(safehttp.Config{AllowHosts: []string{name + ":" + port}, Timeout: time.Second}), Timeout: time.Second}
		r, err = probe(t, p, &algoitny.Check{URL: "http://" + name + ":" + port + "/", Type: algoitny.CheckAvailability})
		if !errors.Is(err, watch.ErrForbidden) || tg.hits.Load() != 0 {
			t.Fatalf("%s:%s: %v (%+v), %d hits", name, port, err, r, tg.hits.Load())
		}
	})

	t.Run("UnknownHostReadsAsRefused", func(t *testing.T) {
		t.Parallel()
		// A name that does not exist and a name that resolves to loopback
		// get one answer: else checks would tell which names the server's
		// own DNS knows.
		internal, unknown := loopbackName(t), "no-such-host.invalid"
		if _, err := net.DefaultResolver.LookupHost(ctx, unknown); !isNotFound(err) {
			t.Skipf("the resolver does not answer NXDOMAIN for %s: %v", unknown, err)
		}
		p := &watch.Prober{Fetch: safehttp.New(safehttp.Config{Timeout: 2 * time.Second}), Timeout: 2 * time.Second}
		a, errA := probe(t, p, &algoitny.Check{URL: "http://" + internal + "/", Type: algoitny.CheckAvailability})
		b, errB := probe(t, p, &algoitny.Check{URL: "http://" + unknown + "/", Type: algoitny.CheckAvailability})
		if !errors.Is(errA, watch.ErrForbidden) || !errors.Is(errB, watch.ErrForbidden) || a.Error != b.Error || a.Status != b.Status {
			t.Fatalf("%s: %v %+v\n%s: %v %+v", internal, errA, a, unknown, errB, b)
		}
	})

	t.Run("RedirectToLoopbackRefused", func(t *testing.T) {
		t.Parallel()
		inner := newTarget(t)
		outer := httptest.NewServer(http.RedirectHandler(inner.URL+"/secret", http.StatusFound))
		t.Cleanup(outer.Close)
		// Only the first hop is allow-listed (host and port); the redirect
		// goes to another port of loopback.
		p := &watch.Prober{Fetch: safehttp.New(safehttp.Config{AllowHosts: []string{strings.TrimPrefix(outer.URL, "http://")}, Timeout: time.Second}), Timeout: time.Second}
		r, err := probe(t, p, &algoitny.Check{URL: outer.URL, Type: algoitny.CheckAvailability})
		if !errors.Is(err, watch.ErrForbidden) || inner.hits.Load() != 0 {
			t.Fatalf("%v (%+v), inner hit %d times", err, r, inner.hits.Load())
		}
	})
}

func TestNextRun(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := 100 * time.Millisecond
	for _, tc := range []struct {
		name string
		now  time.Duration // after base
		want time.Duration
	}{
		{"OnTime", 10 * time.Millisecond, 100 * time.Millisecond},
		{"LateWithinPeriod", 99 * time.Millisecond, 100 * time.Millisecond},
		{"ExactlyOnNext", 100 * time.Millisecond, 200 * time.Millisecond},
		{"MissedSkipped", 350 * time.Millisecond, 400 * time.Millisecond},
		{"ManyMissed", 10*time.Second + time.Millisecond, 10*time.Second + 100*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := watch.NextRun(base, d, base.Add(tc.now)); !got.Equal(base.Add(tc.want)) {
				t.Fatalf("NextRun = +%v, want +%v", got.Sub(base), tc.want)
			}
		})
	}
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}
