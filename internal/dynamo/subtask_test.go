package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestSubtasksAndScores: a problem's subtasks and an execution's score
// (with a checker's per-test points) are stored and read back as given.
func TestSubtasksAndScores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ProblemSubtasks", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformCustom, "st", algoitny.LanguagePython, false)
		p.Subtasks = []algoitny.Subtask{{Name: "a", Points: 30, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{"1"}}}
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if !reflect.DeepEqual(got.Subtasks, p.Subtasks) {
			t.Fatalf("created subtasks %+v, want %+v", got.Subtasks, p.Subtasks)
		}
		next := []algoitny.Subtask{
			{Name: "a", Points: 30, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{"1", "2"}},
			{Name: "b", Points: 70.5, Mode: algoitny.ScoreSum, TestIDs: []string{"3"}, DependsOn: []string{"a"}},
		}
		got = algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Subtasks: &next}))
		if !reflect.DeepEqual(got.Subtasks, next) {
			t.Fatalf("updated subtasks %+v, want %+v", got.Subtasks, next)
		}
		none := []algoitny.Subtask{}
		got = algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Subtasks: &none}))
		if len(got.Subtasks) != 0 {
			t.Fatalf("subtasks %+v after removing them", got.Subtasks)
		}
	})

	t.Run("HistoryScore", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		h := newHistory("u1", algoitny.PlatformCustom, "st", algoitny.LanguagePython, false)
		half := 0.5
		h.TestResults[1].Points = &half
		h.Score = &algoitny.Score{Score: 15, MaxScore: 100, Subtasks: []algoitny.SubtaskResult{
			{Name: "a", Points: 15, MaxPoints: 30, Passed: 1, Total: 2}, {Name: "b", Points: 0, MaxPoints: 70, Passed: 0, Total: 0}}}
		algoitnytest.OK(t, db.CreateHistory(ctx, h))
		got := algoitnytest.Must[*algoitny.SearchHistory](t)(db.GetHistory(ctx, h.Ref()))
		if !reflect.DeepEqual(got.Score, h.Score) || got.TestResults[1].Points == nil || *got.TestResults[1].Points != 0.5 || got.TestResults[0].Points != nil {
			t.Fatalf("score %+v, results %+v; want %+v", got.Score, got.TestResults, h.Score)
		}
		plain := newHistory("u1", algoitny.PlatformCustom, "plain", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateHistory(ctx, plain))
		if got := algoitnytest.Must[*algoitny.SearchHistory](t)(db.GetHistory(ctx, plain.Ref())); got.Score != nil {
			t.Fatalf("score %+v for a problem without subtasks", got.Score)
		}
	})
}

// TestSubtasksFollowTheirTests: subtasks given with a new problem's tests
// name them by position and are stored with the last of them (a position
// out of range writes nothing); deleting tests removes their ids from the
// subtasks in the same transactions — a subtask left without tests goes,
// and leaves the others' dependencies — and a replaced test's successor
// takes its place; subtasks checked against tests that changed since are
// refused.
func TestSubtasksFollowTheirTests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	g := func(name string, indexes []int, deps ...string) algoitny.Subtask {
		return algoitny.Subtask{Name: name, Points: 10, Mode: algoitny.ScoreAllOrNothing, TestIndexes: indexes, DependsOn: deps}
	}
	// cases returns n small tests; with 150 the write takes two transactions.
	cases := func(n int) []*algoitny.TestCase {
		out := make([]*algoitny.TestCase, n)
		for i := range out {
			out[i] = &algoitny.TestCase{Input: fmt.Sprintf("%d\n", i), Output: fmt.Sprintf("%d\n", 2*i)}
		}
		return out
	}
	ids := func(tests []*algoitny.TestCase, indexes ...int) []string {
		out := make([]string, len(indexes))
		for i, x := range indexes {
			out[i] = tests[x].ID
		}
		return out
	}
	names := func(subtasks []algoitny.Subtask) string {
		var out []string
		for _, st := range subtasks {
			out = append(out, fmt.Sprintf("%s%d%v", st.Name, len(st.TestIDs), st.DependsOn))
		}
		return strings.Join(out, " ")
	}
	create := func(t *testing.T, id string, n int, subtasks []algoitny.Subtask) (*algoitny.Problem, []*algoitny.TestCase) {
		t.Helper()
		p := newProblem(algoitny.PlatformCustom, id, algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		tests := cases(n)
		stored := algoitnytest.Must[[]algoitny.Subtask](t)(db.AddTestCasesWithSubtasks(ctx, p.Ref(), tests, subtasks))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if !reflect.DeepEqual(got.Subtasks, stored) || got.TestCaseCount != n {
			t.Fatalf("problem has %d tests, subtasks %+v; want %d and %+v", got.TestCaseCount, got.Subtasks, n, stored)
		}
		return got, tests
	}

	t.Run("CreatedByPosition", func(t *testing.T) {
		t.Parallel()
		p, tests := create(t, "bypos", 150, []algoitny.Subtask{g("first", []int{0, 1}), g("across", []int{98, 99, 149}, "first")})
		want := []algoitny.Subtask{
			{Name: "first", Points: 10, Mode: algoitny.ScoreAllOrNothing, TestIDs: ids(tests, 0, 1)},
			{Name: "across", Points: 10, Mode: algoitny.ScoreAllOrNothing, TestIDs: ids(tests, 98, 99, 149), DependsOn: []string{"first"}},
		}
		if !reflect.DeepEqual(p.Subtasks, want) {
			t.Fatalf("subtasks %+v, want %+v", p.Subtasks, want)
		}
	})
	t.Run("ErrPositionOutOfRange", func(t *testing.T) {
		t.Parallel()
		p := newProblem(algoitny.PlatformCustom, "badpos", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		_, err := db.AddTestCasesWithSubtasks(ctx, p.Ref(), cases(2), []algoitny.Subtask{g("a", []int{0, 2})})
		if e := algoitnytest.ErrCode(t, err, algoitny.EINVALID); e.Field != "subtasks.testIndexes" {
			t.Fatalf("error %v, want subtasks.testIndexes", err)
		}
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		page := algoitnytest.Must[algoitny.Page[*algoitny.TestCase]](t)(db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10}))
		if got.TestCaseCount != 0 || len(got.Subtasks) != 0 || len(page.Items) != 0 {
			t.Fatalf("%d tests (%d listed), subtasks %+v after a refused write; want none", got.TestCaseCount, len(page.Items), got.Subtasks)
		}
	})
	t.Run("DeletionPrunes", func(t *testing.T) {
		t.Parallel()
		p, tests := create(t, "prune", 150, []algoitny.Subtask{g("samples", []int{0}), g("small", []int{1, 2}, "samples"),
			g("large", []int{3, 120, 149}, "samples", "small")})
		// One of small's tests: small keeps the other.
		algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids(tests, 2)))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if s := names(got.Subtasks); s != "samples1[] small1[samples] large3[samples small]" || got.Subtasks[1].TestIDs[0] != tests[1].ID {
			t.Fatalf("after deleting one of small's tests: %s", s)
		}
		// The rest of small, and tests of large over two transactions
		// (≤ 99 cases each): small goes, and leaves large's dependencies.
		var many []int
		for i := 1; i < 149; i++ {
			if i != 2 && i != 3 {
				many = append(many, i)
			}
		}
		if n := algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids(tests, many...))); n != len(many) {
			t.Fatalf("deleted %d, want %d", n, len(many))
		}
		got = algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if s := names(got.Subtasks); s != "samples1[] large2[samples]" || !reflect.DeepEqual(got.Subtasks[1].TestIDs, ids(tests, 3, 149)) || got.TestCaseCount != 3 {
			t.Fatalf("after deleting small's and most of large's tests: %s %v, %d tests", s, got.Subtasks, got.TestCaseCount)
		}
		// Everything: no subtasks are left.
		algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids(tests, 0, 3, 149)))
		got = algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if len(got.Subtasks) != 0 || got.TestCaseCount != 0 {
			t.Fatalf("after deleting every test: subtasks %+v, %d tests", got.Subtasks, got.TestCaseCount)
		}
	})
	t.Run("ReplacementTakesThePlace", func(t *testing.T) {
		t.Parallel()
		p, tests := create(t, "replace", 3, []algoitny.Subtask{g("a", []int{0, 1}), g("b", []int{2}, "a")})
		rebuilt := cases(2)
		algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), rebuilt))
		// Tests 0 and 1 are rebuilt; test 2 is not, and goes with b.
		algoitnytest.Must[int](t)(db.ReplaceTestCases(ctx, p.Ref(), map[string]string{tests[0].ID: rebuilt[0].ID, tests[1].ID: rebuilt[1].ID, tests[2].ID: ""}))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		want := []algoitny.Subtask{{Name: "a", Points: 10, Mode: algoitny.ScoreAllOrNothing, TestIDs: []string{rebuilt[0].ID, rebuilt[1].ID}}}
		if !reflect.DeepEqual(got.Subtasks, want) || got.TestCaseCount != 2 {
			t.Fatalf("subtasks %+v, %d tests; want %+v and 2", got.Subtasks, got.TestCaseCount, want)
		}
	})
	t.Run("ConcurrentSubtasksAreNotLost", func(t *testing.T) {
		t.Parallel()
		// Subtasks written between the deletion's read and its write,
		// naming the test it deletes: the deletion is refused, and done
		// again on what is there now.
		for _, before := range [][]algoitny.Subtask{nil, {g("a", []int{0})}} {
			p, tests := create(t, fmt.Sprintf("race%d", len(before)), 2, before)
			refused := algoitnytest.Must[bool](t)(db.RemovalRace(ctx, p.Ref(), tests[1].ID, func() {
				set := []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIDs: ids(tests, 0)}, {Name: "b", Points: 1, Mode: algoitny.ScoreSum, TestIDs: ids(tests, 1)}}
				algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Subtasks: &set}))
			}))
			if !refused {
				t.Fatalf("with subtasks %+v before: the deletion was not refused after the subtasks changed", before)
			}
			algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids(tests, 1)))
			if got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref())); names(got.Subtasks) != "a1[]" || got.TestCaseCount != 1 {
				t.Fatalf("with subtasks %+v before: %s, %d tests; want a alone and 1 test", before, names(got.Subtasks), got.TestCaseCount)
			}
		}
	})
	t.Run("ErrTestsChangedSince", func(t *testing.T) {
		t.Parallel()
		p, tests := create(t, "since", 2, nil)
		read := p.UpdatedAt
		algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids(tests, 1)))
		subtasks := []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIDs: ids(tests, 0, 1)}}
		_, err := db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Subtasks: &subtasks, IfUnchangedSince: &read})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		if got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref())); len(got.Subtasks) != 0 {
			t.Fatalf("subtasks %+v stored despite the conflict", got.Subtasks)
		}
		now := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref())).UpdatedAt
		subtasks = subtasks[:1]
		subtasks[0].TestIDs = ids(tests, 0)
		algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Subtasks: &subtasks, IfUnchangedSince: &now}))
	})
}
