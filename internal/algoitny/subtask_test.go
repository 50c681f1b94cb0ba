package algoitny_test

import (
	"reflect"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
)

func TestScoreSubtasks(t *testing.T) {
	t.Parallel()
	ac := func(id string) algoitny.TestResult {
		return algoitny.TestResult{TestCaseID: id, Verdict: algoitny.VerdictAccepted}
	}
	wa := func(id string) algoitny.TestResult {
		return algoitny.TestResult{TestCaseID: id, Verdict: "WRONG_ANSWER"}
	}
	pts := func(id string, p float64) algoitny.TestResult {
		tr := wa(id)
		tr.Points = &p
		return tr
	}
	group := func(name string, points float64, mode algoitny.ScoringMode, tests []string, deps ...string) algoitny.Subtask {
		return algoitny.Subtask{Name: name, Points: points, Mode: mode, TestIDs: tests, DependsOn: deps}
	}
	aon, sum := algoitny.ScoreAllOrNothing, algoitny.ScoreSum
	for _, tc := range []struct {
		name     string
		subtasks []algoitny.Subtask
		results  []algoitny.TestResult
		score    float64
		max      float64
		groups   []algoitny.SubtaskResult // nil: not checked
	}{
		{"AllOrNothingPasses", []algoitny.Subtask{group("a", 30, aon, []string{"1", "2"})},
			[]algoitny.TestResult{ac("1"), ac("2")}, 30, 30,
			[]algoitny.SubtaskResult{{Name: "a", Points: 30, MaxPoints: 30, Passed: 2, Total: 2}}},
		{"AllOrNothingOneFails", []algoitny.Subtask{group("a", 30, aon, []string{"1", "2"}), group("b", 70, aon, []string{"3"})},
			[]algoitny.TestResult{ac("1"), wa("2"), ac("3")}, 70, 100,
			[]algoitny.SubtaskResult{{Name: "a", Points: 0, MaxPoints: 30, Passed: 1, Total: 2}, {Name: "b", Points: 70, MaxPoints: 70, Passed: 1, Total: 1}}},
		{"AllOrNothingIgnoresPartialPoints", []algoitny.Subtask{group("a", 10, aon, []string{"1"})},
			[]algoitny.TestResult{pts("1", 0.9)}, 0, 10, nil},
		{"SumProportional", []algoitny.Subtask{group("a", 40, sum, []string{"1", "2", "3", "4"})},
			[]algoitny.TestResult{ac("1"), wa("2"), ac("3"), ac("4")}, 30, 40,
			[]algoitny.SubtaskResult{{Name: "a", Points: 30, MaxPoints: 40, Passed: 3, Total: 4}}},
		{"SumCheckerPoints", []algoitny.Subtask{group("a", 100, sum, []string{"1", "2"})},
			[]algoitny.TestResult{pts("1", 0.5), ac("2")}, 75, 100,
			[]algoitny.SubtaskResult{{Name: "a", Points: 75, MaxPoints: 100, Passed: 1, Total: 2}}},
		{"DependencyFailsBlocks", []algoitny.Subtask{group("a", 20, aon, []string{"1"}), group("b", 80, sum, []string{"2"}, "a")},
			[]algoitny.TestResult{wa("1"), ac("2")}, 0, 100,
			[]algoitny.SubtaskResult{{Name: "a", Points: 0, MaxPoints: 20, Passed: 0, Total: 1}, {Name: "b", Points: 0, MaxPoints: 80, Passed: 1, Total: 1}}},
		{"DependencyPartialSumBlocks", []algoitny.Subtask{group("a", 20, sum, []string{"1", "2"}), group("b", 80, aon, []string{"3"}, "a")},
			[]algoitny.TestResult{ac("1"), wa("2"), ac("3")}, 10, 100, nil},
		{"DependencyTransitive", []algoitny.Subtask{group("c", 50, aon, []string{"3"}, "b"), group("a", 0, aon, []string{"1"}), group("b", 50, aon, []string{"2"}, "a")},
			[]algoitny.TestResult{wa("1"), ac("2"), ac("3")}, 0, 100, nil},
		{"DependencyMet", []algoitny.Subtask{group("samples", 0, aon, []string{"1"}), group("b", 100, aon, []string{"2"}, "samples")},
			[]algoitny.TestResult{ac("1"), ac("2")}, 100, 100, nil},
		{"MissingResultFails", []algoitny.Subtask{group("a", 10, sum, []string{"1", "2"})},
			[]algoitny.TestResult{ac("1")}, 5, 10, nil},
		{"NoResultsCompilationError", []algoitny.Subtask{group("a", 10, aon, []string{"1"})}, nil, 0, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := algoitny.ScoreSubtasks(tc.subtasks, tc.results)
			if s == nil {
				t.Fatal("nil score")
			}
			if s.Score != tc.score || s.MaxScore != tc.max {
				t.Fatalf("score %v of %v, want %v of %v (%+v)", s.Score, s.MaxScore, tc.score, tc.max, s.Subtasks)
			}
			if tc.groups == nil {
				return
			}
			if len(s.Subtasks) != len(tc.groups) {
				t.Fatalf("groups %+v, want %+v", s.Subtasks, tc.groups)
			}
			for i := range tc.groups {
				if s.Subtasks[i] != tc.groups[i] {
					t.Fatalf("group %d: %+v, want %+v", i, s.Subtasks[i], tc.groups[i])
				}
			}
		})
	}
	t.Run("NoSubtasks", func(t *testing.T) {
		t.Parallel()
		if s := algoitny.ScoreSubtasks(nil, nil); s != nil {
			t.Fatalf("score %+v, want nil", s)
		}
	})
}

// TestPruneSubtasks: removed tests leave their subtasks, a subtask left
// without tests goes and leaves the dependencies of the others, a replaced
// test is renamed in place (once), and the input is not modified.
func TestPruneSubtasks(t *testing.T) {
	t.Parallel()
	g := func(name string, tests []string, deps ...string) algoitny.Subtask {
		return algoitny.Subtask{Name: name, Points: 10, Mode: algoitny.ScoreAllOrNothing, TestIDs: tests, DependsOn: deps}
	}
	subtasks := []algoitny.Subtask{g("samples", []string{"s1"}), g("small", []string{"1", "2"}, "samples"), g("large", []string{"3"}, "samples", "small")}
	for _, tc := range []struct {
		name    string
		gone    map[string]string
		want    []algoitny.Subtask
		changed bool
	}{
		{"Unrelated", map[string]string{"9": ""}, subtasks, false},
		{"OneOfTwo", map[string]string{"2": ""}, []algoitny.Subtask{g("samples", []string{"s1"}), g("small", []string{"1"}, "samples"), g("large", []string{"3"}, "samples", "small")}, true},
		{"EmptiedGoesAndLeavesTheDependencies", map[string]string{"1": "", "2": ""},
			[]algoitny.Subtask{g("samples", []string{"s1"}), g("large", []string{"3"}, "samples")}, true},
		{"AllGone", map[string]string{"s1": "", "1": "", "2": "", "3": ""}, nil, true},
		{"Replaced", map[string]string{"1": "1b", "2": "2b", "3": "3b"},
			[]algoitny.Subtask{g("samples", []string{"s1"}), g("small", []string{"1b", "2b"}, "samples"), g("large", []string{"3b"}, "samples", "small")}, true},
		{"ReplacedByOneNamedAlready", map[string]string{"1": "2"},
			[]algoitny.Subtask{g("samples", []string{"s1"}), g("small", []string{"2"}, "samples"), g("large", []string{"3"}, "samples", "small")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := algoitny.PruneSubtasks(subtasks, tc.gone)
			if changed != tc.changed || (changed && !reflect.DeepEqual(got, tc.want)) {
				t.Fatalf("PruneSubtasks = %+v, %v; want %+v, %v", got, changed, tc.want, tc.changed)
			}
		})
	}
	if want := []string{"1", "2"}; !reflect.DeepEqual(subtasks[1].TestIDs, want) || len(subtasks[2].DependsOn) != 2 {
		t.Fatalf("the input changed: %+v", subtasks)
	}
}
