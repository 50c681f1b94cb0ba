package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The multi-replica suite: the real binary as two API replicas A and B
// (serve --no-workers) and a worker, over one DynamoDB Local and one
// PostgreSQL database, as a deployment runs. B reaches PostgreSQL through a
// proxy, so its link can be stalled or its connections terminated. Each
// test asserts what a client sees from the other replica right after a
// mutation returned (docs/data.md, Running several replicas).

// replicaSet is a running deployment of the suite.
type replicaSet struct {
	cfg    Config
	db     *dynamo.DB // a writer on the same tables
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
	// B's connections come and go (its pool opens them on demand, a
	// loaded machine reconnects late): ended once at least one is seen.
	var ports []int
	algoitnytest.EventuallyEvery(t, 30*time.Second, 50*time.Millisecond, "a backend of replica B to end", func() bool {
		ports = rs.proxyB.UpstreamPorts()
		var n int
		err := rs.pg.QueryRow(context.Background(),
			`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE client_port = ANY($1) AND pid <> pg_backend_pid()`, ports).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}

// seen reads q on s as token once, successfully: s has acted on the value
// that a test changes next (security state is read from DynamoDB on every
// request, so nothing of it stays behind in a replica).
func seen(t *testing.T, s *apiServer, token, q string, vars map[string]any) {
	t.Helper()
	if r := s.query(t, token, q, vars); len(r.Errors) != 0 {
		t.Fatalf("%s: %s", q, r.Raw)
	}
}

// cached reads q (display data) on s as token until s answers it from
// memory (no DynamoDB request, extensions.dynamodbRequests in dev mode), so
// that what a test changes next is in that replica's cache.
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

// replicaLatency is the latency of B's link to PostgreSQL in
// testReplicasSecurityState (a replica in another zone): nothing B decides
// on may depend on that link.
const replicaLatency = 50 * time.Millisecond

// pollMargin is what freshWithin allows beyond the display bound for the
// client's own poll (see there).
const pollMargin = 100 * time.Millisecond

// freshWithin reads q on s as token until fresh accepts the answer: display
// data changed by a mutation that returned at returned may be stale for at
// most the bound (ALGOITNY_CACHE_BOUND). That is a correctness bound of the
// design (a replica keeps what it read at most the bound after the read
// began), not a speed target. A read sent later than the
// bound plus pollMargin after returned that is still stale fails the test;
// the margin is for the client's own poll. Reads are judged by when they
// were sent, so a slow answer does not count against the replica.
func (rs *replicaSet) freshWithin(t *testing.T, s *apiServer, token, q string, vars map[string]any, returned time.Time, what string, fresh func(*gqlResult) bool) {
	t.Helper()
	deadline := returned.Add(rs.cfg.CacheBound + pollMargin)
	for {
		sent := time.Now()
		r := s.query(t, token, q, vars)
		if len(r.Errors) != 0 {
			t.Fatalf("%s: %s", what, r.Raw)
		}
		if fresh(r) {
			t.Logf("%s: shown %v after the mutation returned", what, sent.Sub(returned).Round(time.Millisecond))
			return
		}
		if sent.After(deadline) {
			t.Fatalf("%s: still stale in a read sent %v after the mutation returned (bound %v + %v for the poll): %s",
				what, sent.Sub(returned).Round(time.Millisecond), rs.cfg.CacheBound, pollMargin, r.Raw)
		}
		time.Sleep(10 * time.Millisecond) // the poll's interval
	}
}

// mustOK fails the test unless r has no errors.
func mustOK(t *testing.T, what string, r *gqlResult) *gqlResult {
	t.Helper()
	if len(r.Errors) != 0 {
		t.Fatalf("%s: %s", what, r.Raw)
	}
	return r
}

// userID is the global id of the user of email.
func (rs *replicaSet) userID(email string) string {
	return globalIDOf("User", must2(rs.db.GetUserByEmail(context.Background(), email)).ID)
}

// adminCommand runs `algoitny admin grant|revoke email` as an operator
// would, against the suite's tables: the only way to change a
// user's staff flag (the API has none).
func (rs *replicaSet) adminCommand(t *testing.T, grant bool, email string) {
	t.Helper()
	verb := map[bool]string{true: "grant", false: "revoke"}[grant]
	cmd := exec.Command(binary(t), "admin", verb, email)
	cmd.Env = env(rs.cfg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("algoitny admin %s %s: %v\n%s", verb, email, err, out)
	}
}

const (
	problemQuery  = `query($id: String!) { problem(platform: BAEKJOON, problemId: $id) { title testCases { totalCount } } }`
	renameProblem = `mutation($id: String!, $title: String!) { updateProblem(platform: BAEKJOON, problemId: $id, input: {title: $title}) { title } }`
)

// testReplicasSecurityState: logout, deactivation, a plan change, a plan's
// lowered limit, a staff flag and an execution made private, each changed
// on one replica (or by the command line), are in force on the other as
// soon as the mutation returned — repeated, since a stale window would be
// milliseconds wide. B's link to PostgreSQL is slow (replicaLatency): what
// B decides on does not travel through it.
func testReplicasSecurityState(t *testing.T) {
	rs := startReplicas(t)
	rs.proxyB.SetLatency(replicaLatency)
	a, b := rs.a, rs.b
	rs.a.createProblem(t, rs.admin, "BAEKJOON", "1000", 1, true)
	// A plan of the test's own, whose limit PlanLimit lowers.
	mustOK(t, "createPlan", a.query(t, rs.admin, `mutation { createPlan(input: {name: "Trial", maxHintsPerDay: 1, maxExecutionsPerDay: 100, maxProblems: 0, canViewAllProblems: false, canRegisterProblems: false}) { name } }`, nil))

	t.Run("Logout", func(t *testing.T) {
		for i := range 10 {
			token := a.login(t, "logout@example.com")
			seen(t, b, token, meQuery, nil)
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
		id := rs.userID("eve@example.com")
		for i := range 10 {
			seen(t, b, token, meQuery, nil)
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

	t.Run("Plan", func(t *testing.T) {
		token := b.login(t, "pat@example.com")
		id := rs.userID("pat@example.com")
		// The user's plan, changed on A, is B's on the next request.
		for i := range 10 {
			plan := []string{"Trial", "Free"}[i%2]
			seen(t, b, token, meQuery, nil)
			mustOK(t, "setUserPlan", a.query(t, rs.admin, `mutation($id: ID!, $plan: String!) { setUserPlan(userId: $id, plan: $plan) { id } }`, map[string]any{"id": id, "plan": plan}))
			var me struct {
				Me struct{ Plan struct{ Name string } }
			}
			b.query(t, token, meQuery, nil).decode(t, &me)
			if me.Me.Plan.Name != plan {
				t.Fatalf("trial %d: B right after the user was moved to %s on A shows plan %q", i, plan, me.Me.Plan.Name)
			}
		}
	})

	t.Run("PlanLimit", func(t *testing.T) {
		token := b.login(t, "lim@example.com")
		mustOK(t, "setUserPlan", a.query(t, rs.admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Trial") { id } }`, map[string]any{"id": rs.userID("lim@example.com")}))
		// One execution used; each trial lowers the limit from 100 to that
		// one on A, and B refuses the next execution: it charges with the
		// limit in force, not the one it read before.
		mustOK(t, "executeCode", b.query(t, token, executeMutation, executeInput("print(1)", nil)))
		setLimit := func(n int) {
			t.Helper()
			mustOK(t, "updatePlan", a.query(t, rs.admin, `mutation($n: Int!) { updatePlan(name: "Trial", input: {maxExecutionsPerDay: $n}) { name } }`, map[string]any{"n": n}))
		}
		for i := range 10 {
			setLimit(100)
			seen(t, b, token, meQuery, nil)
			setLimit(1)
			if r := b.query(t, token, executeMutation, executeInput("print(1)", nil)); r.code() != "RATE_LIMITED" {
				t.Fatalf("trial %d: B, right after the limit was lowered to the 1 execution used on A: %s (want RATE_LIMITED)", i, r.Raw)
			}
		}
		var out struct {
			MyUsage []struct {
				Action      string
				Used, Limit int
			}
		}
		b.query(t, token, `{ myUsage { action used limit } }`, nil).decode(t, &out)
		for _, u := range out.MyUsage {
			if u.Action == "EXECUTION" && (u.Used != 1 || u.Limit != 1) {
				t.Fatalf("B shows %+v, want 1 execution used of a limit of 1", out.MyUsage)
			}
		}
	})

	t.Run("StaffFlag", func(t *testing.T) {
		// Granted and revoked by the command line (a third process, as an
		// operator does it): B shows the flag, and lets the user use staff
		// rights, as soon as the command returned.
		token := b.login(t, "sam@example.com")
		const q = `{ me { isStaff } usageStats { totalExecutions } }`
		for i := range 6 {
			grant := i%2 == 0
			seen(t, b, token, meQuery, nil)
			rs.adminCommand(t, grant, "sam@example.com")
			r := b.query(t, token, q, nil)
			switch {
			case grant && (len(r.Errors) != 0 || !strings.Contains(string(r.Data), `"isStaff":true`)):
				t.Fatalf("trial %d: B right after staff rights were granted: %s", i, r.Raw)
			case !grant && r.code() != "FORBIDDEN":
				t.Fatalf("trial %d: B right after staff rights were revoked: %s (want FORBIDDEN)", i, r.Raw)
			}
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
			seen(t, b, "", q, vars)
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

	// Display data: a problem's title and its test-case list, changed on A,
	// are on B within the bound of the mutation's return.
	a.createProblem(t, rs.admin, "BAEKJOON", "1001", 1, true)
	vars := map[string]any{"id": "1001"}
	type problem struct {
		Problem struct {
			Title     string
			TestCases struct{ TotalCount int }
		}
	}
	t.Run("ProblemTitle", func(t *testing.T) {
		for i := range 5 {
			title := fmt.Sprintf("Renamed %d", i)
			cached(t, b, "", problemQuery, vars)
			mustOK(t, "updateProblem", a.query(t, rs.admin, renameProblem, map[string]any{"id": "1001", "title": title}))
			rs.freshWithin(t, b, "", problemQuery, vars, time.Now(), fmt.Sprintf("trial %d: B's title after it was changed on A", i), func(r *gqlResult) bool {
				var p problem
				r.decode(t, &p)
				return p.Problem.Title == title
			})
		}
	})
	t.Run("TestCaseList", func(t *testing.T) {
		var p problem
		b.query(t, "", problemQuery, vars).decode(t, &p)
		for i := range 5 {
			want := p.Problem.TestCases.TotalCount + 1
			cached(t, b, "", problemQuery, vars)
			mustOK(t, "addTestCases", a.query(t, rs.admin, `mutation { addTestCases(platform: BAEKJOON, problemId: "1001", testCases: [{input: "1 1\n", output: "2\n"}]) { id } }`, nil))
			rs.freshWithin(t, b, "", problemQuery, vars, time.Now(), fmt.Sprintf("trial %d: B's test-case count after a test case was added on A", i), func(r *gqlResult) bool {
				r.decode(t, &p)
				return p.Problem.TestCases.TotalCount == want
			})
		}
	})
}

// A fault of B's link to PostgreSQL, for faultProbes.
type fault int

const (
	terminated fault = iota // B's connections terminated (pg_terminate_backend)
	stalled                 // B's link stops forwarding without closing
)

// probe is one guarantee checked across a fault of B's link: arm, run
// before the fault, puts the value the check changes in the cache of the
// replica that must not act on it any more, and returns the check, run
// once the fault is on: a mutation on one replica, then what the other
// does right after it returned.
type probe struct {
	name string
	arm  func(t *testing.T, trial int) (check func(t *testing.T))
}

// faultProbes returns the probes of every guarantee for fault f, with the
// state they share set up.
func (rs *replicaSet) faultProbes(t *testing.T, f fault) []probe {
	a, b := rs.a, rs.b
	a.createProblem(t, rs.admin, "BAEKJOON", "1000", 1, true) // executions
	a.createProblem(t, rs.admin, "BAEKJOON", "1001", 1, true) // renamed on A
	a.createProblem(t, rs.admin, "BAEKJOON", "1002", 1, true) // renamed on B
	mustOK(t, "createPlan", a.query(t, rs.admin, `mutation { createPlan(input: {name: "Faulty", maxHintsPerDay: 1, maxExecutionsPerDay: 100, maxProblems: 0, canViewAllProblems: false, canRegisterProblems: false}) { name } }`, nil))
	limited := b.login(t, "limited@example.com")
	mustOK(t, "setUserPlan", a.query(t, rs.admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Faulty") { id } }`, map[string]any{"id": rs.userID("limited@example.com")}))
	setLimit := func(t *testing.T, n int) {
		t.Helper()
		mustOK(t, "updatePlan", a.query(t, rs.admin, `mutation($n: Int!) { updatePlan(name: "Faulty", input: {maxExecutionsPerDay: $n}) { name } }`, map[string]any{"n": n}))
	}
	owner := a.login(t, "owner@example.com")
	ownerUser := must2(rs.db.GetUserByEmail(context.Background(), "owner@example.com"))
	const historyQuery = `query($id: ID!) { searchHistory(id: $id) { code } }`
	title := func(r *gqlResult) string {
		var p struct{ Problem struct{ Title string } }
		if err := json.Unmarshal(r.Data, &p); err != nil {
			t.Fatalf("data %s: %v", r.Data, err)
		}
		return p.Problem.Title
	}

	return []probe{
		{"LogoutOnA", func(t *testing.T, i int) func(*testing.T) {
			token := a.login(t, fmt.Sprintf("a%d@example.com", i))
			seen(t, b, token, meQuery, nil)
			return func(t *testing.T) {
				mustOK(t, "logout on A", a.query(t, token, `mutation { logout }`, nil))
				if r := b.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
					t.Fatalf("B, its link broken, accepted a session logged out on A: %s", r.Raw)
				}
			}
		}},
		{"DeactivationOnA", func(t *testing.T, i int) func(*testing.T) {
			email := fmt.Sprintf("d%d@example.com", i)
			token := b.login(t, email)
			id := rs.userID(email)
			seen(t, b, token, meQuery, nil)
			return func(t *testing.T) {
				mustOK(t, "setUserActive on A", a.query(t, rs.admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": id}))
				if r := b.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
					t.Fatalf("B, its link broken, accepted a user deactivated on A: %s", r.Raw)
				}
			}
		}},
		{"LimitLoweredOnA", func(t *testing.T, i int) func(*testing.T) {
			setLimit(t, 100)
			seen(t, b, limited, meQuery, nil)
			return func(t *testing.T) {
				// Lowered to 0: B with the new limit refuses before
				// writing anything; with the old one it would charge.
				setLimit(t, 0)
				if r := b.query(t, limited, executeMutation, executeInput("print(1)", nil)); r.code() != "RATE_LIMITED" {
					t.Fatalf("B, its link broken, right after the execution limit was lowered to 0 on A: %s (want RATE_LIMITED)", r.Raw)
				}
			}
		}},
		{"PrivateOnA", func(t *testing.T, i int) func(*testing.T) {
			h := &algoitny.SearchHistory{UserID: ownerUser.ID, UserEmail: ownerUser.Email, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000",
				ProblemTitle: "Problem 1000", Language: algoitny.LanguagePython, Code: fmt.Sprintf("secret %d", i), IsCodePublic: true,
				Verdict: algoitny.VerdictAccepted, PassedCount: 1, TotalCount: 1}
			if err := rs.db.CreateHistory(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			vars := map[string]any{"id": globalIDOf("SearchHistory", h.UserID, h.ID)}
			seen(t, b, "", historyQuery, vars)
			return func(t *testing.T) {
				mustOK(t, "setHistoryVisibility on A", a.query(t, owner, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { id } }`, vars))
				if r := b.query(t, "", historyQuery, vars); strings.Contains(string(r.Raw), "secret") {
					t.Fatalf("B, its link broken, served code made private on A to an anonymous caller: %s", r.Raw)
				}
			}
		}},
		{"RenamedOnA", func(t *testing.T, i int) func(*testing.T) {
			vars := map[string]any{"id": "1001"}
			cached(t, b, "", problemQuery, vars)
			return func(t *testing.T) {
				// Display data: on B within the bound.
				want := fmt.Sprintf("Renamed on A %d", i)
				mustOK(t, "updateProblem on A", a.query(t, rs.admin, renameProblem, map[string]any{"id": "1001", "title": want}))
				rs.freshWithin(t, b, "", problemQuery, vars, time.Now(), "B's title after it was changed on A", func(r *gqlResult) bool { return title(r) == want })
			}
		}},
		{"LogoutOnB", func(t *testing.T, i int) func(*testing.T) {
			token := b.login(t, fmt.Sprintf("b%d@example.com", i))
			seen(t, a, token, meQuery, nil)
			return func(t *testing.T) {
				// B's writes need DynamoDB only: the logout is made,
				// and A refuses the session at once.
				mustOK(t, "logout on B", b.query(t, token, `mutation { logout }`, nil))
				if r := a.query(t, token, meQuery, nil); r.code() != "UNAUTHENTICATED" {
					t.Fatalf("A accepted a session logged out on B: %s", r.Raw)
				}
			}
		}},
		{"RenamedOnB", func(t *testing.T, i int) func(*testing.T) {
			vars := map[string]any{"id": "1002"}
			cached(t, a, "", problemQuery, vars)
			return func(t *testing.T) {
				want := fmt.Sprintf("Renamed on B %d", i)
				mustOK(t, "updateProblem on B", b.query(t, rs.admin, renameProblem, map[string]any{"id": "1002", "title": want}))
				rs.freshWithin(t, a, "", problemQuery, vars, time.Now(), "A's title after it was changed on B", func(r *gqlResult) bool { return title(r) == want })
			}
		}},
	}
}

// runFaultTrial arms every probe, puts the fault on with start, and runs
// the checks at once, each a subtest on a goroutine of its own (t.Parallel
// would run only GOMAXPROCS of them at a time), so that every mutation
// falls in the first moments of the fault.
func runFaultTrial(t *testing.T, trial int, probes []probe, start func(*testing.T)) {
	checks := make([]func(*testing.T), len(probes))
	for i, p := range probes {
		checks[i] = p.arm(t, trial)
	}
	start(t)
	t.Run(fmt.Sprintf("Trial%d", trial), func(t *testing.T) {
		var wg sync.WaitGroup
		for i, p := range probes {
			wg.Go(func() { t.Run(p.name, checks[i]) })
		}
		wg.Wait()
	})
}

// testReplicasDatabaseConnectionsTerminated: B's PostgreSQL backends are
// terminated: a logout, a deactivation, a lowered plan limit, code made
// private and a renamed problem, changed on A meanwhile, are in force on B
// at once (the rename within the bound); what B itself changes is made and
// in force on A.
func testReplicasDatabaseConnectionsTerminated(t *testing.T) {
	rs := startReplicas(t)
	probes := rs.faultProbes(t, terminated)
	for i := range 5 {
		runFaultTrial(t, i, probes, rs.terminateB)
	}
	token := rs.a.login(t, "after@example.com")
	seen(t, rs.b, token, meQuery, nil)
}

// testReplicasStalledLink: B's link to PostgreSQL stops forwarding without
// closing. Changes made on A return and B does not act on the old values
// (display data within the bound); B's own changes are made and in force
// on A (display data within the bound).
func testReplicasStalledLink(t *testing.T) {
	rs := startReplicas(t)
	probes := rs.faultProbes(t, stalled)
	defer rs.proxyB.Resume()
	for i := range 3 {
		runFaultTrial(t, i, probes, func(*testing.T) { rs.proxyB.Stall() })
		rs.proxyB.Resume()
	}
	token := rs.a.login(t, "after@example.com")
	seen(t, rs.b, token, meQuery, nil)
}

// testReplicasPostgresCut: B's link to PostgreSQL is down for good. B still
// signs users in, logs them out and updates problems — its writes go to
// DynamoDB only — and a token logged out on B is refused on every
// replica; A's own changes are in force on B.
func testReplicasPostgresCut(t *testing.T) {
	rs := startReplicas(t)
	a, b := rs.a, rs.b
	a.createProblem(t, rs.admin, "BAEKJOON", "1000", 1, true)
	vars := map[string]any{"id": "1000"}
	before := b.login(t, "before@example.com")
	rs.proxyB.Sever()

	token := b.login(t, "cut@example.com") // a sign-in (a new user) on B
	seen(t, a, token, meQuery, nil)
	seen(t, b, token, meQuery, nil)
	for _, tok := range []string{token, before} {
		mustOK(t, "logout on B", b.query(t, tok, `mutation { logout }`, nil))
		for name, s := range map[string]*apiServer{"A": a, "B": b} {
			if r := s.query(t, tok, meQuery, nil); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("%s accepted a session logged out on B, whose PostgreSQL link is cut: %s", name, r.Raw)
			}
		}
	}
	mustOK(t, "updateProblem on B", b.query(t, rs.admin, renameProblem, map[string]any{"id": "1000", "title": "Renamed on B"}))
	rs.freshWithin(t, a, "", problemQuery, vars, time.Now(), "A's title after it was changed on B", func(r *gqlResult) bool {
		var p struct{ Problem struct{ Title string } }
		r.decode(t, &p)
		return p.Problem.Title == "Renamed on B"
	})
	// And the other way: a logout on A is in force on B.
	other := a.login(t, "other@example.com")
	seen(t, b, other, meQuery, nil)
	mustOK(t, "logout on A", a.query(t, other, `mutation { logout }`, nil))
	if r := b.query(t, other, meQuery, nil); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("B, its PostgreSQL link cut, accepted a session logged out on A: %s", r.Raw)
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
