package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/loader"
	"github.com/vektah/gqlparser/v2/ast"
)

// Limits protect the API from expensive requests (OWASP GraphQL cheat sheet).
type Limits struct {
	// MaxComplexity bounds an operation's cost (graph.Complexity: connections
	// cost their children times `first`).
	MaxComplexity int
	MaxDepth      int
	MaxAliases    int
	// MaxBatch caps the operations of one batched HTTP request.
	MaxBatch int
	// MaxTokens bounds the lexer tokens of a query document.
	MaxTokens int
}

// DefaultLimits are the production limits.
var DefaultLimits = Limits{MaxComplexity: 5000, MaxDepth: 12, MaxAliases: 15, MaxBatch: 10, MaxTokens: 5000}

// GraphQLConfig configures the GraphQL handler.
type GraphQLConfig struct {
	Resolver *graph.Resolver
	// Loaders is the store the per-operation dataloaders read from.
	Loaders loader.Store
	// Dev turns on introspection, field suggestions and the per-request
	// DynamoDB call count in `extensions.dynamodbRequests`.
	Dev    bool
	Limits Limits
	Logger *slog.Logger
	// Observe learns each operation's name (logs, metrics).
	Observe func(ctx context.Context, operation string)
	// Websocket, if set, serves subscriptions.
	Websocket graphql.Transport
}

// NewGraphQL builds the gqlgen server: our GraphQL-over-HTTP transport, the
// websocket transport, APQ, the query cache, the limits, the error presenter
// and recovery, and a fresh set of dataloaders per operation.
func NewGraphQL(cfg GraphQLConfig) *handler.Server {
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	gcfg := graph.Config{Resolvers: cfg.Resolver, Complexity: graph.Complexity()}
	srv := handler.New(graph.NewExecutableSchema(gcfg))
	if cfg.Websocket != nil {
		srv.AddTransport(cfg.Websocket)
	}
	srv.AddTransport(httpTransport{MaxBatch: cfg.Limits.MaxBatch, Observe: cfg.Observe})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(cfg.Limits.MaxTokens)
	srv.SetDisableSuggestion(!cfg.Dev)
	if cfg.Dev {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(extension.FixedComplexityLimit(cfg.Limits.MaxComplexity))
	srv.Use(shapeLimits{MaxDepth: cfg.Limits.MaxDepth, MaxAliases: cfg.Limits.MaxAliases})
	srv.SetErrorPresenter(graph.ErrorPresenter(cfg.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		cfg.Logger.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return algoitny.Internal(fmt.Errorf("panic: %v", p), "internal error")
	})
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		ctx, _ = dynamo.WithRequestCounter(ctx)
		return next(loader.With(ctx, loader.New(cfg.Loaders)))
	})
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		// A subscription resolves each event under its operation's context:
		// start every event with empty loader caches so nothing is stale.
		if l, ok := loader.From(ctx); ok {
			l.ClearAll()
		}
		resp := next(ctx)
		if resp != nil && cfg.Dev {
			if c := dynamo.RequestCounterFrom(ctx); c != nil {
				if resp.Extensions == nil {
					resp.Extensions = map[string]any{}
				}
				resp.Extensions["dynamodbRequests"] = c.Count()
			}
		}
		return resp
	})
	return srv
}
