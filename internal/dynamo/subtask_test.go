package dynamo_test

import (
	"context"
	"reflect"
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
