package main

import (
	"bytes"
	"testing"
	"time"
)

// TestSecurityStateAcrossReplicas runs two replicas (same tables): a
// signed-in request reads its session, user and plan in one DynamoDB
// request, and deactivation, plan changes and logout made on one replica
// are in force on both as soon as the mutation returned (nothing of them
// is kept in memory).
func TestSecurityStateAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := startAPI(t, nil)
	b := startAPI(t, func(c *Config) { *c = a.Config })
	admin := a.staff(t, "admin@example.com")
	a.login(t, "bob@example.com")
	bobID := globalIDOf("User", a.user(t, "bob@example.com").ID)
	bob := b.login(t, "bob@example.com")

	me := func(s *apiServer, token string) (*gqlResult, int64) {
		r := s.query(t, token, `{ me { email isActive plan { name } } }`, nil)
		n, _ := r.Extensions["dynamodbRequests"].(float64)
		return r, int64(n)
	}
	for _, s := range []*apiServer{a, b} {
		if r, reads := me(s, bob); r.Status != 200 || reads != 1 {
			t.Fatalf("bob's me: %d DynamoDB requests, want 1: %s", reads, r.Raw)
		}
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
// a new title, a new test case, the deletion — reach B within the display
// bound (ALGOITNY_CACHE_BOUND).
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
				t.Fatalf("%s: not within 10 s (bound 1 s): %+v, %d requests", what, p.Problem, n)
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

// TestUsageAcrossReplicas: myUsage is one DynamoDB request (the day's
// counter is read with the session), and a use spent on replica A
// (executeCode) is shown on B and on A as soon as it returned.
func TestUsageAcrossReplicas(t *testing.T) {
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
		r := s.query(t, bob, `{ myUsage { action used } }`, nil)
		r.decode(t, &out)
		for _, u := range out.MyUsage {
			if u.Action == "EXECUTION" {
				used = u.Used
			}
		}
		n, _ := r.Extensions["dynamodbRequests"].(float64)
		return used, int64(n)
	}
	for want := 0; want <= 2; want++ {
		if want > 0 {
			a.query(t, bob, executeMutation, executeInput("print(1)", nil)).decode(t, new(any))
		}
		for name, s := range map[string]*apiServer{"A": a, "B": b} {
			if used, n := executions(s); used != want || n != 1 {
				t.Fatalf("%s right after %d executeCode on A shows %d executions with %d DynamoDB requests, want %d with 1", name, want, used, n, want)
			}
		}
	}
}
