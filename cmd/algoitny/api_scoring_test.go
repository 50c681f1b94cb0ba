package main

import (
	"slices"
	"testing"
	"time"
)

// halfChecker is a Polygon-style checker: testlib.h, quitp for half an
// answer.
const halfChecker = `#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long want = ans.readLong();
    long long got = ouf.readLong();
    if (got == want) quitf(_ok, "correct");
    if (2 * got == want) quitp(0.5, "half of %lld", want);
    quitf(_wa, "expected %lld, found %lld", want, got);
}
`

// TestAPISubtaskScoring: a problem whose tests form subtasks, judged by a
// C++ testlib checker that gives points, is executed through executeCode
// and its history shows the score and each subtask's result.
func TestAPISubtaskScoring(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	alice := s.login(t, "alice@example.com")

	// Answer 2n for input n; tests n = 1, 2, 3.
	var created struct {
		CreateProblem struct {
			TestCases struct {
				Edges []struct{ Node struct{ TestCaseID string } }
			}
		}
	}
	s.query(t, admin, `mutation($in: CreateProblemInput!) { createProblem(input: $in) { testCases { edges { node { testCaseId } } } } }`,
		map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": "scored", "title": "Scored", "language": "PYTHON", "solutionCode": "print(2 * int(input()))",
			"checker":     map[string]any{"kind": "CUSTOM", "language": "CPP", "code": halfChecker},
			"testCases":   []map[string]any{{"input": "1\n", "output": "2\n"}, {"input": "2\n", "output": "4\n"}, {"input": "3\n", "output": "6\n"}},
			"isCompleted": true,
		}}).decode(t, &created)
	edges := created.CreateProblem.TestCases.Edges
	if len(edges) != 3 {
		t.Fatalf("created tests %+v", edges)
	}
	id := func(i int) string { return edges[i].Node.TestCaseID }

	const update = `mutation($subtasks: [SubtaskInput!]) { updateProblem(platform: CUSTOM, problemId: "scored", input: {subtasks: $subtasks}) { subtasks { name points mode testIds dependsOn } } }`
	t.Run("ErrInvalidSubtasks", func(t *testing.T) {
		for _, tc := range []struct {
			name, field string
			subtasks    []map[string]any
		}{
			{"UnknownTest", "subtasks.testIds", []map[string]any{{"name": "a", "points": 10, "mode": "SUM", "testIds": []string{"nope"}}}},
			{"NegativePoints", "subtasks.points", []map[string]any{{"name": "a", "points": -1, "mode": "SUM", "testIds": []string{id(0)}}}},
			{"Cycle", "subtasks.dependsOn", []map[string]any{
				{"name": "a", "points": 1, "mode": "SUM", "testIds": []string{id(0)}, "dependsOn": []string{"b"}},
				{"name": "b", "points": 1, "mode": "SUM", "testIds": []string{id(1)}, "dependsOn": []string{"a"}}}},
		} {
			r := s.query(t, admin, update, map[string]any{"subtasks": tc.subtasks})
			if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != tc.field {
				t.Fatalf("%s: %s", tc.name, r.Raw)
			}
		}
	})

	var updated struct {
		UpdateProblem struct {
			Subtasks []struct {
				Name      string
				Points    float64
				Mode      string
				TestIds   []string
				DependsOn []string
			}
		}
	}
	s.query(t, admin, update, map[string]any{"subtasks": []map[string]any{
		{"name": "small", "points": 30, "mode": "ALL_OR_NOTHING", "testIds": []string{id(0)}},
		{"name": "large", "points": 70, "mode": "SUM", "testIds": []string{id(1), id(2)}, "dependsOn": []string{"small"}},
	}}).decode(t, &updated)
	if st := updated.UpdateProblem.Subtasks; len(st) != 2 || st[1].Mode != "SUM" || st[1].DependsOn[0] != "small" || len(st[1].TestIds) != 2 {
		t.Fatalf("subtasks %+v", st)
	}

	// Right on n = 1 and 3, half of the answer on n = 2: small 30, large
	// 70 × (0.5 + 1) / 2 = 52.5.
	code := "n = int(input())\nprint(n if n == 2 else 2 * n)\n"
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, alice, executeMutation, executeInput(code, map[string]any{"platform": "CUSTOM", "problemId": "scored"})).decode(t, &out)
	if j := s.waitJob(t, alice, out.ExecuteCode.ID, 120*time.Second); j.Status != "COMPLETED" {
		t.Fatalf("job %+v", j)
	}
	var job struct {
		Job struct {
			History struct {
				Verdict        string
				PassedCount    int
				Score          *float64
				MaxScore       *float64
				SubtaskResults []struct {
					Name                    string
					Points, MaxPoints       float64
					PassedCount, TotalCount int
				}
				TestResults []struct {
					Verdict string
					Points  *float64
					Message string
				}
			}
		}
	}
	s.query(t, alice, `query($id: ID!) { job(id: $id) { history { verdict passedCount score maxScore
		subtaskResults { name points maxPoints passedCount totalCount } testResults { verdict points message } } } }`,
		map[string]any{"id": out.ExecuteCode.ID}).decode(t, &job)
	h := job.Job.History
	if h.Verdict != "WRONG_ANSWER" || h.PassedCount != 2 || h.Score == nil || *h.Score != 82.5 || h.MaxScore == nil || *h.MaxScore != 100 {
		t.Fatalf("history %+v", h)
	}
	if len(h.SubtaskResults) != 2 || h.SubtaskResults[0].Points != 30 || h.SubtaskResults[1].Points != 52.5 ||
		h.SubtaskResults[1].PassedCount != 1 || h.SubtaskResults[1].TotalCount != 2 || h.SubtaskResults[1].MaxPoints != 70 {
		t.Fatalf("subtask results %+v", h.SubtaskResults)
	}
	if tr := h.TestResults[1]; tr.Points == nil || *tr.Points != 0.5 || tr.Message != "points 0.5 half of 4" { // as upstream testlib writes it
		t.Fatalf("test 2 %+v", tr)
	}
	if tr := h.TestResults[0]; tr.Points != nil || tr.Verdict != "ACCEPTED" {
		t.Fatalf("test 1 %+v", tr)
	}

	t.Run("CreatedWithSubtasks", func(t *testing.T) { subtasksAtCreation(t, s, admin, alice) })
}

// subtasksAtCreation: createProblem takes subtasks naming its test cases
// by position; they are stored with the tests' ids and score an
// execution. A position out of range is refused on subtasks.testIndexes
// and nothing is written.
func subtasksAtCreation(t *testing.T, s *apiServer, admin, alice string) {
	const create = `mutation($in: CreateProblemInput!) { createProblem(input: $in) {
		subtasks { name points mode testIds dependsOn } testCases { edges { node { testCaseId } } } } }`
	input := func(id string, small []int) map[string]any {
		return map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "title": "Created with subtasks", "language": "PYTHON", "solutionCode": "print(2 * int(input()))",
			"testCases": []map[string]any{{"input": "1\n", "output": "2\n"}, {"input": "2\n", "output": "4\n"}, {"input": "3\n", "output": "6\n"}},
			"subtasks": []map[string]any{
				{"name": "small", "points": 30, "mode": "ALL_OR_NOTHING", "testIndexes": small},
				{"name": "large", "points": 70, "mode": "SUM", "testIndexes": []int{1, 2}, "dependsOn": []string{"small"}},
			},
			"isCompleted": true,
		}}
	}
	r := s.query(t, admin, create, input("badindex", []int{0, 3}))
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "subtasks.testIndexes" {
		t.Fatalf("an index out of range: %s", r.Raw)
	}
	var refused struct{ Problem *struct{ ID string } }
	if s.query(t, admin, `{ problem(platform: CUSTOM, problemId: "badindex") { id } }`, nil).decode(t, &refused); refused.Problem != nil {
		t.Fatalf("the refused problem was written: %+v", refused.Problem)
	}

	var created struct {
		CreateProblem struct {
			Subtasks []struct {
				Name      string
				TestIds   []string
				DependsOn []string
			}
			TestCases struct {
				Edges []struct{ Node struct{ TestCaseID string } }
			}
		}
	}
	s.query(t, admin, create, input("bypos", []int{0})).decode(t, &created)
	c := created.CreateProblem
	if len(c.TestCases.Edges) != 3 || len(c.Subtasks) != 2 {
		t.Fatalf("created %+v", c)
	}
	id := func(i int) string { return c.TestCases.Edges[i].Node.TestCaseID }
	if st := c.Subtasks; !slices.Equal(st[0].TestIds, []string{id(0)}) || !slices.Equal(st[1].TestIds, []string{id(1), id(2)}) || !slices.Equal(st[1].DependsOn, []string{"small"}) {
		t.Fatalf("subtasks %+v, want small [%s] and large [%s %s] after small", st, id(0), id(1), id(2))
	}

	// Right on n = 1 and 2, wrong on 3: small 30, large 70 × 1/2 = 35.
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, alice, executeMutation, executeInput("n = int(input())\nprint(2 * n if n < 3 else 0)\n", map[string]any{"platform": "CUSTOM", "problemId": "bypos"})).decode(t, &out)
	if j := s.waitJob(t, alice, out.ExecuteCode.ID, 120*time.Second); j.Status != "COMPLETED" {
		t.Fatalf("job %+v", j)
	}
	var job struct {
		Job struct {
			History struct {
				Score          *float64
				SubtaskResults []struct{ Points float64 }
			}
		}
	}
	s.query(t, alice, `query($id: ID!) { job(id: $id) { history { score subtaskResults { points } } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &job)
	if h := job.Job.History; h.Score == nil || *h.Score != 65 || len(h.SubtaskResults) != 2 || h.SubtaskResults[1].Points != 35 {
		t.Fatalf("history %+v, want 30 + 35", h)
	}
}
