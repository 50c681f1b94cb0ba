package main

import (
	"testing"
	"time"
)

// executeAndWaitOn is executeAndWait on another problem.
func (s *apiServer) executeAndWaitOn(t testing.TB, token, problemID, code string) {
	t.Helper()
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, token, executeMutation, executeInput(code, map[string]any{"problemId": problemID})).decode(t, &out)
	s.waitJob(t, token, out.ExecuteCode.ID, 90*time.Second)
}

// TestAPIStats: judged executions count in their user's statistics and the
// leaderboard as they are stored — an accepted run of a published problem
// once per problem, a run on a draft never — and each is read with one
// DynamoDB request; a user's statistics are theirs and staff's, the
// leaderboard everyone's but deactivated users'.
func TestAPIStats(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
	s.createProblem(t, admin, "BAEKJOON", "2000", 2, false) // a draft of admin's
	alice, bob := s.login(t, "alice@example.com"), s.login(t, "bob@example.com")

	s.executeAndWaitOn(t, alice, "1000", aPlusB)
	s.executeAndWaitOn(t, alice, "1000", aPlusB)   // the same problem again
	s.executeAndWaitOn(t, alice, "1000", wrongSum) // a wrong answer
	s.executeAndWaitOn(t, admin, "2000", aPlusB)   // accepted, on a draft

	const statsQuery = `{ me { stats { executions accepted solvedProblems lastSolvedAt byPlatformAndLanguage { platform language executions accepted } } } }`
	var me struct {
		Me struct {
			Stats struct {
				Executions, Accepted, SolvedProblems int
				LastSolvedAt                         *string
				ByPlatformAndLanguage                []struct {
					Platform, Language   string
					Executions, Accepted int
				}
			}
		}
	}
	r := s.query(t, alice, statsQuery, nil)
	r.decode(t, &me)
	st := me.Me.Stats
	if st.Executions != 3 || st.Accepted != 2 || st.SolvedProblems != 1 || st.LastSolvedAt == nil ||
		len(st.ByPlatformAndLanguage) != 1 || st.ByPlatformAndLanguage[0].Language != "PYTHON" || st.ByPlatformAndLanguage[0].Executions != 3 {
		t.Fatalf("alice's stats: %s", r.Raw)
	}
	// The stats are one request (and the user's authentication none more
	// than any request's).
	base := s.query(t, alice, `{ me { id } }`, nil).Extensions["dynamodbRequests"].(float64)
	if n := r.Extensions["dynamodbRequests"].(float64); n != base+1 {
		t.Errorf("stats read with %v DynamoDB requests, me alone %v", n, base)
	}
	r = s.query(t, admin, statsQuery, nil)
	r.decode(t, &me)
	if me.Me.Stats.Executions != 1 || me.Me.Stats.Accepted != 1 || me.Me.Stats.SolvedProblems != 0 || me.Me.Stats.LastSolvedAt != nil {
		t.Fatalf("a draft's accepted run ranks its author: %s", r.Raw)
	}

	const board = `{ leaderboard(first: 10) { rank solvedProblems lastSolvedAt user { name email stats { executions } } } }`
	var lb struct {
		Leaderboard []struct {
			Rank, SolvedProblems int
			User                 struct {
				Name  string
				Email *string
				Stats *struct{ Executions int }
			}
		}
	}
	r = s.query(t, bob, board, nil)
	r.decode(t, &lb)
	if len(lb.Leaderboard) != 1 || lb.Leaderboard[0].Rank != 1 || lb.Leaderboard[0].SolvedProblems != 1 {
		t.Fatalf("leaderboard: %s", r.Raw)
	}
	if u := lb.Leaderboard[0].User; u.Email != nil || u.Stats != nil {
		t.Fatalf("bob sees alice's private fields on the leaderboard: %s", r.Raw)
	}
	r = s.query(t, admin, board, nil)
	r.decode(t, &lb)
	if u := lb.Leaderboard[0].User; u.Stats == nil || u.Stats.Executions != 3 {
		t.Fatalf("staff do not see alice's stats: %s", r.Raw)
	}
	if r := s.query(t, "", `{ leaderboard(first: 0) { rank } }`, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("first 0: %s", r.Raw)
	}

	// A deactivated user leaves the leaderboard.
	aliceID := s.user(t, "alice@example.com").ID
	s.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": globalIDOf("User", aliceID)}).decode(t, &struct{}{})
	r = s.query(t, "", board, nil)
	r.decode(t, &lb)
	if len(lb.Leaderboard) != 0 {
		t.Fatalf("a deactivated user is ranked: %s", r.Raw)
	}
}
