package problems

import (
	"context"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// Subtask limits.
const (
	MaxSubtasks       = 100
	MaxSubtaskNameLen = 50
	MaxSubtaskPoints  = 1e6
	// MaxSubtaskTests bounds the tests named by all of a problem's
	// subtasks together (a test named by two counts twice): the subtasks
	// are stored in the problem's item, which DynamoDB caps at 400 KB with
	// everything else the problem holds.
	MaxSubtaskTests = 2000
)

// validateSubtasks checks a problem's subtasks against the ids of its test
// cases: at most MaxSubtasks, naming at most MaxSubtaskTests tests in all,
// names 1–50 characters and unique, points within [0, 1e6], a known
// mode, at least one test each and only known test ids, none twice,
// dependencies on known other subtasks and no cycle among them. EINVALID
// with the field.
func validateSubtasks(subtasks []algoitny.Subtask, testIDs map[string]bool) error {
	if err := subtaskBounds(subtasks, func(st algoitny.Subtask) int { return len(st.TestIDs) }); err != nil {
		return err
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
		seen := make(map[string]bool, len(st.TestIDs))
		for _, id := range st.TestIDs {
			if !testIDs[id] {
				return algoitny.Invalid("subtasks.testIds", "subtask %q: the problem has no test case %q", st.Name, id)
			}
			if seen[id] {
				return algoitny.Invalid("subtasks.testIds", "subtask %q names test case %q twice", st.Name, id)
			}
			seen[id] = true
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

// subtaskBounds checks the number of subtasks (MaxSubtasks) and of the
// tests they name in all (MaxSubtaskTests, tests counted by tests).
// EINVALID with field subtasks.
func subtaskBounds(subtasks []algoitny.Subtask, tests func(algoitny.Subtask) int) error {
	if len(subtasks) > MaxSubtasks {
		return algoitny.Invalid("subtasks", "at most %d subtasks", MaxSubtasks)
	}
	refs := 0
	for _, st := range subtasks {
		refs += tests(st)
	}
	if refs > MaxSubtaskTests {
		return algoitny.Invalid("subtasks", "the subtasks name %d tests in all; at most %d", refs, MaxSubtaskTests)
	}
	return nil
}

// validateNewSubtasks checks the subtasks of a problem being created with
// n test cases, which have no ids yet: each names its tests by 0-based
// position (TestIndexes: at least one, each within [0, n), none twice;
// EINVALID with field subtasks.testIndexes) and by no id (subtasks.testIds);
// the rest as validateSubtasks, before anything is written.
func validateNewSubtasks(subtasks []algoitny.Subtask, n int) error {
	// The bounds first, before any work in proportion to the input.
	if err := subtaskBounds(subtasks, func(st algoitny.Subtask) int { return len(st.TestIndexes) }); err != nil {
		return err
	}
	positions := make(map[string]bool, n)
	named := make([]algoitny.Subtask, len(subtasks))
	for i, st := range subtasks {
		if len(st.TestIDs) > 0 {
			return algoitny.Invalid("subtasks.testIds", "subtask %q: the tests of a new problem have no ids yet: name them by position (testIndexes)", st.Name)
		}
		if len(st.TestIndexes) == 0 {
			return algoitny.Invalid("subtasks.testIndexes", "subtask %q has no tests", st.Name)
		}
		st.TestIDs = make([]string, len(st.TestIndexes))
		seen := make(map[int]bool, len(st.TestIndexes))
		for j, x := range st.TestIndexes {
			if x < 0 || x >= n {
				return algoitny.Invalid("subtasks.testIndexes", "subtask %q: there is no test case %d: testCases holds %d, numbered from 0", st.Name, x, n)
			}
			if seen[x] {
				return algoitny.Invalid("subtasks.testIndexes", "subtask %q names test case %d twice", st.Name, x)
			}
			seen[x] = true
			st.TestIDs[j] = strconv.Itoa(x)
			positions[st.TestIDs[j]] = true
		}
		named[i] = st
	}
	return validateSubtasks(named, positions)
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
