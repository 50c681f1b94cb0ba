package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// TestQuotaExactThroughDynamoCut: the server reaches DynamoDB through a
// proxy that is cut twice under executeCode load from several users — once
// right after DynamoDB applied a charge, before its answer is delivered,
// and once right after a charge's answer was delivered — and stays down
// for seconds each time. Afterwards (the proxy back, the reaper run once)
// each user's counter, usage logs and charged jobs agree, every usage log
// names its own job, every job the API returned exists, and every job is
// queued exactly once in River.
func TestQuotaExactThroughDynamoCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
	dyn := startFaultProxy(t, hostPort(t, dynamoEndpoint), true)
	s := startAPI(t, func(c *Config) {
		c.Dynamo.Endpoint = "http://" + dyn.Addr()
		c.Dynamo.MaxAttempts = 3
		c.JobStaleAfter = time.Millisecond // the test runs the reaper itself
	})
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
	const users, limit = 6, 10 // the Free plan's executions per day
	tokens := make([]string, users)
	for i := range tokens {
		tokens[i] = s.login(t, fmt.Sprintf("cut%d@example.com", i))
	}

	// The answer of the 4th charge is lost: DynamoDB applied it.
	lost := dyn.Arm(cut{match: isCharge, skip: 3, before: dyn.Down, lose: true})
	var mu sync.Mutex
	returned := map[string]bool{} // job ids the API answered with
	failed := 0                   // requests answered with another error than RATE_LIMITED
	var wg sync.WaitGroup
	for i, token := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 60; n++ {
				var out struct{ ExecuteCode struct{ ID string } }
				r := s.query(t, token, executeMutation, executeInput(fmt.Sprint("print(", i, n, ")"), nil))
				code := r.code()
				mu.Lock()
				switch code {
				case "":
					r.decode(t, &out)
					id, _ := parseGlobalID(out.ExecuteCode.ID)
					returned[id] = true
				case "RATE_LIMITED":
				default:
					failed++
				}
				mu.Unlock()
				if code == "RATE_LIMITED" {
					return
				}
				time.Sleep(150 * time.Millisecond)
			}
		}()
	}
	waitFired(t, lost)
	// Longer than the write's retries (3 attempts, backoff up to 2 s) and
	// the read that settles it (2 s): that request fails, its job unqueued.
	time.Sleep(8 * time.Second)
	dyn.Up()
	// Then DynamoDB goes away right after a charge's answer was delivered.
	delivered := dyn.Arm(cut{match: isCharge, skip: 2, after: dyn.Down})
	waitFired(t, delivered)
	time.Sleep(5 * time.Second)
	dyn.Up()
	wg.Wait()
	if failed == 0 {
		t.Fatal("no request failed: the cuts did not hit the load")
	}

	repaired, err := s.Jobs.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The job of the lost answer at least was left unqueued for the reaper.
	if repaired < 1 {
		t.Fatalf("the reaper repaired %d jobs", repaired)
	}
	total := 0
	for i := range tokens {
		u := s.user(t, fmt.Sprintf("cut%d@example.com", i))
		jobs, perDay := checkCharged(t, s, u.ID, algoitny.ActionExecution, start)
		for day, n := range perDay {
			if n > limit {
				t.Fatalf("user %d has %d charged jobs on %s; the limit is %d", i, n, day, limit)
			}
		}
		for _, j := range jobs {
			checkQueued(t, s, j)
			delete(returned, j.ID)
		}
		total += len(jobs)
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(returned) > 0 {
		t.Fatalf("the API returned jobs that do not exist: %v", returned)
	}
	checkRiverJobsUnique(t, s)
	t.Logf("%d jobs charged, %d requests failed during the cuts, %d jobs repaired by the reaper", total, failed, repaired)
}

// TestQuotaKeptThroughPostgresCut: PostgreSQL goes away right after a
// charge was written (executeCode, then generateHints), so the River insert
// fails. The job is kept with its charge and returned; once PostgreSQL is
// back the reaper queues it, once, and the use stays spent exactly once.
func TestQuotaKeptThroughPostgresCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
	dyn := startFaultProxy(t, hostPort(t, dynamoEndpoint), true)
	pg := startFaultProxy(t, pgAddr(t, databaseURL), false)
	s := startAPI(t, func(c *Config) {
		c.Dynamo.Endpoint = "http://" + dyn.Addr()
		c.DatabaseURL = withHost(t, databaseURL, pg.Addr())
		c.JobStaleAfter = time.Millisecond
	})
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
	alice := s.login(t, "alice@example.com")
	u := s.user(t, "alice@example.com")
	h := s.seedHistory(t, u, "1000", false)

	for _, op := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"executeCode", executeMutation, executeInput("print(1)", nil)},
		{"generateHints", `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": globalIDOf("SearchHistory", h.UserID, h.ID)}},
	} {
		c := dyn.Arm(cut{match: isCharge, before: pg.Down})
		r := s.query(t, alice, op.query, op.vars)
		waitFired(t, c)
		pg.Up()
		waitPostgres(t, s)
		if len(r.Errors) > 0 {
			t.Fatalf("%s with PostgreSQL cut after the charge: %s", op.name, r.Raw)
		}
	}
	if n, err := s.Jobs.Reap(ctx); err != nil || n != 2 {
		t.Fatalf("the reaper repaired %d jobs (%v), want 2", n, err)
	}
	for _, action := range []algoitny.UsageAction{algoitny.ActionExecution, algoitny.ActionHint} {
		jobs, _ := checkCharged(t, s, u.ID, action, start)
		if t.Failed() || len(jobs) != 1 {
			t.Fatalf("%d jobs charged for %s, want 1", len(jobs), action)
		}
		checkQueued(t, s, jobs[0])
	}
	// A second sweep changes nothing.
	if n, err := s.Jobs.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep repaired %d (%v)", n, err)
	}
	checkRiverJobsUnique(t, s)
}

// checkCharged fails the test (and lets it go on, to show every user that
// differs) unless userID's counters of action on the quota days since
// start, their usage logs of it on those days and their jobs of the
// action's type agree, each log naming a distinct one of those jobs. It
// returns the jobs and the uses charged on each day: a test that runs over
// midnight UTC charges on two days, each with its own limit.
func checkCharged(t *testing.T, s *apiServer, userID string, action algoitny.UsageAction, start time.Time) ([]*algoitny.Job, map[string]int) {
	t.Helper()
	ctx := algoitny.WithFreshReads(context.Background())
	now := time.Now()
	fromDay, toDay := algoitny.UsageDay(start), algoitny.UsageDay(now)
	counted := 0
	for d := start; algoitny.UsageDay(d) <= toDay; d = algoitny.NextReset(d) {
		counts, err := s.DB.UsageCounts(ctx, userID, algoitny.UsageDay(d))
		if err != nil {
			t.Fatal(err)
		}
		counted += counts[action]
	}
	logs, err := s.DB.ListUsageLogs(ctx, userID, fromDay, toDay, algoitny.PageRequest{First: algoitny.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	typ := algoitny.JobCodeExecution
	if action == algoitny.ActionHint {
		typ = algoitny.JobHintGeneration
	}
	page, err := s.DB.ListJobs(ctx, algoitny.JobFilter{UserID: userID, Type: &typ}, algoitny.PageRequest{First: algoitny.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]*algoitny.Job{}
	for _, j := range page.Items {
		jobs[j.ID] = j
	}
	var ofAction []*algoitny.UsageLog
	perDay := map[string]int{}
	for _, l := range logs.Items {
		if l.Action == action {
			ofAction = append(ofAction, l)
			perDay[algoitny.UsageDay(l.CreatedAt)]++
		}
	}
	if counted != len(ofAction) || len(ofAction) != len(jobs) {
		t.Errorf("user %s: %s counters %d (%s to %s), %d usage logs, %d jobs", userID, action, counted, fromDay, toDay, len(ofAction), len(jobs))
		return page.Items, perDay
	}
	paid := map[string]bool{}
	for _, l := range ofAction {
		if jobs[l.JobID] == nil || paid[l.JobID] {
			t.Errorf("user %s: usage log %s names job %q, not one of theirs paid once", userID, l.ID, l.JobID)
			break
		}
		paid[l.JobID] = true
	}
	return page.Items, perDay
}

// checkQueued fails the test unless j is final, or PENDING and linked to a
// live River job of its own.
func checkQueued(t *testing.T, s *apiServer, j *algoitny.Job) {
	t.Helper()
	if j.Status.Final() {
		return
	}
	if j.Status != algoitny.JobPending || j.RiverJobID == 0 {
		t.Fatalf("job %s is %s, River job %d: neither final nor queued", j.ID, j.Status, j.RiverJobID)
	}
	row, err := s.Jobs.Client().JobGet(context.Background(), j.RiverJobID)
	if err != nil {
		t.Fatalf("job %s: River job %d: %v", j.ID, j.RiverJobID, err)
	}
	if row.State != rivertype.JobStateAvailable || !strings.Contains(string(row.EncodedArgs), j.ID) {
		t.Fatalf("job %s: River job %d is %s with %s", j.ID, row.ID, row.State, row.EncodedArgs)
	}
}

// checkRiverJobsUnique fails the test if a Job record has two River jobs.
func checkRiverJobsUnique(t *testing.T, s *apiServer) {
	t.Helper()
	res, err := s.Jobs.Client().JobList(context.Background(), river.NewJobListParams().First(10000))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, row := range res.Jobs {
		if row.Kind == "reap_stale_jobs" {
			continue
		}
		args := string(row.EncodedArgs)
		if other, dup := seen[args]; dup {
			t.Fatalf("River jobs %d and %d have the same args %s", other, row.ID, args)
		}
		seen[args] = row.ID
	}
}

// waitPostgres waits until the server's pool has dropped the connections
// the cut closed (pgxpool checks a connection idle for a second before
// handing it out) and reaches PostgreSQL again.
func waitPostgres(t *testing.T, s *apiServer) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	var err error
	if !algoitnytest.PollEvery(context.Background(), 20*time.Second, 100*time.Millisecond, func() bool {
		err = s.Pool.Ping(context.Background())
		return err == nil
	}) {
		t.Fatalf("PostgreSQL is not back: %v", err)
	}
}

// isCharge reports whether a DynamoDB request body writes a usage log: a
// charge of the quota.
func isCharge(body []byte) bool { return bytes.Contains(body, []byte(`{"S":"UsageLog"}`)) }

func waitFired(t *testing.T, c *cut) {
	t.Helper()
	select {
	case <-c.fired:
	case <-time.After(60 * time.Second):
		t.Fatal("the cut never happened")
	}
}

// withHost returns the URL u with its host:port replaced by addr.
func withHost(t testing.TB, u, addr string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.Host = addr
	return parsed.String()
}

// hostPort returns the host:port of an http URL.
func hostPort(t testing.TB, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Host
}

// cut says where a faultProxy cuts the link: at the (skip+1)th
// TransactWriteItems that match accepts, once DynamoDB has answered it.
type cut struct {
	match func(body []byte) bool
	skip  int
	// before runs before the answer is delivered, after it; lose drops the
	// answer (the server's connection is closed instead).
	before, after func()
	lose          bool
	// fired is closed once the cut has happened.
	fired chan struct{}
}

// faultProxy forwards TCP connections to a target and can be taken down
// (its listener closed and every connection cut, as a dead network link
// looks) and up again on the same address. With http it reads the
// requests and answers of DynamoDB's HTTP protocol whole (one at a time
// per connection) so that an armed cut hits a chosen write.
type faultProxy struct {
	t      testing.TB
	target string
	addr   string
	http   bool

	mu    sync.Mutex
	ln    net.Listener // nil while down
	conns map[net.Conn]bool
	armed *cut
}

// startFaultProxy listens on 127.0.0.1 and forwards to target until the test ends.
func startFaultProxy(t testing.TB, target string, http bool) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{t: t, target: target, addr: ln.Addr().String(), http: http, ln: ln, conns: map[net.Conn]bool{}}
	go p.serve(ln)
	t.Cleanup(p.Down)
	return p
}

// Addr is the proxy's address.
func (p *faultProxy) Addr() string { return p.addr }

// Arm makes c the next cut.
func (p *faultProxy) Arm(c cut) *cut {
	c.fired = make(chan struct{})
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = &c
	return &c
}

// Down closes the listener and every connection.
func (p *faultProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Up listens again on the same address.
func (p *faultProxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return
	}
	var ln net.Listener
	var err error
	for range 50 { // the port may take a moment to be free again
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Errorf("proxy up: %v", err)
		return
	}
	p.ln = ln
	go p.serve(ln)
}

func (p *faultProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// track remembers conns to cut them on Down; false (and closed) when down.
func (p *faultProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *faultProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *faultProxy) handle(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	if !p.http {
		go func() { _, _ = io.Copy(up, c); p.untrack(c, up) }()
		_, _ = io.Copy(c, up)
		return
	}
	p.relay(c, up)
}

// relay forwards HTTP requests from c to up and their answers back,
// applying an armed cut to the TransactWriteItems it matches.
func (p *faultProxy) relay(c, up net.Conn) {
	cr, ur := bufio.NewReader(c), bufio.NewReader(up)
	for {
		req, err := http.ReadRequest(cr)
		if err != nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err := req.Write(up); err != nil {
			return
		}
		resp, err := http.ReadResponse(ur, req)
		if err != nil {
			return
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return
		}
		ct := p.take(req, body)
		if ct != nil && ct.before != nil {
			ct.before()
		}
		if ct != nil && ct.lose {
			close(ct.fired)
			return
		}
		resp.Body = io.NopCloser(bytes.NewReader(answer))
		werr := resp.Write(c)
		if ct != nil {
			if ct.after != nil {
				ct.after()
			}
			close(ct.fired)
		}
		if werr != nil {
			return
		}
	}
}

// take returns the armed cut if this request is the one it waits for.
func (p *faultProxy) take(req *http.Request, body []byte) *cut {
	if !strings.HasSuffix(req.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.armed
	if c == nil || !c.match(body) {
		return nil
	}
	if c.skip > 0 {
		c.skip--
		return nil
	}
	p.armed = nil
	return c
}
