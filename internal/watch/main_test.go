package watch_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/jobs/jobstest"
	"github.com/algoitny/api/internal/watch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The storage of the package is *dynamo.DB (asserted here, beside the
// consumer, so that internal/dynamo need not import the feature).
var (
	_ watch.Store    = (*dynamo.DB)(nil)
	_ watch.RunStore = (*dynamo.DB)(nil)
)

// The River jobs of the package are plugins of the job runner (asserted
// here: the package does not import internal/jobs).
var (
	_ jobs.QueuePlugin = (*watch.Checks)(nil)
	_ jobs.Plugin      = (*watch.Notifications)(nil)
)

var pool *pgxpool.Pool

// TestMain starts DynamoDB Local (dynamotest, which gives each test its
// own tables) and PostgreSQL (for the River jobs' tests, each with a River
// schema of its own).
func TestMain(m *testing.M) { jobstest.Main(m, &pool) }

// riverSchema returns a migrated River schema no other test of the run uses.
func riverSchema(t testing.TB, name string) string { return jobstest.Schema(t, pool, name) }

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB { return dynamotest.NewDB(t) }

// testPlan allows five checks, each at most every 100 ms.
func testPlan() *algoitny.Plan {
	return &algoitny.Plan{Name: "Test", MaxChecks: 5, MinCheckDelayMs: 100}
}

// as returns a context signed in as user id with plan.
func as(id string, plan *algoitny.Plan) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: id, Email: id + "@example.com"}, Plan: plan})
}

// asStaff returns a context signed in as a staff user with a plan that
// allows nothing (staff are exempt).
func asStaff(id string) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{
		User: &algoitny.User{ID: id, Email: id + "@example.com", IsStaff: true},
		Plan: &algoitny.Plan{Name: "Nothing", MinCheckDelayMs: 60_000},
	})
}

// target is a local HTTP server whose answer the test sets, counting hits.
type target struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	body   string
	delay  time.Duration
	hits   atomic.Int64
}

func newTarget(t testing.TB) *target {
	t.Helper()
	tg := &target{status: http.StatusOK, body: "<html>Hello</html>"}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		tg.mu.Lock()
		status, body, delay := tg.status, tg.body, tg.delay
		tg.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) set(status int, body string, delay time.Duration) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.status, tg.body, tg.delay = status, body, delay
}

// closedURL returns an http URL on 127.0.0.1 where nothing listens.
func closedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

// loopbackName returns a host name that resolves only to loopback
// addresses: localtest.me where DNS works, else the machine's own name
// (which /etc/hosts usually maps to 127.0.x.1). The test is skipped without one.
func loopbackName(t testing.TB) string {
	t.Helper()
	candidates := []string{"localtest.me"}
	if h, err := os.Hostname(); err == nil && h != "" && !strings.EqualFold(h, "localhost") {
		candidates = append(candidates, h)
	}
	for _, name := range candidates {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		cancel()
		if err != nil || len(addrs) == 0 {
			continue
		}
		loop := true
		for _, a := range addrs {
			ip, err := netip.ParseAddr(a)
			loop = loop && err == nil && ip.IsLoopback()
		}
		if loop {
			return name
		}
	}
	t.Skip("no host name resolves to loopback here (no DNS for localtest.me, hostname not in /etc/hosts)")
	return ""
}

// clock is a settable clock for the executor.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
