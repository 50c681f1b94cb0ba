package accounts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestDevLogin: dev mode signs any well-formed email in, creating the user
// on the default plan once; outside dev mode it is refused.
func TestDevLogin(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		first := algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(anonymous, "ada@example.com"))
		again := algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(anonymous, "ada@example.com"))
		switch u := first.User; {
		case first.Token == "" || !first.ExpiresAt.After(time.Now()):
			t.Fatalf("session %+v: want a token that is not expired", first)
		case u.Email != "ada@example.com" || u.Name != "ada" || !u.IsActive || u.IsStaff || u.PlanName != algoitny.DefaultPlanName:
			t.Fatalf("user %+v: want an active non-staff ada on %s", u, algoitny.DefaultPlanName)
		case again.User.ID != u.ID || again.Token == first.Token:
			t.Fatalf("second login: user %s token equal %v; want the same user with a new session", again.User.ID, again.Token == first.Token)
		}
	})
	t.Run("ErrNotDev", func(t *testing.T) {
		t.Parallel()
		svc := *b.svc
		svc.Dev = false
		_, err := svc.DevLogin(anonymous, "ada@example.com")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
	})
	t.Run("ErrInvalidEmail", func(t *testing.T) {
		t.Parallel()
		for _, email := range []string{"", "ada", "Ada <ada@example.com>", "ada@example.com, bob@example.com", strings.Repeat("a", 250) + "@example.com"} {
			_, err := b.svc.DevLogin(anonymous, email)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
	})
	t.Run("ErrDeactivated", func(t *testing.T) {
		t.Parallel()
		staff := b.staff(t, "devlogin-staff@example.com")
		u := userOf(b.signIn(t, "gone@example.com"))
		algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, u.ID, false))
		_, err := b.svc.DevLogin(anonymous, "gone@example.com")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
	})
}

// TestLoginWithGoogle: a verified Google profile signs its user in, created
// on the default plan at first; what cannot sign in says why.
func TestLoginWithGoogle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.google.profiles["token-grace"] = algoitny.GoogleProfile{GoogleID: "g-grace", Email: "grace@example.com", Name: "Grace"}
	b.google.profiles["token-impostor"] = algoitny.GoogleProfile{GoogleID: "g-other", Email: "grace@example.com", Name: "Not Grace"}
	b.google.profiles["token-linus"] = algoitny.GoogleProfile{GoogleID: "g-linus", Email: "linus@example.com", Name: "Linus"}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		s := algoitnytest.Must[*accounts.Session](t)(b.svc.LoginWithGoogle(anonymous, "token-grace"))
		again := algoitnytest.Must[*accounts.Session](t)(b.svc.LoginWithGoogle(anonymous, "token-grace"))
		if u := s.User; u.GoogleID != "g-grace" || u.Name != "Grace" || u.PlanName != algoitny.DefaultPlanName || !u.IsActive {
			t.Fatalf("user %+v: want Grace on %s, linked to g-grace", u, algoitny.DefaultPlanName)
		}
		if again.User.ID != s.User.ID {
			t.Fatalf("second sign-in made user %s, want %s", again.User.ID, s.User.ID)
		}
		ctx := b.authenticate(t, s.Token)
		if userOf(ctx).ID != s.User.ID {
			t.Fatalf("the session's token names user %s, want %s", userOf(ctx).ID, s.User.ID)
		}
	})
	t.Run("ErrUnavailable", func(t *testing.T) {
		t.Parallel()
		svc := *b.svc
		svc.Google = nil
		_, err := svc.LoginWithGoogle(anonymous, "token-grace")
		algoitnytest.ErrCode(t, err, algoitny.EUNAVAILABLE)
	})
	t.Run("ErrNoToken", func(t *testing.T) {
		t.Parallel()
		_, err := b.svc.LoginWithGoogle(anonymous, "  ")
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
	t.Run("ErrBadToken", func(t *testing.T) {
		t.Parallel()
		_, err := b.svc.LoginWithGoogle(anonymous, "forged")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})
	t.Run("ErrEmailOfAnotherGoogleAccount", func(t *testing.T) {
		t.Parallel()
		algoitnytest.Must[*accounts.Session](t)(b.svc.LoginWithGoogle(anonymous, "token-grace"))
		_, err := b.svc.LoginWithGoogle(anonymous, "token-impostor")
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
	})
	t.Run("ErrDeactivated", func(t *testing.T) {
		t.Parallel()
		u := algoitnytest.Must[*accounts.Session](t)(b.svc.LoginWithGoogle(anonymous, "token-linus")).User
		algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(b.staff(t, "google-staff@example.com"), u.ID, false))
		_, err := b.svc.LoginWithGoogle(anonymous, "token-linus")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
	})
}

// TestAuthenticate: a session's token is the user's actor, with the plan,
// until the session is logged out or the account is deactivated, deleted
// or replaced by a new account of the same email.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "auth-staff@example.com")
	login := func(t *testing.T, email string) *accounts.Session {
		t.Helper()
		return algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(anonymous, email))
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		s := login(t, "ok@example.com")
		a := algoitnytest.Must[*algoitny.Actor](t)(b.svc.Authenticate(anonymous, s.Token))
		switch {
		case a.UserID() != s.User.ID || a.SessionID == "" || a.ExpiresAt.Sub(s.ExpiresAt).Abs() >= time.Second:
			t.Fatalf("actor %+v: want user %s with the session's id and expiry %v", a, s.User.ID, s.ExpiresAt)
		case a.Plan == nil || a.Plan.Name != algoitny.DefaultPlanName:
			t.Fatalf("actor's plan %+v, want %s", a.Plan, algoitny.DefaultPlanName)
		}
		if me := b.svc.Me(algoitny.WithActor(anonymous, a)); me == nil || me.ID != s.User.ID {
			t.Fatalf("Me = %+v, want user %s", me, s.User.ID)
		}
		if me := b.svc.Me(anonymous); me != nil {
			t.Fatalf("Me of an anonymous request = %+v, want nil", me)
		}
	})
	t.Run("ErrBadToken", func(t *testing.T) {
		t.Parallel()
		s := login(t, "bad@example.com")
		for _, token := range []string{"", "garbage", s.Token + "x", strings.Replace(s.Token, ".", ".x", 1)} {
			_, err := b.svc.Authenticate(anonymous, token)
			algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		}
	})
	t.Run("ErrLoggedOut", func(t *testing.T) {
		t.Parallel()
		s := login(t, "logout@example.com")
		other := login(t, "logout@example.com")
		algoitnytest.OK(t, b.svc.Logout(b.authenticate(t, s.Token)))
		_, err := b.svc.Authenticate(anonymous, s.Token)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		b.authenticate(t, other.Token) // only that session ends
	})
	t.Run("ErrDeactivated", func(t *testing.T) {
		t.Parallel()
		s := login(t, "deactivated@example.com")
		algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, s.User.ID, false))
		_, err := b.svc.Authenticate(anonymous, s.Token)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, s.User.ID, true))
		b.authenticate(t, s.Token) // the session works again
	})
	t.Run("ErrDeleted", func(t *testing.T) {
		t.Parallel()
		s := login(t, "deleted@example.com")
		algoitnytest.OK(t, b.svc.DeleteMyAccount(b.authenticate(t, s.Token)))
		_, err := b.svc.Authenticate(anonymous, s.Token)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)

		// A new account of the same email is not the old one's sessions'.
		login(t, "deleted@example.com")
		_, err = b.svc.Authenticate(anonymous, s.Token)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})
}

// TestSignedInOnly: what acts for the signed-in user refuses anonymous
// requests.
func TestSignedInOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, call := range map[string]func() error{
		"Logout":          func() error { return b.svc.Logout(anonymous) },
		"DeleteMyAccount": func() error { return b.svc.DeleteMyAccount(anonymous) },
		"MyUsage":         func() error { _, err := b.svc.MyUsage(anonymous); return err },
		"Charge": func() error {
			_, err := b.svc.Charge(anonymous, &algoitny.UsageLog{Action: algoitny.ActionExecution})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			algoitnytest.ErrCode(t, call(), algoitny.EUNAUTHENTICATED)
		})
	}
}

// TestStaffOnly: the administration of plans and users is staff's:
// EUNAUTHENTICATED for anonymous requests, EFORBIDDEN for other users.
func TestStaffOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := b.signIn(t, "user@example.com")
	id := userOf(user).ID
	calls := map[string]func(ctx context.Context) error{
		"CreatePlan": func(ctx context.Context) error { return b.svc.CreatePlan(ctx, &algoitny.Plan{Name: "Mine"}) },
		"UpdatePlan": func(ctx context.Context) error {
			_, err := b.svc.UpdatePlan(ctx, algoitny.DefaultPlanName, algoitny.PlanUpdate{MaxHintsPerDay: ptr(1000)})
			return err
		},
		"User":  func(ctx context.Context) error { _, err := b.svc.User(ctx, id); return err },
		"Users": func(ctx context.Context) error { _, err := b.svc.Users(ctx, "", algoitny.PageRequest{}); return err },
		"SetUserPlan": func(ctx context.Context) error {
			_, err := b.svc.SetUserPlan(ctx, id, "Admin")
			return err
		},
		"SetUserActive": func(ctx context.Context) error { _, err := b.svc.SetUserActive(ctx, id, true); return err },
		"UsageStats":    func(ctx context.Context) error { _, err := b.svc.UsageStats(ctx); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			algoitnytest.ErrCode(t, call(anonymous), algoitny.EUNAUTHENTICATED)
			algoitnytest.ErrCode(t, call(user), algoitny.EFORBIDDEN)
		})
	}
	// Nothing was changed by the refused calls.
	if u := algoitnytest.Must[*algoitny.User](t)(b.db.GetUserByID(context.Background(), id)); u.PlanName != algoitny.DefaultPlanName {
		t.Fatalf("user's plan %s after refused changes, want %s", u.PlanName, algoitny.DefaultPlanName)
	}
}

// TestPlans: active plans are everyone's to see, inactive ones staff's —
// except a user's own plan, which PlanOf shows whatever its state.
func TestPlans(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "plans-staff@example.com")
	user := b.signIn(t, "plans-user@example.com")
	algoitnytest.OK(t, b.svc.CreatePlan(staff, &algoitny.Plan{Name: "Retired", IsActive: false}))
	names := func(ps []*algoitny.Plan) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		for who, c := range map[string]struct {
			ctx  context.Context
			want bool
		}{"Anonymous": {anonymous, false}, "User": {user, false}, "Staff": {staff, true}} {
			got := names(algoitnytest.Must[[]*algoitny.Plan](t)(b.svc.Plans(c.ctx)))
			if strings.Contains(got, "Retired") != c.want || !strings.Contains(got, "Free") {
				t.Errorf("%s lists plans %s; want Free, and Retired only for staff", who, got)
			}
		}
	})
	t.Run("Get", func(t *testing.T) {
		t.Parallel()
		_, err := b.svc.Plan(user, "Retired")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = b.svc.Plan(anonymous, "NoSuchPlan")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.Must[*algoitny.Plan](t)(b.svc.Plan(staff, "Retired"))
		algoitnytest.Must[*algoitny.Plan](t)(b.svc.Plan(anonymous, "Pro"))
		algoitnytest.Must[*algoitny.Plan](t)(b.svc.PlanOf(user, "Retired"))
		_, err = b.svc.PlanOf(user, "NoSuchPlan")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})
}

// TestCreatePlan: staff create plans with names that fit in keys and limits
// in range; a name is taken once.
func TestCreatePlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "create-staff@example.com")

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		p := &algoitny.Plan{Name: "  Team  ", MaxHintsPerDay: algoitny.Unlimited, MaxExecutionsPerDay: 100, MaxProblems: 5,
			PriceCents: 500, IsActive: true, MaxChecks: 10, MinCheckDelayMs: 1000}
		algoitnytest.OK(t, b.svc.CreatePlan(staff, p))
		got := algoitnytest.Must[*algoitny.Plan](t)(b.svc.Plan(anonymous, "Team"))
		if got.MaxExecutionsPerDay != 100 || got.MaxHintsPerDay != algoitny.Unlimited || got.PriceCents != 500 {
			t.Fatalf("stored plan %+v, want the given limits", got)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		t.Parallel()
		algoitnytest.ErrCode(t, b.svc.CreatePlan(staff, &algoitny.Plan{Name: "Pro"}), algoitny.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		for field, p := range map[string]algoitny.Plan{
			"name":                  {Name: " "},
			"name#":                 {Name: "a#b"},
			"name:":                 {Name: "a:b"},
			"name too long":         {Name: strings.Repeat("n", 51)},
			"maxHintsPerDay":        {Name: "x", MaxHintsPerDay: -2},
			"maxExecutionsPerDay":   {Name: "x", MaxExecutionsPerDay: 1_000_001},
			"maxProblems":           {Name: "x", MaxProblems: -5},
			"priceCents":            {Name: "x", PriceCents: -1},
			"maxChecks":             {Name: "x", MaxChecks: 100_001},
			"minCheckDelayMs low":   {Name: "x", MinCheckDelayMs: 999},
			"minCheckDelayMs high":  {Name: "x", MinCheckDelayMs: 86_400_001},
			"minCheckDelayMs minus": {Name: "x", MinCheckDelayMs: -1},
		} {
			err := b.svc.CreatePlan(staff, &p)
			if algoitny.ErrorCode(err) != algoitny.EINVALID {
				t.Errorf("%s: CreatePlan = %v, want %s", field, err, algoitny.EINVALID)
			}
		}
		_, err := b.svc.Plan(staff, "x")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})
}

// TestUpdatePlan: staff change a plan's limits (checked as CreatePlan's),
// and the next request of its users sees them.
func TestUpdatePlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "update-staff@example.com")
	s := algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(anonymous, "update-user@example.com"))

	_, err := b.svc.UpdatePlan(staff, "Free", algoitny.PlanUpdate{MaxExecutionsPerDay: ptr(-2)})
	algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	_, err = b.svc.UpdatePlan(staff, "Free", algoitny.PlanUpdate{MinCheckDelayMs: ptr(10)})
	algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	_, err = b.svc.UpdatePlan(staff, "NoSuchPlan", algoitny.PlanUpdate{MaxHintsPerDay: ptr(1)})
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

	p := algoitnytest.Must[*algoitny.Plan](t)(b.svc.UpdatePlan(staff, "Free", algoitny.PlanUpdate{MaxExecutionsPerDay: ptr(3)}))
	if p.MaxExecutionsPerDay != 3 || p.MaxHintsPerDay != 5 {
		t.Fatalf("updated plan %+v, want 3 executions and the hints left alone (5)", p)
	}
	if got := algoitny.ActorFrom(b.authenticate(t, s.Token)).Plan; got.MaxExecutionsPerDay != 3 {
		t.Fatalf("the user's next request has plan %+v, want 3 executions a day", got)
	}
}

// TestUsers: staff read users by id and page through them, all or a plan's.
func TestUsers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "users-staff@example.com")
	u := userOf(b.signIn(t, "users-a@example.com"))
	b.signIn(t, "users-b@example.com")
	algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserPlan(staff, u.ID, "Pro"))

	got := algoitnytest.Must[*algoitny.User](t)(b.svc.User(staff, u.ID))
	if got.Email != u.Email {
		t.Fatalf("User(%s) = %s, want %s", u.ID, got.Email, u.Email)
	}
	_, err := b.svc.User(staff, "no-such-user")
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

	all := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(b.svc.Users(staff, "", algoitny.PageRequest{}))
	if len(all.Items) != 3 {
		t.Fatalf("Users lists %d users, want 3", len(all.Items))
	}
	pro := algoitnytest.Must[algoitny.Page[*algoitny.User]](t)(b.svc.Users(staff, "Pro", algoitny.PageRequest{}))
	if len(pro.Items) != 1 || pro.Items[0].ID != u.ID {
		t.Fatalf("Users of Pro = %d users, want only %s", len(pro.Items), u.Email)
	}
	_, err = b.svc.Users(staff, "NoSuchPlan", algoitny.PageRequest{})
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
}

// TestSetUserPlan: staff move a user to another plan, which the user's
// next request has.
func TestSetUserPlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "setplan-staff@example.com")
	s := algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(anonymous, "setplan@example.com"))

	_, err := b.svc.SetUserPlan(staff, "no-such-user", "Pro")
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	_, err = b.svc.SetUserPlan(staff, s.User.ID, "NoSuchPlan")
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

	u := algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserPlan(staff, s.User.ID, "Pro"))
	if u.PlanName != "Pro" {
		t.Fatalf("user's plan %s, want Pro", u.PlanName)
	}
	if a := algoitny.ActorFrom(b.authenticate(t, s.Token)); a.Plan == nil || a.Plan.Name != "Pro" {
		t.Fatalf("the user's next request has plan %+v, want Pro", a.Plan)
	}
}

// TestSetUserActive: staff deactivate and reactivate users, but not
// themselves.
func TestSetUserActive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "active-staff@example.com")
	u := userOf(b.signIn(t, "active@example.com"))

	_, err := b.svc.SetUserActive(staff, userOf(staff).ID, false)
	algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, userOf(staff).ID, true)) // a no-op, allowed
	_, err = b.svc.SetUserActive(staff, "no-such-user", false)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

	if got := algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, u.ID, false)); got.IsActive {
		t.Fatal("the user is still active after deactivation")
	}
	if got := algoitnytest.Must[*algoitny.User](t)(b.svc.SetUserActive(staff, u.ID, true)); !got.IsActive {
		t.Fatal("the user is not active after reactivation")
	}
}

// TestGrantStaff: the command line makes a user staff by email.
func TestGrantStaff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.signIn(t, "grant@example.com")
	_, err := b.svc.GrantStaff(anonymous, "nobody@example.com", true)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	if u := algoitnytest.Must[*algoitny.User](t)(b.svc.GrantStaff(anonymous, "grant@example.com", true)); !u.IsStaff {
		t.Fatal("not staff after GrantStaff(true)")
	}
	if !algoitny.ActorFrom(b.signIn(t, "grant@example.com")).IsStaff() {
		t.Fatal("the next request of the new staff user is not staff's")
	}
	if u := algoitnytest.Must[*algoitny.User](t)(b.svc.GrantStaff(anonymous, "grant@example.com", false)); u.IsStaff {
		t.Fatal("still staff after GrantStaff(false)")
	}
}

// TestQuota: a charge carries the payer's plan limit; the store admits
// charged jobs up to it and refuses the next with ERATELIMITED; MyUsage
// counts what was used against the plan's limits; usage logs are the
// owner's and staff's to read.
func TestQuota(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "quota-staff@example.com")
	algoitnytest.Must[*algoitny.Plan](t)(b.svc.UpdatePlan(staff, "Free", algoitny.PlanUpdate{MaxExecutionsPerDay: ptr(2)}))
	user := b.signIn(t, "quota@example.com")
	uid := userOf(user).ID
	pay := func() (*algoitny.Charge, error) {
		c := algoitnytest.Must[*algoitny.Charge](t)(b.svc.Charge(user, &algoitny.UsageLog{UserID: "someone-else", Action: algoitny.ActionExecution,
			Platform: algoitny.PlatformBaekjoon, ProblemID: "1000"}))
		if c.Log.UserID != uid || c.Limit != 2 {
			t.Fatalf("charge for %s with limit %d, want the signed-in %s with the plan's 2", c.Log.UserID, c.Limit, uid)
		}
		_, _, err := b.db.CreateChargedJob(context.Background(), &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: uid,
			Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Language: algoitny.LanguagePython, SolutionCode: "print(1)"}, c)
		return c, err
	}
	first := algoitnytest.Must[*algoitny.Charge](t)(pay())
	algoitnytest.Must[*algoitny.Charge](t)(pay())
	_, err := pay()
	algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)

	usage := algoitnytest.Must[[]*algoitny.Usage](t)(b.svc.MyUsage(user))
	if len(usage) != len(algoitny.UsageActions) {
		t.Fatalf("MyUsage has %d actions, want %d", len(usage), len(algoitny.UsageActions))
	}
	for _, u := range usage {
		want := map[algoitny.UsageAction][2]int{algoitny.ActionExecution: {2, 2}, algoitny.ActionHint: {0, 5},
			algoitny.ActionCodeRun: {0, 50}, algoitny.ActionCounterexample: {0, 3}}[u.Action]
		if u.Used != want[0] || u.Limit != want[1] || !u.ResetAt.Equal(algoitny.NextReset(time.Now())) {
			t.Errorf("%s: used %d of %d, reset %v; want %d of %d, reset at the next 00:00 UTC", u.Action, u.Used, u.Limit, u.ResetAt, want[0], want[1])
		}
	}

	// Without a plan nothing is allowed.
	noPlan := algoitny.WithActor(anonymous, &algoitny.Actor{User: userOf(user)})
	for _, u := range algoitnytest.Must[[]*algoitny.Usage](t)(b.svc.MyUsage(noPlan)) {
		if u.Limit != 0 {
			t.Errorf("%s: limit %d without a plan, want 0", u.Action, u.Limit)
		}
	}
	if c := algoitnytest.Must[*algoitny.Charge](t)(b.svc.Charge(noPlan, &algoitny.UsageLog{Action: algoitny.ActionHint})); c.Limit != 0 {
		t.Errorf("charge limit %d without a plan, want 0", c.Limit)
	}

	id := first.Log.ID
	algoitnytest.Must[*algoitny.UsageLog](t)(b.svc.UsageLog(user, uid, algoitny.ActionExecution, id))
	algoitnytest.Must[*algoitny.UsageLog](t)(b.svc.UsageLog(staff, uid, algoitny.ActionExecution, id))
	_, err = b.svc.UsageLog(b.signIn(t, "other@example.com"), uid, algoitny.ActionExecution, id)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	_, err = b.svc.UsageLog(anonymous, uid, algoitny.ActionExecution, id)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

	algoitnytest.Must[[]algoitny.ExecutionStat](t)(b.svc.UsageStats(staff))
}

// TestDeleteMyAccount: the account and what it owns go, the session stops
// working, and deleting again is safe.
func TestDeleteMyAccount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	user := b.signIn(t, "delete@example.com")
	uid := userOf(user).ID
	c := algoitnytest.Must[*algoitny.Charge](t)(b.svc.Charge(user, &algoitny.UsageLog{Action: algoitny.ActionHint}))
	algoitnytest.Must[*algoitny.Job](t)(first(b.db.CreateChargedJob(context.Background(), &algoitny.Job{Type: algoitny.JobHintGeneration, UserID: uid, HistoryID: "h1"}, c)))

	algoitnytest.OK(t, b.svc.DeleteMyAccount(user))
	_, err := b.db.GetUserByID(context.Background(), uid)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	_, err = b.db.GetUsageLog(context.Background(), uid, algoitny.ActionHint, c.Log.ID)
	algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	algoitnytest.OK(t, b.svc.DeleteMyAccount(user)) // a retry after success
}

// first passes on the first value of a call that returns two and an error.
func first[A, B any](a A, _ B, err error) (A, error) { return a, err }

// TestFollowChanges: every change to an account that must reach the
// user's open websockets — logout, deactivation, plan or staff change,
// deletion — is told to the followers with the user's id.
func TestFollowChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	staff := b.staff(t, "follow-staff@example.com")
	user := b.signIn(t, "follow@example.com")
	uid := userOf(user).ID

	ctx, cancel := context.WithCancel(context.Background())
	told := make(chan string, 16)
	done := make(chan struct{})
	go func() { defer close(done); b.svc.FollowChanges(ctx, func(id string) { told <- id }) }()
	t.Cleanup(func() { cancel(); <-done })

	// The subscription starts in the background: tell changes until one arrives.
	algoitnytest.Eventually(t, 5*time.Second, "the follower to hear a staff change", func() bool {
		algoitnytest.Must[*algoitny.User](t)(b.svc.GrantStaff(anonymous, "follow@example.com", false))
		select {
		case id := <-told:
			return id == uid
		default:
			return false
		}
	})
	for len(told) > 0 { // the repeats of the wait
		<-told
	}
	for name, change := range map[string]func() error{
		"SetUserPlan":   func() error { _, err := b.svc.SetUserPlan(staff, uid, "Pro"); return err },
		"SetUserActive": func() error { _, err := b.svc.SetUserActive(staff, uid, true); return err },
		"Logout":        func() error { return b.svc.Logout(user) },
	} {
		algoitnytest.OK(t, change())
		wantTold(t, told, name, uid)
	}
	algoitnytest.OK(t, b.svc.DeleteMyAccount(user)) // last: the others need the user
	wantTold(t, told, "DeleteMyAccount", uid)
}

// wantTold fails the test unless the change named what is told for user.
func wantTold(t *testing.T, told <-chan string, what, user string) {
	t.Helper()
	select {
	case id := <-told:
		if id != user {
			t.Fatalf("%s told user %s, want %s", what, id, user)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s told nobody", what)
	}
}

// TestFollowChangesWithoutBroker: a single process without a broker has
// nothing to follow: FollowChanges returns at once, and changes are made
// all the same.
func TestFollowChangesWithoutBroker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := *b.svc
	svc.Changes = nil
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.FollowChanges(context.Background(), func(string) { t.Error("told a change") })
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("FollowChanges without a broker did not return")
	}
	user := b.signIn(t, "nobroker@example.com")
	algoitnytest.OK(t, svc.Logout(user))
}
