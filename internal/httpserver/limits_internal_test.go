package httpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/graph"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// fragmentBomb is `{...F0}` and levels fragments each spreading the next
// twice: 2^levels fields once expanded.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString("{...F0}\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query{...F%d ...F%d}\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query{__typename}\n", levels)
	return b.String()
}

// The memoised complexity is gqlgen's complexity.Calculate, number for
// number: connections, fragments, variables, interfaces, introspection.
func TestComplexityMatchesGqlgen(t *testing.T) {
	t.Parallel()
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()})
	for _, c := range []struct {
		query string
		vars  map[string]any
	}{
		{`{ problems(first: 30) { edges { node { title testCases(first: 5) { edges { node { input } } } } } } }`, nil},
		{`query($n: Int) { ...A } fragment A on Query { problems(first: $n) { edges { node { ...P } } } me { name } } fragment P on Problem { title testCases { totalCount edges { node { id } } } }`, map[string]any{"n": 7}},
		{`{ node(id: "x") { id ... on Problem { testCases(first: 3) { totalCount } } ... on Job { progress(first: 4) { edges { node { id } } } } } }`, nil},
		{`{ __schema { types { name fields { name } } } __typename plans { name } }`, nil},
		{fragmentBomb(10), nil},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: c.query})
		if err != nil {
			t.Fatal(err)
		}
		if errs := validator.Validate(es.Schema(), doc); len(errs) > 0 {
			t.Fatalf("%s: %v", c.query, errs)
		}
		op := doc.Operations[0]
		vars, verr := validator.VariableValues(es.Schema(), op, c.vars)
		if verr != nil {
			t.Fatal(verr)
		}
		want := complexity.Calculate(context.Background(), es, op, vars)
		w := complexityWalker{ctx: context.Background(), es: es, schema: es.Schema(), vars: vars, memo: map[*ast.FragmentDefinition]int{}}
		if got := w.set(op.SelectionSet); got != want {
			t.Errorf("%.60s: complexity %d, gqlgen says %d", c.query, got, want)
		}
	}
}

// documentLimits refuses costly documents with the right code, whatever
// fragments hide them in, and lets ordinary ones through.
func TestDocumentLimits(t *testing.T) {
	t.Parallel()
	l := documentLimits{limits: Limits{MaxDepth: 12, MaxAliases: 15, MaxTokens: 50_000, MaxFields: 5000, MaxRepeats: 50}}
	deep := "id"
	for range 12 {
		deep = "job { " + deep + " }"
	}
	for _, c := range []struct {
		name, query, code, msg string
	}{
		{"OK", `query { problems(first: 20) { edges { node { ...P } } } } fragment P on Problem { id title testCases { totalCount } }`, "", ""},
		{"RepeatsWithinLimit", "{" + strings.Repeat(" __typename", 50) + "}", "", ""},
		{"FragmentBomb", fragmentBomb(26), codeComplexity, "more than 5000 fields"},
		{"TypenameFlood", "{" + strings.Repeat(" __typename", 4990) + "}", codeSelection, `"__typename" is selected 4990 times`},
		{"RepeatsThroughFragments", "{ ...A ...B }\nfragment A on Query {" + strings.Repeat(" plans { name }", 30) + "}\nfragment B on Query {" + strings.Repeat(" plans { id }", 30) + "}", codeSelection, `"plans" is selected 60 times`},
		{"RepeatsBelowMergedFields", "{" + strings.Repeat(" me { name name }", 30) + "}", codeSelection, `"name" is selected 60 times`},
		{"UnusedFragmentIsMeasured", "{ __typename }\nfragment U on Query {" + strings.Repeat(" __typename", 60) + "}", codeSelection, "selected 60 times"},
		{"Cycle", "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "GRAPHQL_VALIDATION_FAILED", "within itself"},
		{"DepthThroughFragments", "{ ...D } fragment D on Query { " + deep + " }", "GRAPHQL_VALIDATION_FAILED", "13 levels deep"},
		{"IntrospectionQuery", introspectionQuery, "", ""},
		{"OfTypeDoesNotHideDepth", "{ ...D } fragment D on Query { " + strings.Replace(deep, "id", "id ofType { ofType { id } }", 1) + " }", "GRAPHQL_VALIDATION_FAILED", "13 levels deep"},
		{"AliasesThroughFragments", "{ ...A ...A2 } fragment A on Query { a1: me { id } a2: me { id } a3: me { id } a4: me { id } a5: me { id } a6: me { id } a7: me { id } a8: me { id } } fragment A2 on Query { ...A }", "GRAPHQL_VALIDATION_FAILED", "16 aliases"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := l.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: c.query})
			switch {
			case c.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.code != "" && (err == nil || err.Extensions["code"] != c.code || !strings.Contains(err.Message, c.msg)):
				t.Fatalf("got %v (%v), want %s with %q", err, extensions(err), c.code, c.msg)
			}
		})
	}
}

func extensions(err *gqlerror.Error) map[string]any {
	if err == nil {
		return nil
	}
	return err.Extensions
}

// introspectionQuery is graphql-js' getIntrospectionQuery (descriptions,
// deprecated input values, TypeRef nine levels deep): what GraphiQL sends
// to build its documentation pane and completions.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args(includeDeprecated: true) { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description
    args(includeDeprecated: true) { ...InputValue }
    type { ...TypeRef }
    isDeprecated deprecationReason
  }
  inputFields(includeDeprecated: true) { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue {
  name description type { ...TypeRef } defaultValue isDeprecated deprecationReason
}
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`
