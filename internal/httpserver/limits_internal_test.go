package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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
func fragmentBomb(levels int) string { return bombOver(levels, "__typename", "") }

// bombOver is a fragment bomb whose last fragment holds leaf, followed by
// more (other fragments).
func bombOver(levels int, leaf, more string) string {
	var b strings.Builder
	b.WriteString("{...F0}\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query{...F%d ...F%d}\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query{%s}\n%s", levels, leaf, more)
	return b.String()
}

// fragmentChain is n fragments C0…C(n-1), each spreading the next, the
// last selecting __typename.
func fragmentChain(n int) string {
	var b strings.Builder
	for i := range n - 1 {
		fmt.Fprintf(&b, "fragment C%d on Query{...C%d}\n", i, i+1)
	}
	fmt.Fprintf(&b, "fragment C%d on Query{__typename}\n", n-1)
	return b.String()
}

// lookCtx is a request's context that ends, with err, at its look number
// end (its Err method called that many times; 0: never): a request
// timing out, or its client hanging up, at a known point of a walk,
// without sleeping. Walks look every checkEvery selections, so a budget of
// looks is a budget of work: a walk that does more stops at once.
type lookCtx struct {
	context.Context
	end, looks int
	err        error
}

func newLookCtx(end int, err error) *lookCtx {
	return &lookCtx{Context: context.Background(), end: end, err: err}
}

func (c *lookCtx) Err() error {
	if c.looks++; c.end > 0 && c.looks >= c.end {
		return c.err
	}
	return nil
}

// linearLooks is the looks of a walk of at most perByte selections per
// byte of query: one per checkEvery selections, and the two looks of
// MutateOperationParameters before and after.
func linearLooks(query string, perByte int) int { return perByte*len(query)/checkEvery + 3 }

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
// fragments hide them in, and lets ordinary ones through — visiting at most
// one selection per byte of the document: the work is counted
// (DocumentWork.PreCheck), and the request's context ends (REQUEST_CANCELLED)
// once the walk has looked at it more often than such a walk would, so a
// walk that is not linear (a fragment expanded again at every spread: 2^27
// visits for FragmentBomb) fails here at once instead of running for
// minutes.
func TestDocumentLimits(t *testing.T) {
	t.Parallel()
	limits := Limits{MaxDepth: 12, MaxAliases: 15, MaxTokens: 50_000, MaxFields: 5000, MaxRepeats: 50}
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
		// Spreads that add no field multiply too: of a fragment the
		// document does not define, or down a chain of fragments.
		{"UnknownFragmentBomb", bombOver(26, "...Missing", ""), codeComplexity, "more than 5000 fragment spreads"},
		{"ChainUnderBomb", bombOver(12, "...C0", fragmentChain(500)), codeComplexity, "more than 5000 fragment spreads"},
		{"TypenameFlood", "{" + strings.Repeat(" __typename", 4990) + "}", codeSelection, `"__typename" is selected more than 50 times`},
		{"RepeatsThroughFragments", "{ ...A ...B }\nfragment A on Query {" + strings.Repeat(" plans { name }", 30) + "}\nfragment B on Query {" + strings.Repeat(" plans { id }", 30) + "}", codeSelection, `"plans" is selected more than 50 times`},
		{"RepeatsBelowMergedFields", "{" + strings.Repeat(" me { name name }", 30) + "}", codeSelection, `"name" is selected more than 50 times`},
		{"UnusedFragmentIsMeasured", "{ __typename }\nfragment U on Query {" + strings.Repeat(" __typename", 60) + "}", codeSelection, "selected more than 50 times"},
		{"Cycle", "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "GRAPHQL_VALIDATION_FAILED", "within itself"},
		{"DepthThroughFragments", "{ ...D } fragment D on Query { " + deep + " }", "GRAPHQL_VALIDATION_FAILED", "13 levels deep"},
		{"IntrospectionQuery", introspectionQuery, "", ""},
		{"OfTypeDoesNotHideDepth", "{ ...D } fragment D on Query { " + strings.Replace(deep, "id", "id ofType { ofType { id } }", 1) + " }", "GRAPHQL_VALIDATION_FAILED", "13 levels deep"},
		{"AliasesThroughFragments", "{ ...A ...A2 } fragment A on Query { a1: me { id } a2: me { id } a3: me { id } a4: me { id } a5: me { id } a6: me { id } a7: me { id } a8: me { id } } fragment A2 on Query { ...A }", "GRAPHQL_VALIDATION_FAILED", "16 aliases"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := documentLimits{limits: limits, work: &DocumentWork{}}
			err := l.MutateOperationParameters(newLookCtx(linearLooks(c.query, 1), context.Canceled), &graphql.RawParams{Query: c.query})
			visits := l.work.PreCheck.Load()
			switch {
			case err != nil && err.Extensions["code"] == codeCancelled:
				t.Fatalf("stopped after %d selections visited: more than one per byte of the %d-byte document", visits, len(c.query))
			case c.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.code != "" && (err == nil || err.Extensions["code"] != c.code || !strings.Contains(err.Message, c.msg)):
				t.Fatalf("got %v (%v), want %s with %q", err, extensions(err), c.code, c.msg)
			}
			if visits == 0 || visits > int64(len(c.query)) {
				t.Fatalf("%d selections visited for a %d-byte document; want at most one per byte", visits, len(c.query))
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

// validated parses and validates query against the API's schema.
func validated(t *testing.T, es graphql.ExecutableSchema, query string) *graphql.OperationContext {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		t.Fatal(err)
	}
	if errs := validator.Validate(es.Schema(), doc); len(errs) > 0 {
		t.Fatalf("%.60s: %v", query, errs)
	}
	return &graphql.OperationContext{Operation: doc.Operations[0], Variables: map[string]any{}}
}

// The complexity count visits each selection of the document once, each
// fragment once however often it is spread: counted, and bounded by the
// request's context as in TestDocumentLimits (a count that expands every
// spread again stops at once, REQUEST_CANCELLED).
func TestComplexityLinear(t *testing.T) {
	t.Parallel()
	es := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()})
	for _, c := range []struct {
		name, query, msg string
	}{
		{"FragmentBomb", fragmentBomb(26), "complexity 67108864"},
		{"ConnectionBomb", bombOver(20, "problems(first: 100) { edges { node { title } } }", ""), "exceeds the limit of 5000"},
		{"IntrospectionQuery", introspectionQuery, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := validated(t, es, c.query)
			work := &DocumentWork{}
			cl := &complexityLimit{limit: 5000, es: es, work: work}
			err := cl.MutateOperationContext(newLookCtx(len(c.query)/checkEvery+2, context.Canceled), op)
			visits := work.Complexity.Load()
			switch {
			case err != nil && err.Extensions["code"] == codeCancelled:
				t.Fatalf("stopped after %d selections visited: more than one per byte of the %d-byte document", visits, len(c.query))
			case c.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.msg != "" && (err == nil || err.Extensions["code"] != codeComplexity || !strings.Contains(err.Message, c.msg)):
				t.Fatalf("got %v (%v), want %s with %q", err, extensions(err), codeComplexity, c.msg)
			}
			if visits == 0 || visits > int64(len(c.query)) {
				t.Fatalf("%d selections visited for a %d-byte document; want at most one per byte", visits, len(c.query))
			}
		})
	}
}

// The checks stop when the request's context ends — its timeout
// (ALGOITNY_REQUEST_TIMEOUT) or the client hanging up — in the middle of
// their walks, not after them: the context ends at a given look, and the
// walk must stop at that look (checkEvery selections later at most).
func TestChecksStopWithTheRequest(t *testing.T) {
	t.Parallel()
	limits := Limits{MaxDepth: 12, MaxAliases: 15, MaxTokens: 50_000, MaxFields: 5000, MaxRepeats: 50}
	// 3000 distinct fields: passes every check (unknown fields are
	// validation's business), measured then merged — 6000 selections.
	var b strings.Builder
	b.WriteString("{")
	for i := range 3000 {
		fmt.Fprintf(&b, " f%d", i)
	}
	b.WriteString(" }")
	wide := b.String()
	if err := (documentLimits{limits: limits}).MutateOperationParameters(context.Background(), &graphql.RawParams{Query: wide}); err != nil {
		t.Fatalf("the wide document is refused: %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		code string
		// visits is what the walk may have done when it stops.
		minVisits, maxVisits int64
	}{
		{"CancelledBefore", cancelled, codeCancelled, 0, 0},
		// MutateOperationParameters looks once before parsing: the
		// second look is the walk's first, after checkEvery selections.
		{"TimeoutWhileMeasuring", newLookCtx(2, context.DeadlineExceeded), codeTimeout, checkEvery, checkEvery},
		{"HangUpWhileMeasuring", newLookCtx(5, context.Canceled), codeCancelled, 4 * checkEvery, 4 * checkEvery},
		// The measure looks 3000/checkEvery = 11 times; the merge next.
		{"TimeoutWhileMerging", newLookCtx(16, context.DeadlineExceeded), codeTimeout, 3001, 15 * checkEvery},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := documentLimits{limits: limits, work: &DocumentWork{}}
			err := l.MutateOperationParameters(c.ctx, &graphql.RawParams{Query: wide})
			visits := l.work.PreCheck.Load()
			if err == nil || err.Extensions["code"] != c.code || visits < c.minVisits || visits > c.maxVisits {
				t.Fatalf("got %v (%v) after %d selections; want %s after %d to %d", err, extensions(err), visits, c.code, c.minVisits, c.maxVisits)
			}
		})
	}

	es := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()})
	b.Reset()
	b.WriteString("{")
	for i := range 3000 {
		fmt.Fprintf(&b, " a%d: __typename", i)
	}
	b.WriteString(" }")
	op := validated(t, es, b.String())
	for _, c := range []struct {
		name string
		ctx  context.Context
		code string
		// visits is what the count may have done when it stops.
		maxVisits int64
	}{
		{"ComplexityCancelledBefore", cancelled, codeCancelled, checkEvery},
		{"ComplexityTimeout", newLookCtx(1, context.DeadlineExceeded), codeTimeout, checkEvery},
		{"ComplexityHangUp", newLookCtx(4, context.Canceled), codeCancelled, 4 * checkEvery},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := &DocumentWork{}
			cl := &complexityLimit{limit: 5000, es: es, work: work}
			err := cl.MutateOperationContext(c.ctx, op)
			visits := work.Complexity.Load()
			if err == nil || err.Extensions["code"] != c.code || visits > c.maxVisits {
				t.Fatalf("got %v (%v) after %d of 3000 selections; want %s after at most %d", err, extensions(err), visits, c.code, c.maxVisits)
			}
		})
	}
}

// TestMarshalExtensions: the cost written by hand is what json.Marshal
// writes, alone and beside other extensions.
func TestMarshalExtensions(t *testing.T) {
	t.Parallel()
	for _, ext := range []map[string]any{
		{"cost": costExtension{Cost: 3, Limit: 5000}},
		{"cost": costExtension{Cost: -1, Limit: 0}},
		{"cost": costExtension{Cost: 7, Limit: 10}, "dynamodbRequests": int64(2)},
		{"dynamodbRequests": int64(2)},
	} {
		got, err := marshalExtensions(ext)
		want, err2 := json.Marshal(ext)
		if err != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("marshalExtensions(%v) = %s, %v; json.Marshal: %s", ext, got, err, want)
		}
	}
	if multipartContentType("application/json") || !multipartContentType(" Multipart/Form-Data; boundary=x") || multipartContentType("multipart/mixed") {
		t.Error("multipartContentType: wrong answer")
	}
}

// TestAbortErrorFirstEndWins: a request whose time was up before fields
// still running spent its budget is a timeout; one whose budget was spent
// first is too large.
func TestAbortErrorFirstEndWins(t *testing.T) {
	t.Parallel()
	late, stop := context.WithTimeoutCause(context.Background(), time.Nanosecond, errRequestTimeout)
	defer stop()
	<-late.Done()
	var b budget
	late = withBudgetIn(late, &b, 10, stop)
	b.charge(100)
	if code := abortError(late).Extensions["code"]; code != codeTimeout {
		t.Errorf("time up, then the budget spent: %v, want %s", code, codeTimeout)
	}
	spent, stop2 := context.WithTimeoutCause(context.Background(), time.Hour, errRequestTimeout)
	defer stop2()
	var b2 budget
	spent = withBudgetIn(spent, &b2, 10, stop2)
	b2.charge(100)
	if code := abortError(spent).Extensions["code"]; code != codeTooLarge || spent.Err() == nil {
		t.Errorf("the budget spent: %v (context %v), want %s", code, spent.Err(), codeTooLarge)
	}
}
