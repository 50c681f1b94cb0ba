package main

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/httpserver"
)

// The transport sits below the GraphQL layer and storage: it imports
// neither, and is handed here what it needs of them.
var (
	_ httpserver.HistoryPage   = (*model.SearchHistoryConnection)(nil)
	_ httpserver.CountRequests = countDynamoRequests
)

// withGraphQL is cfg with the GraphQL layer over resolver: the schema with
// its costs (graph.Complexity), the one error presenter, and the schema's
// own check of every argument (graph.TextGuard).
func withGraphQL(resolver *graph.Resolver, cfg httpserver.GraphQLConfig) httpserver.GraphQLConfig {
	cfg.Schema = graph.NewExecutableSchema(graph.Config{Resolvers: resolver, Complexity: graph.Complexity()})
	cfg.Present = graph.ErrorPresenter(cfg.Logger)
	cfg.Checks = []graphql.HandlerExtension{graph.TextGuard{}}
	return cfg
}

// countDynamoRequests counts the DynamoDB requests made under the returned
// context (httpserver.CountRequests: dev mode's
// `extensions.dynamodbRequests`).
func countDynamoRequests(ctx context.Context) (context.Context, func() int64) {
	ctx, c := dynamo.WithRequestCounter(ctx)
	return ctx, c.Count
}
