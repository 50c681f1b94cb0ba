package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The multi-replica suite: the real binary as two API replicas A and B
// (serve --no-workers) and a worker, over one DynamoDB Local and one
// PostgreSQL database, as a deployment runs. B reaches PostgreSQL through a
// proxy, so its link can be stalled or its connections terminated. Each
// test asserts what a client sees from the other replica right after a
// mutation returned (README, Running several replicas).

// replicaSet is a running deployment of the suite.
type replicaSet struct {
	cfg    Config
	db     *dynamo.DB // a writer on the same tables, announcing like the servers
	a, b   *apiServer
	proxyB *tcpProxy
	pg     *pgxpool.Pool
	admin  string // a staff session (signed in on A)
}

func startReplicas(t *testing.T) *replicaSet {
	t.Helper()
	cfg := testConfig(t)
	rs := &replicaSet{cfg: cfg, db: prepare(t, cfg)}
	rs.proxyB = startProxy(t, pgAddr(t, cfg.DatabaseURL))
	cfgB := cfg
	cfgB.DatabaseURL = viaProxy(t, cfg.DatabaseURL, rs.proxyB)
	rs.a = &apiServer{URL: startProcess(t, env(cfg), "serve", "--no-workers").url(t)}
	rs.b = &apiServer{URL: startProcess(t, env(cfgB), "serve", "--no-workers").url(t)}
	startProcess(t, env(cfg), "worker")
	pool, err := pgxpool.New(context.Background(), cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	rs.pg = pool
	rs.admin = staffOn(t, rs.a, rs.db, "admin@example.com")
	return rs
}

// terminateB ends every PostgreSQL backend serving replica B, as an
// operator's pg_terminate_backend or a failover would.
func (rs *replicaSet) terminateB(t *testing.T) {
	t.Helper()
	ports := rs.proxyB.UpstreamPorts()
	var n int
	err := rs.pg.QueryRow(context.Background(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE client_port = ANY($1) AND pid <> pg_backend_pid()`, ports).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no backend of replica B found (ports %v)", ports)
	}
}

// cached reads q on s as token until s answers it from memory (no DynamoDB
// request, extensions.dynamodbRequests in dev mode), so that what a test
// changes next is in that replica's cache.
func cached(t *testing.T, s *apiServer, token, q string, vars map[string]any) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := s.query(t, token, q, vars)
		if len(r.Errors) != 0 {
			t.Fatalf("%s: %s", q, r.Raw)
		}
		if n, ok := r.Extensions["dynamodbRequests"].(float64); ok && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered from the cache: %s", q, r.Raw)
		}
	}
}

const meQuery = `{ me { email isActive isStaff plan { name maxExecutionsPerDay } } }`

// TestReplicasSecurityState: logout, deactivation, a plan change, a plan's
// lowered limit and an execution made private, each made on one replica,
// are in force on the other as soon as the mutation returned — repeated,
// since a stale window would be milliseconds wide.
func TestReplicasSecurityState(t *testing.T) {
	rs := startReplicas(t)
	a, b := rs.a, rs.b
	rs.a.createProblem(t, rs.admin, "BAEKJOON", "1000", 1, true)

	t.Run("Logout", func(t *testing.T) {
		for i := range 10 {
			token := a.login(t, "logout@example.com")
			cached(t, b, token, meQuery, nil)
			if r := a.query(t, token, `mutation { logout }`, nil); len(r.Errors) != 0 {
				t.Fatalf("logout: %s", r.Raw)
			}
			if r := b.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("trial %d: B accepted a session logged out on A: %s", i, r.Raw)
			}
		}
	})

	t.Run("Deactivation", func(t *testing.T) {
		token := b.login(t, "eve@example.com")
		id := globalIDOf("User", must2(rs.db.GetUserByEmail(context.Background(), "eve@example.com")).ID)
		for i := range 10 {
			cached(t, b, token, meQuery, nil)
			a.query(t, rs.admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": id}).decode(t, new(any))
			if r := b.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("trial %d: B accepted a user deactivated on A: %s", i, r.Raw)
			}
			b.query(t, rs.admin, `mutation($id: ID!) { setUserActive(userId: $id, active: true) { id } }`, map[string]any{"id": id}).decode(t, new(any))
			if r := a.query(t, token, meQuery, nil); len(r.Errors) != 0 {
				t.Fatalf("trial %d: A refused a user reactivated on B: %s", i, r.Raw)
			}
		}
	})

	t.Run("PlanAndLimits", func(t *testing.T) {
		token := b.login(t, "pat@example.com")
		id := globalIDOf("User", must2(rs.db.GetUserByEmail(context.Background(), "pat@example.com")).ID)
		const usage = `{ myUsage { action used limit } }`
		cached(t, b, token, usage, nil)
		a.query(t, rs.admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`, map[string]any{"id": id}).decode(t, new(any))
		if r := b.query(t, token, meQuery, nil); !strings.Contains(string(r.Data), `"Pro"`) {
			t.Fatalf("B right after the plan change on A: %s", r.Raw)
		}
		// Pro's execution limit lowered to 2 on A: B enforces it on the next
		// request.
		cached(t, b, token, usage, nil)
		a.query(t, rs.admin, `mutation { updatePlan(name: "Pro", input: {maxExecutionsPerDay: 2}) { name } }`, nil).decode(t, new(any))
		var out struct {
			MyUsage []struct {
				Action      string
				Used, Limit int
			}
		}
		b.query(t, token, usage, nil).decode(t, &out)
		for _, u := range out.MyUsage {
			if u.Action == "EXECUTION" && u.Limit != 2 {
				t.Fatalf("B right after the limit was lowered to 2 on A shows %+v", out.MyUsage)
			}
		}
		accepted := 0
		for range 5 {
			r := b.query(t, token, executeMutation, executeInput("print(1)", nil))
			switch r.code() {
			case "":
				accepted++
			case "RATE_LIMITED":
			default:
				t.Fatalf("executeCode on B: %s", r.Raw)
			}
		}
		if accepted != 2 {
			t.Fatalf("B accepted %d executions under a limit of 2 lowered on A", accepted)
		}
	})

	t.Run("PrivateCode", func(t *testing.T) {
		owner := a.login(t, "owner@example.com")
		u := must2(rs.db.GetUserByEmail(context.Background(), "owner@example.com"))
		for i := range 10 {
			h := &algoitny.SearchHistory{UserID: u.ID, UserEmail: u.Email, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000",
				ProblemTitle: "Problem 1000", Language: algoitny.LanguagePython, Code: fmt.Sprintf("secret %d", i), IsCodePublic: true,
				Verdict: algoitny.VerdictAccepted, PassedCount: 1, TotalCount: 1}
			if err := rs.db.CreateHistory(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			vars := map[string]any{"id": globalIDOf("SearchHistory", h.UserID, h.ID)}
			const q = `query($id: ID!) { searchHistory(id: $id) { code } }`
			cached(t, b, "", q, vars)
			a.query(t, owner, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { id } }`, vars).decode(t, new(any))
			if r := b.query(t, "", q, vars); strings.Contains(string(r.Raw), "secret") {
				t.Fatalf("trial %d: B served code made private on A to an anonymous caller: %s", i, r.Raw)
			}
		}
	})

	t.Run("QuotaExactAcrossReplicas", func(t *testing.T) {
		token := a.login(t, "busy@example.com") // Free: 10 executions a day
		var wg sync.WaitGroup
		var mu sync.Mutex
		accepted := 0
		for i := range 40 {
			s := []*apiServer{a, b}[i%2]
			wg.Go(func() {
				r := s.query(t, token, executeMutation, executeInput("print(1)", nil))
				if r.code() == "" {
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if accepted != 10 {
			t.Fatalf("%d of 40 concurrent executions accepted over two replicas, want the plan's 10", accepted)
		}
	})

	t.Run("DisplayData", func(t *testing.T) {
		const q = `{ problem(platform: BAEKJOON, problemId: "1000") { title } }`
		cached(t, b, "", q, nil)
		a.query(t, rs.admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "1000", input: {title: "Renamed"}) { title } }`, nil).decode(t, new(any))
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if r := b.query(t, "", q, nil); strings.Contains(string(r.Data), "Renamed") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("B never showed the title changed on A")
			}
		}
	})
}

// TestReplicasDatabaseConnectionsTerminated: B's PostgreSQL backends are
// terminated (its change feed breaks): B serves nothing from its cache
// until it is sure again, so changes made on A meanwhile are in force on B
// at once, and what B itself changes is either refused or in force on A.
func TestReplicasDatabaseConnectionsTerminated(t *testing.T) {
	rs := startReplicas(t)
	a, b := rs.a, rs.b
	for i := range 5 {
		onA := a.login(t, fmt.Sprintf("a%d@example.com", i))
		onB := b.login(t, fmt.Sprintf("b%d@example.com", i))
		cached(t, b, onA, meQuery, nil)
		cached(t, a, onB, meQuery, nil)
		rs.terminateB(t)
		if r := a.query(t, onA, `mutation { logout }`, nil); len(r.Errors) != 0 {
			t.Fatalf("logout on A: %s", r.Raw)
		}
		if r := b.query(t, onA, meQuery, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("trial %d: B, its connections just terminated, accepted a session logged out on A: %s", i, r.Raw)
		}
		r := b.query(t, onB, `mutation { logout }`, nil)
		switch r.code() {
		case "": // the announcement went out: A must not accept the session
			if r := a.query(t, onB, meQuery, nil); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("trial %d: A accepted a session logged out on B: %s", i, r.Raw)
			}
		case "UNAVAILABLE": // refused, nothing written: the session still works
			if r := a.query(t, onB, meQuery, nil); len(r.Errors) != 0 {
				t.Fatalf("trial %d: a logout B refused took effect on A: %s", i, r.Raw)
			}
		default:
			t.Fatalf("trial %d: logout on B: %s", i, r.Raw)
		}
	}
	// B recovers: its cache serves again.
	token := a.login(t, "after@example.com")
	cached(t, b, token, meQuery, nil)
}

// TestReplicasStalledLink: B's link to PostgreSQL stops forwarding without
// closing. Changes made on A return (after waiting at most the bound for
// B) and B does not act on the old values; B's own changes are refused
// (UNAVAILABLE) and leave nothing written. When the link is back, B serves
// from its cache again.
func TestReplicasStalledLink(t *testing.T) {
	rs := startReplicas(t)
	a, b := rs.a, rs.b
	var tokens []string
	for i := range 4 {
		token := a.login(t, fmt.Sprintf("s%d@example.com", i))
		cached(t, b, token, meQuery, nil)
		tokens = append(tokens, token)
	}
	victim := b.login(t, "victim@example.com")
	cached(t, b, victim, meQuery, nil)
	cached(t, a, victim, meQuery, nil)
	rs.proxyB.Stall()
	defer rs.proxyB.Resume()
	for i, token := range tokens {
		if r := a.query(t, token, `mutation { logout }`, nil); len(r.Errors) != 0 {
			t.Fatalf("logout on A while B is cut off: %s", r.Raw)
		}
		if r := b.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("trial %d: B, cut off from PostgreSQL, accepted a session logged out on A: %s", i, r.Raw)
		}
	}
	if r := b.query(t, victim, `mutation { logout }`, nil); r.code() != "UNAVAILABLE" {
		t.Fatalf("logout on B while it cannot reach PostgreSQL: %s (want UNAVAILABLE)", r.Raw)
	}
	if r := a.query(t, victim, meQuery, nil); len(r.Errors) != 0 {
		t.Fatalf("a logout refused on B took effect: %s", r.Raw)
	}
	rs.proxyB.Resume()
	cached(t, b, victim, meQuery, nil)
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
