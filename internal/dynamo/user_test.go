package dynamo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

func seededDB(t *testing.T) (*dynamo.DB, map[string]*algoitny.Plan) {
	t.Helper()
	db := newDB(t)
	ctx := context.Background()
	algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
	plans := map[string]*algoitny.Plan{}
	for _, name := range []string{"Free", "Pro", "Admin"} {
		plans[name] = algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, name))
	}
	return db, plans
}

func TestUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateAndLookups", func(t *testing.T) {
		t.Parallel()
		db, plans := seededDB(t)
		u := &algoitny.User{Email: "Ada@Example.com", Name: "Ada", GoogleID: "g-ada", IsActive: true}
		algoitnytest.OK(t, db.CreateUser(ctx, u, plans["Free"]))
		if u.ID == "" || u.PlanName != "Free" || u.PlanID != plans["Free"].ID {
			t.Fatalf("created %+v", u)
		}
		// #24 by email (case-insensitive), #25 by Google id, GSI3 by id.
		for name, get := range map[string]func() (*algoitny.User, error){
			"email":    func() (*algoitny.User, error) { return db.GetUserByEmail(ctx, "ada@example.com") },
			"googleID": func() (*algoitny.User, error) { return db.GetUserByGoogleID(ctx, "g-ada") },
			"id":       func() (*algoitny.User, error) { return db.GetUserByID(ctx, u.ID) },
		} {
			got, err := get()
			if err != nil || got.ID != u.ID || got.Email != "Ada@Example.com" {
				t.Fatalf("by %s: %+v, %v", name, got, err)
			}
		}
		_, err := db.GetUserByGoogleID(ctx, "nobody")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.GetUserByID(ctx, "nobody")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.GetUserByEmail(ctx, "nobody@example.com")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

		algoitnytest.ErrCode(t, db.CreateUser(ctx, &algoitny.User{Email: "ada@example.com"}, plans["Free"]), algoitny.ECONFLICT)
		algoitnytest.ErrCode(t, db.CreateUser(ctx, &algoitny.User{Email: "other@example.com", GoogleID: "g-ada"}, plans["Free"]), algoitny.ECONFLICT)
		// The failed transaction left nothing behind.
		_, err = db.GetUserByEmail(ctx, "other@example.com")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ConcurrentFirstSignInsMakeOneUser", func(t *testing.T) {
		t.Parallel()
		db, plans := seededDB(t)
		const n = 20
		ids := make([]string, n)
		created := make([]bool, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u, c, err := db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-1", Email: "race@example.com", Name: "Racer"}, plans["Free"])
				if err != nil {
					t.Error(err)
					return
				}
				ids[i], created[i] = u.ID, c
			}()
		}
		wg.Wait()
		nCreated := 0
		for i := range n {
			if ids[i] != ids[0] {
				t.Fatalf("sign-in %d got user %s, sign-in 0 got %s", i, ids[i], ids[0])
			}
			if created[i] {
				nCreated++
			}
		}
		if nCreated != 1 {
			t.Fatalf("%d sign-ins reported creating the user", nCreated)
		}
		users := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(db.ListUsers(ctx, algoitny.PageRequest{First: 100}))
		if len(users.Items) != 1 {
			t.Fatalf("%d users exist", len(users.Items))
		}
	})

	t.Run("SignInUpdatesProfileAndLinks", func(t *testing.T) {
		t.Parallel()
		db, plans := seededDB(t)
		u, created, err := db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-2", Email: "b@example.com", Name: "Old", Picture: "p1"}, plans["Free"])
		if err != nil || !created || u.LastLogin == nil {
			t.Fatalf("first sign-in: %+v %v %v", u, created, err)
		}
		u2, created, err := db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-2", Email: "b@example.com", Name: "New", Picture: "p2"}, plans["Free"])
		if err != nil || created || u2.ID != u.ID || u2.Name != "New" || u2.Picture != "p2" {
			t.Fatalf("second sign-in: %+v %v %v", u2, created, err)
		}
		// A user made without Google (devLogin, admin grant) is linked on first Google sign-in.
		algoitnytest.OK(t, db.CreateUser(ctx, &algoitny.User{Email: "dev@example.com", IsActive: true}, plans["Free"]))
		linked, created, err := db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-3", Email: "dev@example.com"}, plans["Free"])
		if err != nil || created || linked.GoogleID != "g-3" {
			t.Fatalf("link: %+v %v %v", linked, created, err)
		}
		if got := algoitnytest.Must[*algoitny.User](t)(db.GetUserByGoogleID(ctx, "g-3")); got.ID != linked.ID {
			t.Fatal("marker does not point at the linked user")
		}
		// The same email from another Google account is refused.
		_, _, err = db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-other", Email: "dev@example.com"}, plans["Free"])
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
	})

	t.Run("ListPagesAndPlanMembership", func(t *testing.T) {
		t.Parallel()
		db, plans := seededDB(t)
		for i := range 7 {
			plan := plans["Free"]
			if i%2 == 1 {
				plan = plans["Pro"]
			}
			algoitnytest.OK(t, db.CreateUser(ctx, &algoitny.User{Email: fmt.Sprintf("u%d@example.com", i), GoogleID: fmt.Sprintf("g%d", i), IsActive: true}, plan))
		}
		// #23: all users over 3 pages, markers excluded.
		seen := map[string]bool{}
		pages := 0
		for after := ""; ; pages++ {
			p := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(db.ListUsers(ctx, algoitny.PageRequest{First: 3, After: after}))
			for _, u := range p.Items {
				if seen[u.Email] {
					t.Fatalf("%s listed twice", u.Email)
				}
				seen[u.Email] = true
			}
			if !p.HasNextPage {
				break
			}
			after = p.EndCursor
		}
		if len(seen) != 7 || pages != 2 {
			t.Fatalf("listed %d users in %d pages", len(seen), pages+1)
		}
		// #27 by plan, then #26 a move.
		pro := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(db.ListUsersByPlan(ctx, plans["Pro"].ID, algoitny.PageRequest{First: 10}))
		if len(pro.Items) != 3 {
			t.Fatalf("Pro has %d users", len(pro.Items))
		}
		moved := algoitnytest.Must[*algoitny.User](t)(db.SetUserPlan(ctx, "u0@example.com", plans["Pro"]))
		if moved.PlanName != "Pro" || moved.PlanID != plans["Pro"].ID {
			t.Fatalf("moved = %+v", moved)
		}
		pro = algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(db.ListUsersByPlan(ctx, plans["Pro"].ID, algoitny.PageRequest{First: 10}))
		free := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(db.ListUsersByPlan(ctx, plans["Free"].ID, algoitny.PageRequest{First: 10}))
		if len(pro.Items) != 4 || len(free.Items) != 3 {
			t.Fatalf("after move: Pro %d, Free %d", len(pro.Items), len(free.Items))
		}
		_, err := db.SetUserPlan(ctx, "ghost@example.com", plans["Pro"])
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("FlagsBatchAndDelete", func(t *testing.T) {
		t.Parallel()
		db, plans := seededDB(t)
		algoitnytest.OK(t, db.CreateUser(ctx, &algoitny.User{Email: "a@example.com", GoogleID: "ga", IsActive: true}, plans["Free"]))
		algoitnytest.OK(t, db.CreateUser(ctx, &algoitny.User{Email: "b@example.com", IsActive: true}, plans["Free"]))
		if u := algoitnytest.Must[*algoitny.User](t)(db.SetUserActive(ctx, "a@example.com", false)); u.IsActive {
			t.Fatal("still active")
		}
		if u := algoitnytest.Must[*algoitny.User](t)(db.SetUserStaff(ctx, "a@example.com", true)); !u.IsStaff {
			t.Fatal("not staff")
		}
		got := algoitnytest.Must[map[string]*algoitny.User](t)(db.GetUsersByEmail(ctx, []string{"A@example.com", "b@example.com", "c@example.com"}))
		if len(got) != 2 || got["a@example.com"] == nil {
			t.Fatalf("batch = %v", got)
		}
		algoitnytest.OK(t, db.DeleteUser(ctx, "a@example.com"))
		algoitnytest.OK(t, db.DeleteUser(ctx, "a@example.com")) // retry-safe
		_, err := db.GetUserByGoogleID(ctx, "ga")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		// The Google id is free again.
		algoitnytest.OK(t, db.CreateUser(ctx, &algoitny.User{Email: "new@example.com", GoogleID: "ga"}, plans["Free"]))
	})
}
