package httpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/loader"
	"github.com/vektah/gqlparser/v2/ast"
)

// Limits protect the API from expensive requests (OWASP GraphQL cheat
// sheet). Every one of them is checked before the work it bounds is done:
// tokens while parsing, fields, repeats, depth and aliases before
// validation (documentLimits), complexity before execution
// (complexityLimit).
type Limits struct {
	// MaxComplexity bounds an operation's cost (the schema's complexity
	// functions, graph.Complexity: connections cost their children times
	// `first`).
	MaxComplexity int
	MaxDepth      int
	MaxAliases    int
	// MaxBatch caps the operations of one batched HTTP request.
	MaxBatch int
	// MaxTokens bounds the lexer tokens of a query document.
	MaxTokens int
	// MaxFields bounds the fields of a document with its fragments
	// expanded (default MaxComplexity: each field costs at least 1).
	MaxFields int
	// MaxRepeats bounds how often one response name is selected in one
	// selection set, fragments and same-named fields merged: validation
	// compares each such pair.
	MaxRepeats int
}

// DefaultLimits are the production limits.
var DefaultLimits = Limits{MaxComplexity: 5000, MaxDepth: 12, MaxAliases: 15, MaxBatch: 10, MaxTokens: 5000, MaxFields: 5000, MaxRepeats: 50}

// GraphQLConfig configures the GraphQL handler. The schema, its error
// presenter and its own checks come from cmd/algoitny: the transport sits
// below the GraphQL layer and imports no part of it (docs/architecture.md).
type GraphQLConfig struct {
	// Schema is the API (graph.NewExecutableSchema with graph.Complexity's
	// costs). Required.
	Schema graphql.ExecutableSchema
	// Present turns an error into the GraphQL error clients see, with its
	// `extensions.code` (graph.ErrorPresenter). Default gqlgen's.
	Present graphql.ErrorPresenterFunc
	// Checks are the schema's own checks of an operation, run after the
	// limits and before execution (graph.TextGuard: no NUL byte in any
	// argument, BAD_USER_INPUT).
	Checks []graphql.HandlerExtension
	// CountRequests, if set, counts the storage requests of each operation
	// for dev mode's `extensions.dynamodbRequests`.
	CountRequests CountRequests
	// Loaders is the store the per-operation dataloaders read from.
	Loaders loader.Store
	// Dev turns on field suggestions and the per-request DynamoDB call
	// count in `extensions.dynamodbRequests`.
	Dev    bool
	Limits Limits
	// Budget bounds the bytes of each request's answer (zero fields are
	// DefaultResponseBudget's).
	Budget ResponseBudget
	Logger *slog.Logger
	// Observe learns each operation's name (logs, metrics).
	Observe func(ctx context.Context, operation string)
	// Websocket, if set, serves subscriptions.
	Websocket graphql.Transport
	// Introspection allows __schema and __type (ALGOITNY_INTROSPECTION; on
	// in dev mode unless set); refused, they answer INTROSPECTION_DISABLED.
	Introspection bool
	// Work, if set, counts the work of the document checks (for /metrics).
	Work *DocumentWork
	// Trusted are the front-end's persisted documents
	// (ALGOITNY_TRUSTED_DOCUMENTS, ALGOITNY_TRUSTED_DOCUMENTS_ONLY).
	Trusted TrustedDocuments
}

// NewGraphQL builds the gqlgen server: our GraphQL-over-HTTP transport, the
// websocket transport, APQ, the query cache, the limits, the error presenter
// and recovery, and a fresh set of dataloaders per operation.
func NewGraphQL(cfg GraphQLConfig) *handler.Server {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	cfg.Limits.MaxFields = cmp.Or(cfg.Limits.MaxFields, cfg.Limits.MaxComplexity)
	cfg.Limits.MaxRepeats = cmp.Or(cfg.Limits.MaxRepeats, DefaultLimits.MaxRepeats)
	cfg.Budget.SignedOut = cmp.Or(cfg.Budget.SignedOut, DefaultResponseBudget.SignedOut)
	cfg.Budget.SignedIn = cmp.Or(cfg.Budget.SignedIn, DefaultResponseBudget.SignedIn)
	srv := handler.New(cfg.Schema)
	if cfg.Websocket != nil {
		srv.AddTransport(cfg.Websocket)
	}
	srv.AddTransport(httpTransport{MaxBatch: cfg.Limits.MaxBatch, Observe: cfg.Observe, Budget: cfg.Budget})
	queries := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(queries)
	srv.SetParserTokenLimit(cfg.Limits.MaxTokens)
	srv.SetDisableSuggestion(!cfg.Dev)
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	// Before the automatic persisted queries: a manifest's id needs no
	// registration, and in trusted-only mode none may register.
	srv.Use(trustedDocuments{cfg.Trusted})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	// After the persisted query extension (it fills in the query), before
	// gqlgen parses and validates.
	srv.Use(documentLimits{limits: cfg.Limits, work: cfg.Work, cached: func(ctx context.Context, q string) bool {
		_, ok := queries.Get(ctx, q)
		return ok
	}})
	srv.Use(&complexityLimit{limit: cfg.Limits.MaxComplexity, work: cfg.Work, budget: cfg.Budget})
	for _, c := range cfg.Checks {
		srv.Use(c)
	}
	present := cfg.Present
	if present == nil {
		present = graphql.DefaultErrorPresenter
	}
	srv.SetErrorPresenter(present)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		cfg.Logger.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return algoitny.Internal(fmt.Errorf("panic: %v", p), "internal error")
	})
	srv.AroundFields(budgetFields)
	srv.AroundFields(prefetcher(cfg.Loaders))
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if cfg.Dev && cfg.CountRequests != nil { // for extensions.dynamodbRequests
			var count func() int64
			ctx, count = cfg.CountRequests(ctx)
			ctx = context.WithValue(ctx, requestCountKey{}, count)
		}
		return next(loader.WithLazy(ctx, cfg.Loaders))
	})
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		// A subscription resolves each event under its operation's context:
		// start every event with empty loader caches so nothing is stale.
		if l, ok := loader.Built(ctx); ok {
			l.ClearAll()
		}
		if budgetFrom(ctx) == nil { // websockets: a budget per operation and event
			var stop context.CancelFunc
			ctx, stop = withBudget(ctx, cfg.Budget.For(ctx))
			defer stop()
		}
		resp := abortedResponse(ctx, next(ctx))
		if resp != nil {
			resp.Extensions = withCost(ctx, resp.Extensions)
		}
		if resp != nil && cfg.Dev {
			if count, ok := ctx.Value(requestCountKey{}).(func() int64); ok {
				if resp.Extensions == nil {
					resp.Extensions = map[string]any{}
				}
				resp.Extensions["dynamodbRequests"] = count() + takeAuthReads(ctx)
			}
		}
		return resp
	})
	return srv
}

// CountRequests starts counting the storage requests made on behalf of ctx
// and of the contexts made from it: it returns that context and a function
// that returns the count so far. cmd/algoitny passes DynamoDB's
// (dynamo.WithRequestCounter); dev mode shows the count in
// `extensions.dynamodbRequests`.
type CountRequests func(ctx context.Context) (context.Context, func() int64)

// requestCountKey carries an operation's count of CountRequests.
type requestCountKey struct{}

// HistoryPage is a page of executions as the schema's resolvers return it
// (graph/model.SearchHistoryConnection): the prefetcher loads the problems
// and authors of its nodes in one request each.
type HistoryPage interface {
	// HistoryNodes returns the page's executions, without nils.
	HistoryNodes() []*algoitny.SearchHistory
}

// prefetcher is field middleware that shapes the reads of a field by its
// selection, before the resolvers ask for things one by one:
//
//   - Query.problem with a testCases selection starts the test-case Query
//     together with the problem's GetItem instead of after it (the loader
//     keeps the page for the testCases resolver, under the same key);
//   - a page of executions (publicHistory, myHistory, historyFeed) loads the
//     problems and authors its selection asks for in one BatchGetItem each
//     (loader.PrefetchHistory), so the number of DynamoDB requests does not
//     depend on how the item resolvers are scheduled (problems, authors and
//     their plans are display data: warm, they cost no request); and when
//     the selection asks for none of
//     the executions' details (code, compile message, test results, hints)
//     the page is read without them (algoitny.WithHistorySummaries).
//
// Access rules stay with the resolvers: prefetched data is only returned
// by the resolvers that would have loaded it.
func prefetcher(store loader.Store) graphql.FieldMiddleware {
	pp, _ := store.(problemPrefetcher)
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Field.Field == nil || !fc.IsResolver {
			return next(ctx)
		}
		if fc.Object == "Query" && fc.Field.Name == "problem" {
			return next(prefetchTestCases(ctx, fc, pp))
		}
		if fc.Field.Definition != nil && fc.Field.Definition.Type.Name() == "SearchHistoryConnection" {
			return resolveHistoryPage(ctx, fc, next)
		}
		return next(ctx)
	}
}

// historyDetails are the fields of SearchHistory that a summary read leaves
// out (algoitny.WithHistorySummaries).
var historyDetails = map[string]bool{"code": true, "compileMessage": true, "testResults": true, "hints": true, "counterexample": true}

// resolveHistoryPage resolves a page of executions: read as summaries when
// the selection asks for none of their details, then with the problems and
// authors the selection needs loaded in one request each.
func resolveHistoryPage(ctx context.Context, fc *graphql.FieldContext, next graphql.Resolver) (any, error) {
	nodeFields := historyNodeFields(ctx, fc)
	details := slices.ContainsFunc(nodeFields, func(f graphql.CollectedField) bool { return historyDetails[f.Name] })
	// The fields under this one resolve in this context too: a page nested
	// in a summary page sets its own.
	ctx = algoitny.WithHistorySummaries(ctx, !details)
	res, err := next(ctx)
	if page, ok := res.(HistoryPage); ok && err == nil {
		prefetchHistory(ctx, nodeFields, page)
	}
	return res, err
}

// historyNodeFields are the fields a SearchHistoryConnection's selection
// asks of its nodes (edges { node { … } }), fragments included.
func historyNodeFields(ctx context.Context, fc *graphql.FieldContext) []graphql.CollectedField {
	opCtx := graphql.GetOperationContext(ctx)
	var fields []graphql.CollectedField
	for _, e := range graphql.CollectFields(opCtx, fc.Field.Selections, []string{"SearchHistoryConnection"}) {
		if e.Name != "edges" {
			continue
		}
		for _, n := range graphql.CollectFields(opCtx, e.Selections, []string{"SearchHistoryEdge"}) {
			if n.Name == "node" {
				fields = append(fields, graphql.CollectFields(opCtx, n.Selections, []string{"SearchHistory", "Node"})...)
			}
		}
	}
	return fields
}

// problemPrefetcher reads a problem with the first page of its test cases in
// one request (dynamo.DB.PrefetchProblem); the returned context answers the
// problem's GetProblem from that read.
type problemPrefetcher interface {
	PrefetchProblem(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (context.Context, algoitny.Page[*algoitny.TestCase], error)
}

// prefetchTestCases starts (or, with pp and no cursor, does in the same
// Query as the problem itself) the test-case pages the selection of
// Query.problem asks for, and returns the context to resolve the problem in.
func prefetchTestCases(ctx context.Context, fc *graphql.FieldContext, pp problemPrefetcher) context.Context {
	l, ok := loader.From(ctx)
	if !ok {
		return ctx
	}
	platform, _ := fc.Args["platform"].(algoitny.Platform)
	id, _ := fc.Args["problemId"].(string)
	if platform == "" || id == "" {
		return ctx
	}
	rctx := ctx
	opCtx := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(opCtx, fc.Field.Selections, []string{"Problem", "Node"}) {
		if f.Name != "testCases" {
			continue
		}
		args := f.ArgumentMap(opCtx.Variables)
		if args["last"] != nil || args["before"] != nil {
			continue // backward pages are not prefetched
		}
		// The key the testCases resolver builds: the same reading of first
		// and after (algoitny.NewPageRequest), or the prefetch misses.
		var first *int
		if v, present := args["first"]; present && v != nil {
			n, ok := intArg(v)
			if !ok {
				continue
			}
			first = &n
		}
		var after *string
		if v, ok := args["after"].(string); ok {
			after = &v
		}
		req := algoitny.NewPageRequest(first, after)
		if _, err := req.Validate(); err != nil {
			continue // the resolver reports it
		}
		key := loader.TestCasePage{Ref: algoitny.ProblemRef{Platform: platform, ProblemID: id}, First: req.First, After: req.After}
		if pp != nil && key.After == "" && rctx == ctx {
			if pctx, page, err := pp.PrefetchProblem(ctx, key.Ref, req); err == nil {
				l.TestCases.Prime(ctx, key, page)
				rctx = pctx
				continue
			}
		}
		l.TestCases.Load(ctx, key) // started; the resolver's Load gets the same result
	}
	return rctx
}

func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case int32:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// prefetchHistory loads the problems and authors the selection asks of the
// page's executions, one request each.
func prefetchHistory(ctx context.Context, nodeFields []graphql.CollectedField, page HistoryPage) {
	l, ok := loader.From(ctx)
	if !ok {
		return
	}
	var want loader.HistoryFields
	for _, f := range nodeFields {
		switch f.Name {
		case "problem":
			want.Problem = true
		case "user":
			want.User = true
		}
	}
	if want == (loader.HistoryFields{}) {
		return
	}
	l.PrefetchHistory(ctx, page.HistoryNodes(), want)
}
