package httpserver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Codes of the errors that refuse a document for its cost.
const (
	// codeComplexity is gqlgen's code for the complexity limit; a document
	// whose fragments expand to more fields than the limit gets it too (every
	// field costs at least 1).
	codeComplexity = "COMPLEXITY_LIMIT_EXCEEDED"
	// codeSelection refuses a selection set that repeats one response name
	// too often (Limits.MaxRepeats).
	codeSelection = "SELECTION_LIMIT_EXCEEDED"
)

// documentLimits refuses, before gqlgen validates a document, the documents
// whose validation or checks would cost more than their size suggests
// (OWASP GraphQL cheat sheet; issue 17):
//
//   - fragments that spread other fragments several times multiply: 26
//     levels of `fragment F0 on Query { ...F1 ...F1 }` are 1 KB and 2^26
//     fields. Every fragment is measured once (memoised), so the check is
//     linear in the document; more fields than MaxFields once expanded is
//     refused with COMPLEXITY_LIMIT_EXCEEDED, as the complexity limit (each
//     field costs at least 1) would refuse it after validation, and so are
//     more than MaxFields fragment spreads and inline fragments once
//     expanded (spreads of unknown fragments, or long chains of fragments
//     each spreading the next, multiply without adding fields);
//   - validation's overlapping-fields rule compares every pair of fields
//     with the same response name in a selection set (fragments and
//     repeated fields merged): `{ __typename ×4990 }` is 12 million
//     comparisons. One response name more than MaxRepeats times in one
//     merged selection set is refused with SELECTION_LIMIT_EXCEEDED, which
//     bounds validation by MaxRepeats × MaxFields comparisons;
//   - depth and aliases (OWASP: aliases repeat an expensive field under
//     other names), with fragments counted where they are spread:
//     GRAPHQL_VALIDATION_FAILED. Introspection's `ofType` adds no depth
//     (a chain of single objects), so GraphiQL's schema query passes.
//
// Every operation of the document and every fragment no operation spreads
// is measured (validation goes through all of them). A document in gqlgen's
// query cache passed these checks when it was added and is not parsed again.
//
// The walks look at the request's context every checkEvery selections: a
// request that times out or whose client hangs up stops there, answered
// REQUEST_TIMEOUT or REQUEST_CANCELLED. The selections visited are counted
// in work (DocumentWork.PreCheck): at most about one per byte of the
// document for the documents these checks refuse.
type documentLimits struct {
	limits Limits
	// cached reports whether gqlgen's query cache holds the document.
	cached func(ctx context.Context, query string) bool
	// work, if set, counts the selections visited.
	work *DocumentWork
}

// DocumentWork counts the work of the checks that bound a document's cost
// before it runs, in selections visited: PreCheck by documentLimits
// (before validation), Complexity by complexityLimit (after it). Both
// walks are linear in the document (each fragment is walked once), which
// these counts show — /metrics exports them
// (algoitny_graphql_precheck_selections_total,
// algoitny_graphql_complexity_selections_total), and tests assert them.
type DocumentWork struct {
	PreCheck, Complexity atomic.Int64
}

// checkEvery is how many selections the checks visit between two looks at
// the request's context.
const checkEvery = 256

var (
	_ graphql.HandlerExtension          = documentLimits{}
	_ graphql.OperationParameterMutator = documentLimits{}
)

func (documentLimits) ExtensionName() string                          { return "DocumentLimits" }
func (documentLimits) Validate(schema graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters measures the document before gqlgen parses and
// validates it (parameter mutators run first; this one is registered after
// the persisted-query extension, so the query is known).
func (l documentLimits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if ctx.Err() != nil {
		return abortError(ctx)
	}
	if p.Query == "" || (l.cached != nil && l.cached(ctx, p.Query)) {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: p.Query}, l.limits.MaxTokens)
	if err != nil {
		return nil // gqlgen parses it again and reports the error
	}
	m := measurer{ctx: ctx, fragments: map[string]*ast.FragmentDefinition{}, memo: map[*ast.FragmentDefinition]*shape{}}
	gerr := l.check(&m, doc)
	if l.work != nil {
		l.work.PreCheck.Add(int64(m.visits))
	}
	if gerr != nil {
		return gerr
	}
	if ctx.Err() != nil {
		return abortError(ctx)
	}
	return nil
}

// check measures a parsed (not validated) document with m.
func (l documentLimits) check(m *measurer, doc *ast.QueryDocument) *gqlerror.Error {
	for _, f := range doc.Fragments {
		if _, dup := m.fragments[f.Name]; !dup { // spreads name the first (ForName)
			m.fragments[f.Name] = f
		}
	}
	var roots []ast.SelectionSet
	fields := 0
	for _, op := range doc.Operations {
		s, err := m.set(op.SelectionSet)
		if err != nil {
			return err
		}
		if s.depth > l.limits.MaxDepth {
			return limitError(fmt.Sprintf("the operation is %d levels deep; the limit is %d", s.depth, l.limits.MaxDepth))
		}
		if s.aliases > l.limits.MaxAliases {
			return limitError(fmt.Sprintf("the operation uses %d aliases; the limit is %d", s.aliases, l.limits.MaxAliases))
		}
		fields = satAdd(fields, s.fields)
		m.expanded = satAdd(m.expanded, s.spreads)
		roots = append(roots, op.SelectionSet)
	}
	// Fragments no operation reached are validated on their own: measured
	// as roots too (the ones they spread are then reached).
	for _, f := range doc.Fragments {
		if m.memo[f] != nil {
			continue
		}
		s, err := m.fragment(f)
		if err != nil {
			return err
		}
		fields = satAdd(fields, s.fields)
		m.expanded = satAdd(m.expanded, s.spreads)
		roots = append(roots, f.SelectionSet)
	}
	if fields > l.limits.MaxFields {
		return apierror.New(codeComplexity, fmt.Sprintf("the document selects more than %d fields once its fragments are expanded; the complexity limit is %d", l.limits.MaxFields, l.limits.MaxFields))
	}
	if m.expanded > l.limits.MaxFields {
		return apierror.New(codeComplexity, fmt.Sprintf("the document holds more than %d fragment spreads and inline fragments once its fragments are expanded", l.limits.MaxFields))
	}
	// Now the expansion is known to be small: merge it.
	for _, root := range roots {
		if err := m.repeats([]ast.SelectionSet{root}, l.limits.MaxRepeats); err != nil {
			return err
		}
	}
	return nil
}

func limitError(msg string) *gqlerror.Error {
	return apierror.New(errcode.ValidationFailed, msg)
}

// shape is what a selection set amounts to with its fragments expanded.
type shape struct {
	fields  int // fields, saturating
	spreads int // fragment spreads and inline fragments, saturating
	aliases int // aliased fields, saturating
	depth   int // deepest field nesting
}

// measurer measures selection sets, each fragment once.
type measurer struct {
	ctx       context.Context
	fragments map[string]*ast.FragmentDefinition
	// memo holds each fragment's shape; visiting marks one being measured
	// (a spread of it then is a cycle, which validation refuses too).
	memo map[*ast.FragmentDefinition]*shape
	// visits counts the selections walked (measured and merged).
	visits int
	// expanded is the document's spreads and inline fragments, expanded.
	expanded int
}

// visit counts one selection walked; every checkEvery of them it looks at
// the request's context, and once that has ended it says why.
func (m *measurer) visit() *gqlerror.Error {
	if m.visits++; m.visits%checkEvery == 0 && m.ctx.Err() != nil {
		return abortError(m.ctx)
	}
	return nil
}

var visiting = &shape{}

func (m *measurer) fragment(f *ast.FragmentDefinition) (shape, *gqlerror.Error) {
	switch s := m.memo[f]; {
	case s == visiting:
		return shape{}, limitError(fmt.Sprintf("Cannot spread fragment %q within itself.", f.Name))
	case s != nil:
		return *s, nil
	}
	m.memo[f] = visiting
	s, err := m.set(f.SelectionSet)
	if err != nil {
		return shape{}, err
	}
	m.memo[f] = &s
	return s, nil
}

func (m *measurer) set(set ast.SelectionSet) (shape, *gqlerror.Error) {
	var out shape
	for _, sel := range set {
		if err := m.visit(); err != nil {
			return shape{}, err
		}
		var s shape
		var err *gqlerror.Error
		switch sel := sel.(type) {
		case *ast.Field:
			if s, err = m.set(sel.SelectionSet); err != nil {
				return shape{}, err
			}
			s.fields = satAdd(s.fields, 1)
			// Introspection's ofType is a chain of single objects (a
			// type's wrappers), not a list: it adds no fan-out, and
			// clients ask for it 7–9 levels deep (graphql-js'
			// TypeRef, which GraphiQL sends), so it adds no depth.
			if sel.Name != "ofType" {
				s.depth++
			}
			if sel.Alias != "" && sel.Alias != sel.Name {
				s.aliases = satAdd(s.aliases, 1)
			}
		case *ast.InlineFragment:
			if s, err = m.set(sel.SelectionSet); err != nil {
				return shape{}, err
			}
			s.spreads = satAdd(s.spreads, 1)
		case *ast.FragmentSpread:
			// A spread of an unknown fragment (validation reports it)
			// expands to itself.
			if f := m.fragments[sel.Name]; f != nil {
				if s, err = m.fragment(f); err != nil {
					return shape{}, err
				}
			}
			s.spreads = satAdd(s.spreads, 1)
		}
		out.fields = satAdd(out.fields, s.fields)
		out.spreads = satAdd(out.spreads, s.spreads)
		out.aliases = satAdd(out.aliases, s.aliases)
		out.depth = max(out.depth, s.depth)
	}
	return out, nil
}

// repeats merges the selection sets that land at one place of the response
// (fields through inline fragments and fragment spreads, and the
// selections of same-named fields below) and refuses a response name
// selected more than limit times there, as soon as it is. Its work is at
// most the size of the expansion, which check has bounded, and fragments
// are known to be acyclic.
func (m *measurer) repeats(sets []ast.SelectionSet, limit int) *gqlerror.Error {
	type group struct {
		n    int
		subs []ast.SelectionSet
	}
	var names []string
	groups := map[string]*group{}
	var collect func(set ast.SelectionSet) *gqlerror.Error
	collect = func(set ast.SelectionSet) *gqlerror.Error {
		for _, sel := range set {
			if err := m.visit(); err != nil {
				return err
			}
			switch sel := sel.(type) {
			case *ast.Field:
				name := sel.Alias
				if name == "" {
					name = sel.Name
				}
				g := groups[name]
				if g == nil {
					g = &group{}
					groups[name] = g
					names = append(names, name)
				}
				if g.n++; g.n > limit {
					return apierror.New(codeSelection, fmt.Sprintf("%q is selected more than %d times in one selection set (fragments merged)", name, limit))
				}
				if len(sel.SelectionSet) > 0 {
					g.subs = append(g.subs, sel.SelectionSet)
				}
			case *ast.InlineFragment:
				if err := collect(sel.SelectionSet); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				if f := m.fragments[sel.Name]; f != nil {
					if err := collect(f.SelectionSet); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, set := range sets {
		if err := collect(set); err != nil {
			return err
		}
	}
	for _, name := range names {
		g := groups[name]
		if len(g.subs) > 0 {
			if err := m.repeats(g.subs, limit); err != nil {
				return err
			}
		}
	}
	return nil
}

// satAdd adds non-negative counts without overflowing.
func satAdd(a, b int) int {
	if c := a + b; c >= a {
		return c
	}
	return int(^uint(0) >> 1)
}
