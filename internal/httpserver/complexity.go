package httpserver

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// complexityLimit is gqlgen's complexity limit (extension.ComplexityLimit
// with complexity.Calculate) computed the same way — the schema's
// per-field functions (graph.Complexity), 1 per field otherwise, the most
// expensive implementation for a field of an interface, introspection's
// __schema free — but with each fragment's cost computed once per
// operation: gqlgen expands every spread again, so a document of fragments
// spreading one another twice cost 2^levels. A fragment's cost does not
// depend on where it is spread (its fields are typed by its own type
// condition, and arguments by the operation's variables). It refuses with
// COMPLEXITY_LIMIT_EXCEEDED, and stops when the request's context ends (it
// looks every checkEvery selections). The selections it visits are counted
// in work (DocumentWork.Complexity).
type complexityLimit struct {
	limit int
	es    graphql.ExecutableSchema
	work  *DocumentWork
	// budget is the response budget, for the operation's RequestCost.
	budget ResponseBudget
}

var (
	_ graphql.HandlerExtension        = &complexityLimit{}
	_ graphql.OperationContextMutator = &complexityLimit{}
)

func (*complexityLimit) ExtensionName() string { return "ComplexityLimit" }

func (c *complexityLimit) Validate(schema graphql.ExecutableSchema) error {
	c.es = schema
	return nil
}

// MutateOperationContext computes the operation's complexity after validation.
func (c *complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	w := complexityWalker{ctx: ctx, es: c.es, schema: c.es.Schema(), vars: opCtx.Variables}
	n := w.set(opCtx.Operation.SelectionSet)
	if c.work != nil {
		c.work.Complexity.Add(int64(w.visits))
	}
	if w.stopped || ctx.Err() != nil {
		return abortError(ctx)
	}
	opCtx.Stats.SetExtension(algoitny.RequestCostStat, algoitny.RequestCost{Cost: n, Limit: c.limit, ResponseBytes: c.budget.For(ctx)})
	if n > c.limit {
		return apierror.New(codeComplexity, fmt.Sprintf("operation has complexity %d, which exceeds the limit of %d", n, c.limit))
	}
	return nil
}

// withCost adds an operation's cost to the extensions of its answer
// (`extensions.cost`: cost and limit), when it was computed; ext may be
// nil.
func withCost(ctx context.Context, ext map[string]any) map[string]any {
	if !graphql.HasOperationContext(ctx) {
		return ext
	}
	rc, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(algoitny.RequestCostStat).(algoitny.RequestCost)
	if !ok {
		return ext
	}
	if ext == nil {
		ext = map[string]any{}
	}
	ext["cost"] = costExtension{Cost: rc.Cost, Limit: rc.Limit}
	return ext
}

// costExtension is `extensions.cost`: the operation's cost and the limit.
type costExtension struct {
	Cost  int `json:"cost"`
	Limit int `json:"limit"`
}

type complexityWalker struct {
	ctx    context.Context
	es     graphql.ExecutableSchema
	schema *ast.Schema
	vars   map[string]any
	memo   map[*ast.FragmentDefinition]int
	// visits counts the selections walked; stopped is set once the
	// context has ended (nothing more is walked, the caller reports it).
	visits  int
	stopped bool
}

// visit counts one selection walked, and every checkEvery of them looks at
// the context: it reports whether to go on.
func (w *complexityWalker) visit() bool {
	if w.stopped {
		return false
	}
	if w.visits++; w.visits%checkEvery == 0 && w.ctx.Err() != nil {
		w.stopped = true
	}
	return !w.stopped
}

// set is the complexity of a (validated) selection set.
func (w *complexityWalker) set(set ast.SelectionSet) int {
	total := 0
	for _, sel := range set {
		if !w.visit() {
			return 0 // the caller reports the context's end
		}
		switch s := sel.(type) {
		case *ast.Field:
			total = satAdd(total, w.field(s))
		case *ast.InlineFragment:
			total = satAdd(total, w.set(s.SelectionSet))
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			n, ok := w.memo[s.Definition]
			if !ok {
				n = w.set(s.Definition.SelectionSet)
				if w.memo == nil { // most operations spread no fragment
					w.memo = map[*ast.FragmentDefinition]int{}
				}
				w.memo[s.Definition] = n
			}
			total = satAdd(total, n)
		}
	}
	return total
}

// field is the complexity of one field with its selection.
func (w *complexityWalker) field(f *ast.Field) int {
	if f.Definition == nil || f.ObjectDefinition == nil {
		return 0
	}
	def := w.schema.Types[f.Definition.Type.Name()]
	if def == nil || def.Name == "__Schema" {
		return 0
	}
	child := 0
	switch def.Kind {
	case ast.Object, ast.Interface, ast.Union:
		child = w.set(f.SelectionSet)
	}
	args := f.ArgumentMap(w.vars)
	if f.ObjectDefinition.Kind != ast.Interface {
		return w.cost(f.ObjectDefinition, def.Kind, f.Name, child, args)
	}
	// Interfaces have no costs of their own: the dearest implementation.
	most := 0
	for _, t := range w.schema.GetPossibleTypes(f.ObjectDefinition) {
		most = max(most, w.cost(t, def.Kind, f.Name, child, args))
	}
	return most
}

func (w *complexityWalker) cost(obj *ast.Definition, kind ast.DefinitionKind, field string, child int, args map[string]any) int {
	if n, ok := w.es.Complexity(w.ctx, obj.Name, field, child, args); ok && n >= 1 {
		return n
	}
	return satAdd(1, child)
}
