// Package graph is the GraphQL layer: gqlgen's generated code and thin
// resolvers that convert arguments, call one service method and convert the
// result. Business rules live in internal/; errors are mapped to
// `extensions.code` once, in errors.go.
package graph

import (
	"context"

	"github.com/algoitny/api/internal/algoitny"
)

//go:generate go tool gqlgen generate

// PlanStore is what the resolvers need to read plans.
type PlanStore interface {
	ListPlans(ctx context.Context, includeInactive bool) ([]*algoitny.Plan, error)
}

// Resolver is the root resolver; it holds only interfaces.
type Resolver struct {
	Plans PlanStore
}
