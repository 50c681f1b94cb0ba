// Package accounts holds the rules of users, plans and quotas: signing in
// (Google or, in dev mode, by email), sessions and logout, who may change
// plans and users, and exact daily quotas.
package accounts

import (
	"context"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/auth"
	"github.com/algoitny/api/internal/pubsub"
)

// Store is what the service needs from storage (internal/dynamo).
type Store interface {
	AuthLookup(ctx context.Context, r algoitny.AuthRequest) (*algoitny.AuthSnapshot, error)
	RevokeSession(ctx context.Context, sessionID string, expiresAt time.Time) error
	SignInWithGoogle(ctx context.Context, p algoitny.GoogleProfile, plan *algoitny.Plan) (*algoitny.User, bool, error)
	CreateUser(ctx context.Context, u *algoitny.User, plan *algoitny.Plan) error
	GetUserByEmail(ctx context.Context, email string) (*algoitny.User, error)
	GetUserByID(ctx context.Context, id string) (*algoitny.User, error)
	ListUsers(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error)
	ListUsersByPlan(ctx context.Context, planID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error)
	SetUserPlan(ctx context.Context, email string, plan *algoitny.Plan) (*algoitny.User, error)
	SetUserActive(ctx context.Context, email string, active bool) (*algoitny.User, error)
	SetUserStaff(ctx context.Context, email string, staff bool) (*algoitny.User, error)
	GetPlan(ctx context.Context, name string) (*algoitny.Plan, error)
	ListPlans(ctx context.Context, includeInactive bool) ([]*algoitny.Plan, error)
	CreatePlan(ctx context.Context, p *algoitny.Plan) error
	UpdatePlan(ctx context.Context, name string, u algoitny.PlanUpdate) (*algoitny.Plan, error)
	UsageCounts(ctx context.Context, userID, day string) (map[algoitny.UsageAction]int, error)
	ExecutionStats(ctx context.Context) ([]algoitny.ExecutionStat, error)
	GetUsageLog(ctx context.Context, userID string, action algoitny.UsageAction, id string) (*algoitny.UsageLog, error)
	DeleteAccount(ctx context.Context, u *algoitny.User) error
}

// Tokens issues and parses session tokens (internal/auth.Sessions).
type Tokens interface {
	Issue(u *algoitny.User) (token string, expiresAt time.Time, err error)
	Parse(token string) (auth.Claims, error)
}

// GoogleVerifier verifies Google ID tokens (internal/auth.GoogleVerifier).
type GoogleVerifier interface {
	Verify(ctx context.Context, idToken string) (algoitny.GoogleProfile, error)
}

// Service implements the account rules.
type Service struct {
	Store  Store
	Tokens Tokens
	Google GoogleVerifier
	// Dev enables devLogin.
	Dev bool
	// Changes carries account changes to the websocket transports of every
	// process (see FollowChanges); optional.
	Changes pubsub.Broker
	// Logger receives what cannot be returned (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// plan returns a plan by name, as DynamoDB holds it now.
func (s *Service) plan(ctx context.Context, name string) (*algoitny.Plan, error) {
	return s.Store.GetPlan(ctx, name)
}

// Authenticate turns a session token into the request's actor. It checks the
// signature and expiry, that the session was not logged out, and that the
// user still exists, is the same account and is active — read from the
// store, strongly consistent, on every request, so deactivation and logout
// take effect on the next request in every process. The user, the
// session's marker, the plan and today's use (what myUsage shows) are one
// read. Returns EUNAUTHENTICATED.
func (s *Service) Authenticate(ctx context.Context, token string) (*algoitny.Actor, error) {
	claims, err := s.Tokens.Parse(token)
	if err != nil {
		return nil, err
	}
	snap, err := s.Store.AuthLookup(ctx, algoitny.AuthRequest{
		UserID: claims.UserID, Email: claims.Email, SessionID: claims.SessionID,
		PlanName: claims.Plan, UsageDay: algoitny.UsageDay(s.now()),
	})
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "the account no longer exists")
	}
	if err != nil {
		return nil, err
	}
	u := snap.User
	switch {
	case snap.Revoked:
		return nil, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "the session was logged out")
	case u.ID != claims.UserID:
		return nil, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "the account no longer exists")
	case !u.IsActive:
		return nil, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "the account is deactivated")
	}
	return &algoitny.Actor{User: u, Plan: snap.Plan, SessionID: claims.SessionID, ExpiresAt: claims.ExpiresAt, Usage: snap.Usage}, nil
}

// Session is a signed-in session.
type Session struct {
	Token     string
	ExpiresAt time.Time
	User      *algoitny.User
}

// LoginWithGoogle verifies a Google ID token, creates the user on first
// sign-in (on the default plan) or refreshes their profile, and starts a
// session. Returns EUNAUTHENTICATED for a bad token, EFORBIDDEN for a
// deactivated account, ECONFLICT when the email belongs to another Google
// account, EUNAVAILABLE when this server has no Google sign-in.
func (s *Service) LoginWithGoogle(ctx context.Context, idToken string) (*Session, error) {
	if s.Google == nil {
		return nil, algoitny.Errorf(algoitny.EUNAVAILABLE, "Google sign-in is not available on this server")
	}
	if strings.TrimSpace(idToken) == "" {
		return nil, algoitny.Invalid("idToken", "idToken is required")
	}
	profile, err := s.Google.Verify(ctx, idToken)
	if err != nil {
		return nil, err
	}
	plan, err := s.plan(ctx, algoitny.DefaultPlanName)
	if err != nil {
		return nil, err
	}
	u, _, err := s.Store.SignInWithGoogle(ctx, profile, plan)
	if err != nil {
		return nil, err
	}
	return s.start(u)
}

// DevLogin signs in as any email, creating the user on the default plan on
// first use. It exists only in dev mode (EFORBIDDEN otherwise) so that the
// playground is usable locally. EINVALID for anything but a bare email
// address, EFORBIDDEN for a deactivated account.
func (s *Service) DevLogin(ctx context.Context, email string) (*Session, error) {
	if !s.Dev {
		return nil, algoitny.Errorf(algoitny.EFORBIDDEN, "devLogin is only available in dev mode")
	}
	addr, err := mail.ParseAddress(strings.TrimSpace(email))
	if err != nil || addr.Address != strings.TrimSpace(email) || len(email) > 254 {
		return nil, algoitny.Invalid("email", "not an email address")
	}
	u, err := s.Store.GetUserByEmail(ctx, addr.Address)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		plan, perr := s.plan(ctx, algoitny.DefaultPlanName)
		if perr != nil {
			return nil, perr
		}
		name, _, _ := strings.Cut(addr.Address, "@")
		u = &algoitny.User{Email: addr.Address, Name: name, IsActive: true}
		err = s.Store.CreateUser(ctx, u, plan)
		if algoitny.IsCode(err, algoitny.ECONFLICT) { // created concurrently
			u, err = s.Store.GetUserByEmail(ctx, addr.Address)
		}
	}
	if err != nil {
		return nil, err
	}
	return s.start(u)
}

func (s *Service) start(u *algoitny.User) (*Session, error) {
	if !u.IsActive {
		return nil, algoitny.Errorf(algoitny.EFORBIDDEN, "the account is deactivated")
	}
	token, exp, err := s.Tokens.Issue(u)
	if err != nil {
		return nil, err
	}
	return &Session{Token: token, ExpiresAt: exp, User: u}, nil
}

// Logout revokes the session of the request. EUNAUTHENTICATED when anonymous.
func (s *Service) Logout(ctx context.Context) error {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return err
	}
	defer s.changed(ctx, a.User) // even after an error: see SetUserPlan
	return s.Store.RevokeSession(ctx, a.SessionID, a.ExpiresAt)
}

// Me returns the signed-in user, nil when anonymous.
func (s *Service) Me(ctx context.Context) *algoitny.User { return algoitny.ActorFrom(ctx).User }

// Plans lists the active plans (staff: all plans).
func (s *Service) Plans(ctx context.Context) ([]*algoitny.Plan, error) {
	return s.Store.ListPlans(ctx, algoitny.ActorFrom(ctx).IsStaff())
}

// Plan returns a plan by name: active plans for everyone, inactive ones for
// staff. ENOTFOUND otherwise.
func (s *Service) Plan(ctx context.Context, name string) (*algoitny.Plan, error) {
	p, err := s.plan(ctx, name)
	if err != nil {
		return nil, err
	}
	if !p.IsActive && !algoitny.ActorFrom(ctx).IsStaff() {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "plan %q not found", name)
	}
	return p, nil
}

// PlanOf returns a user's plan by name, active or
// not (a user's plan is shown to whoever may see the user). ENOTFOUND if none.
func (s *Service) PlanOf(ctx context.Context, name string) (*algoitny.Plan, error) {
	return s.plan(ctx, name)
}

// UsageLog returns one of the caller's usage logs (staff: anyone's). ENOTFOUND otherwise.
func (s *Service) UsageLog(ctx context.Context, userID string, action algoitny.UsageAction, id string) (*algoitny.UsageLog, error) {
	if !algoitny.ActorFrom(ctx).OwnsOrStaff(userID) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "usage log not found")
	}
	return s.Store.GetUsageLog(ctx, userID, action, id)
}

// CreatePlan adds a plan (staff only). EINVALID for bad limits, ECONFLICT if the name exists.
func (s *Service) CreatePlan(ctx context.Context, p *algoitny.Plan) error {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return err
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" || len(p.Name) > 50 || strings.ContainsAny(p.Name, "#:") {
		return algoitny.Invalid("name", "a plan name is 1–50 characters without '#' or ':'")
	}
	if err := validateLimits(p.MaxHintsPerDay, p.MaxExecutionsPerDay, p.MaxProblems, p.PriceCents); err != nil {
		return err
	}
	if err := validatePractice(p.MaxCodeRunsPerDay, p.MaxCounterexamplesPerDay); err != nil {
		return err
	}
	if err := validateChecks(p.MaxChecks, p.MinCheckDelayMs); err != nil {
		return err
	}
	return s.Store.CreatePlan(ctx, p)
}

// UpdatePlan changes a plan (staff only). The new limits apply to the next
// request in every process (a plan is strict state in the store's cache).
func (s *Service) UpdatePlan(ctx context.Context, name string, u algoitny.PlanUpdate) (*algoitny.Plan, error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return nil, err
	}
	if err := validateLimits(deref(u.MaxHintsPerDay), deref(u.MaxExecutionsPerDay), deref(u.MaxProblems), deref(u.PriceCents)); err != nil {
		return nil, err
	}
	if err := validatePractice(deref(u.MaxCodeRunsPerDay), deref(u.MaxCounterexamplesPerDay)); err != nil {
		return nil, err
	}
	if err := validateChecks(deref(u.MaxChecks), deref(u.MinCheckDelayMs)); err != nil {
		return nil, err
	}
	return s.Store.UpdatePlan(ctx, name, u)
}

func validateLimits(hints, execs, problems, price int) error {
	for field, v := range map[string]int{"maxHintsPerDay": hints, "maxExecutionsPerDay": execs, "maxProblems": problems} {
		if v < algoitny.Unlimited || v > 1_000_000 {
			return algoitny.Invalid(field, "%s must be -1 (unlimited) or 0–1000000", field)
		}
	}
	if price < 0 {
		return algoitny.Invalid("priceCents", "priceCents must not be negative")
	}
	return nil
}

// validatePractice checks a plan's code-run and counterexample quotas.
func validatePractice(runs, searches int) error {
	for field, v := range map[string]int{"maxCodeRunsPerDay": runs, "maxCounterexamplesPerDay": searches} {
		if v < algoitny.Unlimited || v > 1_000_000 {
			return algoitny.Invalid(field, "%s must be -1 (unlimited) or 0–1000000", field)
		}
	}
	return nil
}

// validateChecks checks a plan's URL-watch limits (0 delay = unset).
func validateChecks(maxChecks, minDelayMs int) error {
	if maxChecks < algoitny.Unlimited || maxChecks > 100_000 {
		return algoitny.Invalid("maxChecks", "maxChecks must be -1 (unlimited) or 0–100000")
	}
	if minDelayMs != 0 && (minDelayMs < 1000 || minDelayMs > 86_400_000) {
		return algoitny.Invalid("minCheckDelayMs", "minCheckDelayMs must be between 1000 (1 s) and 86400000 (a day)")
	}
	return nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// User returns a user by id (staff only). ENOTFOUND if none.
func (s *Service) User(ctx context.Context, id string) (*algoitny.User, error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return nil, err
	}
	return s.Store.GetUserByID(ctx, id)
}

// Users pages through users, optionally of one plan (staff only).
func (s *Service) Users(ctx context.Context, planName string, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return algoitny.Page[*algoitny.User]{}, err
	}
	if planName == "" {
		return s.Store.ListUsers(ctx, page)
	}
	p, err := s.Store.GetPlan(ctx, planName)
	if err != nil {
		return algoitny.Page[*algoitny.User]{}, err
	}
	return s.Store.ListUsersByPlan(ctx, p.ID, page)
}

// SetUserPlan moves a user to another plan (staff only). It takes effect on
// the user's next request. ENOTFOUND for an unknown user or plan.
func (s *Service) SetUserPlan(ctx context.Context, userID, planName string) (*algoitny.User, error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return nil, err
	}
	u, err := s.Store.GetUserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	p, err := s.Store.GetPlan(ctx, planName)
	if err != nil {
		return nil, err
	}
	// Reported even after an error: the write may have happened (a timeout),
	// and forgetting a session costs one read.
	out, err := s.Store.SetUserPlan(ctx, u.Email, p)
	s.changed(ctx, u, out)
	return out, err
}

// SetUserActive activates or deactivates a user (staff only); a deactivated
// user is refused on their next request. Staff cannot deactivate themselves.
func (s *Service) SetUserActive(ctx context.Context, userID string, active bool) (*algoitny.User, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireStaff(); err != nil {
		return nil, err
	}
	if !active && userID == a.UserID() {
		return nil, algoitny.Invalid("userId", "you cannot deactivate yourself")
	}
	u, err := s.Store.GetUserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	out, err := s.Store.SetUserActive(ctx, u.Email, active)
	s.changed(ctx, u, out) // even after an error: see SetUserPlan
	return out, err
}

// GrantStaff makes a user staff (the command line's `admin grant`, since no
// one can grant it through the API at first). ENOTFOUND for an unknown email.
func (s *Service) GrantStaff(ctx context.Context, email string, staff bool) (*algoitny.User, error) {
	u, err := s.Store.SetUserStaff(ctx, email, staff)
	if err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
		// The write may have happened (see SetUserPlan): find whom it was for.
		if before, gerr := s.Store.GetUserByEmail(ctx, email); gerr == nil {
			s.changed(ctx, before)
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	s.changed(ctx, u)
	return u, nil
}

// MyUsage returns today's use of each metered action against the plan's
// limits. EUNAUTHENTICATED when anonymous.
func (s *Service) MyUsage(ctx context.Context) ([]*algoitny.Usage, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	now := s.now()
	var counts map[algoitny.UsageAction]int
	if u := a.Usage; u != nil && u.Day == algoitny.UsageDay(now) && now.Sub(u.ReadAt) < usageReadWithSession && !u.Spent() {
		counts = u.Counts // read with the session
	} else {
		var err error
		if counts, err = s.Store.UsageCounts(ctx, a.UserID(), algoitny.UsageDay(now)); err != nil {
			return nil, err
		}
	}
	out := make([]*algoitny.Usage, 0, len(algoitny.UsageActions))
	for _, action := range algoitny.UsageActions {
		out = append(out, &algoitny.Usage{Action: action, Used: counts[action], Limit: dailyLimit(a, action), ResetAt: algoitny.NextReset(now)})
	}
	return out, nil
}

// usageReadWithSession is how long the use read with the session may be
// shown (display data's bound): a websocket's actor lives longer.
const usageReadWithSession = time.Second

// dailyLimit is the actor's limit for action: the plan's, 0 without a plan.
func dailyLimit(a *algoitny.Actor, action algoitny.UsageAction) int {
	if a.Plan == nil {
		return 0
	}
	return a.Plan.DailyLimit(action)
}

// Charge prepares one use of log.Action by the signed-in user, paid for
// with the job that needs it: log gets its payer, and the charge the
// limit of the user's plan as it is now. Nothing is spent until the job is
// written with it (dynamo.DB.CreateChargedJob), which refuses it with
// ERATELIMITED (limit, used, reset time) at the limit, exactly under
// concurrency. Returns EUNAUTHENTICATED.
func (s *Service) Charge(ctx context.Context, log *algoitny.UsageLog) (*algoitny.Charge, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	log.UserID = a.UserID()
	if a.Usage != nil {
		a.Usage.Spend() // what MyUsage shows is read again
	}
	c := &algoitny.Charge{Log: log, Limit: dailyLimit(a, log.Action)}
	if a.Plan != nil {
		c.Plan = a.Plan.Name
	}
	return c, nil
}

// UsageStats returns execution counts by platform and language (staff only).
func (s *Service) UsageStats(ctx context.Context) ([]algoitny.ExecutionStat, error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return nil, err
	}
	return s.Store.ExecutionStats(ctx)
}

// DeleteMyAccount erases every item of the signed-in user in every table
// (history, usage logs, counters, jobs, uniqueness markers, the user); their
// public executions leave the feed. Safe to retry. EUNAUTHENTICATED when anonymous.
func (s *Service) DeleteMyAccount(ctx context.Context) error {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return err
	}
	defer s.changed(ctx, a.User) // even after an error: see SetUserPlan
	return s.Store.DeleteAccount(ctx, a.User)
}
