// Package loader batches the per-field lookups of a GraphQL operation into
// BatchGetItem calls (graph-gophers/dataloader/v7): fifty history items ask
// for their problem, their author and the author's plan, and DynamoDB sees
// three requests, not a hundred and fifty.
//
// Authors and their plans, shown beside other people's items, are display
// data: the Author and AuthorPlan loaders read them through the store's
// display copy (at most a second old; none at all when warm). Plan reads
// a plan consistently, for users not shown as authors (a staff list, a
// mutation's result). What a request may do is never decided here: the
// signed-in user and their plan come with the session (AuthLookup), and
// the services read what they decide on themselves.
//
// A fresh set of loaders is made per operation (per HTTP request; per
// subscription event for websockets), so their caches never outlive what
// they were filled for.
package loader

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/graph-gophers/dataloader/v7"
)

// Store is what the loaders read from (internal/dynamo).
type Store interface {
	GetProblems(ctx context.Context, refs []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error)
	// GetUsersForDisplay and GetPlansForDisplay may answer from a copy at
	// most the store's display bound old; GetPlans reads the plans as they
	// are.
	GetUsersForDisplay(ctx context.Context, emails []string) (map[string]*algoitny.User, error)
	GetPlansForDisplay(ctx context.Context, names []string) (map[string]*algoitny.Plan, error)
	GetPlans(ctx context.Context, names []string) (map[string]*algoitny.Plan, error)
	GetJobs(ctx context.Context, ids []string) (map[string]*algoitny.Job, error)
	ListTestCases(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error)
	GetACList(ctx context.Context, userID string) (*algoitny.ACList, error)
}

// TestCasePage asks for one page of a problem's test cases.
type TestCasePage struct {
	Ref   algoitny.ProblemRef
	First int
	After string
	// Last and Before page backward (algoitny.PageRequest).
	Last   int
	Before string
}

// Loaders is one operation's set of loaders. A missing item loads as nil
// with no error; callers decide what absence means.
type Loaders struct {
	Problem *dataloader.Loader[algoitny.ProblemRef, *algoitny.Problem]
	// Author loads, by email (lower-cased), the users shown beside other
	// people's items (SearchHistory.user, LeaderboardEntry.user): display
	// copies, never to decide on.
	Author *dataloader.Loader[string, *algoitny.User]
	// AuthorPlan loads the plans of the users Author returned (PlanOf), by
	// name: display copies too.
	AuthorPlan *dataloader.Loader[string, *algoitny.Plan]
	// Plan loads, by name and consistently, the plans of every other user
	// (a staff list of users, a mutation's result).
	Plan      *dataloader.Loader[string, *algoitny.Plan]
	Job       *dataloader.Loader[string, *algoitny.Job]
	TestCases *dataloader.Loader[TestCasePage, algoitny.Page[*algoitny.TestCase]]
	// SolvedByMe says whether the operation's actor has an AtCoder problem
	// accepted: the whole AC list is one item, read once per batch.
	SolvedByMe *dataloader.Loader[string, bool]

	store Store
	// authors holds the users Author returned or was primed with: their
	// plans are display data too (PlanOf).
	authors sync.Map // *algoitny.User → struct{}
}

// batchCapacity matches BatchGetItem's 100 keys per call.
const batchCapacity = 100

// wait is how long a loader collects keys before it fetches. gqlgen resolves
// the fields of a list concurrently, so the keys arrive within microseconds
// on an idle machine; on a busy one some arrive later and make a second
// batch, which is why lists prefetch what their items need (PrefetchHistory)
// instead of relying on this window.
const wait = 2 * time.Millisecond

// New returns a fresh set of loaders over store.
func New(store Store) *Loaders {
	l := &Loaders{store: store}
	// The store's methods are called through closures, so a nil store
	// fails only when a loader is used.
	l.Problem = newLoader(func(ctx context.Context, k []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error) {
		return store.GetProblems(ctx, k)
	}, func(k algoitny.ProblemRef) algoitny.ProblemRef { return k })
	l.Author = newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.User, error) {
		found, err := store.GetUsersForDisplay(ctx, k)
		l.markAuthors(found)
		return found, err
	}, func(k string) string { return strings.ToLower(k) })
	l.AuthorPlan = newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.Plan, error) {
		return store.GetPlansForDisplay(ctx, k)
	}, func(k string) string { return k })
	l.Plan = newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.Plan, error) {
		return store.GetPlans(ctx, k)
	}, func(k string) string { return k })
	l.Job = newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.Job, error) { return store.GetJobs(ctx, k) },
		func(k string) string { return k })
	l.SolvedByMe = dataloader.NewBatchedLoader(func(ctx context.Context, ids []string) []*dataloader.Result[bool] {
		out := make([]*dataloader.Result[bool], len(ids))
		a := algoitny.ActorFrom(ctx)
		var solved map[string]bool
		var err error
		if a.SignedIn() {
			var list *algoitny.ACList
			if list, err = store.GetACList(ctx, a.UserID()); err == nil && list != nil {
				solved = make(map[string]bool, len(list.ProblemIDs))
				for _, id := range list.ProblemIDs {
					solved[id] = true
				}
			}
		}
		for i, id := range ids {
			out[i] = &dataloader.Result[bool]{Data: solved[id], Error: err}
		}
		return out
	}, dataloader.WithBatchCapacity[string, bool](1000), dataloader.WithWait[string, bool](wait))
	l.TestCases = dataloader.NewBatchedLoader(func(ctx context.Context, keys []TestCasePage) []*dataloader.Result[algoitny.Page[*algoitny.TestCase]] {
		// DynamoDB has no batched Query: run the distinct pages concurrently.
		out := make([]*dataloader.Result[algoitny.Page[*algoitny.TestCase]], len(keys))
		var wg sync.WaitGroup
		for i, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := store.ListTestCases(ctx, k.Ref, algoitny.PageRequest{First: k.First, After: k.After, Last: k.Last, Before: k.Before})
				out[i] = &dataloader.Result[algoitny.Page[*algoitny.TestCase]]{Data: p, Error: err}
			}()
		}
		wg.Wait()
		return out
		// Every page is a Query of its own, so waiting for more keys
		// only adds latency: fetch at once.
	}, dataloader.WithBatchCapacity[TestCasePage, algoitny.Page[*algoitny.TestCase]](batchCapacity), dataloader.WithWait[TestCasePage, algoitny.Page[*algoitny.TestCase]](0))
	return l
}

// markAuthors remembers users as loaded by Author (PlanOf).
func (l *Loaders) markAuthors(users map[string]*algoitny.User) {
	for _, u := range users {
		if u != nil {
			l.authors.Store(u, struct{}{})
		}
	}
}

// PlanOf loads the plan of u (nil when u has none): a display copy for a
// user Author returned (an author is display data, and so is their plan),
// a consistent read for any other — a user a staff list or a mutation
// returned, whose plan is shown as it is. The signed-in user's own plan,
// read with the session, is the resolver's to use first.
func (l *Loaders) PlanOf(ctx context.Context, u *algoitny.User) (*algoitny.Plan, error) {
	if u == nil || u.PlanName == "" {
		return nil, nil
	}
	if _, ok := l.authors.Load(u); ok {
		return l.AuthorPlan.Load(ctx, u.PlanName)()
	}
	return l.Plan.Load(ctx, u.PlanName)()
}

// newLoader builds a loader over a batch-get function; norm maps a key to the
// key of the result map.
func newLoader[K comparable, V any](get func(context.Context, []K) (map[K]V, error), norm func(K) K) *dataloader.Loader[K, V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		found, err := get(ctx, keys)
		out := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
				continue
			}
			out[i] = &dataloader.Result[V]{Data: found[norm(k)]}
		}
		return out
	}, dataloader.WithBatchCapacity[K, V](batchCapacity), dataloader.WithWait[K, V](wait))
}

type ctxKey struct{}

// lazy builds an operation's loaders on first use: most operations (a
// `{ __typename }`, a mutation, a myUsage) never load anything and should
// not pay for five loaders and their caches.
type lazy struct {
	once  sync.Once
	store Store
	l     atomic.Pointer[Loaders]
}

func (z *lazy) get() *Loaders {
	z.once.Do(func() { z.l.Store(New(z.store)) })
	return z.l.Load()
}

// With returns a context carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// WithLazy returns a context carrying loaders over store that are built the
// first time For or From asks for them.
func WithLazy(ctx context.Context, store Store) context.Context {
	return context.WithValue(ctx, ctxKey{}, &lazy{store: store})
}

// From returns the loaders of the operation in ctx, if any.
func From(ctx context.Context) (*Loaders, bool) {
	switch v := ctx.Value(ctxKey{}).(type) {
	case *Loaders:
		return v, true
	case *lazy:
		return v.get(), true
	}
	return nil, false
}

// Built returns the loaders of the operation in ctx if they exist already
// (lazy ones are not built by asking).
func Built(ctx context.Context) (*Loaders, bool) {
	switch v := ctx.Value(ctxKey{}).(type) {
	case *Loaders:
		return v, true
	case *lazy:
		l := v.l.Load()
		return l, l != nil
	}
	return nil, false
}

// For returns the loaders of the operation in ctx. It panics if none were
// installed: that is a wiring bug, and gqlgen turns the panic into INTERNAL.
func For(ctx context.Context) *Loaders {
	l, ok := From(ctx)
	if !ok {
		panic("loader: no loaders in context")
	}
	return l
}

// ClearAll empties every loader's cache.
func (l *Loaders) ClearAll() {
	l.Problem.ClearAll()
	l.Author.ClearAll()
	l.AuthorPlan.ClearAll()
	l.Plan.ClearAll()
	l.Job.ClearAll()
	l.TestCases.ClearAll()
	l.authors.Clear()
	l.SolvedByMe.ClearAll()
}

// HistoryFields says which fields of a page of executions are selected.
type HistoryFields struct {
	Problem bool // problem { … }
	User    bool // user { … }
}

// PrefetchHistory loads what the selected fields of a page of executions
// will ask for — their problems and authors, in one BatchGetItem each, at
// the same time, then the authors' plans in one more — and primes the
// loaders with it, so that the items' field resolvers find everything
// loaded. A page of up to 100 items thus costs its Query plus at most
// three requests (none for what the store's display copy holds) however its
// resolvers are scheduled (the loaders' batching window splits batches when
// the machine is busy). Missing items are primed as nil, as the loaders
// would load them. On an error nothing more is primed and the resolvers
// load (and report) on their own.
func (l *Loaders) PrefetchHistory(ctx context.Context, items []*algoitny.SearchHistory, f HistoryFields) {
	if len(items) == 0 || l.store == nil {
		return
	}
	var wg sync.WaitGroup
	if f.Problem {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refs := uniqueKeys(items, func(h *algoitny.SearchHistory) (algoitny.ProblemRef, bool) {
				return algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID}, h.ProblemID != ""
			})
			found, err := l.store.GetProblems(ctx, refs)
			if err != nil {
				return
			}
			for _, r := range refs {
				l.Problem.Prime(ctx, r, found[r])
			}
		}()
	}
	if f.User {
		wg.Add(1)
		go func() {
			defer wg.Done()
			emails := uniqueKeys(items, func(h *algoitny.SearchHistory) (string, bool) { return h.UserEmail, h.UserEmail != "" })
			lower := make([]string, len(emails))
			for i, e := range emails {
				lower[i] = strings.ToLower(e)
			}
			found, err := l.store.GetUsersForDisplay(ctx, lower)
			if err != nil {
				return
			}
			l.markAuthors(found)
			// The resolver loads by the item's email as stored.
			for i, e := range emails {
				l.Author.Prime(ctx, e, found[lower[i]])
			}
			l.prefetchPlans(ctx, found)
		}()
	}
	wg.Wait()
}

// prefetchPlans loads the plans of authors in one BatchGetItem (none when
// the store has them all in its display copy) and primes the AuthorPlan
// loader with them.
func (l *Loaders) prefetchPlans(ctx context.Context, users map[string]*algoitny.User) {
	var names []string
	for _, u := range users {
		if u != nil && u.PlanName != "" && !slices.Contains(names, u.PlanName) {
			names = append(names, u.PlanName)
		}
	}
	if len(names) == 0 {
		return
	}
	found, err := l.store.GetPlansForDisplay(ctx, names)
	if err != nil {
		return
	}
	for _, n := range names {
		l.AuthorPlan.Prime(ctx, n, found[n])
	}
}

// uniqueKeys returns the distinct keys of items in order of appearance.
func uniqueKeys[K comparable](items []*algoitny.SearchHistory, key func(*algoitny.SearchHistory) (K, bool)) []K {
	seen := make(map[K]bool, len(items))
	var out []K
	for _, h := range items {
		if k, ok := key(h); ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
