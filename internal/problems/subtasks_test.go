package problems_test

import (
	"context"
	"errors"
	"strconv"
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
		{"ErrTestTwice", []algoitny.Subtask{g("a", 30, []string{"t1", "t1"})}, "subtasks.testIds"},
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
				// Only if no test was deleted since they were checked
				// (removing them all needs no such condition).
				if (store.updated.IfUnchangedSince == nil) != (len(tc.subtasks) == 0) {
					t.Fatalf("condition that the problem is unchanged since its tests were read: %v, want it for subtasks only", store.updated.IfUnchangedSince)
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

// createStore records what Create writes: nothing may be written for a
// problem whose subtasks are refused.
type createStore struct {
	problems.Store
	writes   []string
	subtasks []algoitny.Subtask
}

func (s *createStore) CreateProblem(_ context.Context, p *algoitny.Problem, _ int) error {
	s.writes = append(s.writes, "problem")
	return nil
}

func (s *createStore) AddTestCasesWithSubtasks(_ context.Context, _ algoitny.ProblemRef, cases []*algoitny.TestCase, subtasks []algoitny.Subtask) ([]algoitny.Subtask, error) {
	s.writes = append(s.writes, "tests")
	s.subtasks = subtasks
	return subtasks, nil
}

func (s *createStore) GetProblem(_ context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	return &algoitny.Problem{Platform: ref.Platform, ProblemID: ref.ProblemID}, nil
}

// TestCreateSubtasks: the subtasks of a new problem name its tests by
// position; they are checked before anything is written (a position out of
// range, twice or none is refused on subtasks.testIndexes, ids on
// subtasks.testIds, the rest as updateProblem's) and handed to storage with
// the tests.
func TestCreateSubtasks(t *testing.T) {
	t.Parallel()
	ctx := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "author", IsStaff: true}})
	g := func(name string, points float64, tests []int, deps ...string) algoitny.Subtask {
		return algoitny.Subtask{Name: name, Points: points, Mode: algoitny.ScoreAllOrNothing, TestIndexes: tests, DependsOn: deps}
	}
	for _, tc := range []struct {
		name     string
		subtasks []algoitny.Subtask
		field    string // "" = OK
	}{
		{"OK", []algoitny.Subtask{g("a", 30, []int{0}), g("b", 70, []int{1, 2}, "a")}, ""},
		{"OKNone", nil, ""},
		{"ErrIndexTooLarge", []algoitny.Subtask{g("a", 30, []int{0}), g("b", 70, []int{1, 3})}, "subtasks.testIndexes"},
		{"ErrNegativeIndex", []algoitny.Subtask{g("a", 30, []int{-1})}, "subtasks.testIndexes"},
		{"ErrIndexTwice", []algoitny.Subtask{g("a", 30, []int{1, 1})}, "subtasks.testIndexes"},
		{"ErrNoTests", []algoitny.Subtask{g("a", 30, nil)}, "subtasks.testIndexes"},
		{"ErrIDs", []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIDs: []string{"t1"}}}, "subtasks.testIds"},
		{"ErrIDsAndIndexes", []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIDs: []string{"t1"}, TestIndexes: []int{0}}}, "subtasks.testIds"},
		{"ErrCycle", []algoitny.Subtask{g("a", 1, []int{0}, "b"), g("b", 1, []int{1}, "a")}, "subtasks.dependsOn"},
		{"ErrDuplicateName", []algoitny.Subtask{g("a", 1, []int{0}), g("a", 1, []int{1})}, "subtasks.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &createStore{}
			svc := &problems.Service{Store: store}
			_, err := svc.Create(ctx, problems.CreateInput{
				Problem:   algoitny.Problem{Platform: algoitny.PlatformCustom, ProblemID: "p1", Title: "P", Language: algoitny.LanguagePython},
				TestCases: []*algoitny.TestCase{{Input: "1\n", Output: "1\n"}, {Input: "2\n", Output: "2\n"}, {Input: "3\n", Output: "3\n"}},
				Subtasks:  tc.subtasks,
			})
			if tc.field == "" {
				if err != nil || len(store.writes) != 2 || len(store.subtasks) != len(tc.subtasks) {
					t.Fatalf("Create = %v, writes %v, subtasks %+v; want the problem, then the tests with the subtasks", err, store.writes, store.subtasks)
				}
				return
			}
			var e *algoitny.Error
			if !algoitny.IsCode(err, algoitny.EINVALID) || !errors.As(err, &e) || e.Field != tc.field {
				t.Fatalf("Create = %v, want EINVALID on %s", err, tc.field)
			}
			if len(store.writes) != 0 {
				t.Fatalf("wrote %v despite the error", store.writes)
			}
		})
	}
	// The subtasks live in the problem's item (400 KB at most): 100
	// subtasks of 21 tests each name 2,100, over MaxSubtaskTests.
	t.Run("ErrTooManyTests", func(t *testing.T) {
		t.Parallel()
		var cases []*algoitny.TestCase
		var all []int
		for i := range 21 {
			cases = append(cases, &algoitny.TestCase{Input: strconv.Itoa(i) + "\n", Output: "1\n"})
			all = append(all, i)
		}
		var subtasks []algoitny.Subtask
		for i := range problems.MaxSubtasks {
			subtasks = append(subtasks, g("s"+strconv.Itoa(i), 1, all))
		}
		store := &createStore{}
		_, err := (&problems.Service{Store: store}).Create(ctx, problems.CreateInput{
			Problem:   algoitny.Problem{Platform: algoitny.PlatformCustom, ProblemID: "p1", Title: "P", Language: algoitny.LanguagePython},
			TestCases: cases, Subtasks: subtasks,
		})
		var e *algoitny.Error
		if !errors.As(err, &e) || e.Code != algoitny.EINVALID || e.Field != "subtasks" || len(store.writes) != 0 {
			t.Fatalf("Create = %v, writes %v; want EINVALID on subtasks and nothing written", err, store.writes)
		}
	})
	t.Run("ErrProblemSubtasks", func(t *testing.T) {
		t.Parallel()
		store := &createStore{}
		_, err := (&problems.Service{Store: store}).Create(ctx, problems.CreateInput{
			Problem: algoitny.Problem{Platform: algoitny.PlatformCustom, ProblemID: "p1", Title: "P", Language: algoitny.LanguagePython,
				Subtasks: []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIDs: []string{"t1"}}}},
			TestCases: []*algoitny.TestCase{{Input: "1\n", Output: "1\n"}},
		})
		if !algoitny.IsCode(err, algoitny.EINVALID) || len(store.writes) != 0 {
			t.Fatalf("Create = %v, writes %v; want EINVALID and nothing written", err, store.writes)
		}
	})
}
