package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
	"github.com/algoitny/api/internal/jobs"
)

func TestAtCoderSync(t *testing.T) {
	t.Parallel()
	fake := atcodertest.NewServer(t)
	start := time.Date(2026, 5, 22, 10, 0, 0, 0, time.UTC).Unix()
	fake.SetContests(
		atcoder.Contest{ID: "adt_easy_20260522_1", StartEpochSecond: start, DurationSecond: 3600, Title: "ADT Easy"},
		atcoder.Contest{ID: "adt_all_20260522_3", StartEpochSecond: start + 7200, DurationSecond: 3600, Title: "ADT All"},
		atcoder.Contest{ID: "abc400", StartEpochSecond: start, DurationSecond: 6000, Title: "ABC 400"},
	)
	fake.AddSubmissions(
		atcodertest.Sub(1, 1000, "tourist", "abc086", "abc086_a", "AC"),
		atcodertest.Sub(2, 1001, "tourist", "abc086", "abc086_b", "WA"),
		atcodertest.Sub(3, 1002, "tourist", "abc086", "abc086_a", "AC"), // a duplicate AC
		atcodertest.Sub(4, 1003, "tourist", "abc087", "abc087_a", "AC"),
	)
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.AtCoderBaseURL, c.AtCoderMinInterval = true, fake.URL, 10*time.Millisecond
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond })
	admin := s.staff(t, "admin@example.com")
	for _, id := range []string{"abc086_a", "abc086_b", "abc087_a"} {
		var out struct{ CreateProblem struct{ ID string } }
		s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "ATCODER", "problemId": id, "title": id, "language": "PYTHON",
			"testCases": []map[string]any{{"input": "1\n", "output": "1\n"}}, "isCompleted": true,
		}}).decode(t, &out)
	}
	alice := s.login(t, "alice@example.com")

	if r := s.query(t, alice, `mutation { linkAtCoderAccount(handle: "no spaces allowed") { handle } }`, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("bad handle: %s", r.Raw)
	}
	// A handle AtCoder Problems knows no submission of is refused, not
	// linked to sync nothing forever.
	if r := s.query(t, alice, `mutation { linkAtCoderAccount(handle: "nobody_here") { handle } }`, nil); r.code() != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "no submission") {
		t.Fatalf("unknown handle: %s", r.Raw)
	}
	var link struct{ LinkAtCoderAccount struct{ Handle string } }
	s.query(t, alice, `mutation { linkAtCoderAccount(handle: "tourist") { handle linkedAt } }`, nil).decode(t, &link)
	if link.LinkAtCoderAccount.Handle != "tourist" {
		t.Fatalf("link %+v", link)
	}
	var sync struct{ SyncSolvedProblems struct{ Handle string } }
	s.query(t, alice, `mutation { syncSolvedProblems { handle alreadyQueued lastSyncedAt } }`, nil).decode(t, &sync)

	type solved struct {
		Me struct {
			AtcoderHandle  string
			SolvedProblems *struct {
				ProblemIds   []string
				Count        int
				LastSyncedAt *string
			}
		}
	}
	var got solved
	if !algoitnytest.PollEvery(context.Background(), 60*time.Second, 100*time.Millisecond, func() bool {
		got = solved{}
		s.query(t, alice, `{ me { atcoderHandle solvedProblems { problemIds count lastSyncedAt } } }`, nil).decode(t, &got)
		sp := got.Me.SolvedProblems
		return sp != nil && sp.LastSyncedAt != nil
	}) {
		t.Fatalf("never synced: %+v", got)
	}
	if got.Me.AtcoderHandle != "tourist" || got.Me.SolvedProblems.Count != 2 || strings.Join(got.Me.SolvedProblems.ProblemIds, ",") != "abc086_a,abc087_a" {
		t.Fatalf("solved %+v", got.Me.SolvedProblems)
	}

	// solvedByMe on a list of problems costs one read for all of them: the
	// session, the page and the AC list (the fewest of three: the page may
	// come from the display cache).
	const solvedQuery = `{ problems(filter: {platform: ATCODER}, first: 100) { edges { node { problemId solvedByMe } } } }`
	r := s.query(t, alice, solvedQuery, nil)
	fewest, _ := r.Extensions["dynamodbRequests"].(float64)
	for range 2 {
		n, _ := s.query(t, alice, solvedQuery, nil).Extensions["dynamodbRequests"].(float64)
		fewest = min(fewest, n)
	}
	var list struct {
		Problems struct {
			Edges []struct {
				Node struct {
					ProblemID  string
					SolvedByMe bool
				}
			}
		}
	}
	r.decode(t, &list)
	marks := map[string]bool{}
	for _, e := range list.Problems.Edges {
		marks[e.Node.ProblemID] = e.Node.SolvedByMe
	}
	if !marks["abc086_a"] || marks["abc086_b"] || !marks["abc087_a"] {
		t.Fatalf("solvedByMe %v", marks)
	}
	if fewest != 3 { // the session + the page + the AC list
		t.Fatalf("%v DynamoDB requests for 3 problems with solvedByMe", fewest)
	}
	if r := s.query(t, "", `{ problems(filter: {platform: ATCODER}) { edges { node { solvedByMe } } } }`, nil); strings.Contains(string(r.Data), "true") {
		t.Fatalf("anonymous solvedByMe: %s", r.Raw)
	}
	// Others cannot see the handle or the list.
	bob := s.login(t, "bob@example.com")
	aliceID := globalIDOf("User", s.user(t, "alice@example.com").ID)
	if r := s.query(t, bob, `query($id: ID!) { node(id: $id) { ... on User { atcoderHandle solvedProblems { count } } } }`, map[string]any{"id": aliceID}); strings.Contains(string(r.Data), "tourist") {
		t.Fatalf("bob sees alice's AtCoder data: %s", r.Raw)
	}

	// The sweep discovered the ADT contests of May 2026.
	var adt struct {
		AdtContests []struct{ ContestID, Difficulty string }
	}
	if !algoitnytest.PollEvery(context.Background(), 60*time.Second, 100*time.Millisecond, func() bool {
		adt.AdtContests = nil
		s.query(t, "", `{ adtContests(month: "202605") { contestId difficulty startsAt durationSeconds title lastFetchedSubmissionId } }`, nil).decode(t, &adt)
		return len(adt.AdtContests) == 2
	}) {
		t.Fatalf("contests not discovered: %+v", adt)
	}
	if adt.AdtContests[0].ContestID != "adt_easy_20260522_1" || adt.AdtContests[1].Difficulty != "ALL" {
		t.Fatalf("contests %+v", adt)
	}
	if r := s.query(t, "", `{ adtContests(month: "2026-5") { contestId } }`, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("bad month: %s", r.Raw)
	}

	// Unlinking and account deletion leave nothing behind.
	var ok struct{ UnlinkAtCoderAccount bool }
	s.query(t, alice, `mutation { unlinkAtCoderAccount }`, nil).decode(t, &ok)
	got = solved{}
	s.query(t, alice, `{ me { atcoderHandle solvedProblems { count } } }`, nil).decode(t, &got)
	if got.Me.AtcoderHandle != "" || got.Me.SolvedProblems != nil {
		t.Fatalf("after unlink: %+v", got)
	}
	s.query(t, alice, `mutation { linkAtCoderAccount(handle: "tourist") { handle } }`, nil)
	uid := s.user(t, "alice@example.com").ID
	s.query(t, alice, `mutation { deleteMyAccount }`, nil)
	if h, err := s.DB.GetAtCoderLink(context.Background(), uid); err == nil && h != nil {
		t.Fatalf("link left after account deletion: %+v", h)
	}
}

// eventually polls cond until it holds, failing the test after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// TestAtCoderProblemsAndStreaks: first-AC times, streaks, difficulties and
// the solved/unsolved filters on a month's ADT contest problems, all from a
// fake AtCoder Problems server through the API.
func TestAtCoderProblemsAndStreaks(t *testing.T) {
	t.Parallel()
	fake := atcodertest.NewServer(t)
	start := time.Date(2026, 5, 22, 10, 0, 0, 0, time.UTC).Unix()
	fake.SetContests(
		atcoder.Contest{ID: "adt_easy_20260522_1", StartEpochSecond: start, DurationSecond: 3600, Title: "ADT Easy"},
		atcoder.Contest{ID: "adt_all_20260522_3", StartEpochSecond: start + 7200, DurationSecond: 3600, Title: "ADT All"},
	)
	fake.SetContestProblems(
		atcoder.ContestProblem{ContestID: "adt_easy_20260522_1", ProblemID: "abc300_a", ProblemIndex: "A"},
		atcoder.ContestProblem{ContestID: "adt_easy_20260522_1", ProblemID: "abc305_c", ProblemIndex: "B"},
		atcoder.ContestProblem{ContestID: "adt_all_20260522_3", ProblemID: "abc300_a", ProblemIndex: "A"},
		atcoder.ContestProblem{ContestID: "adt_all_20260522_3", ProblemID: "abc305_c", ProblemIndex: "B"},
		atcoder.ContestProblem{ContestID: "adt_all_20260522_3", ProblemID: "abc310_g", ProblemIndex: "C"},
		atcoder.ContestProblem{ContestID: "abc300", ProblemID: "abc300_a", ProblemIndex: "A"},
	)
	fake.SetProblems(
		atcoder.Problem{ID: "abc300_a", ContestID: "abc300", ProblemIndex: "A", Name: "N-choice question", Title: "A. N-choice question"},
		atcoder.Problem{ID: "abc305_c", ContestID: "abc305", ProblemIndex: "C", Name: "Snuke the Cookie Picker", Title: "C. Snuke the Cookie Picker"},
		atcoder.Problem{ID: "abc310_g", ContestID: "abc310", ProblemIndex: "G", Name: "Takahashi And Pass-The-Ball Game", Title: "G. Takahashi And Pass-The-Ball Game"},
	)
	fake.SetProblemModels(map[string]atcoder.ProblemModel{
		"abc300_a": atcodertest.Model(-1012.5, false),
		"abc305_c": atcodertest.Model(812, true),
	})
	// Streak days, JST: 1, 2 and 3 March 2025 (in UTC only 1 and 2 March),
	// then yesterday and today, whenever the test runs.
	sec := func(s string) int64 {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.Unix()
	}
	now := time.Now().Unix()
	fake.AddSubmissions(
		atcodertest.Sub(1, sec("2025-03-01T14:30:00Z"), "tourist", "abc300", "abc300_a", "AC"), // 23:30 JST, 1 March
		atcodertest.Sub(2, sec("2025-03-01T15:30:00Z"), "tourist", "abc301", "abc301_a", "AC"), // 00:30 JST, 2 March
		atcodertest.Sub(3, sec("2025-03-02T15:10:00Z"), "tourist", "abc302", "abc302_a", "AC"), // 00:10 JST, 3 March
		atcodertest.Sub(4, sec("2025-03-05T01:00:00Z"), "tourist", "abc300", "abc300_a", "AC"), // solved before: no day
		atcodertest.Sub(5, now-25*3600, "tourist", "abc303", "abc303_a", "AC"),
		atcodertest.Sub(6, now-3600, "tourist", "abc304", "abc304_a", "AC"),
		atcodertest.Sub(7, now-3000, "tourist", "abc305", "abc305_c", "WA"),
	)
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.AtCoderBaseURL, c.AtCoderMinInterval = true, fake.URL, 10*time.Millisecond
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond })
	alice := s.login(t, "alice@example.com")
	s.query(t, alice, `mutation { linkAtCoderAccount(handle: "tourist") { handle } }`, nil)

	type solved struct {
		Me struct {
			SolvedProblems *struct {
				LastSyncedAt *string
				Problems     []struct {
					ProblemID string
					FirstAcAt *time.Time
				}
				Streak struct {
					Current, Longest, Days, Uncounted int
					LastDay                           *string
				}
			}
		}
	}
	var got solved
	eventually(t, "the first sync", func() bool {
		got = solved{}
		s.query(t, alice, `{ me { solvedProblems { lastSyncedAt problems { problemId firstAcAt } streak { current longest days lastDay uncounted } } } }`, nil).decode(t, &got)
		return got.Me.SolvedProblems != nil && got.Me.SolvedProblems.LastSyncedAt != nil
	})
	sp := got.Me.SolvedProblems
	firsts := map[string]int64{}
	for _, p := range sp.Problems {
		if p.FirstAcAt == nil {
			t.Fatalf("no first AC time for %s", p.ProblemID)
		}
		firsts[p.ProblemID] = p.FirstAcAt.Unix()
	}
	if len(firsts) != 5 || firsts["abc300_a"] != sec("2025-03-01T14:30:00Z") || firsts["abc304_a"] != now-3600 {
		t.Fatalf("first ACs %v", firsts)
	}
	today := time.Unix(now-3600, 0).In(time.FixedZone("JST", 9*3600)).Format(time.DateOnly)
	if st := sp.Streak; st.Current != 2 || st.Longest != 3 || st.Days != 5 || st.Uncounted != 0 || st.LastDay == nil || *st.LastDay != today {
		t.Fatalf("streak %+v (last day %v, want %s)", st, st.LastDay, today)
	}
	// Only the user and staff see the times and the streak.
	bob := s.login(t, "bob@example.com")
	aliceID := globalIDOf("User", s.user(t, "alice@example.com").ID)
	if r := s.query(t, bob, `query($id: ID!) { node(id: $id) { ... on User { solvedProblems { streak { longest } problems { firstAcAt } } } } }`, map[string]any{"id": aliceID}); strings.Contains(string(r.Data), "longest") {
		t.Fatalf("bob sees alice's streak: %s", r.Raw)
	}

	// The sweep recorded the month's contests and their problems.
	type problem struct {
		ProblemID, Index, Title string
		Difficulty              *struct {
			Raw            float64
			Clipped        int
			IsExperimental bool
		}
		SolvedByMe  bool
		MyFirstAcAt *time.Time
	}
	type month struct {
		AdtContests []struct {
			ContestID        string
			All              []problem
			Solved, Unsolved []struct{ ProblemID string }
		}
	}
	const q = `{ adtContests(month: "202605") { contestId
		all: problems { problemId index title difficulty { raw clipped isExperimental } solvedByMe myFirstAcAt }
		solved: problems(filter: SOLVED) { problemId }
		unsolved: problems(filter: UNSOLVED) { problemId } } }`
	var m month
	var r *gqlResult
	eventually(t, "the contests' problems", func() bool {
		m = month{}
		r = s.query(t, alice, q, nil)
		r.decode(t, &m)
		return len(m.AdtContests) == 2 && len(m.AdtContests[1].All) == 3
	})
	ids := func(ps []struct{ ProblemID string }) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ProblemID)
		}
		return strings.Join(out, ",")
	}
	easy, all := m.AdtContests[0], m.AdtContests[1]
	if easy.ContestID != "adt_easy_20260522_1" || ids(easy.Solved) != "abc300_a" || ids(easy.Unsolved) != "abc305_c" {
		t.Fatalf("easy %+v", easy)
	}
	if ids(all.Solved) != "abc300_a" || ids(all.Unsolved) != "abc305_c,abc310_g" {
		t.Fatalf("all %+v", all)
	}
	a, c, g := all.All[0], all.All[1], all.All[2]
	if a.ProblemID != "abc300_a" || a.Index != "A" || a.Title != "N-choice question" || !a.SolvedByMe ||
		a.MyFirstAcAt == nil || a.MyFirstAcAt.Unix() != sec("2025-03-01T14:30:00Z") ||
		a.Difficulty == nil || a.Difficulty.Raw != -1012.5 || a.Difficulty.Clipped != 12 || a.Difficulty.IsExperimental {
		t.Fatalf("A %+v %+v", a, a.Difficulty)
	}
	if c.Index != "B" || c.SolvedByMe || c.MyFirstAcAt != nil || c.Difficulty == nil || c.Difficulty.Clipped != 812 || !c.Difficulty.IsExperimental {
		t.Fatalf("B %+v %+v", c, c.Difficulty)
	}
	if g.Index != "C" || g.Difficulty != nil || g.SolvedByMe {
		t.Fatalf("C %+v", g)
	}
	// The month's contests and problems are one read; the user's progress
	// for all of them one more.
	base := s.query(t, alice, `{ adtContests(month: "202605") { contestId problems { problemId difficulty { clipped } } } }`, nil)
	if n, b := r.Extensions["dynamodbRequests"], base.Extensions["dynamodbRequests"].(float64); n != b+1 {
		t.Fatalf("%v DynamoDB requests with solvedByMe and filters, %v without", n, b)
	}

	// Signed out: no progress, and the filters need a user.
	anon := s.query(t, "", `{ adtContests(month: "202605") { problems { problemId solvedByMe myFirstAcAt } } }`, nil)
	if strings.Contains(string(anon.Data), "true") || len(anon.Errors) != 0 || !strings.Contains(string(anon.Data), "abc310_g") {
		t.Fatalf("anonymous %s", anon.Raw)
	}
	if r := s.query(t, "", `{ adtContests(month: "202605") { problems(filter: UNSOLVED) { problemId } } }`, nil); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("anonymous filter %s", r.Raw)
	}
}
