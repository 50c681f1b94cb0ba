package loader_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/loader"
)

// fakeStore counts calls and keys; it holds problems 1-3, users a/b on plan
// Free and nothing else. Methods it does not define panic (nil Store).
type fakeStore struct {
	loader.Store
	mu    sync.Mutex
	calls map[string]int
	keys  map[string]int
}

func newFakeStore() *fakeStore { return &fakeStore{calls: map[string]int{}, keys: map[string]int{}} }

func (s *fakeStore) count(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	s.keys[method] += n
}

func (s *fakeStore) GetProblems(_ context.Context, refs []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error) {
	s.count("GetProblems", len(refs))
	out := map[algoitny.ProblemRef]*algoitny.Problem{}
	for _, r := range refs {
		if r.ProblemID <= "3" {
			out[r] = &algoitny.Problem{Platform: r.Platform, ProblemID: r.ProblemID, Title: "P" + r.ProblemID}
		}
	}
	return out, nil
}

func (s *fakeStore) GetUsersForDisplay(_ context.Context, emails []string) (map[string]*algoitny.User, error) {
	s.count("GetUsersForDisplay", len(emails))
	out := map[string]*algoitny.User{}
	for _, e := range emails {
		if e != strings.ToLower(e) {
			panic("GetUsersForDisplay got a key that is not lower-cased: " + e)
		}
		if e == "a@x.dev" || e == "b@x.dev" {
			out[e] = &algoitny.User{Email: e, PlanName: "Free"}
		}
	}
	return out, nil
}

func (s *fakeStore) GetPlansForDisplay(_ context.Context, names []string) (map[string]*algoitny.Plan, error) {
	s.count("GetPlansForDisplay", len(names))
	return plans(names), nil
}

func (s *fakeStore) GetPlans(_ context.Context, names []string) (map[string]*algoitny.Plan, error) {
	s.count("GetPlans", len(names))
	return plans(names), nil
}

func plans(names []string) map[string]*algoitny.Plan {
	out := map[string]*algoitny.Plan{}
	for _, n := range names {
		if n == "Free" {
			out[n] = &algoitny.Plan{Name: n}
		}
	}
	return out
}

func (s *fakeStore) GetJobs(context.Context, []string) (map[string]*algoitny.Job, error) {
	s.count("GetJobs", 0)
	return nil, nil
}

func (s *fakeStore) ListTestCases(_ context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error) {
	s.count("ListTestCases", 1)
	return algoitny.Page[*algoitny.TestCase]{Items: []*algoitny.TestCase{{ProblemID: ref.ProblemID}}}, nil
}

func history(problem, email string) *algoitny.SearchHistory {
	return &algoitny.SearchHistory{Platform: algoitny.PlatformBaekjoon, ProblemID: problem, UserEmail: email}
}

func TestPrefetchHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := []*algoitny.SearchHistory{
		history("1", "A@x.dev"), history("2", "b@x.dev"), history("1", "b@x.dev"), history("9", "gone@x.dev"), history("3", ""),
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		store := newFakeStore()
		l := loader.New(store)
		l.PrefetchHistory(ctx, items, loader.HistoryFields{Problem: true, User: true})
		want := map[string]int{"GetProblems": 1, "GetUsersForDisplay": 1, "GetPlansForDisplay": 1, "GetPlans": 0}
		for m, n := range want {
			if store.calls[m] != n {
				t.Fatalf("%s called %d times, want %d (%v)", m, store.calls[m], n, store.calls)
			}
		}
		if store.keys["GetProblems"] != 4 || store.keys["GetUsersForDisplay"] != 3 || store.keys["GetPlansForDisplay"] != 1 {
			t.Fatalf("keys not deduplicated: %v", store.keys)
		}
		// Everything the item resolvers ask for is cached now, missing
		// items included (as nil).
		for _, h := range items {
			p, err := l.Problem.Load(ctx, algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})()
			if err != nil || (p == nil) != (h.ProblemID > "3") {
				t.Fatalf("problem %s: %v, %v", h.ProblemID, p, err)
			}
			if h.UserEmail == "" {
				continue
			}
			u, err := l.Author.Load(ctx, h.UserEmail)()
			if err != nil || (u == nil) != (h.UserEmail == "gone@x.dev") {
				t.Fatalf("user %s: %v, %v", h.UserEmail, u, err)
			}
			if u != nil {
				if p, err := l.PlanOf(ctx, u); err != nil || p == nil || p.Name != "Free" {
					t.Fatalf("plan of %s: %v, %v", h.UserEmail, p, err)
				}
			}
		}
		if store.calls["GetProblems"] != 1 || store.calls["GetUsersForDisplay"] != 1 || store.calls["GetPlansForDisplay"] != 1 || store.calls["GetPlans"] != 0 {
			t.Fatalf("the resolvers' loads went to the store: %v", store.calls)
		}
	})

	t.Run("OnlySelectedFields", func(t *testing.T) {
		t.Parallel()
		store := newFakeStore()
		loader.New(store).PrefetchHistory(ctx, items, loader.HistoryFields{User: true})
		if store.calls["GetUsersForDisplay"] != 1 || store.calls["GetProblems"] != 0 {
			t.Fatalf("calls = %v", store.calls)
		}
	})
}

// TestPlanOf: the plan of a user Author loaded (an author shown beside
// other people's items) is read for display; any other user's plan (a
// staff list, a mutation's result) is read as it is.
func TestPlanOf(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newFakeStore()
	l := loader.New(store)
	author, err := l.Author.Load(ctx, "a@x.dev")()
	if err != nil || author == nil {
		t.Fatalf("author: %v, %v", author, err)
	}
	if p, err := l.PlanOf(ctx, author); err != nil || p == nil || store.calls["GetPlansForDisplay"] != 1 || store.calls["GetPlans"] != 0 {
		t.Fatalf("an author's plan: %v, %v, calls %v", p, err, store.calls)
	}
	listed := &algoitny.User{Email: "a@x.dev", PlanName: "Free"} // same user, read otherwise
	if p, err := l.PlanOf(ctx, listed); err != nil || p == nil || store.calls["GetPlans"] != 1 {
		t.Fatalf("another user's plan: %v, %v, calls %v", p, err, store.calls)
	}
	if p, err := l.PlanOf(ctx, &algoitny.User{Email: "c@x.dev"}); p != nil || err != nil {
		t.Fatalf("no plan: %v, %v", p, err)
	}
	l.ClearAll()
	if _, err := l.PlanOf(ctx, author); err != nil || store.calls["GetPlans"] != 2 {
		t.Fatalf("after ClearAll an earlier author is not one of this event's: calls %v", store.calls)
	}
}

// TestTestCasesShareAStartedLoad: a page loaded early (the prefetch of
// Query.problem) is what a later Load of the same key gets, with one Query.
func TestTestCasesShareAStartedLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newFakeStore()
	l := loader.New(store)
	key := loader.TestCasePage{Ref: algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "1"}, First: 20}
	l.TestCases.Load(ctx, key)
	p, err := l.TestCases.Load(ctx, key)()
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("page = %+v, %v", p, err)
	}
	if store.calls["ListTestCases"] != 1 {
		t.Fatalf("ListTestCases called %d times", store.calls["ListTestCases"])
	}
}

func TestWithLazy(t *testing.T) {
	t.Parallel()
	ctx := loader.WithLazy(context.Background(), newFakeStore())
	if _, ok := loader.Built(ctx); ok {
		t.Fatal("built before use")
	}
	l := loader.For(ctx)
	if b, ok := loader.Built(ctx); !ok || b != l || loader.For(ctx) != l {
		t.Fatal("For must build once and keep the loaders")
	}
	if _, ok := loader.From(context.Background()); ok {
		t.Fatal("loaders without WithLazy")
	}
}
