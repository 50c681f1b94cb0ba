package problems_test

import (
	"context"
	"errors"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/problems"
)

// subtaskStore holds one problem with tests t1, t2, t3 and records updates.
type subtaskStore struct {
	problems.Store
	updated *algoitny.ProblemUpdate
}

func (s *subtaskStore) GetProblem(_ context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	return &algoitny.Problem{Platform: ref.Platform, ProblemID: ref.ProblemID, Title: "P", Language: algoitny.LanguagePython,
		TimeLimitMs: 1000, MemoryLimitMB: 256, Checker: algoitny.Checker{Kind: algoitny.CheckerLines}, TestCaseCount: 3, CreatedBy: "author"}, nil
}

func (s *subtaskStore) ListTestCases(context.Context, algoitny.ProblemRef, algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error) {
	return algoitny.Page[*algoitny.TestCase]{Items: []*algoitny.TestCase{{ID: "t1"}, {ID: "t2"}, {ID: "t3"}}}, nil
}

func (s *subtaskStore) UpdateProblem(_ context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error) {
	s.updated = &u
	return s.GetProblem(context.Background(), ref)
}

func TestUpdateSubtasks(t *testing.T) {
	t.Parallel()
	ctx := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "author", IsStaff: true}})
	ref := algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "p1"}
	g := func(name string, points float64, tests []string, deps ...string) algoitny.Subtask {
		return algoitny.Subtask{Name: name, Points: points, Mode: algoitny.ScoreAllOrNothing, TestIDs: tests, DependsOn: deps}
	}
	for _, tc := range []struct {
		name     string
		subtasks []algoitny.Subtask
		field    string // "" = OK
	}{
		{"OK", []algoitny.Subtask{g("a", 30, []string{"t1"}), g("b", 70, []string{"t2", "t3"}, "a")}, ""},
		{"OKNone", []algoitny.Subtask{}, ""},
		{"ErrUnknownTest", []algoitny.Subtask{g("a", 30, []string{"t9"})}, "subtasks.testIds"},
		{"ErrNoTests", []algoitny.Subtask{g("a", 30, nil)}, "subtasks.testIds"},
		{"ErrNegativePoints", []algoitny.Subtask{g("a", -1, []string{"t1"})}, "subtasks.points"},
		{"ErrDuplicateName", []algoitny.Subtask{g("a", 1, []string{"t1"}), g("a", 1, []string{"t2"})}, "subtasks.name"},
		{"ErrEmptyName", []algoitny.Subtask{g("", 1, []string{"t1"})}, "subtasks.name"},
		{"ErrBadMode", []algoitny.Subtask{{Name: "a", Points: 1, Mode: "MAX", TestIDs: []string{"t1"}}}, "subtasks.mode"},
		{"ErrUnknownDependency", []algoitny.Subtask{g("a", 1, []string{"t1"}, "z")}, "subtasks.dependsOn"},
		{"ErrSelfDependency", []algoitny.Subtask{g("a", 1, []string{"t1"}, "a")}, "subtasks.dependsOn"},
		{"ErrCycle", []algoitny.Subtask{g("a", 1, []string{"t1"}, "c"), g("b", 1, []string{"t2"}, "a"), g("c", 1, []string{"t3"}, "b")}, "subtasks.dependsOn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &subtaskStore{}
			svc := &problems.Service{Store: store}
			subtasks := tc.subtasks
			_, err := svc.Update(ctx, ref, algoitny.ProblemUpdate{Subtasks: &subtasks})
			if tc.field == "" {
				if err != nil || store.updated == nil || store.updated.Subtasks == nil || len(*store.updated.Subtasks) != len(tc.subtasks) {
					t.Fatalf("Update = %v, stored %+v; want the subtasks stored", err, store.updated)
				}
				return
			}
			var e *algoitny.Error
			if !algoitny.IsCode(err, algoitny.EINVALID) || !errors.As(err, &e) || e.Field != tc.field {
				t.Fatalf("Update = %v, want EINVALID on %s", err, tc.field)
			}
			if store.updated != nil {
				t.Fatal("stored despite the error")
			}
		})
	}
}
