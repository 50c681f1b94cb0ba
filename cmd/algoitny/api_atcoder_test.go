package main

import (
	"context"
	"strings"
	"testing"
	"time"

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
	deadline := time.Now().Add(60 * time.Second)
	var got solved
	for {
		got = solved{}
		s.query(t, alice, `{ me { atcoderHandle solvedProblems { problemIds count lastSyncedAt } } }`, nil).decode(t, &got)
		if sp := got.Me.SolvedProblems; sp != nil && sp.LastSyncedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never synced: %+v", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got.Me.AtcoderHandle != "tourist" || got.Me.SolvedProblems.Count != 2 || strings.Join(got.Me.SolvedProblems.ProblemIds, ",") != "abc086_a,abc087_a" {
		t.Fatalf("solved %+v", got.Me.SolvedProblems)
	}

	// solvedByMe on a list of problems costs one read for all of them.
	r := s.query(t, alice, `{ problems(filter: {platform: ATCODER}, first: 100) { edges { node { problemId solvedByMe } } } }`, nil)
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
	if n := r.Extensions["dynamodbRequests"]; n != float64(2) { // the page + the AC list
		t.Fatalf("%v DynamoDB requests for 3 problems with solvedByMe", n)
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
	deadline = time.Now().Add(60 * time.Second)
	for {
		var adt struct {
			AdtContests []struct{ ContestID, Difficulty string }
		}
		s.query(t, "", `{ adtContests(month: "202605") { contestId difficulty startsAt durationSeconds title lastFetchedSubmissionId } }`, nil).decode(t, &adt)
		if len(adt.AdtContests) == 2 {
			if adt.AdtContests[0].ContestID != "adt_easy_20260522_1" || adt.AdtContests[1].Difficulty != "ALL" {
				t.Fatalf("contests %+v", adt)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("contests not discovered: %+v", adt)
		}
		time.Sleep(200 * time.Millisecond)
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
