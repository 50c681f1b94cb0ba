// Package loader batches the per-field lookups of a GraphQL operation into
// BatchGetItem calls (graph-gophers/dataloader/v7): fifty history items ask
// for their problem, their author and the author's plan, and DynamoDB sees
// three requests, not a hundred and fifty.
//
// A fresh set of loaders is made per operation (per HTTP request; per
// subscription event for websockets), so their caches never outlive what
// they were filled for.
package loader

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/graph-gophers/dataloader/v7"
)

// Store is what the loaders read from (internal/dynamo).
type Store interface {
	GetProblems(ctx context.Context, refs []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error)
	GetUsersByEmail(ctx context.Context, emails []string) (map[string]*algoitny.User, error)
	GetPlans(ctx context.Context, names []string) (map[string]*algoitny.Plan, error)
	GetJobs(ctx context.Context, ids []string) (map[string]*algoitny.Job, error)
	ListTestCases(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error)
}

// TestCasePage asks for one page of a problem's test cases.
type TestCasePage struct {
	Ref   algoitny.ProblemRef
	First int
	After string
}

// Loaders is one operation's set of loaders. A missing item loads as nil
// with no error; callers decide what absence means.
type Loaders struct {
	Problem   *dataloader.Loader[algoitny.ProblemRef, *algoitny.Problem]
	User      *dataloader.Loader[string, *algoitny.User] // by email (lower-cased)
	Plan      *dataloader.Loader[string, *algoitny.Plan] // by name
	Job       *dataloader.Loader[string, *algoitny.Job]
	TestCases *dataloader.Loader[TestCasePage, algoitny.Page[*algoitny.TestCase]]
}

// batchCapacity matches BatchGetItem's 100 keys per call.
const batchCapacity = 100

// wait is how long a loader collects keys before it fetches. gqlgen resolves
// the fields of a list concurrently, so the keys arrive within microseconds.
const wait = 2 * time.Millisecond

// New returns a fresh set of loaders over store.
func New(store Store) *Loaders {
	return &Loaders{
		// The store's methods are called through closures, so a nil store
		// fails only when a loader is used.
		Problem: newLoader(func(ctx context.Context, k []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error) {
			return store.GetProblems(ctx, k)
		}, func(k algoitny.ProblemRef) algoitny.ProblemRef { return k }),
		User: newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.User, error) {
			return store.GetUsersByEmail(ctx, k)
		},
			func(k string) string { return strings.ToLower(k) }),
		Plan: newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.Plan, error) {
			return store.GetPlans(ctx, k)
		},
			func(k string) string { return k }),
		Job: newLoader(func(ctx context.Context, k []string) (map[string]*algoitny.Job, error) { return store.GetJobs(ctx, k) },
			func(k string) string { return k }),
		TestCases: dataloader.NewBatchedLoader(func(ctx context.Context, keys []TestCasePage) []*dataloader.Result[algoitny.Page[*algoitny.TestCase]] {
			// DynamoDB has no batched Query: run the distinct pages concurrently.
			out := make([]*dataloader.Result[algoitny.Page[*algoitny.TestCase]], len(keys))
			var wg sync.WaitGroup
			for i, k := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := store.ListTestCases(ctx, k.Ref, algoitny.PageRequest{First: k.First, After: k.After})
					out[i] = &dataloader.Result[algoitny.Page[*algoitny.TestCase]]{Data: p, Error: err}
				}()
			}
			wg.Wait()
			return out
		}, dataloader.WithBatchCapacity[TestCasePage, algoitny.Page[*algoitny.TestCase]](batchCapacity), dataloader.WithWait[TestCasePage, algoitny.Page[*algoitny.TestCase]](wait)),
	}
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

// With returns a context carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the loaders of the operation in ctx, if any.
func From(ctx context.Context) (*Loaders, bool) {
	l, ok := ctx.Value(ctxKey{}).(*Loaders)
	return l, ok
}

// For returns the loaders of the operation in ctx. It panics if none were
// installed: that is a wiring bug, and gqlgen turns the panic into INTERNAL.
func For(ctx context.Context) *Loaders {
	l, ok := ctx.Value(ctxKey{}).(*Loaders)
	if !ok {
		panic("loader: no loaders in context")
	}
	return l
}

// ClearAll empties every loader's cache.
func (l *Loaders) ClearAll() {
	l.Problem.ClearAll()
	l.User.ClearAll()
	l.Plan.ClearAll()
	l.Job.ClearAll()
	l.TestCases.ClearAll()
}
