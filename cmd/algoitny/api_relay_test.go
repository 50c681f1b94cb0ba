package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// pageInfo is a connection's PageInfo.
type pageInfo struct {
	HasNextPage, HasPreviousPage bool
	StartCursor, EndCursor       *string
}

// TestRelayPagination pages connections both ways (Relay's cursor
// connections specification): first/after and last/before give the same
// items in the same order, startCursor/hasPreviousPage tell where a page
// starts, and mixing the directions is refused.
func TestRelayPagination(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "relay-admin@example.com")
	for _, id := range []string{"5001", "5002", "5003", "5004", "5005"} {
		s.createProblem(t, admin, "BAEKJOON", id, 0, false)
	}
	s.createProblem(t, admin, "CODEFORCES", "77A", 7, true)

	type problemsPage struct {
		Problems struct {
			Edges []struct {
				Cursor string
				Node   struct{ ProblemID string }
			}
			PageInfo pageInfo
		}
	}
	ids := func(p problemsPage) string {
		var out []string
		for _, e := range p.Problems.Edges {
			out = append(out, e.Node.ProblemID)
		}
		return strings.Join(out, ",")
	}
	const q = `query($first: Int, $after: String, $last: Int, $before: String) {
	  problems(filter: {completed: false, platform: BAEKJOON}, first: $first, after: $after, last: $last, before: $before) {
	    edges { cursor node { problemId } }
	    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	  }
	}`
	var all problemsPage
	s.query(t, admin, q, map[string]any{"first": 10}).decode(t, &all)
	if len(all.Problems.Edges) != 5 || all.Problems.PageInfo.HasPreviousPage || *all.Problems.PageInfo.StartCursor != all.Problems.Edges[0].Cursor {
		t.Fatalf("all drafts: %+v", all)
	}
	want := ids(all)
	// The last two, then the two before them, then the one left.
	var p1, p2, p3 problemsPage
	s.query(t, admin, q, map[string]any{"last": 2}).decode(t, &p1)
	if got := ids(p1); got != strings.Join(strings.Split(want, ",")[3:], ",") || !p1.Problems.PageInfo.HasPreviousPage || p1.Problems.PageInfo.HasNextPage {
		t.Fatalf("last 2 = %s %+v, want the end of %s", got, p1.Problems.PageInfo, want)
	}
	s.query(t, admin, q, map[string]any{"last": 2, "before": *p1.Problems.PageInfo.StartCursor}).decode(t, &p2)
	if got := ids(p2); got != strings.Join(strings.Split(want, ",")[1:3], ",") || !p2.Problems.PageInfo.HasPreviousPage || !p2.Problems.PageInfo.HasNextPage {
		t.Fatalf("last 2 before = %s %+v, want the middle of %s", got, p2.Problems.PageInfo, want)
	}
	s.query(t, admin, q, map[string]any{"last": 2, "before": *p2.Problems.PageInfo.StartCursor}).decode(t, &p3)
	if got := ids(p3); got != strings.Split(want, ",")[0] || p3.Problems.PageInfo.HasPreviousPage {
		t.Fatalf("the first = %s %+v, want the start of %s", got, p3.Problems.PageInfo, want)
	}
	// Forward from a cursor: items precede it.
	var fwd problemsPage
	s.query(t, admin, q, map[string]any{"first": 2, "after": p3.Problems.Edges[0].Cursor}).decode(t, &fwd)
	if ids(fwd) != ids(p2) || !fwd.Problems.PageInfo.HasPreviousPage {
		t.Fatalf("first 2 after the first = %s %+v, want %s", ids(fwd), fwd.Problems.PageInfo, ids(p2))
	}
	if r := s.query(t, admin, q, map[string]any{"first": 2, "last": 2}); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "last" {
		t.Fatalf("first with last: %s", r.Raw)
	}
	if r := s.query(t, admin, q, map[string]any{"last": 2, "before": "forged"}); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "before" {
		t.Fatalf("a forged before: %s", r.Raw)
	}

	t.Run("TestCasesBackward", func(t *testing.T) {
		const tq = `query($last: Int, $before: String) { problem(platform: CODEFORCES, problemId: "77A") {
		  testCases(last: $last, before: $before) { totalCount edges { cursor node { input } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
		} }`
		type tcPage struct {
			Problem struct {
				TestCases struct {
					TotalCount int
					Edges      []struct{ Node struct{ Input string } }
					PageInfo   pageInfo
				}
			}
		}
		var seen []string
		var before any
		for range 10 {
			var p tcPage
			s.query(t, "", tq, map[string]any{"last": 3, "before": before}).decode(t, &p)
			var page []string
			for _, e := range p.Problem.TestCases.Edges {
				page = append(page, strings.Fields(e.Node.Input)[0])
			}
			seen = append(page, seen...)
			if p.Problem.TestCases.TotalCount != 7 {
				t.Fatalf("totalCount %d", p.Problem.TestCases.TotalCount)
			}
			if !p.Problem.TestCases.PageInfo.HasPreviousPage {
				break
			}
			before = *p.Problem.TestCases.PageInfo.StartCursor
		}
		if got := strings.Join(seen, ","); got != "0,1,2,3,4,5,6" {
			t.Fatalf("test cases paged backward: %s", got)
		}
	})

	t.Run("EveryInvalidField", func(t *testing.T) {
		r := s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "BAEKJOON", "problemId": "bad id!", "title": "", "language": "PYTHON",
			"solutionCode": "print(1)", "timeLimitMs": 5, "testCases": []any{},
		}})
		fields, _ := json.Marshal(r.Errors[0].Extensions["fields"])
		if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "problemId" ||
			!strings.Contains(string(fields), `"field":"problemId"`) || !strings.Contains(string(fields), `"field":"title"`) || !strings.Contains(string(fields), `"field":"timeLimitMs"`) {
			t.Fatalf("a bad problemId, an empty title and a short time limit: %s", r.Raw)
		}
	})

	t.Run("HistoryFeedForwardOnly", func(t *testing.T) {
		r := s.query(t, "", `{ historyFeed(last: 2) { edges { cursor } } }`, nil)
		if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "last" {
			t.Fatalf("historyFeed(last:): %s", r.Raw)
		}
	})
}

// TestRelayNodes: every type with a global id is a Node (a notification
// channel too), nodes(ids:) answers each id as node(id:) does, and the
// remove… mutations answer the deleted object's id.
func TestRelayNodes(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	alice := s.login(t, "relay-alice@example.com")
	bob := s.login(t, "relay-bob@example.com")
	var created struct {
		CreateWebhook struct{ Channel struct{ ID string } }
	}
	s.query(t, alice, `mutation { createWebhook(url: "https://example.com/hook") { channel { id } } }`, nil).decode(t, &created)
	ch := created.CreateWebhook.Channel.ID
	var me struct{ Me struct{ ID string } }
	s.query(t, alice, `{ me { id } }`, nil).decode(t, &me)

	const nq = `query($id: ID!, $ids: [ID!]!) {
	  node(id: $id) { __typename id ... on NotificationChannel { url } }
	  nodes(ids: $ids) { __typename id }
	}`
	var got struct {
		Node  *struct{ Typename, ID, URL string }
		Nodes []*struct{ Typename, ID string }
	}
	s.query(t, alice, strings.ReplaceAll(nq, "__typename", "typename: __typename"), map[string]any{"id": ch, "ids": []string{me.Me.ID, ch, globalIDOf("Problem", "BAEKJOON", "404")}}).decode(t, &got)
	if got.Node == nil || got.Node.Typename != "NotificationChannel" || got.Node.URL != "https://example.com/hook" {
		t.Fatalf("node(channel) = %+v", got.Node)
	}
	if len(got.Nodes) != 3 || got.Nodes[0].Typename != "User" || got.Nodes[1].ID != ch || got.Nodes[2] != nil {
		t.Fatalf("nodes = %+v", got.Nodes)
	}
	// Another user's channel is not theirs to see.
	var other struct{ Node *struct{ ID string } }
	s.query(t, bob, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": ch}).decode(t, &other)
	if other.Node != nil {
		t.Fatalf("bob reads alice's channel: %+v", other.Node)
	}
	// A malformed id is that entry's error; the others are answered.
	r := s.query(t, alice, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{ch, "bogus"}})
	if r.code() != "BAD_USER_INPUT" || len(r.Errors[0].Path) != 2 || r.Errors[0].Path[1] != float64(1) || !strings.Contains(string(r.Data), ch) {
		t.Fatalf("nodes with a bad id: %s", r.Raw)
	}

	var removed struct {
		RemoveNotificationChannel struct{ DeletedID string }
	}
	s.query(t, alice, `mutation($id: ID!) { removeNotificationChannel(id: $id) { deletedId } }`, map[string]any{"id": ch}).decode(t, &removed)
	if removed.RemoveNotificationChannel.DeletedID != ch {
		t.Fatalf("removeNotificationChannel = %+v", removed)
	}
	if r := s.query(t, alice, `mutation($id: ID!) { removeNotificationChannel(id: $id) { deletedId } }`, map[string]any{"id": ch}); r.code() != "NOT_FOUND" {
		t.Fatalf("removing it again: %s", r.Raw)
	}
	var gone struct{ Node *struct{ ID string } }
	s.query(t, alice, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": ch}).decode(t, &gone)
	if gone.Node != nil {
		t.Fatalf("a removed channel is still a node: %+v", gone.Node)
	}
	var acct struct{ RemoveMyAccount struct{ DeletedID string } }
	s.query(t, alice, `mutation { removeMyAccount { deletedId } }`, nil).decode(t, &acct)
	if acct.RemoveMyAccount.DeletedID != me.Me.ID {
		t.Fatalf("removeMyAccount = %+v, want %s", acct, me.Me.ID)
	}
}

// TestCostVisible: every answer carries its cost and the limit in
// extensions.cost, and requestBudget answers the same numbers.
func TestCostVisible(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	r := s.query(t, "", `{ requestBudget { cost limit remaining responseBytesLimit } problems(first: 10) { edges { node { id title } } } }`, nil)
	var out struct {
		RequestBudget struct{ Cost, Limit, Remaining, ResponseBytesLimit int }
	}
	r.decode(t, &out)
	cost, _ := r.Extensions["cost"].(map[string]any)
	// problems: 1 + 10 × (edges 1 + node 1 + id 1 + title 1 … as the
	// schema's costs count them): at least 10 × 3.
	if cost == nil || cost["limit"] != float64(5000) || cost["cost"] != float64(out.RequestBudget.Cost) || out.RequestBudget.Cost < 30 {
		t.Fatalf("extensions.cost = %v, requestBudget = %+v", r.Extensions["cost"], out.RequestBudget)
	}
	if out.RequestBudget.Limit != 5000 || out.RequestBudget.Remaining != 5000-out.RequestBudget.Cost || out.RequestBudget.ResponseBytesLimit != 16<<20 {
		t.Fatalf("requestBudget = %+v", out.RequestBudget)
	}
	// A bigger page costs more; over the limit the answer says by how much.
	r2 := s.query(t, "", `{ problems(first: 100) { edges { node { id title } } } }`, nil)
	if c2, _ := r2.Extensions["cost"].(map[string]any); c2 == nil || c2["cost"].(float64) <= cost["cost"].(float64) {
		t.Fatalf("cost of 100 problems: %v", r2.Extensions)
	}
	r3 := s.query(t, "", `{ problems(first: 100) { edges { node { testCases(first: 100) { edges { node { id } } } } } } }`, nil)
	if c3, _ := r3.Extensions["cost"].(map[string]any); r3.code() != "COMPLEXITY_LIMIT_EXCEEDED" || c3 == nil || c3["cost"].(float64) <= 5000 {
		t.Fatalf("over the limit: %s", r3.Raw)
	}
}

// trustedManifest writes a manifest of docs (sha256 hex → text) and
// returns its path and the ids.
func trustedManifest(t *testing.T, docs ...string) (string, []string) {
	t.Helper()
	m := map[string]string{}
	var ids []string
	for _, d := range docs {
		sum := sha256.Sum256([]byte(d))
		h := hex.EncodeToString(sum[:])
		m[h], ids = d, append(ids, h)
	}
	b, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), "persisted-documents.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

// getQuery sends a GraphQL GET request with these parameters.
func (s *apiServer) getQuery(t testing.TB, params url.Values) *gqlResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+"?"+params.Encode(), nil)
	req.Header.Set("Accept", "application/graphql-response+json")
	return s.send(t, req)
}

// TestTrustedDocuments: a manifest's documents run by documentId (POST,
// GET, websocket) or Apollo's persistedQuery hash; in trusted-only mode
// any other document, or an unknown id, is refused.
func TestTrustedDocuments(t *testing.T) {
	t.Parallel()
	const langs = `query Langs { languages { id } }`
	const sub = `subscription Job($id: ID!) { jobUpdated(id: $id) { job { id } } }`
	path, ids := trustedManifest(t, langs, sub)
	s := startAPI(t, func(c *Config) { c.Dev, c.TrustedDocuments, c.TrustedOnly = false, path, true })
	unknown := strings.Repeat("ab", 32)

	post := func(body map[string]any) *gqlResult {
		b, _ := json.Marshal(body)
		return s.post(t, "", "application/json", b, nil)
	}
	ok := func(name string, r *gqlResult) {
		t.Helper()
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"languages"`) {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	refused := func(name, code string, r *gqlResult) {
		t.Helper()
		if r.code() != code || r.Data != nil && string(r.Data) != "null" {
			t.Fatalf("%s: want %s, got %d %s", name, code, r.Status, r.Raw)
		}
	}
	ok("documentId", post(map[string]any{"documentId": "sha256:" + ids[0]}))
	ok("persistedQuery", post(map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": ids[0]}}}))
	ok("the manifest's text", post(map[string]any{"query": langs}))
	ok("GET documentId", s.getQuery(t, url.Values{"documentId": {"sha256:" + ids[0]}}))
	ok("GET persistedQuery", s.getQuery(t, url.Values{"extensions": {`{"persistedQuery":{"version":1,"sha256Hash":"` + ids[0] + `"}}`}}))

	refused("unknown documentId", "PERSISTED_QUERY_NOT_FOUND", post(map[string]any{"documentId": "sha256:" + unknown}))
	refused("malformed documentId", "PERSISTED_QUERY_NOT_FOUND", post(map[string]any{"documentId": ids[0]}))
	refused("unknown persistedQuery", "PERSISTED_QUERY_NOT_FOUND", post(map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": unknown}}}))
	other := `{ languages { id name } }`
	refused("another document", "DOCUMENT_NOT_TRUSTED", post(map[string]any{"query": other}))
	// Registering an automatic persisted query does not make it trusted.
	sum := sha256.Sum256([]byte(other))
	refused("APQ registration", "DOCUMENT_NOT_TRUSTED", post(map[string]any{"query": other, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}}))
	refused("GET another document", "DOCUMENT_NOT_TRUSTED", s.getQuery(t, url.Values{"query": {other}}))

	t.Run("StaffRunAnything", func(t *testing.T) { // the playground, operators' tools
		b, _ := json.Marshal(map[string]any{"query": other})
		if r := s.post(t, sessionOf(t, s, "trusted-staff@example.com", true), "application/json", b, nil); len(r.Errors) > 0 {
			t.Fatalf("staff refused: %s", r.Raw)
		}
		if r := s.post(t, sessionOf(t, s, "trusted-user@example.com", false), "application/json", b, nil); r.code() != "DOCUMENT_NOT_TRUSTED" {
			t.Fatalf("a user's document of no manifest: %s", r.Raw)
		}
	})

	t.Run("Websocket", func(t *testing.T) {
		c := s.dialWS(t, "graphql-transport-ws", nil)
		c.init(sessionOf(t, s, "trusted-ws@example.com", false))
		// The manifest's subscription runs (and answers its own error: no such job).
		c.send(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"documentId": "sha256:" + ids[1], "variables": map[string]any{"id": globalIDOf("Job", "nope")}}})
		if m := eventOf(c, "1"); m.Type != "error" && m.Type != "next" || bytes.Contains(m.Payload, []byte("DOCUMENT_NOT_TRUSTED")) || bytes.Contains(m.Payload, []byte("PERSISTED_QUERY_NOT_FOUND")) {
			t.Fatalf("trusted subscription: %+v %s", m, m.Payload)
		}
		c.send(map[string]any{"type": "subscribe", "id": "2", "payload": map[string]any{"query": `subscription($id: ID!) { jobUpdated(id: $id) { job { status } } }`, "variables": map[string]any{"id": globalIDOf("Job", "nope")}}})
		if m := eventOf(c, "2"); !bytes.Contains(m.Payload, []byte("DOCUMENT_NOT_TRUSTED")) {
			t.Fatalf("untrusted subscription: %+v %s", m, m.Payload)
		}
		c.send(map[string]any{"type": "subscribe", "id": "3", "payload": map[string]any{"documentId": "sha256:" + unknown}})
		if m := eventOf(c, "3"); !bytes.Contains(m.Payload, []byte("PERSISTED_QUERY_NOT_FOUND")) {
			t.Fatalf("unknown subscription id: %+v %s", m, m.Payload)
		}
	})

	t.Run("DevModeRunsAnything", func(t *testing.T) {
		dev := startAPI(t, func(c *Config) { c.TrustedDocuments, c.TrustedOnly = path, true })
		b, _ := json.Marshal(map[string]any{"query": other})
		if r := dev.post(t, "", "application/json", b, nil); len(r.Errors) > 0 {
			t.Fatalf("dev mode refused a document: %s", r.Raw)
		}
		b, _ = json.Marshal(map[string]any{"documentId": "sha256:" + ids[0]})
		ok("dev documentId", dev.post(t, "", "application/json", b, nil))
	})
}

// eventOf is the next message of subscription id (others are skipped).
func eventOf(c *wsClient, id string) wsMessage {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := c.event(time.Until(deadline)); m.ID == id {
			return m
		}
	}
}

// sessionOf signs in a new user (staff or not) without devLogin, which a
// server out of dev mode does not have: the session token its sign-in
// would give.
func sessionOf(t *testing.T, s *apiServer, email string, staff bool) string {
	t.Helper()
	ctx := context.Background()
	plan, err := s.Accounts.PlanOf(ctx, algoitny.DefaultPlanName)
	if err != nil {
		t.Fatal(err)
	}
	u := &algoitny.User{Email: email, Name: "u", IsActive: true, IsStaff: staff}
	if err := s.DB.CreateUser(ctx, u, plan); err != nil {
		t.Fatal(err)
	}
	token, _, err := s.Accounts.Tokens.Issue(u)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// relayCompiler is clients/relay's relay-compiler (make clients-relay
// installs it); the test is skipped where it is not installed, except in
// CI.
func relayCompiler(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs("../../clients/relay/node_modules/.bin/relay-compiler")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("relay-compiler is not installed (make clients-relay): %v", err)
		}
		t.Skipf("relay-compiler is not installed: run make clients-relay (%v)", err)
	}
	return bin
}

// TestRelayCompiler compiles clients/relay's documents (@connection both
// ways, @refetchable on Problem and NotificationChannel, @deleteRecord)
// against schema.graphqls with relay-compiler, with no client-side schema
// extension, persisting them to a manifest (SHA256); a server in
// trusted-only mode with that manifest runs the persisted queries and
// refuses any other document.
func TestRelayCompiler(t *testing.T) {
	t.Parallel()
	bin := relayCompiler(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "src"), os.DirFS("../../clients/relay/src")); err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	// relay-compiler reads schemas named *.graphql only.
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("schema.graphql", string(schema))
	write("persisted-documents.json", "{}")
	write("relay.config.json", `{"src": "./src", "schema": "./schema.graphql", "language": "typescript",
	  "persistConfig": {"file": "./persisted-documents.json", "algorithm": "SHA256"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // stops a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("relay-compiler: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "persisted-documents.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]string
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	idOf := func(op string) string {
		for id, text := range manifest {
			if strings.HasPrefix(text, op+" ") || strings.HasPrefix(text, op+"(") {
				return id
			}
		}
		t.Fatalf("no %s in the manifest: %s", op, raw)
		return ""
	}
	page, pagination, problem := idOf("query ProblemsPageQuery"), idOf("query ProblemsListPaginationQuery"), idOf("query ProblemsProblemQuery")
	tests, channel := idOf("query ProblemsTestsPaginationQuery"), idOf("query ProblemsChannelRefetchQuery")
	for _, op := range []string{"mutation ProblemsRemoveCheckMutation", "subscription ProblemsJobSubscription"} {
		idOf(op)
	}

	s := startAPI(t, func(c *Config) {
		c.Dev, c.TrustedOnly = false, true
		c.TrustedDocuments = filepath.Join(dir, "persisted-documents.json")
	})
	runAs := func(token, id string, vars map[string]any) *gqlResult {
		b, _ := json.Marshal(map[string]any{"documentId": "sha256:" + id, "variables": vars})
		return s.post(t, token, "application/json", b, nil)
	}
	run := func(id string, vars map[string]any) *gqlResult { return runAs("", id, vars) }
	// Staff (exempt: any document) register a problem and a channel.
	staff := sessionOf(t, s, "relay-staff@example.com", true)
	s.createProblem(t, staff, "BAEKJOON", "1000", 5, true)
	var created struct {
		CreateWebhook struct{ Channel struct{ ID string } }
	}
	s.query(t, staff, `mutation { createWebhook(url: "https://example.com/relay") { channel { id } } }`, nil).decode(t, &created)
	var first struct {
		Problems struct {
			Edges    []any
			PageInfo pageInfo
		}
		RequestBudget struct{ Cost, Limit int }
	}
	run(page, nil).decode(t, &first)
	if first.RequestBudget.Cost < 1 || first.RequestBudget.Limit != 5000 {
		t.Fatalf("ProblemsPageQuery: %+v", first)
	}
	var next struct{ Problems struct{ PageInfo pageInfo } }
	run(pagination, map[string]any{"count": 2, "cursor": nil}).decode(t, &next)
	type tcConn struct {
		TotalCount int
		Edges      []struct{ Node struct{ Input string } }
		PageInfo   pageInfo
	}
	var p struct {
		Problem *struct {
			ID        string
			TestCases tcConn
		}
	}
	run(problem, map[string]any{"platform": "BAEKJOON", "problemId": "1000"}).decode(t, &p)
	if p.Problem == nil || p.Problem.TestCases.TotalCount != 5 || len(p.Problem.TestCases.Edges) != 2 || p.Problem.TestCases.Edges[1].Node.Input != "4 5\n" ||
		!p.Problem.TestCases.PageInfo.HasPreviousPage {
		t.Fatalf("ProblemsProblemQuery (the last 2 test cases): %+v", p.Problem)
	}
	// The pagination query Relay made of @refetchable fetches the page
	// before, through node(id:).
	var older struct{ Node struct{ TestCases tcConn } }
	run(tests, map[string]any{"id": p.Problem.ID, "count": 2, "cursor": *p.Problem.TestCases.PageInfo.StartCursor}).decode(t, &older)
	if e := older.Node.TestCases.Edges; len(e) != 2 || e[0].Node.Input != "1 2\n" || e[1].Node.Input != "2 3\n" {
		t.Fatalf("ProblemsTestsPaginationQuery: %+v", older)
	}
	var ch struct{ Node struct{ ID, URL string } }
	runAs(staff, channel, map[string]any{"id": created.CreateWebhook.Channel.ID}).decode(t, &ch)
	if ch.Node.URL != "https://example.com/relay" {
		t.Fatalf("ProblemsChannelRefetchQuery: %+v", ch)
	}

	if r := run(strings.Repeat("0", 64), nil); r.code() != "PERSISTED_QUERY_NOT_FOUND" {
		t.Fatalf("an unknown document id: %s", r.Raw)
	}
	b, _ := json.Marshal(map[string]any{"query": `{ problems(first: 2) { edges { node { id } } } }`})
	if r := s.post(t, "", "application/json", b, nil); r.code() != "DOCUMENT_NOT_TRUSTED" {
		t.Fatalf("a document of no manifest: %s", r.Raw)
	}
}
