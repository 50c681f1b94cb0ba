package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
)

const executeMutation = `mutation($in: ExecuteCodeInput!) { executeCode(input: $in) { id type status problem { problemId } } }`

func executeInput(code string, extra map[string]any) map[string]any {
	in := map[string]any{"platform": "BAEKJOON", "problemId": "1000", "language": "PYTHON", "code": code}
	for k, v := range extra {
		in[k] = v
	}
	return map[string]any{"in": in}
}

func TestAPIJobs(t *testing.T) {
	t.Parallel()
	// 50 requests at once queue for the 16 slots: on a loaded machine some
	// waited past the default 5 s and were answered SERVER_BUSY, which
	// QuotaIsExactUnderConcurrency is not about (TestAPIAdmission is).
	s := startAPI(t, func(c *Config) { c.Admission.QueueTimeout = time.Minute })
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)

	t.Run("ExecuteReturnsAPendingJob", func(t *testing.T) {
		alice := s.login(t, "alice@example.com")
		var out struct {
			ExecuteCode struct {
				ID, Type, Status string
				Problem          struct{ ProblemID string }
			}
		}
		s.query(t, alice, executeMutation, executeInput("print(1)", nil)).decode(t, &out)
		j := out.ExecuteCode
		if j.Type != "CODE_EXECUTION" || j.Status != "PENDING" || j.Problem.ProblemID != "1000" {
			t.Fatalf("job %+v", j)
		}
		// The River job exists and is linked.
		var got struct{ Job struct{ ID, Status string } }
		s.query(t, alice, `query($id: ID!) { job(id: $id) { id status progress { edges { node { id } } } } }`, map[string]any{"id": j.ID}).decode(t, &got)
		if got.Job.ID != j.ID {
			t.Fatalf("job(id) = %+v", got)
		}
		if r := s.query(t, admin, `query($id: ID!) { job(id: $id) { id } }`, map[string]any{"id": j.ID}); !strings.Contains(string(r.Data), j.ID) {
			t.Fatalf("staff cannot read the job: %s", r.Raw)
		}
		bob := s.login(t, "bob@example.com")
		if r := s.query(t, bob, `query($id: ID!) { job(id: $id) { id } }`, map[string]any{"id": j.ID}); string(r.Data) != `{"job":null}` {
			t.Fatalf("bob reads alice's job: %s", r.Raw)
		}
		var list struct {
			Jobs struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		s.query(t, alice, `{ jobs(type: CODE_EXECUTION) { edges { node { id } } } }`, nil).decode(t, &list)
		if len(list.Jobs.Edges) != 1 {
			t.Fatalf("alice's jobs %+v", list)
		}
		var usage struct{ MyUsage []struct{ Used int } }
		s.query(t, alice, `{ myUsage { used } }`, nil).decode(t, &usage)
		if usage.MyUsage[0].Used != 1 {
			t.Fatalf("usage after one execution: %+v", usage)
		}
		var cancelled struct{ CancelJob struct{ Status string } }
		s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": j.ID}).decode(t, &cancelled)
		if cancelled.CancelJob.Status != "CANCELLED" {
			t.Fatalf("cancel %+v", cancelled)
		}
		if r := s.query(t, alice, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": j.ID}); r.code() != "CONFLICT" {
			t.Fatalf("second cancel: %s", r.Raw)
		}
	})

	t.Run("QuotaIsExactUnderConcurrency", func(t *testing.T) {
		carol := s.login(t, "carol@example.com")
		const n = 50
		codes := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = s.query(t, carol, executeMutation, executeInput(fmt.Sprint("print(", i, ")"), nil)).code()
			}()
		}
		wg.Wait()
		ok, limited := 0, 0
		for _, c := range codes {
			switch c {
			case "":
				ok++
			case "RATE_LIMITED":
				limited++
			default:
				t.Fatalf("unexpected code %q", c)
			}
		}
		if ok != 10 || limited != 40 {
			t.Fatalf("%d jobs, %d RATE_LIMITED; want 10 and 40", ok, limited)
		}
		r := s.query(t, carol, executeMutation, executeInput("print(0)", nil))
		ext := r.Errors[0].Extensions
		if r.code() != "RATE_LIMITED" || ext["limit"] != float64(10) || ext["used"] != float64(10) || ext["remaining"] != float64(0) || ext["resetAt"] == nil {
			t.Fatalf("rate limit error: %s", r.Raw)
		}
		var list struct {
			Jobs struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		s.query(t, carol, `{ jobs(first: 100) { edges { node { id } } } }`, nil).decode(t, &list)
		if len(list.Jobs.Edges) != 10 {
			t.Fatalf("carol has %d jobs", len(list.Jobs.Edges))
		}
	})

	t.Run("IdempotencyKey", func(t *testing.T) {
		dave := s.login(t, "dave@example.com")
		ids := map[string]bool{}
		for range 3 {
			var out struct{ ExecuteCode struct{ ID string } }
			s.query(t, dave, executeMutation, executeInput("print(2)", map[string]any{"idempotencyKey": "submit-1"})).decode(t, &out)
			ids[out.ExecuteCode.ID] = true
		}
		var usage struct{ MyUsage []struct{ Used int } }
		s.query(t, dave, `{ myUsage { used } }`, nil).decode(t, &usage)
		if len(ids) != 1 || usage.MyUsage[0].Used != 1 {
			t.Fatalf("%d jobs, %d executions charged", len(ids), usage.MyUsage[0].Used)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		erin := s.login(t, "erin@example.com")
		for field, in := range map[string]map[string]any{
			"code":      executeInput(strings.Repeat("x", 64<<10+1), nil),
			"problemId": executeInput("print(1)", map[string]any{"problemId": "nope"}),
		} {
			r := s.query(t, erin, executeMutation, in)
			want := "BAD_USER_INPUT"
			if field == "problemId" {
				want = "NOT_FOUND"
			}
			if r.code() != want {
				t.Fatalf("%s: %s", field, r.Raw)
			}
		}
		if r := s.query(t, "", executeMutation, executeInput("print(1)", nil)); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous execute: %s", r.Raw)
		}
	})

	t.Run("AuthoringJobsNeedThePlan", func(t *testing.T) {
		frank := s.login(t, "frank@example.com")
		gen := `mutation { generateTestCases(input: {platform: BAEKJOON, problemId: "2000", title: "T", solutionCode: "print(1)", language: PYTHON, constraints: "1 <= n <= 10"}) { type status } }`
		if r := s.query(t, frank, gen, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("Free plan generated tests: %s", r.Raw)
		}
		var out struct{ GenerateTestCases struct{ Type, Status string } }
		s.query(t, admin, gen, nil).decode(t, &out)
		if out.GenerateTestCases.Type != "SCRIPT_GENERATION" || out.GenerateTestCases.Status != "PENDING" {
			t.Fatalf("generate %+v", out)
		}
		var ex struct{ ExtractProblem struct{ Type string } }
		s.query(t, admin, `mutation { extractProblem(url: "https://www.acmicpc.net/problem/1000") { type } }`, nil).decode(t, &ex)
		if ex.ExtractProblem.Type != "PROBLEM_EXTRACTION" {
			t.Fatalf("extract %+v", ex)
		}
		if r := s.query(t, admin, `mutation { extractProblem(url: "file:///etc/passwd") { type } }`, nil); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("bad url: %s", r.Raw)
		}
	})

	t.Run("Hints", func(t *testing.T) {
		gina := s.login(t, "gina@example.com")
		h := s.seedHistory(t, s.user(t, "gina@example.com"), "1000", false)
		id := globalIDOf("SearchHistory", h.UserID, h.ID)
		var out struct{ GenerateHints struct{ Type, Status string } }
		s.query(t, gina, `mutation($id: ID!) { generateHints(historyId: $id) { type status } }`, map[string]any{"id": id}).decode(t, &out)
		if out.GenerateHints.Type != "HINT_GENERATION" {
			t.Fatalf("hints %+v", out)
		}
		other := s.login(t, "hank@example.com")
		if r := s.query(t, other, `mutation($id: ID!) { generateHints(historyId: $id) { type } }`, map[string]any{"id": id}); r.code() != "NOT_FOUND" {
			t.Fatalf("hints on another user's execution: %s", r.Raw)
		}
		if r := s.query(t, gina, `mutation { generateHints(historyId: "bm9wZQ") { type } }`, nil); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "historyId" {
			t.Fatalf("malformed id: %s", r.Raw)
		}
	})
}

// TestDeactivatedUsersJobsDoNotRun: an execution queued before its user was
// deactivated fails when a worker takes it, without running the code.
func TestDeactivatedUsersJobsDoNotRun(t *testing.T) {
	t.Parallel()
	a := startAPI(t, nil) // no workers: the job waits in the queue
	admin := a.staff(t, "admin@example.com")
	a.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
	bob := a.login(t, "bob@example.com")
	var out struct{ ExecuteCode struct{ ID string } }
	a.query(t, bob, executeMutation, map[string]any{"in": map[string]any{
		"platform": "BAEKJOON", "problemId": "1000", "language": "PYTHON", "code": aPlusB}}).decode(t, &out)
	a.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { isActive } }`,
		map[string]any{"id": globalIDOf("User", a.user(t, "bob@example.com").ID)})

	b := startAPITuned(t, func(c *Config) { *c = a.Config; c.Workers = true }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
	if j := b.waitJobResult(t, admin, out.ExecuteCode.ID); j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "deactivated") {
		t.Fatalf("a deactivated user's queued execution: %+v", j)
	}
}
