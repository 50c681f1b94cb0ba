package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// selected reports which of names the current field's selection asks for
// under path (e.g. edges → node), fragments included. Connection resolvers
// use it to fetch what the page's items will need in one batch.
func selected(ctx context.Context, path []string, names ...string) map[string]bool {
	fc := graphql.GetFieldContext(ctx)
	op := graphql.GetOperationContext(ctx)
	if fc == nil || op == nil {
		return nil
	}
	sets := []ast.SelectionSet{fc.Field.Selections}
	for _, step := range path {
		var next []ast.SelectionSet
		for _, set := range sets {
			for _, f := range graphql.CollectFields(op, set, nil) {
				if f.Name == step {
					next = append(next, f.Selections)
				}
			}
		}
		sets = next
	}
	out := map[string]bool{}
	for _, set := range sets {
		for _, f := range graphql.CollectFields(op, set, nil) {
			for _, n := range names {
				if f.Name == n {
					out[n] = true
				}
			}
		}
	}
	return out
}
