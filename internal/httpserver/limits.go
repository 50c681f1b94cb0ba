package httpserver

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// shapeLimits refuses operations that are too deep or use too many aliases
// (OWASP GraphQL cheat sheet: aliases let one request repeat an expensive
// field many times under different names). The complexity limit bounds the
// total work; these bound the shape.
type shapeLimits struct {
	MaxDepth   int
	MaxAliases int
}

var (
	_ graphql.HandlerExtension        = shapeLimits{}
	_ graphql.OperationContextMutator = shapeLimits{}
)

func (shapeLimits) ExtensionName() string                          { return "ShapeLimits" }
func (shapeLimits) Validate(schema graphql.ExecutableSchema) error { return nil }

// MutateOperationContext measures the operation after parsing and validation.
func (l shapeLimits) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	w := walker{fragments: op.Doc.Fragments, visiting: map[string]bool{}}
	depth := w.depth(op.Operation.SelectionSet, 0)
	if depth > l.MaxDepth {
		return limitError(fmt.Sprintf("the operation is %d levels deep; the limit is %d", depth, l.MaxDepth))
	}
	if w.aliases > l.MaxAliases {
		return limitError(fmt.Sprintf("the operation uses %d aliases; the limit is %d", w.aliases, l.MaxAliases))
	}
	return nil
}

func limitError(msg string) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, errcode.ValidationFailed)
	return err
}

type walker struct {
	fragments ast.FragmentDefinitionList
	visiting  map[string]bool
	aliases   int
}

// depth returns the deepest field nesting under set; fragments count as
// their fields (validation has already refused fragment cycles; visiting
// guards anyway).
func (w *walker) depth(set ast.SelectionSet, d int) int {
	deepest := d
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != "" && s.Alias != s.Name {
				w.aliases++
			}
			deepest = max(deepest, w.depth(s.SelectionSet, d+1))
		case *ast.InlineFragment:
			deepest = max(deepest, w.depth(s.SelectionSet, d))
		case *ast.FragmentSpread:
			if w.visiting[s.Name] {
				continue
			}
			if f := w.fragments.ForName(s.Name); f != nil {
				w.visiting[s.Name] = true
				deepest = max(deepest, w.depth(f.SelectionSet, d))
				delete(w.visiting, s.Name)
			}
		}
	}
	return deepest
}
