package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TextGuard refuses, before anything runs, an operation whose arguments
// hold a NUL byte anywhere: in a variable, a string literal, an input
// object's field or a list item (algoitny.CheckText says why). It is the
// one check that covers every argument of every field, whatever service
// the field calls; the services check what they store again. The answer is
// BAD_USER_INPUT naming the variable or argument.
//
// It reads each variable and each operation and fragment definition of the
// document once (fragment spreads are not followed), so its cost is linear
// in the request.
type TextGuard struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = TextGuard{}

// ExtensionName implements graphql.HandlerExtension.
func (TextGuard) ExtensionName() string { return "TextGuard" }

// Validate implements graphql.HandlerExtension.
func (TextGuard) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator.
func (TextGuard) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	for name, v := range oc.Variables {
		if hasNUL(v) {
			return gqlerror.Wrap(algoitny.NULError(name))
		}
	}
	if oc.Doc == nil {
		return nil
	}
	for _, op := range oc.Doc.Operations {
		if name := nulInSelections(op.SelectionSet); name != "" {
			return gqlerror.Wrap(algoitny.NULError(name))
		}
	}
	for _, f := range oc.Doc.Fragments {
		if name := nulInSelections(f.SelectionSet); name != "" {
			return gqlerror.Wrap(algoitny.NULError(name))
		}
	}
	return nil
}

// hasNUL walks a variable's value as decoded from JSON.
func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return algoitny.HasNUL(v)
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if algoitny.HasNUL(k) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// nulInSelections returns the name of the first argument whose literal
// holds a NUL byte, "" if none. Spreads are not followed: their fragments
// are walked on their own.
func nulInSelections(set ast.SelectionSet) string {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if name := nulInArguments(s.Arguments); name != "" {
				return name
			}
			if name := nulInDirectives(s.Directives); name != "" {
				return name
			}
			if name := nulInSelections(s.SelectionSet); name != "" {
				return name
			}
		case *ast.InlineFragment:
			if name := nulInDirectives(s.Directives); name != "" {
				return name
			}
			if name := nulInSelections(s.SelectionSet); name != "" {
				return name
			}
		case *ast.FragmentSpread:
			if name := nulInDirectives(s.Directives); name != "" {
				return name
			}
		}
	}
	return ""
}

func nulInDirectives(ds ast.DirectiveList) string {
	for _, d := range ds {
		if name := nulInArguments(d.Arguments); name != "" {
			return name
		}
	}
	return ""
}

func nulInArguments(args ast.ArgumentList) string {
	for _, a := range args {
		if literalHasNUL(a.Value) {
			return a.Name
		}
	}
	return ""
}

// literalHasNUL walks a literal value (variables are checked on their own).
func literalHasNUL(v *ast.Value) bool {
	if v == nil {
		return false
	}
	switch v.Kind {
	case ast.StringValue, ast.BlockValue, ast.EnumValue:
		return algoitny.HasNUL(v.Raw)
	case ast.ListValue, ast.ObjectValue:
		for _, c := range v.Children {
			if algoitny.HasNUL(c.Name) || literalHasNUL(c.Value) {
				return true
			}
		}
	}
	return false
}
