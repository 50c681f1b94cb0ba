package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
)

// seedHistory stores an execution of user directly (executions are
// normally written by the CODE_EXECUTION worker).
func (s *apiServer) seedHistory(t testing.TB, u *algoitny.User, problemID string, public bool) *algoitny.SearchHistory {
	t.Helper()
	h := &algoitny.SearchHistory{
		UserID: u.ID, UserEmail: u.Email, Platform: algoitny.PlatformBaekjoon, ProblemID: problemID, ProblemTitle: "Problem " + problemID,
		Language: algoitny.LanguagePython, Code: "secret code of " + u.Email, IsCodePublic: public,
		Verdict: algoitny.VerdictWrongAnswer, PassedCount: 1, FailedCount: 1, TotalCount: 2,
		TestResults: []algoitny.TestResult{{TestCaseID: "t1", Verdict: algoitny.VerdictAccepted}, {TestCaseID: "t2", Verdict: algoitny.VerdictWrongAnswer, Output: "4"}},
	}
	if err := s.DB.CreateHistory(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestAPIHistory(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	alice, bob := s.login(t, "alice@example.com"), s.login(t, "bob@example.com")
	aliceU, bobU := s.user(t, "alice@example.com"), s.user(t, "bob@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)

	private := s.seedHistory(t, aliceU, "1000", false)
	public := s.seedHistory(t, aliceU, "1000", true)
	bobPublic := s.seedHistory(t, bobU, "1000", true)
	privateID := globalIDOf("SearchHistory", private.UserID, private.ID)
	publicID := globalIDOf("SearchHistory", public.UserID, public.ID)

	t.Run("PrivateCodeOnlyForOwnerAndStaff", func(t *testing.T) {
		for _, tc := range []struct {
			who, token string
			want       string
		}{
			{"owner", alice, `"code":"secret code of alice@example.com"`},
			{"staff", admin, `"code":"secret code of alice@example.com"`},
			{"other", bob, `{"searchHistory":null}`},
			{"anonymous", "", `{"searchHistory":null}`},
		} {
			r := s.query(t, tc.token, `query($id: ID!) { searchHistory(id: $id) { code } }`, map[string]any{"id": privateID})
			if !strings.Contains(string(r.Data), tc.want) {
				t.Fatalf("%s reads private item: %s", tc.who, r.Raw)
			}
		}
		// Public code is public; the author's email, staff status and last
		// sign-in are not (but are for the author and staff).
		const q = `query($id: ID!) { searchHistory(id: $id) { code user { name email isStaff lastLogin } problem { title } } }`
		r := s.query(t, bob, q, map[string]any{"id": publicID})
		if !strings.Contains(string(r.Data), `"code":"secret code of alice@example.com"`) || !strings.Contains(string(r.Data), `"email":null,"isStaff":null,"lastLogin":null`) || !strings.Contains(string(r.Data), `"title":"Problem 1000"`) {
			t.Fatalf("public item for bob: %s", r.Raw)
		}
		for _, who := range []string{alice, admin} {
			r := s.query(t, who, q, map[string]any{"id": publicID})
			if !strings.Contains(string(r.Data), `"email":"alice@example.com","isStaff":false,`) {
				t.Fatalf("public item for its author or staff: %s", r.Raw)
			}
		}
	})

	t.Run("FeedsAndMyHistory", func(t *testing.T) {
		var mine struct {
			MyHistory struct {
				Edges []struct {
					Node struct {
						ID           string
						IsCodePublic bool
					}
				}
			}
		}
		s.query(t, alice, `{ myHistory { edges { node { id isCodePublic } } } }`, nil).decode(t, &mine)
		if len(mine.MyHistory.Edges) != 2 || mine.MyHistory.Edges[0].Node.ID != publicID {
			t.Fatalf("alice's history: %+v", mine)
		}
		if r := s.query(t, "", `{ myHistory { edges { node { id } } } }`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("anonymous myHistory: %s", r.Raw)
		}
		var pub struct {
			PublicHistory struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		s.query(t, "", `{ publicHistory(filter: {platform: BAEKJOON}) { edges { node { id } } } }`, nil).decode(t, &pub)
		if len(pub.PublicHistory.Edges) != 2 {
			t.Fatalf("public feed: %+v", pub)
		}
		// Bob's feed: his own + alice's public one, never alice's private one.
		var feed struct {
			HistoryFeed struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		s.query(t, bob, `{ historyFeed(first: 10) { edges { node { id } } } }`, nil).decode(t, &feed)
		ids := []string{}
		for _, e := range feed.HistoryFeed.Edges {
			ids = append(ids, e.Node.ID)
		}
		want := []string{globalIDOf("SearchHistory", bobPublic.UserID, bobPublic.ID), publicID}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Fatalf("bob's feed %v, want %v", ids, want)
		}
	})

	t.Run("ListsShowDetailsWhenAsked", func(t *testing.T) {
		// A page that asks for no details is read without them; a page that
		// asks for any — directly, in a fragment, in a fragment on Node —
		// gets all of them, on every list.
		for _, q := range []string{
			`{ publicHistory { edges { node { id code testResults { verdict } hints compileMessage } } } }`,
			`{ myHistory { edges { node { id ...D } } } } fragment D on SearchHistory { code testResults { verdict } hints compileMessage }`,
			`{ historyFeed { edges { node { id ... on Node { ... on SearchHistory { code testResults { verdict } } } } } } }`,
		} {
			r := s.query(t, alice, q, nil)
			if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"code":"secret code of alice@example.com"`) ||
				!strings.Contains(string(r.Data), `"testResults":[{"verdict":"ACCEPTED"},{"verdict":"WRONG_ANSWER"}]`) {
				t.Fatalf("%s:\n%s", q, r.Raw)
			}
		}
		r := s.query(t, alice, `{ publicHistory { edges { node { id verdict passedCount problem { title } } } } }`, nil)
		if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"verdict":"WRONG_ANSWER","passedCount":1,"problem":{"title":"Problem 1000"}`) {
			t.Fatalf("summary page: %s", r.Raw)
		}
	})

	t.Run("Visibility", func(t *testing.T) {
		if r := s.query(t, bob, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: true) { id } }`, map[string]any{"id": privateID}); r.code() != "NOT_FOUND" {
			t.Fatalf("bob changed alice's item: %s", r.Raw)
		}
		var out struct{ SetHistoryVisibility struct{ IsCodePublic bool } }
		s.query(t, alice, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: true) { isCodePublic } }`, map[string]any{"id": privateID}).decode(t, &out)
		if !out.SetHistoryVisibility.IsCodePublic {
			t.Fatal("not public")
		}
		if r := s.query(t, bob, `query($id: ID!) { searchHistory(id: $id) { code } }`, map[string]any{"id": privateID}); !strings.Contains(string(r.Data), "secret code") {
			t.Fatalf("now-public item hidden: %s", r.Raw)
		}
		s.query(t, alice, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { isCodePublic } }`, map[string]any{"id": privateID})
	})

	// A public execution shows its problem's title and every test's output:
	// of a draft, that would publish tests only its author (and some plans)
	// may see. Neither executeCode nor setHistoryVisibility makes one public.
	t.Run("DraftsExecutionsStayPrivate", func(t *testing.T) {
		s.createProblem(t, admin, "BAEKJOON", "draft1", 1, false)
		r := s.query(t, admin, executeMutation, map[string]any{"in": map[string]any{
			"platform": "BAEKJOON", "problemId": "draft1", "language": "PYTHON", "code": "print(input())", "isCodePublic": true}})
		if r.code() != "BAD_USER_INPUT" || !strings.Contains(string(r.Raw), "draft") {
			t.Fatalf("a public execution of a draft: %s", r.Raw)
		}
		draftRun := s.seedHistory(t, aliceU, "draft1", false)
		id := globalIDOf("SearchHistory", draftRun.UserID, draftRun.ID)
		for _, who := range []string{alice, admin} {
			r := s.query(t, who, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: true) { isCodePublic } }`, map[string]any{"id": id})
			if r.code() != "BAD_USER_INPUT" {
				t.Fatalf("made an execution of a draft public: %s", r.Raw)
			}
		}
		if r := s.query(t, alice, `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { isCodePublic } }`, map[string]any{"id": id}); len(r.Errors) > 0 {
			t.Fatalf("making it private: %s", r.Raw)
		}
		if r := s.query(t, "", `{ publicHistory(filter: {problemId: "draft1"}) { edges { node { id } } } }`, nil); strings.Contains(string(r.Data), id) {
			t.Fatalf("an execution of a draft is in the public feed: %s", r.Raw)
		}
	})

	t.Run("FeedPagesAcrossBothSources", func(t *testing.T) {
		carol := s.login(t, "carol@example.com")
		carolU := s.user(t, "carol@example.com")
		var want []string
		for i := range 5 {
			h := s.seedHistory(t, carolU, fmt.Sprint("c", i), i%2 == 0)
			want = append([]string{globalIDOf("SearchHistory", h.UserID, h.ID)}, want...)
		}
		// Carol's feed = her 5 + the public ones of alice and bob, newest first.
		var all []string
		after := any(nil)
		for {
			var out struct {
				HistoryFeed struct {
					Edges    []struct{ Node struct{ ID string } }
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
			s.query(t, carol, `query($a: String) { historyFeed(first: 2, after: $a) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"a": after}).decode(t, &out)
			for _, e := range out.HistoryFeed.Edges {
				all = append(all, e.Node.ID)
			}
			if !out.HistoryFeed.PageInfo.HasNextPage {
				break
			}
			after = *out.HistoryFeed.PageInfo.EndCursor
		}
		if len(all) != 5+2 {
			t.Fatalf("feed has %d items: %v", len(all), all)
		}
		if strings.Join(all[:5], ",") != strings.Join(want, ",") {
			t.Fatalf("carol's own items out of order")
		}
		seen := map[string]bool{}
		for _, id := range all {
			if seen[id] {
				t.Fatalf("%s twice", id)
			}
			seen[id] = true
		}
	})
}
