package problems

import (
	"context"
	"math"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// Subtask limits.
const (
	MaxSubtasks       = 100
	MaxSubtaskNameLen = 50
	MaxSubtaskPoints  = 1e6
)

// validateSubtasks checks a problem's subtasks against the ids of its test
// cases: names 1–50 characters and unique, points within [0, 1e6], a known
// mode, at least one test each and only known test ids, dependencies on
// known other subtasks and no cycle among them. EINVALID with the field.
func validateSubtasks(subtasks []algoitny.Subtask, testIDs map[string]bool) error {
	if len(subtasks) > MaxSubtasks {
		return algoitny.Invalid("subtasks", "at most %d subtasks", MaxSubtasks)
	}
	names := make(map[string]int, len(subtasks))
	for i, st := range subtasks {
		if n := utf8.RuneCountInString(st.Name); n == 0 || n > MaxSubtaskNameLen {
			return algoitny.Invalid("subtasks.name", "subtask names must be 1–%d characters", MaxSubtaskNameLen)
		}
		if err := algoitny.CheckText("subtasks.name", st.Name); err != nil {
			return err
		}
		if _, dup := names[st.Name]; dup {
			return algoitny.Invalid("subtasks.name", "subtask %q is named twice", st.Name)
		}
		names[st.Name] = i
		if st.Points < 0 || st.Points > MaxSubtaskPoints || math.IsNaN(st.Points) {
			return algoitny.Invalid("subtasks.points", "subtask %q: points must be between 0 and %g", st.Name, float64(MaxSubtaskPoints))
		}
		if st.Mode != algoitny.ScoreAllOrNothing && st.Mode != algoitny.ScoreSum {
			return algoitny.Invalid("subtasks.mode", "subtask %q: unknown scoring mode %q", st.Name, st.Mode)
		}
		if len(st.TestIDs) == 0 {
			return algoitny.Invalid("subtasks.testIds", "subtask %q has no tests", st.Name)
		}
		for _, id := range st.TestIDs {
			if !testIDs[id] {
				return algoitny.Invalid("subtasks.testIds", "subtask %q: the problem has no test case %q", st.Name, id)
			}
		}
	}
	for _, st := range subtasks {
		for _, d := range st.DependsOn {
			if _, ok := names[d]; !ok || d == st.Name {
				return algoitny.Invalid("subtasks.dependsOn", "subtask %q depends on %q, which is no other subtask", st.Name, d)
			}
		}
	}
	if name, ok := dependencyCycle(subtasks, names); ok {
		return algoitny.Invalid("subtasks.dependsOn", "the dependencies of subtask %q form a cycle", name)
	}
	return nil
}

// dependencyCycle finds a subtask on a cycle of dependencies, by depth-first
// search (names maps a name to its index; every dependency is known).
func dependencyCycle(subtasks []algoitny.Subtask, names map[string]int) (string, bool) {
	const unvisited, onPath, done = 0, 1, 2
	state := make([]int, len(subtasks))
	var visit func(i int) bool
	visit = func(i int) bool {
		state[i] = onPath
		for _, d := range subtasks[i].DependsOn {
			j := names[d]
			if state[j] == onPath || (state[j] == unvisited && visit(j)) {
				return true
			}
		}
		state[i] = done
		return false
	}
	for i := range subtasks {
		if state[i] == unvisited && visit(i) {
			return subtasks[i].Name, true
		}
	}
	return "", false
}

// testCaseIDs returns the ids of every test case of a problem, read from
// DynamoDB itself (a subtask must name tests that exist now).
func (s *Service) testCaseIDs(ctx context.Context, ref algoitny.ProblemRef) (map[string]bool, error) {
	ctx = algoitny.WithFreshReads(ctx)
	ids := map[string]bool{}
	for after := ""; ; {
		page, err := s.Store.ListTestCases(ctx, ref, algoitny.PageRequest{First: algoitny.MaxPageSize, After: after})
		if err != nil {
			return nil, err
		}
		for _, tc := range page.Items {
			ids[tc.ID] = true
		}
		if !page.HasNextPage {
			return ids, nil
		}
		after = page.EndCursor
	}
}
