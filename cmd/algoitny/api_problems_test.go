package main

import (
	"fmt"
	"strings"
	"testing"
)

const createProblemMutation = `mutation($in: CreateProblemInput!) {
  createProblem(input: $in) { id platform problemId title isCompleted testCaseCount solutionCode checker { kind epsilon } }
}`

// createProblem registers a problem as token with n test cases.
func (s *apiServer) createProblem(t testing.TB, token, platform, id string, n int, completed bool) map[string]any {
	t.Helper()
	var cases []map[string]any
	for i := range n {
		cases = append(cases, map[string]any{"input": fmt.Sprintf("%d %d\n", i, i+1), "output": fmt.Sprintf("%d\n", 2*i+1)})
	}
	var out struct{ CreateProblem map[string]any }
	s.query(t, token, createProblemMutation, map[string]any{"in": map[string]any{
		"platform": platform, "problemId": id, "title": "Problem " + id, "language": "PYTHON",
		"solutionCode": "a,b=map(int,input().split())\nprint(a+b)", "tags": []string{"math"},
		"testCases": cases, "isCompleted": completed,
	}}).decode(t, &out)
	return out.CreateProblem
}

func TestAPIProblems(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	alice := s.login(t, "alice@example.com")

	t.Run("CreateReadUpdateDelete", func(t *testing.T) {
		p := s.createProblem(t, admin, "BAEKJOON", "1000", 3, true)
		if p["isCompleted"] != true || p["testCaseCount"] != float64(3) || p["checker"].(map[string]any)["kind"] != "LINES" {
			t.Fatalf("created %v", p)
		}
		// Anonymous users read completed problems, without the solution.
		var anon struct {
			Problem struct {
				ID           string
				Title        string
				SolutionCode *string
				TestCases    struct {
					TotalCount int
					Edges      []struct {
						Node struct{ Input, Output string }
					}
				}
			}
		}
		s.query(t, "", `{ problem(platform: BAEKJOON, problemId: "1000") { id title solutionCode testCases(first: 2) { totalCount edges { node { input output } } } } }`, nil).decode(t, &anon)
		if anon.Problem.Title != "Problem 1000" || anon.Problem.SolutionCode != nil || anon.Problem.TestCases.TotalCount != 3 || len(anon.Problem.TestCases.Edges) != 2 {
			t.Fatalf("anonymous read %+v", anon.Problem)
		}
		if anon.Problem.TestCases.Edges[1].Node.Input != "1 2\n" {
			t.Fatalf("test case order: %+v", anon.Problem.TestCases.Edges)
		}
		// node(id) round trip.
		var node struct{ Node struct{ Title string } }
		s.query(t, "", `query($id: ID!) { node(id: $id) { ... on Problem { title } } }`, map[string]any{"id": anon.Problem.ID}).decode(t, &node)
		if node.Node.Title != "Problem 1000" {
			t.Fatalf("node = %+v", node)
		}
		var upd struct {
			UpdateProblem struct {
				Title       string
				Tags        []string
				TimeLimitMs int
			}
		}
		// Stored as validated: trimmed, and a zero limit means the default.
		s.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "1000", input: {title: "  A+B  ", tags: ["math", "io"], timeLimitMs: 0}) { title tags timeLimitMs } }`, nil).decode(t, &upd)
		if upd.UpdateProblem.Title != "A+B" || len(upd.UpdateProblem.Tags) != 2 || upd.UpdateProblem.TimeLimitMs != 2000 {
			t.Fatalf("update %+v", upd)
		}
		var added struct{ AddTestCases struct{ TestCaseCount int } }
		s.query(t, admin, `mutation { addTestCases(platform: BAEKJOON, problemId: "1000", testCases: [{input: "5 5\n", output: "10\n"}]) { testCaseCount } }`, nil).decode(t, &added)
		if added.AddTestCases.TestCaseCount != 4 {
			t.Fatalf("after add: %+v", added)
		}
		// Users cannot edit others' problems.
		r := s.query(t, alice, `mutation { updateProblem(platform: BAEKJOON, problemId: "1000", input: {title: "mine"}) { title } }`, nil)
		if r.code() != "FORBIDDEN" {
			t.Fatalf("alice update: %s", r.Raw)
		}
		var del struct{ DeleteProblem struct{ IsDeleted bool } }
		s.query(t, admin, `mutation { deleteProblem(platform: BAEKJOON, problemId: "1000", reason: "dup") { isDeleted } }`, nil).decode(t, &del)
		if !del.DeleteProblem.IsDeleted {
			t.Fatal("not deleted")
		}
		// Gone for everyone but staff.
		if r := s.query(t, "", `{ problem(platform: BAEKJOON, problemId: "1000") { title } }`, nil); string(r.Data) != `{"problem":null}` {
			t.Fatalf("deleted problem visible: %s", r.Raw)
		}
		if r := s.query(t, admin, `{ problem(platform: BAEKJOON, problemId: "1000") { isDeleted } }`, nil); !strings.Contains(string(r.Data), `"isDeleted":true`) {
			t.Fatalf("staff cannot read deleted problem: %s", r.Raw)
		}
	})

	t.Run("DraftsOnlyForStaffAndAuthors", func(t *testing.T) {
		s.createProblem(t, admin, "CODEFORCES", "1A", 0, false)
		for _, tc := range []struct {
			token string
			want  string
		}{{"", `{"problem":null}`}, {alice, `{"problem":null}`}, {admin, `{"problem":{"title":"Problem 1A"}}`}} {
			if r := s.query(t, tc.token, `{ problem(platform: CODEFORCES, problemId: "1A") { title } }`, nil); string(r.Data) != tc.want {
				t.Fatalf("draft read: %s, want %s", r.Raw, tc.want)
			}
		}
		// Users see only their own drafts in the listing.
		if r := s.query(t, alice, `{ problems(filter: {completed: false}) { edges { node { title } } } }`, nil); len(r.Errors) != 0 || strings.Contains(string(r.Data), "Problem 1A") {
			t.Fatalf("alice lists drafts: %s", r.Raw)
		}
		s.query(t, admin, `mutation { createPlan(input: {name: "Writer", maxHintsPerDay: 1, maxExecutionsPerDay: 1, maxProblems: 5, canViewAllProblems: false, canRegisterProblems: true}) { name } }`, nil)
		writer := s.login(t, "writer@example.com")
		s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Writer") { id } }`, map[string]any{"id": globalIDOf("User", s.user(t, "writer@example.com").ID)})
		s.createProblem(t, writer, "CODEFORCES", "2W", 0, false)
		if r := s.query(t, writer, `{ problems(filter: {completed: false}) { edges { node { problemId } } } }`, nil); len(r.Errors) != 0 || !strings.Contains(string(r.Data), `"2W"`) || strings.Contains(string(r.Data), `"1A"`) {
			t.Fatalf("writer lists drafts: %s", r.Raw)
		}
		if r := s.query(t, "", `{ problems(filter: {completed: false}) { edges { node { title } } } }`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous lists drafts: %s", r.Raw)
		}
		if r := s.query(t, admin, `{ problems(filter: {completed: false}) { edges { node { title } } } }`, nil); !strings.Contains(string(r.Data), "Problem 1A") {
			t.Fatalf("admin drafts: %s", r.Raw)
		}
	})

	// A staff review vouches for what staff saw: the author's later changes
	// (fields or test cases) undo it; staff's own changes keep it.
	t.Run("AuthorsChangesUndoTheReview", func(t *testing.T) {
		s.query(t, admin, `mutation { createPlan(input: {name: "Author", maxHintsPerDay: 1, maxExecutionsPerDay: 1, maxProblems: 5, canViewAllProblems: false, canRegisterProblems: true}) { name } }`, nil)
		author := s.login(t, "author@example.com")
		s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Author") { id } }`, map[string]any{"id": globalIDOf("User", s.user(t, "author@example.com").ID)})
		s.createProblem(t, author, "CODEFORCES", "3R", 1, true)
		const state = `{ problem(platform: CODEFORCES, problemId: "3R") { needsReview verifiedByAdmin } }`
		review := func() {
			t.Helper()
			if r := s.query(t, admin, `mutation { reviewProblem(platform: CODEFORCES, problemId: "3R", input: {verified: true}) { id } }`, nil); len(r.Errors) > 0 {
				t.Fatal(r.Raw)
			}
		}
		want := func(what, token, wantState string) {
			t.Helper()
			if r := s.query(t, token, state, nil); !strings.Contains(string(r.Data), wantState) {
				t.Fatalf("after %s: %s, want %s", what, r.Raw, wantState)
			}
		}
		const verified, undone = `"needsReview":false,"verifiedByAdmin":true`, `"needsReview":true,"verifiedByAdmin":false`
		review()
		want("the review", author, verified)
		s.query(t, admin, `mutation { updateProblem(platform: CODEFORCES, problemId: "3R", input: {title: "Fixed by staff"}) { id } }`, nil)
		want("a staff edit", author, verified)
		s.query(t, author, `mutation { updateProblem(platform: CODEFORCES, problemId: "3R", input: {solutionCode: "print(0)"}) { id } }`, nil)
		want("the author's edit", author, undone)
		review()
		s.query(t, author, `mutation { addTestCases(platform: CODEFORCES, problemId: "3R", testCases: [{input: "1\n", output: "2\n"}]) { id } }`, nil)
		want("the author's new test case", author, undone)
	})

	t.Run("RegistrationNeedsPlanCapability", func(t *testing.T) {
		r := s.query(t, alice, createProblemMutation, map[string]any{"in": map[string]any{"platform": "ATCODER", "problemId": "x", "title": "x", "language": "C"}})
		if r.code() != "FORBIDDEN" {
			t.Fatalf("Free plan registered a problem: %s", r.Raw)
		}
		r = s.query(t, "", createProblemMutation, map[string]any{"in": map[string]any{"platform": "ATCODER", "problemId": "x", "title": "x", "language": "C"}})
		if r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous registered a problem: %s", r.Raw)
		}
	})

	t.Run("ValidationAndConflict", func(t *testing.T) {
		s.createProblem(t, admin, "ATCODER", "abc001_a", 1, true)
		r := s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{"platform": "ATCODER", "problemId": "abc001_a", "title": "again", "language": "C"}})
		if r.code() != "CONFLICT" {
			t.Fatalf("duplicate: %s", r.Raw)
		}
		for field, in := range map[string]map[string]any{
			"title":       {"platform": "ATCODER", "problemId": "t1", "title": strings.Repeat("x", 201), "language": "C"},
			"problemId":   {"platform": "ATCODER", "problemId": "bad id!", "title": "x", "language": "C"},
			"problemUrl":  {"platform": "ATCODER", "problemId": "t2", "title": "x", "language": "C", "problemUrl": "javascript:alert(1)"},
			"timeLimitMs": {"platform": "ATCODER", "problemId": "t3", "title": "x", "language": "C", "timeLimitMs": 1},
			"isCompleted": {"platform": "ATCODER", "problemId": "t4", "title": "x", "language": "C", "isCompleted": true},
		} {
			r := s.query(t, admin, createProblemMutation, map[string]any{"in": in})
			if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != field {
				t.Fatalf("%s: %s", field, r.Raw)
			}
		}
		// An enum value outside the schema is refused by validation.
		r = s.query(t, admin, `mutation { createProblem(input: {platform: TOPCODER, problemId: "1", title: "x", language: C}) { id } }`, nil)
		if r.code() != "GRAPHQL_VALIDATION_FAILED" {
			t.Fatalf("bad enum: %s", r.Raw)
		}
	})

	t.Run("PaginationToTheLastPage", func(t *testing.T) {
		for i := range 5 {
			s.createProblem(t, admin, "LEETCODE", fmt.Sprint("lc", i), 1, true)
		}
		var seen []string
		after := any(nil)
		for pages := 1; ; pages++ {
			var out struct {
				Problems struct {
					Edges []struct {
						Cursor string
						Node   struct{ ProblemID string }
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
			s.query(t, "", `query($after: String) { problems(filter: {platform: LEETCODE}, first: 2, after: $after) { edges { cursor node { problemId } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after}).decode(t, &out)
			for _, e := range out.Problems.Edges {
				seen = append(seen, e.Node.ProblemID)
			}
			if !out.Problems.PageInfo.HasNextPage {
				if pages != 3 {
					t.Fatalf("%d pages", pages)
				}
				break
			}
			after = *out.Problems.PageInfo.EndCursor
		}
		if strings.Join(seen, ",") != "lc4,lc3,lc2,lc1,lc0" {
			t.Fatalf("seen %v", seen)
		}
		for _, bad := range []string{`first: 0`, `first: 101`, `after: "garbage"`} {
			r := s.query(t, "", `{ problems(`+bad+`) { edges { cursor } } }`, nil)
			if r.code() != "BAD_USER_INPUT" {
				t.Fatalf("%s: %s", bad, r.Raw)
			}
		}
	})
}
