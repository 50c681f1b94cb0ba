package main

import (
	"context"

	"github.com/algoitny/api/internal/algoitny"
	"strings"
	"testing"
)

func TestAPIAccounts(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	alice := s.login(t, "alice@example.com")
	aliceU := s.user(t, "alice@example.com")
	aliceID := globalIDOf("User", aliceU.ID)

	t.Run("MeAndPlans", func(t *testing.T) {
		var me struct {
			Me struct {
				ID, Email, Name string
				Plan            struct {
					Name                string
					MaxExecutionsPerDay int
				}
			}
		}
		s.query(t, alice, `{ me { id email name plan { name maxExecutionsPerDay } } }`, nil).decode(t, &me)
		if me.Me.ID != aliceID || me.Me.Email != "alice@example.com" || me.Me.Plan.Name != "Free" || me.Me.Plan.MaxExecutionsPerDay != 10 {
			t.Fatalf("me = %+v", me)
		}
		if r := s.query(t, "", `{ me { id } }`, nil); string(r.Data) != `{"me":null}` {
			t.Fatalf("anonymous me: %s", r.Raw)
		}
		var plans struct{ Plans []struct{ ID, Name string } }
		s.query(t, "", `{ plans { id name } }`, nil).decode(t, &plans)
		if len(plans.Plans) != 3 {
			t.Fatalf("plans %+v", plans)
		}
		var node struct{ Node struct{ Name string } }
		s.query(t, "", `query($id: ID!) { node(id: $id) { ... on Plan { name } } }`, map[string]any{"id": plans.Plans[0].ID}).decode(t, &node)
		if node.Node.Name != plans.Plans[0].Name {
			t.Fatalf("node(plan) = %+v", node)
		}
		var usage struct {
			MyUsage []struct {
				Action                 string
				Used, Limit, Remaining int
				ResetAt                string
			}
		}
		s.query(t, alice, `{ myUsage { action used limit remaining resetAt } }`, nil).decode(t, &usage)
		if len(usage.MyUsage) != 4 || usage.MyUsage[0].Action != "EXECUTION" || usage.MyUsage[0].Limit != 10 || usage.MyUsage[0].Remaining != 10 || usage.MyUsage[1].Limit != 5 ||
			usage.MyUsage[2].Action != "CODE_RUN" || usage.MyUsage[2].Limit != 50 || usage.MyUsage[3].Action != "COUNTEREXAMPLE" || usage.MyUsage[3].Limit != 3 {
			t.Fatalf("myUsage %+v", usage)
		}
	})

	t.Run("AdminOnly", func(t *testing.T) {
		for _, q := range []string{
			`{ users { edges { node { id } } } }`,
			`{ usageStats { totalExecutions } }`,
			`mutation { createPlan(input: {name: "X", maxHintsPerDay: 1, maxExecutionsPerDay: 1, maxProblems: 0, canViewAllProblems: false, canRegisterProblems: false}) { id } }`,
			`mutation { updatePlan(name: "Free", input: {maxHintsPerDay: 99}) { id } }`,
		} {
			if r := s.query(t, alice, q, nil); r.code() != "FORBIDDEN" {
				t.Fatalf("alice ran %s: %s", q, r.Raw)
			}
			if r := s.query(t, "", q, nil); r.code() != "UNAUTHENTICATED" {
				t.Fatalf("anonymous ran %s: %s", q, r.Raw)
			}
		}
		if r := s.query(t, alice, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Admin") { id } }`, map[string]any{"id": aliceID}); r.code() != "FORBIDDEN" {
			t.Fatalf("alice upgraded herself: %s", r.Raw)
		}
		var users struct {
			Users struct {
				Edges []struct{ Node struct{ Email string } }
			}
		}
		s.query(t, admin, `{ users(plan: "Free") { edges { node { email } } } }`, nil).decode(t, &users)
		if len(users.Users.Edges) != 2 {
			t.Fatalf("Free users %+v", users)
		}
		var one struct{ User struct{ Email string } }
		s.query(t, admin, `query($id: ID!) { user(id: $id) { email } }`, map[string]any{"id": aliceID}).decode(t, &one)
		if one.User.Email != "alice@example.com" {
			t.Fatalf("user = %+v", one)
		}
		var created struct {
			CreatePlan struct {
				Name     string
				IsActive bool
			}
		}
		s.query(t, admin, `mutation { createPlan(input: {name: "Team", maxHintsPerDay: 50, maxExecutionsPerDay: 1000, maxProblems: 10, canViewAllProblems: true, canRegisterProblems: true, priceCents: 2900}) { name isActive } }`, nil).decode(t, &created)
		if created.CreatePlan.Name != "Team" || !created.CreatePlan.IsActive {
			t.Fatalf("created %+v", created)
		}
		if r := s.query(t, admin, `mutation { createPlan(input: {name: "Team", maxHintsPerDay: 1, maxExecutionsPerDay: 1, maxProblems: 0, canViewAllProblems: false, canRegisterProblems: false}) { name } }`, nil); r.code() != "CONFLICT" {
			t.Fatalf("duplicate plan: %s", r.Raw)
		}
		if r := s.query(t, admin, `mutation { updatePlan(name: "Team", input: {maxHintsPerDay: -5}) { name } }`, nil); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("bad limit: %s", r.Raw)
		}
		var stats struct{ UsageStats struct{ TotalExecutions int } }
		s.query(t, admin, `{ usageStats { totalExecutions byPlatformAndLanguage { platform language count } } }`, nil).decode(t, &stats)
	})

	t.Run("PlanChangeAppliesOnNextRequest", func(t *testing.T) {
		var moved struct {
			SetUserPlan struct{ Plan struct{ Name string } }
		}
		s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { plan { name } } }`, map[string]any{"id": aliceID}).decode(t, &moved)
		if moved.SetUserPlan.Plan.Name != "Pro" {
			t.Fatalf("moved %+v", moved)
		}
		var usage struct{ MyUsage []struct{ Limit int } }
		s.query(t, alice, `{ myUsage { limit } }`, nil).decode(t, &usage)
		if usage.MyUsage[0].Limit != 500 {
			t.Fatalf("alice's limit after the move: %+v", usage)
		}
		if r := s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Nope") { id } }`, map[string]any{"id": aliceID}); r.code() != "NOT_FOUND" {
			t.Fatalf("unknown plan: %s", r.Raw)
		}
	})

	t.Run("DeactivatedAndLoggedOutAreRefused", func(t *testing.T) {
		bob := s.login(t, "bob@example.com")
		bobID := globalIDOf("User", s.user(t, "bob@example.com").ID)
		s.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { isActive } }`, map[string]any{"id": bobID})
		r := s.query(t, bob, `{ me { id } }`, nil)
		if r.Status != 401 || r.code() != "UNAUTHENTICATED" || r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("deactivated bob: %d %s", r.Status, r.Raw)
		}
		if r := s.query(t, "", `mutation { devLogin(email: "bob@example.com") { token } }`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("deactivated bob signed in again: %s", r.Raw)
		}
		s.query(t, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: true) { isActive } }`, map[string]any{"id": bobID})
		if r := s.query(t, bob, `{ me { id } }`, nil); r.Status != 200 {
			t.Fatalf("reactivated bob: %s", r.Raw)
		}
		var out struct{ Logout bool }
		s.query(t, bob, `mutation { logout }`, nil).decode(t, &out)
		if r := s.query(t, bob, `{ me { id } }`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("logged-out token accepted: %s", r.Raw)
		}
		for _, bad := range []string{"garbage", alice[:len(alice)-2] + "xx"} {
			if r := s.query(t, bad, `{ me { id } }`, nil); r.Status != 401 {
				t.Fatalf("token %q accepted: %s", bad, r.Raw)
			}
		}
	})

	t.Run("DeleteMyAccount", func(t *testing.T) {
		dave := s.login(t, "dave@example.com")
		daveU := s.user(t, "dave@example.com")
		s.seedHistory(t, daveU, "1", true)
		s.seedHistory(t, daveU, "2", false)
		s.createProblem(t, admin, "BAEKJOON", "del1", 1, true)
		var job struct{ ExecuteCode struct{ ID string } }
		s.query(t, dave, executeMutation, map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": "del1", "language": "PYTHON", "code": "print(1)", "idempotencyKey": "k"}}).decode(t, &job)
		var out struct{ DeleteMyAccount bool }
		s.query(t, dave, `mutation { deleteMyAccount }`, nil).decode(t, &out)
		ctx := context.Background()
		n, err := s.DB.CountUserItems(ctx, daveU.ID)
		if err != nil || n != 0 {
			t.Fatalf("%d items left in the user's partition (%v)", n, err)
		}
		if _, err := s.DB.GetUserByEmail(ctx, "dave@example.com"); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Fatalf("user item left: %v", err)
		}
		jobID, _ := parseGlobalID(job.ExecuteCode.ID)
		if _, err := s.DB.GetJob(ctx, jobID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Fatalf("job left: %v", err)
		}
		if p, err := s.DB.ListJobProgress(ctx, jobID, algoitny.PageRequest{}); err != nil || len(p.Items) != 0 {
			t.Fatalf("job progress left: %d %v", len(p.Items), err)
		}
		if r := s.query(t, dave, `{ me { id } }`, nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("deleted account's token: %s", r.Raw)
		}
		if r := s.query(t, "", `{ publicHistory { edges { node { code } } } }`, nil); strings.Contains(string(r.Data), "dave") {
			t.Fatalf("public feed still shows dave: %s", r.Raw)
		}
	})

	t.Run("DevLoginOffInProduction", func(t *testing.T) {
		prod := startAPI(t, func(c *Config) { c.Dev = false })
		r := prod.query(t, "", `mutation { devLogin(email: "x@example.com") { token } }`, nil)
		if r.code() != "FORBIDDEN" {
			t.Fatalf("devLogin in production: %s", r.Raw)
		}
		// Introspection and suggestions are off too.
		if r := prod.query(t, "", `{ __schema { types { name } } }`, nil); r.code() == "" {
			t.Fatalf("introspection in production: %s", r.Raw)
		}
		if r := prod.query(t, "", `{ problemz { id } }`, nil); strings.Contains(string(r.Raw), "Did you mean") {
			t.Fatalf("suggestions in production: %s", r.Raw)
		}
		if r := s.query(t, "", `{ problemz { id } }`, nil); !strings.Contains(string(r.Raw), "Did you mean") {
			t.Fatalf("no suggestions in dev: %s", r.Raw)
		}
	})
}
