package graph_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/auth"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/history"
	"github.com/algoitny/api/internal/loader"
	"github.com/algoitny/api/internal/problems"
)

// The resolvers are tested here through the executable schema, on real
// services over DynamoDB Local: no HTTP server, no PostgreSQL, no judge.
// The full stack (transport, limits, websockets, jobs) is cmd/algoitny's.
func TestMain(m *testing.M) { dynamotest.Main(m) }

// api is the executable schema over accounts, problems and history on a
// DynamoDB of the test's own, with the error presenter and the
// per-operation loaders the transport adds in production.
type api struct {
	db       *dynamo.DB
	accounts *accounts.Service
	c        *client.Client
}

func newAPI(t *testing.T) *api {
	t.Helper()
	ctx := context.Background()
	db := dynamotest.NewDB(t)
	if _, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false); err != nil {
		t.Fatal(err)
	}
	sessions, err := auth.NewSessions(auth.SessionConfig{Secret: []byte(rand.Text() + rand.Text())})
	if err != nil {
		t.Fatal(err)
	}
	acc := &accounts.Service{Store: db, Tokens: sessions, Dev: true, Logger: slog.New(slog.DiscardHandler)}
	problemSvc := &problems.Service{Store: db}
	r := &graph.Resolver{Accounts: acc, Problems: problemSvc, History: &history.Service{Store: db}}
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: r, Complexity: graph.Complexity()}))
	srv.AddTransport(transport.POST{})
	srv.Use(graph.TextGuard{})
	srv.SetErrorPresenter(graph.ErrorPresenter(slog.New(slog.DiscardHandler)))
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(loader.WithLazy(ctx, db))
	})
	return &api{db: db, accounts: acc, c: client.New(srv)}
}

// user signs in (creating the user on the default plan) and returns the
// actor the transport would put on the request's context.
func (a *api) user(t *testing.T, email string, staff bool) *algoitny.Actor {
	t.Helper()
	ctx := context.Background()
	s, err := a.accounts.DevLogin(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	if staff {
		if _, err := a.accounts.GrantStaff(ctx, email, true); err != nil {
			t.Fatal(err)
		}
	}
	actor, err := a.accounts.Authenticate(ctx, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	return actor
}

// result is one GraphQL response: its data and the codes of its errors.
type result struct {
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Path       []any
		Extensions map[string]any
	}
}

// code returns the first error's extensions.code, "" without errors.
func (r result) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// do runs query as actor (nil: anonymous) and returns the raw response.
func (a *api) do(t *testing.T, actor *algoitny.Actor, query string, vars map[string]any) result {
	t.Helper()
	opts := []client.Option{func(bd *client.Request) {
		if actor != nil {
			bd.HTTP = bd.HTTP.WithContext(algoitny.WithActor(bd.HTTP.Context(), actor))
		}
	}}
	for k, v := range vars {
		opts = append(opts, client.Var(k, v))
	}
	raw, err := a.c.RawPost(query, opts...)
	if err != nil {
		t.Fatal(err)
	}
	out := result{Data: mustJSON(t, raw.Data)}
	if len(raw.Errors) > 0 {
		if err := json.Unmarshal(raw.Errors, &out.Errors); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// ok runs query and decodes its data into out, failing on any error.
func (a *api) ok(t *testing.T, actor *algoitny.Actor, query string, vars map[string]any, out any) {
	t.Helper()
	r := a.do(t, actor, query, vars)
	if len(r.Errors) > 0 {
		t.Fatalf("%s: %+v", query, r.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

// fails runs query and fails the test unless its first error has code.
func (a *api) fails(t *testing.T, actor *algoitny.Actor, code, query string, vars map[string]any) result {
	t.Helper()
	r := a.do(t, actor, query, vars)
	if r.code() != code {
		t.Fatalf("%s with %v: error code %q (%+v), want %q", query, vars, r.code(), r.Errors, code)
	}
	return r
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const createProblem = `mutation($in: CreateProblemInput!) { createProblem(input: $in) { id problemId title isCompleted testCaseCount } }`

func problemInput(id string, completed bool) map[string]any {
	return map[string]any{
		"platform": "BAEKJOON", "problemId": id, "title": "Problem " + id, "language": "PYTHON",
		"solutionCode": "print(sum(map(int, input().split())))", "isCompleted": completed,
		"testCases": []map[string]any{{"input": "1 2\n", "output": "3\n"}},
	}
}

// TestProblemRules: who may create and see problems, and the codes of
// what they may not, as the resolvers present them.
func TestProblemRules(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	admin := a.user(t, "admin@example.com", true)
	alice := a.user(t, "alice@example.com", false)

	var created struct {
		CreateProblem struct {
			ID, ProblemID, Title string
			IsCompleted          bool
			TestCaseCount        int
		}
	}
	a.ok(t, admin, createProblem, map[string]any{"in": problemInput("1000", true)}, &created)
	if p := created.CreateProblem; p.ProblemID != "1000" || !p.IsCompleted || p.TestCaseCount != 1 || p.ID == "" {
		t.Fatalf("created %+v", p)
	}
	a.ok(t, admin, createProblem, map[string]any{"in": problemInput("1001", false)}, nil)

	a.fails(t, nil, "UNAUTHENTICATED", createProblem, map[string]any{"in": problemInput("2000", true)})
	// The default plan may not register problems.
	a.fails(t, alice, "FORBIDDEN", createProblem, map[string]any{"in": problemInput("2000", true)})
	a.fails(t, admin, "CONFLICT", createProblem, map[string]any{"in": problemInput("1000", true)})
	r := a.fails(t, admin, "BAD_USER_INPUT", createProblem, map[string]any{"in": problemInput("bad id!", true)})
	if r.Errors[0].Extensions["field"] == nil {
		t.Errorf("BAD_USER_INPUT without the field: %+v", r.Errors[0])
	}
	// A NUL byte in any argument is refused before a resolver runs.
	a.fails(t, admin, "BAD_USER_INPUT", createProblem, map[string]any{"in": problemInput("3000\x00", true)})

	const get = `query($id: String!) { problem(platform: BAEKJOON, problemId: $id) { problemId title } }`
	for _, tc := range []struct {
		who   string
		actor *algoitny.Actor
		id    string
		seen  bool
	}{
		{"anonymous, completed", nil, "1000", true},
		{"anonymous, draft", nil, "1001", false},
		{"user, draft of another", alice, "1001", false},
		{"staff, draft", admin, "1001", true},
		{"anyone, missing", admin, "9999", false},
	} {
		var out struct{ Problem *struct{ ProblemID string } }
		a.ok(t, tc.actor, get, map[string]any{"id": tc.id}, &out)
		if (out.Problem != nil) != tc.seen {
			t.Errorf("%s: problem %s seen = %v, want %v", tc.who, tc.id, out.Problem != nil, tc.seen)
		}
	}
	a.fails(t, nil, "BAD_USER_INPUT", get, map[string]any{"id": "no spaces allowed"})

	// node(id:) finds the problem by its global id; a forged id is bad input.
	var node struct{ Node struct{ ProblemID string } }
	a.ok(t, nil, `query($id: ID!) { node(id: $id) { ... on Problem { problemId } } }`, map[string]any{"id": created.CreateProblem.ID}, &node)
	if node.Node.ProblemID != "1000" {
		t.Fatalf("node(id) = %+v", node)
	}
	a.fails(t, nil, "BAD_USER_INPUT", `query { node(id: "forged") { id } }`, nil)
}

// TestProblemsPages: a list pages through everything once with the
// default and an explicit page size, and refuses a size outside 1–100 or a
// forged cursor.
func TestProblemsPages(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	admin := a.user(t, "admin@example.com", true)
	const n = 23 // more than one default page (20)
	for i := range n {
		a.ok(t, admin, createProblem, map[string]any{"in": problemInput(fmt.Sprint(1000+i), true)}, nil)
	}
	const list = `query($first: Int, $after: String) { problems(first: $first, after: $after) {
		edges { node { problemId } } pageInfo { hasNextPage endCursor } } }`
	type page struct {
		Problems struct {
			Edges    []struct{ Node struct{ ProblemID string } }
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	for _, first := range []any{nil, 7} {
		seen := map[string]bool{}
		var after any
		pages := 0
		for {
			var p page
			a.ok(t, nil, list, map[string]any{"first": first, "after": after}, &p)
			pages++
			size := 20
			if first != nil {
				size = first.(int)
			}
			if len(p.Problems.Edges) > size {
				t.Fatalf("first %v: a page of %d", first, len(p.Problems.Edges))
			}
			for _, e := range p.Problems.Edges {
				if seen[e.Node.ProblemID] {
					t.Fatalf("first %v: %s listed twice", first, e.Node.ProblemID)
				}
				seen[e.Node.ProblemID] = true
			}
			if !p.Problems.PageInfo.HasNextPage {
				break
			}
			after = *p.Problems.PageInfo.EndCursor
			if pages > n {
				t.Fatal("the pages never end")
			}
		}
		if len(seen) != n {
			t.Fatalf("first %v: %d problems listed, want %d", first, len(seen), n)
		}
		if first == nil && pages != 2 {
			t.Errorf("the default page size gave %d pages for %d problems, want 2", pages, n)
		}
	}
	for _, bad := range []map[string]any{{"first": 0}, {"first": 101}, {"first": -1}, {"after": "forged"}} {
		a.fails(t, nil, "BAD_USER_INPUT", list, bad)
	}
}

// TestHistoryVisibility: an execution is its owner's and staff's until its
// owner makes it public; another user sees it only then, and may not
// change it.
func TestHistoryVisibility(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := newAPI(t)
	admin := a.user(t, "admin@example.com", true)
	alice := a.user(t, "alice@example.com", false)
	bob := a.user(t, "bob@example.com", false)
	a.ok(t, admin, createProblem, map[string]any{"in": problemInput("1000", true)}, nil)
	h := &algoitny.SearchHistory{
		UserID: alice.User.ID, UserEmail: alice.User.Email, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000",
		ProblemTitle: "Problem 1000", Language: algoitny.LanguagePython, Code: "print(3)",
		Verdict: algoitny.VerdictAccepted, PassedCount: 1, TotalCount: 1,
	}
	if err := a.db.CreateHistory(ctx, h); err != nil {
		t.Fatal(err)
	}
	var mine struct {
		MyHistory struct {
			Edges []struct{ Node struct{ ID, Code string } }
		}
	}
	a.ok(t, alice, `{ myHistory { edges { node { id code } } } }`, nil, &mine)
	if len(mine.MyHistory.Edges) != 1 || mine.MyHistory.Edges[0].Node.Code != "print(3)" {
		t.Fatalf("alice's history: %+v", mine)
	}
	id := mine.MyHistory.Edges[0].Node.ID
	a.fails(t, nil, "UNAUTHENTICATED", `{ myHistory { edges { node { id } } } }`, nil)

	const get = `query($id: ID!) { searchHistory(id: $id) { id code isCodePublic } }`
	seen := func(actor *algoitny.Actor) bool {
		var out struct{ SearchHistory *struct{ Code string } }
		a.ok(t, actor, get, map[string]any{"id": id}, &out)
		return out.SearchHistory != nil
	}
	if !seen(alice) || !seen(admin) || seen(bob) || seen(nil) {
		t.Fatalf("a private execution: owner %v, staff %v, other %v, anonymous %v", seen(alice), seen(admin), seen(bob), seen(nil))
	}
	const set = `mutation($id: ID!, $p: Boolean!) { setHistoryVisibility(id: $id, isCodePublic: $p) { isCodePublic } }`
	a.fails(t, bob, "NOT_FOUND", set, map[string]any{"id": id, "p": true})
	a.fails(t, nil, "UNAUTHENTICATED", set, map[string]any{"id": id, "p": true})
	a.fails(t, alice, "BAD_USER_INPUT", set, map[string]any{"id": "forged", "p": true})
	a.ok(t, alice, set, map[string]any{"id": id, "p": true}, nil)
	if !seen(bob) || !seen(nil) {
		t.Fatal("a public execution of a published problem is hidden from others")
	}
}

// TestAccountErrors: the signed-out and non-staff answers of the account
// operations.
func TestAccountErrors(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	alice := a.user(t, "alice@example.com", false)
	admin := a.user(t, "admin@example.com", true)

	var me struct{ Me *struct{ Email string } }
	a.ok(t, nil, `{ me { email } }`, nil, &me)
	if me.Me != nil {
		t.Fatalf("anonymous me = %+v", me.Me)
	}
	a.ok(t, alice, `{ me { email } }`, nil, &me)
	if me.Me == nil || me.Me.Email != "alice@example.com" {
		t.Fatalf("me = %+v", me.Me)
	}
	a.fails(t, nil, "UNAUTHENTICATED", `{ myUsage { action used limit } }`, nil)
	var usage struct{ MyUsage []struct{ Used, Limit int } }
	a.ok(t, alice, `{ myUsage { action used limit } }`, nil, &usage)
	if len(usage.MyUsage) == 0 {
		t.Fatal("no usage rows")
	}
	const setActive = `mutation($id: ID!) { setUserActive(userId: $id, active: false) { isActive } }`
	var self struct{ Me struct{ ID string } }
	a.ok(t, alice, `{ me { id } }`, nil, &self)
	a.fails(t, alice, "FORBIDDEN", setActive, map[string]any{"id": self.Me.ID})
	a.fails(t, nil, "UNAUTHENTICATED", setActive, map[string]any{"id": self.Me.ID})
	var out struct{ SetUserActive struct{ IsActive bool } }
	a.ok(t, admin, setActive, map[string]any{"id": self.Me.ID}, &out)
	if out.SetUserActive.IsActive {
		t.Fatal("staff could not deactivate the user")
	}
}

// TestChecksUnavailable: on a server without URL checks (no Watches), every
// operation on checks and notification channels answers UNAVAILABLE —
// the mutations on an existing id as much as the ones that create.
func TestChecksUnavailable(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	alice := a.user(t, "alice@example.com", false)
	id := func(typ, part string) string { return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + part)) }
	check, channel := map[string]any{"id": id("Check", "c1")}, map[string]any{"id": id("NotificationChannel", "n1")}
	for _, c := range []struct {
		query string
		vars  map[string]any
	}{
		{`mutation { createCheck(input: {url: "https://example.com/", checkType: AVAILABILITY}) { id } }`, nil},
		{`mutation($id: ID!) { updateCheck(id: $id, input: {delayMs: 60000}) { id } }`, check},
		{`mutation($id: ID!) { pauseCheck(id: $id) { id } }`, check},
		{`mutation($id: ID!) { resumeCheck(id: $id) { id } }`, check},
		{`mutation($id: ID!) { deleteCheck(id: $id) }`, check},
		{`mutation { createWebhook(url: "https://example.com/hook") { secret } }`, nil},
		{`mutation($id: ID!) { deleteNotificationChannel(id: $id) }`, channel},
		{`{ myChecks { edges { node { id } } } }`, nil},
		{`{ myNotificationChannels { id } }`, nil},
		{`query($id: ID!) { check(id: $id) { id } }`, check},
		{`query($id: ID!) { node(id: $id) { id } }`, check},
	} {
		a.fails(t, alice, "UNAVAILABLE", c.query, c.vars)
	}
}
