package problems_test

import (
	"context"
	"errors"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/problems"
)

// failingStore stores problems but fails to store test cases, and records
// what was discarded.
type failingStore struct {
	problems.Store // the methods Create does not use
	created        []algoitny.ProblemRef
	discarded      []string
}

var errStore = errors.New("test cases could not be written")

func (s *failingStore) CreateProblem(_ context.Context, p *algoitny.Problem, _ int) error {
	s.created = append(s.created, p.Ref())
	return nil
}

func (s *failingStore) AddTestCasesWithSubtasks(context.Context, algoitny.ProblemRef, []*algoitny.TestCase, []algoitny.Subtask) ([]algoitny.Subtask, error) {
	return nil, errStore
}

func (s *failingStore) DiscardProblem(ctx context.Context, ref algoitny.ProblemRef, createdBy string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.discarded = append(s.discarded, string(ref.Platform)+"/"+ref.ProblemID+" by "+createdBy)
	return nil
}

// TestCreateLeavesNothingHalfWritten: a problem whose test cases cannot be
// stored is discarded again — even when the client has gone away — so that
// no empty draft stays behind to hold a slot of the plan and refuse the
// retry with CONFLICT.
func TestCreateLeavesNothingHalfWritten(t *testing.T) {
	store := &failingStore{}
	svc := &problems.Service{Store: store}
	ctx, cancel := context.WithCancel(algoitny.WithActor(context.Background(),
		&algoitny.Actor{User: &algoitny.User{ID: "author", IsStaff: true}}))
	cancel() // the client went away while the test cases were written
	_, err := svc.Create(ctx, problems.CreateInput{
		Problem: algoitny.Problem{Platform: algoitny.PlatformCustom, ProblemID: "p1", Title: "P1", Language: algoitny.LanguagePython,
			SolutionCode: "print(1)", TimeLimitMs: 1000, MemoryLimitMB: 256, Checker: algoitny.Checker{Kind: algoitny.CheckerLines}},
		TestCases: []*algoitny.TestCase{{Input: "1\n", Output: "1\n"}},
	})
	if !errors.Is(err, errStore) {
		t.Fatalf("Create = %v, want the store's error", err)
	}
	if len(store.created) != 1 || len(store.discarded) != 1 || store.discarded[0] != "custom/p1 by author" {
		t.Fatalf("created %v, discarded %v; want the created problem discarded", store.created, store.discarded)
	}
}
