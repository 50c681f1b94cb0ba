package algoitny

// ScoringMode says how a subtask's points follow from its tests.
type ScoringMode string

// The scoring modes.
const (
	// ScoreAllOrNothing gives the subtask's points only if every one of
	// its tests is ACCEPTED, else nothing.
	ScoreAllOrNothing ScoringMode = "ALL_OR_NOTHING"
	// ScoreSum gives the points in proportion to the credit of its tests:
	// 1 for an ACCEPTED test, the checker's points for a test a checker
	// gave partial credit (TestResult.Points), 0 otherwise.
	ScoreSum ScoringMode = "SUM"
)

// Subtask is a group of a problem's tests scored together (IOI-style
// subtasks): a problem without subtasks is judged pass/fail only.
type Subtask struct {
	// Name identifies the subtask within its problem (1–50 characters,
	// unique); DependsOn refers to it.
	Name string
	// Points is what the subtask is worth (≥ 0).
	Points float64
	Mode   ScoringMode
	// TestIDs are the ids of the problem's test cases in the group.
	TestIDs []string
	// TestIndexes name the group's tests of a problem being created
	// (problems.CreateInput), whose tests have no ids yet: 0-based
	// positions in the test cases given with it. Storage turns them into
	// TestIDs as it assigns the ids; they are never stored.
	TestIndexes []int
	// DependsOn names subtasks that must score fully for this one to
	// score at all (no cycles).
	DependsOn []string
}

// SubtaskResult is how one subtask scored in an execution.
type SubtaskResult struct {
	Name string
	// Points earned, and the subtask's MaxPoints.
	Points, MaxPoints float64
	// Passed counts the group's tests that were ACCEPTED, of Total.
	Passed, Total int
}

// Score is the partial score of an execution.
type Score struct {
	// Score is the sum of the subtasks' points, of MaxScore.
	Score, MaxScore float64
	Subtasks        []SubtaskResult
}

// testCredit is what one test contributes to a SUM subtask: the
// checker's points when it gave some, else 1 for ACCEPTED and 0 otherwise.
func testCredit(tr TestResult) float64 {
	if tr.Points != nil {
		return min(max(*tr.Points, 0), 1)
	}
	if tr.Verdict == VerdictAccepted {
		return 1
	}
	return 0
}

// ScoreSubtasks scores an execution's test results (by test case id; a
// test without a result, e.g. after a compilation error, counts as failed)
// against a problem's subtasks, in the subtasks' order: each group by its
// mode, then zero for a group any of whose dependencies (transitively)
// did not score fully, i.e. had a test that was not ACCEPTED. It returns nil when there are no
// subtasks (the problem is judged pass/fail only). Subtasks are assumed
// valid (problems validates them: known names, no cycles); a dependency
// on an unknown name counts as not scored.
func ScoreSubtasks(subtasks []Subtask, results []TestResult) *Score {
	if len(subtasks) == 0 {
		return nil
	}
	byID := make(map[string]TestResult, len(results))
	for _, tr := range results {
		byID[tr.TestCaseID] = tr
	}
	s := &Score{Subtasks: make([]SubtaskResult, len(subtasks))}
	index := make(map[string]int, len(subtasks))
	for i, st := range subtasks {
		index[st.Name] = i
		s.Subtasks[i] = scoreGroup(st, byID)
		s.MaxScore += st.Points
	}
	// full(i): every test of subtask i and of everything it depends on
	// was ACCEPTED (so a 0-point group, e.g. the samples, can be a
	// prerequisite too).
	const unknown, visiting, yes, no = 0, 1, 2, 3
	state := make([]int, len(subtasks))
	var full func(i int) bool
	full = func(i int) bool {
		switch state[i] {
		case yes:
			return true
		case no, visiting: // a cycle cannot score
			return false
		}
		state[i] = visiting
		ok := s.Subtasks[i].Passed == s.Subtasks[i].Total
		for _, d := range subtasks[i].DependsOn {
			j, known := index[d]
			if !known || !full(j) {
				ok = false
			}
		}
		state[i] = no
		if ok {
			state[i] = yes
		}
		return ok
	}
	for i, st := range subtasks {
		for _, d := range st.DependsOn {
			if j, known := index[d]; !known || !full(j) {
				s.Subtasks[i].Points = 0
			}
		}
		s.Score += s.Subtasks[i].Points
	}
	return s
}

// scoreGroup scores one subtask by its mode, without its dependencies.
func scoreGroup(st Subtask, byID map[string]TestResult) SubtaskResult {
	r := SubtaskResult{Name: st.Name, MaxPoints: st.Points, Total: len(st.TestIDs)}
	credit := 0.0
	for _, id := range st.TestIDs {
		tr, ok := byID[id]
		if !ok {
			continue
		}
		if tr.Verdict == VerdictAccepted {
			r.Passed++
		}
		credit += testCredit(tr)
	}
	switch {
	case r.Total == 0:
	case st.Mode == ScoreSum:
		r.Points = st.Points * credit / float64(r.Total)
	case r.Passed == r.Total:
		r.Points = st.Points
	}
	return r
}

// PruneSubtasks applies the removal of test cases to a problem's subtasks,
// so that no subtask names a test that no longer exists: gone maps each
// removed test case id to the id of the test that takes its place (tests
// rebuilt byte for byte, regenerateTests), or to "" when none does. A
// replaced id is renamed in place (once, if its successor is named
// already); a removed one is dropped. A subtask left without tests is
// removed, and its name dropped from the DependsOn of the others: it could
// no longer be scored, and a subtask with no tests has, vacuously, all of
// them accepted, so depending on it required nothing. The result is valid
// whenever subtasks were (validateSubtasks in problems: names, tests and
// dependencies known, no cycles). It returns the new subtasks (nil for
// none) and whether anything changed; subtasks itself is not modified.
//
// Without it a stale id would fail its subtask for good: ScoreSubtasks
// counts a test without a result as failed, so an ALL_OR_NOTHING subtask
// naming a deleted test could never score, nor could any that depends on it.
func PruneSubtasks(subtasks []Subtask, gone map[string]string) ([]Subtask, bool) {
	changed := false
	var out []Subtask
	removed := map[string]bool{}
	for _, st := range subtasks {
		var ids []string
		seen := make(map[string]bool, len(st.TestIDs))
		for _, id := range st.TestIDs {
			if next, ok := gone[id]; ok {
				changed = true
				if id = next; id == "" {
					continue
				}
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			removed[st.Name] = true
			changed = true
			continue
		}
		st.TestIDs = ids
		out = append(out, st)
	}
	if len(removed) > 0 {
		for i, st := range out {
			var deps []string
			for _, d := range st.DependsOn {
				if !removed[d] {
					deps = append(deps, d)
				}
			}
			out[i].DependsOn = deps
		}
	}
	return out, changed
}
