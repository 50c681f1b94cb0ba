package main

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
)

// Tests of the defects of issue 17 (items 7, 10, 11, 13, 15), against the
// real server.

// loopbackHostName returns a host name (not an address) that resolves to
// loopback only: the machine's own name, or the test is skipped.
func loopbackHostName(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil || h == "" || strings.EqualFold(h, "localhost") {
		t.Skip("no host name of this machine to resolve")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, h)
	if err != nil || len(addrs) == 0 {
		t.Skipf("%s does not resolve: %v", h, err)
	}
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err != nil || !ip.IsLoopback() {
			t.Skipf("%s resolves to %s, not loopback only", h, a)
		}
	}
	return h
}

// unknownHostName returns a name the resolver answers "no such host" for,
// or skips the test when the resolver itself cannot be reached.
func unknownHostName(t *testing.T) string {
	t.Helper()
	name := "no-such-host-" + time.Now().Format("150405") + ".invalid"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, name)
	var dnsErr *net.DNSError
	if err == nil || !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("the resolver does not answer NXDOMAIN for %s: %v", name, err)
	}
	return name
}

// TestChecksNoDNSOracle: a check of an internal host name and one of a name
// that does not exist end alike (item 11): same status, same reason, same
// result, so URL checks tell nothing about the server's own DNS.
func TestChecksNoDNSOracle(t *testing.T) {
	t.Parallel()
	internal, unknown := loopbackHostName(t), unknownHostName(t)
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.CheckMinDelay = true, 200*time.Millisecond
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 100*time.Millisecond })
	alice := s.login(t, "alice@example.com")
	type check struct {
		ID, Status, FailureReason string
		LastResult                *struct{ Status, Error string }
	}
	run := func(url string) check {
		t.Helper()
		var out struct{ CreateCheck check }
		s.query(t, alice, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { id status } }`,
			map[string]any{"in": map[string]any{"url": url, "checkType": "AVAILABILITY", "delayMs": 60000}}).decode(t, &out)
		deadline := time.Now().Add(30 * time.Second)
		for {
			var got struct{ Check check }
			s.query(t, alice, `query($id: ID!) { check(id: $id) { id status failureReason lastResult { status error } } }`,
				map[string]any{"id": out.CreateCheck.ID}).decode(t, &got)
			if got.Check.LastResult != nil && got.Check.Status != "ACTIVE" {
				return got.Check
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: never ran to a stop: %+v", url, got.Check)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	a, b := run("http://"+internal+"/admin"), run("http://"+unknown+"/admin")
	if a.Status != "FAILED" || a.LastResult.Status != "DOWN" || !strings.Contains(a.FailureReason, "public address") {
		t.Fatalf("internal name: %+v", a)
	}
	if a.Status != b.Status || a.FailureReason != b.FailureReason || *a.LastResult != *b.LastResult {
		t.Fatalf("an internal name and an unknown one are told apart:\n%s: %+v %+v\n%s: %+v %+v", internal, a, a.LastResult, unknown, b, b.LastResult)
	}
}

// TestNULRefused: NUL bytes are refused with BAD_USER_INPUT wherever text
// enters: variables, literals, nested input objects, lists, ids (item 11).
func TestNULRefused(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	in := func(over map[string]any) map[string]any {
		m := map[string]any{"platform": "CUSTOM", "problemId": "nul1", "title": "Sum", "language": "PYTHON"}
		for k, v := range over {
			m[k] = v
		}
		return map[string]any{"in": m}
	}
	for name, r := range map[string]*gqlResult{
		"title variable":  s.query(t, admin, createProblemMutation, in(map[string]any{"title": "Su\x00m"})),
		"tag in a list":   s.query(t, admin, createProblemMutation, in(map[string]any{"tags": []string{"math", "gr\x00aph"}})),
		"test case input": s.query(t, admin, createProblemMutation, in(map[string]any{"testCases": []map[string]any{{"input": "1\x00", "output": "1"}}})),
		"title literal":   s.query(t, admin, `mutation { createProblem(input: {platform: CUSTOM, problemId: "nul2", title: "Su\u0000m", language: PYTHON}) { id } }`, nil),
		"problemId":       s.query(t, "", `{ problem(platform: CUSTOM, problemId: "nul1\u0000") { id } }`, nil),
		"check keyword":   s.query(t, admin, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { id } }`, map[string]any{"in": map[string]any{"url": "https://example.com/", "checkType": "KEYWORD", "keyword": "op\x00en"}}),
		"global id":       s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": base64.RawURLEncoding.EncodeToString([]byte("Check:c\x00heck"))}),
	} {
		if r.code() != "BAD_USER_INPUT" {
			t.Errorf("%s: %s", name, r.Raw)
		}
	}
	// Nothing was stored.
	for _, id := range []string{"nul1", "nul2"} {
		var out struct{ Problem *struct{ ID string } }
		s.query(t, admin, `query($id: String!) { problem(platform: CUSTOM, problemId: $id) { id } }`, map[string]any{"id": id}).decode(t, &out)
		if out.Problem != nil {
			t.Errorf("problem %s stored", id)
		}
	}
}

// TestExtractionRefusedDestination: an extraction whose page redirects to a
// refused address fails at once and says why, not "internal error" (item 7).
func TestExtractionRefusedDestination(t *testing.T) {
	t.Parallel()
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the refused address was fetched: %s", r.URL)
	}))
	defer inner.Close()
	judgeSite := httptest.NewServer(http.RedirectHandler(inner.URL+"/secret", http.StatusFound))
	defer judgeSite.Close()
	host := strings.TrimPrefix(judgeSite.URL, "http://")
	s := startAPITuned(t, func(c *Config) { c.Workers, c.FetchAllowHosts = true, []string{host} }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
	admin := s.staff(t, "admin@example.com")
	var out struct{ ExtractProblem struct{ ID string } }
	s.query(t, admin, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": judgeSite.URL + "/problem/1000"}).decode(t, &out)
	j := s.waitJobResult(t, admin, out.ExtractProblem.ID)
	if j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "does not lead to a public address") || strings.Contains(j.ErrorMessage, "internal error") {
		t.Fatalf("extraction of a refused destination: %+v", j)
	}
}

// TestPublicExecutionsFollowTheirProblem: a public execution leaves
// publicHistory, historyFeed and searchHistory for everyone but its owner
// and staff while its problem is deleted or back to a draft, with its test
// outputs (item 10); published again, the problem brings it back.
func TestPublicExecutionsFollowTheirProblem(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	alice, bob := s.login(t, "alice@example.com"), s.login(t, "bob@example.com")
	aliceU := s.user(t, "alice@example.com")
	s.createProblem(t, admin, "BAEKJOON", "2001", 1, true)
	s.createProblem(t, admin, "BAEKJOON", "2002", 1, true)
	deleted, drafted := s.seedHistory(t, aliceU, "2001", true), s.seedHistory(t, aliceU, "2002", true)
	ids := map[string]string{
		globalIDOf("SearchHistory", deleted.UserID, deleted.ID): "of the deleted problem",
		globalIDOf("SearchHistory", drafted.UserID, drafted.ID): "of the problem back to a draft",
	}
	// seen reports, for each execution, whether token sees it (and its test
	// outputs) in each place.
	seen := func(token string) map[string][]string {
		t.Helper()
		where := map[string][]string{}
		for _, q := range []struct{ name, query string }{
			{"publicHistory", `{ list: publicHistory(first: 50) { edges { node { id testResults { output } } } } }`},
			{"historyFeed", `{ list: historyFeed(first: 50) { edges { node { id testResults { output } } } } }`},
		} {
			var out struct {
				List struct {
					Edges []struct {
						Node struct {
							ID          string
							TestResults []struct{ Output string }
						}
					}
				}
			}
			s.query(t, token, q.query, nil).decode(t, &out)
			for _, e := range out.List.Edges {
				if _, ok := ids[e.Node.ID]; ok && len(e.Node.TestResults) == 2 && e.Node.TestResults[1].Output == "4" {
					where[e.Node.ID] = append(where[e.Node.ID], q.name)
				}
			}
		}
		for id := range ids {
			var out struct{ SearchHistory *struct{ ID string } }
			s.query(t, token, `query($id: ID!) { searchHistory(id: $id) { id testResults { output } } }`, map[string]any{"id": id}).decode(t, &out)
			if out.SearchHistory != nil {
				where[id] = append(where[id], "searchHistory")
			}
		}
		return where
	}
	for _, who := range []string{bob, ""} {
		if got := seen(who); len(got) != 2 || len(got[globalIDOf("SearchHistory", deleted.UserID, deleted.ID)]) != 3 {
			t.Fatalf("before: %v", got)
		}
	}
	s.query(t, admin, `mutation { deleteProblem(platform: BAEKJOON, problemId: "2001", reason: "duplicate") { isDeleted } }`, nil).decode(t, &struct{}{})
	s.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "2002", input: {isCompleted: false}) { isCompleted } }`, nil).decode(t, &struct{}{})
	for name, who := range map[string]string{"bob": bob, "anonymous": ""} {
		for id, where := range seen(who) {
			t.Errorf("an execution %s is still shown to %s in %v", ids[id], name, where)
		}
	}
	// Its owner (and staff) keep it.
	for name, who := range map[string]string{"alice": alice, "staff": admin} {
		for id := range ids {
			if w := seen(who)[id]; !slices.Contains(w, "searchHistory") {
				t.Errorf("the execution %s is gone for %s (%v)", ids[id], name, w)
			}
		}
	}
	var mine struct {
		MyHistory struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	s.query(t, alice, `{ myHistory { edges { node { id } } } }`, nil).decode(t, &mine)
	if len(mine.MyHistory.Edges) != 2 {
		t.Fatalf("alice's own history: %+v", mine)
	}
	// Published again, the problem brings its public executions back.
	s.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "2002", input: {isCompleted: true}) { isCompleted } }`, nil).decode(t, &struct{}{})
	if got := seen(bob)[globalIDOf("SearchHistory", drafted.UserID, drafted.ID)]; len(got) != 3 {
		t.Fatalf("republished: %v", got)
	}
}

// TestExtractionDraftsStatementAndTags: the draft an extraction makes holds
// the statement and the judge's tags, and the finished job points to it
// (item 15).
func TestExtractionDraftsStatementAndTags(t *testing.T) {
	t.Parallel()
	judgeSite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/problem/1920" {
			http.NotFound(w, r)
			return
		}
		page, err := os.ReadFile("../../internal/llm/testdata/baekjoon_1920.html")
		if err != nil {
			t.Error(err)
		}
		w.Write(page)
	}))
	defer judgeSite.Close()
	host := strings.TrimPrefix(judgeSite.URL, "http://")
	s := startAPITuned(t, func(c *Config) { c.Workers, c.FetchAllowHosts = true, []string{host} }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
	alice := s.staff(t, "alice@example.com")
	type job struct {
		Status, ProblemID string
		Platform          *string
		Problem           *struct {
			ProblemID, Title, Statement string
			Tags                        []string
			NeedsReview                 bool
		}
	}
	extract := func() job {
		t.Helper()
		var out struct{ ExtractProblem struct{ ID string } }
		s.query(t, alice, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": judgeSite.URL + "/problem/1920"}).decode(t, &out)
		s.waitJob(t, alice, out.ExtractProblem.ID, 60*time.Second)
		var got struct{ Job job }
		s.query(t, alice, `query($id: ID!) { job(id: $id) { status platform problemId problem { problemId title statement tags needsReview } } }`,
			map[string]any{"id": out.ExtractProblem.ID}).decode(t, &got)
		return got.Job
	}
	j := extract()
	if j.Status != "COMPLETED" || j.Platform == nil || *j.Platform != "BAEKJOON" || j.ProblemID != "1920" || j.Problem == nil {
		t.Fatalf("finished extraction: %+v", j)
	}
	p := j.Problem
	if p.ProblemID != "1920" || p.Title != "수 찾기" || !p.NeedsReview || !slices.Equal(p.Tags, []string{"자료 구조", "정렬", "이분 탐색"}) {
		t.Fatalf("draft: %+v", p)
	}
	for _, part := range []string{"N개의 정수 A[1], A[2], …, A[N]이 주어져 있을 때", "\n\nInput\n", "\n\nOutput\nM개의 줄에 답을 출력한다."} {
		if !strings.Contains(p.Statement, part) {
			t.Fatalf("statement lacks %q:\n%s", part, p.Statement)
		}
	}
	// Extracted again: the job points to the problem that was there.
	if again := extract(); again.Status != "COMPLETED" || again.ProblemID != "1920" || again.Problem == nil || again.Problem.Statement != p.Statement {
		t.Fatalf("second extraction: %+v", again)
	}
}
