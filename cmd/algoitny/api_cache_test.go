package main

import (
	"bytes"
	"testing"
	"time"
)

// TestSessionCache runs two replicas (same tables, same pubsub channel): a
// known session costs no DynamoDB read, and deactivation, plan changes and
// logout made on one replica are in force on both as soon as the mutation
// returned (sessions, users and plans are strict in the cache).
func TestSessionCache(t *testing.T) {
	t.Parallel()
	a := startAPI(t, nil)
	b := startAPI(t, func(c *Config) { *c = a.Config })
	admin := a.staff(t, "admin@example.com")
	a.login(t, "bob@example.com")
	bobID := globalIDOf("User", a.user(t, "bob@example.com").ID)
	bob := b.login(t, "bob@example.com")

	me := func(s *apiServer, token string) (*gqlResult, int64) {
		before := s.DB.Requests()
		r := s.query(t, token, `{ me { email isActive plan { name } } }`, nil)
		return r, s.DB.Requests() - before
	}
	// eventually polls until ok holds: the other replica hears of a change
	// through PostgreSQL, a few milliseconds later.
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s (the cache's TTL is an hour)", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Each replica caches a session once it watches for changes.
	for _, s := range []*apiServer{a, b} {
		eventually("a known session served from the cache", func() bool {
			r, reads := me(s, bob)
			if r.Status != 200 {
				t.Fatalf("bob: %s", r.Raw)
			}
			return reads == 0
		})
	}

	t.Log("a plan change on A reaches B")
	a.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`, map[string]any{"id": bobID}).decode(t, new(any))
	if r, _ := me(a, bob); !bytes.Contains(r.Raw, []byte(`"Pro"`)) {
		t.Fatalf("A after the plan change: %s", r.Raw)
	}
	if r, _ := me(b, bob); !bytes.Contains(r.Raw, []byte(`"Pro"`)) {
		t.Fatalf("B right after the plan change on A: %s", r.Raw)
	}

	t.Log("deactivation on B reaches A, reactivation too")
	b.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": bobID}).decode(t, new(any))
	if r, _ := me(b, bob); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("B right after deactivating bob: %s", r.Raw)
	}
	if r, _ := me(a, bob); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("A right after B deactivated bob: %s", r.Raw)
	}
	a.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: true) { id } }`, map[string]any{"id": bobID}).decode(t, new(any))
	if r, _ := me(b, bob); r.Status != 200 || len(r.Errors) != 0 {
		t.Fatalf("B right after A reactivated bob: %s", r.Raw)
	}

	t.Log("logout on A reaches B")
	a.query(t, bob, `mutation { logout }`, nil).decode(t, new(any))
	if r, _ := me(a, bob); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("A right after logout: %s", r.Raw)
	}
	if r, _ := me(b, bob); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("B right after the logout on A: %s", r.Raw)
	}
}

// TestProblemCacheAcrossReplicas: replica B serves a problem and its test
// cases from memory (no DynamoDB request), and the edits made on replica A —
// a new title, a new test case, the deletion — reach B through PostgreSQL
// within the feed's bound.
func TestProblemCacheAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := startAPI(t, nil)
	b := startAPI(t, func(c *Config) { *c = a.Config })
	admin := a.staff(t, "admin@example.com")
	a.createProblem(t, admin, "BAEKJOON", "1000", 3, true)
	const read = `{ problem(platform: BAEKJOON, problemId: "1000") { title testCases(first: 10) { totalCount edges { node { input } } } } }`
	type problem struct {
		Problem *struct {
			Title     string
			TestCases struct {
				TotalCount int
				Edges      []struct{ Node struct{ Input string } }
			}
		}
	}
	readB := func() (problem, int64) {
		var out problem
		before := b.DB.Requests()
		r := b.query(t, "", read, nil)
		if r.code() != "NOT_FOUND" { // a deleted problem
			r.decode(t, &out)
		}
		return out, b.DB.Requests() - before
	}
	eventually := func(what string, ok func(problem, int64) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if ok(readB()) {
				return
			}
			if time.Now().After(deadline) {
				p, n := readB()
				t.Fatalf("%s: not within 10 s (TTL 30 s): %+v, %d requests", what, p.Problem, n)
			}
		}
	}
	eventually("B serves the problem from memory", func(p problem, n int64) bool {
		return n == 0 && p.Problem != nil && p.Problem.Title == "Problem 1000" && len(p.Problem.TestCases.Edges) == 3
	})

	a.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "1000", input: {title: "A+B"}) { title } }`, nil).decode(t, new(any))
	a.query(t, admin, `mutation { addTestCases(platform: BAEKJOON, problemId: "1000", testCases: [{input: "5 5\n", output: "10\n"}]) { testCaseCount } }`, nil).decode(t, new(any))
	eventually("B sees A's edits", func(p problem, _ int64) bool {
		return p.Problem != nil && p.Problem.Title == "A+B" && p.Problem.TestCases.TotalCount == 4 &&
			len(p.Problem.TestCases.Edges) == 4 && p.Problem.TestCases.Edges[3].Node.Input == "5 5\n"
	})
	a.query(t, admin, `mutation { deleteProblem(platform: BAEKJOON, problemId: "1000") { id } }`, nil).decode(t, new(any))
	eventually("B no longer shows the deleted problem", func(p problem, _ int64) bool { return p.Problem == nil })
}

// TestUsageCacheAcrossReplicas: replica B answers myUsage from memory (no
// DynamoDB request), and a use spent on replica A (executeCode) reaches B
// through PostgreSQL; A itself shows it on the next request.
func TestUsageCacheAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := startAPI(t, nil)
	b := startAPI(t, func(c *Config) { *c = a.Config })
	admin := a.staff(t, "admin@example.com")
	a.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	bob := a.login(t, "bob@example.com")
	executions := func(s *apiServer) (used int, requests int64) {
		var out struct {
			MyUsage []struct {
				Action string
				Used   int
			}
		}
		before := s.DB.Requests()
		s.query(t, bob, `{ myUsage { action used } }`, nil).decode(t, &out)
		for _, u := range out.MyUsage {
			if u.Action == "EXECUTION" {
				used = u.Used
			}
		}
		return used, s.DB.Requests() - before
	}
	eventually := func(what string, want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if used, n := executions(b); used == want && n == 0 {
				return
			}
			if time.Now().After(deadline) {
				used, n := executions(b)
				t.Fatalf("%s: B shows %d executions with %d requests, want %d from memory (TTL 30 s)", what, used, n, want)
			}
		}
	}
	eventually("B serves the usage from memory", 0)
	for want := 1; want <= 2; want++ {
		a.query(t, bob, executeMutation, executeInput("print(1)", nil)).decode(t, new(any))
		if used, _ := executions(a); used != want {
			t.Fatalf("A right after its own executeCode shows %d executions, want %d", used, want)
		}
		eventually("B sees the use spent on A", want)
	}
}

// TestCacheFeedMetrics: /metrics says whether the caches serve and what
// the change feed did.
func TestCacheFeedMetrics(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	if v := s.metricValue(t, "algoitny_cache_serving"); v != 1 {
		t.Fatalf("algoitny_cache_serving = %v on a warm server", v)
	}
	before := s.metricValue(t, "algoitny_cache_strict_changes_total")
	token := s.login(t, "metrics@example.com")
	s.query(t, token, `mutation { logout }`, nil).decode(t, new(any))
	if after := s.metricValue(t, "algoitny_cache_strict_changes_total"); after < before+2 { // the user created, the session revoked
		t.Fatalf("strict changes %v → %v after a sign-up and a logout", before, after)
	}
	if v := s.metricValue(t, "algoitny_cache_refused_changes_total"); v != 0 {
		t.Fatalf("%v changes refused with PostgreSQL up", v)
	}
}
