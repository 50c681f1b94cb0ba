package algoitny

import (
	"context"
	"sync/atomic"
	"time"
)

// Actor is who is making a request: a signed-in user with their plan, or
// nobody (anonymous). Services read it from the context and apply the access
// rules below; they are written here once so that every entry point (GraphQL
// queries, subscriptions, jobs) agrees.
type Actor struct {
	User *User
	Plan *Plan
	// SessionID identifies the session the request came with (for logout).
	SessionID string
	// ExpiresAt is when the session ends (websockets close then).
	ExpiresAt time.Time
	// Usage is the user's use of metered actions on its day, read with the
	// session (what myUsage shows); nil if it was not.
	Usage *DailyUsage
}

type actorKey struct{}

// WithActor returns a context carrying a.
func WithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the request's actor; anonymous if none was set.
func ActorFrom(ctx context.Context) *Actor {
	if a, ok := ctx.Value(actorKey{}).(*Actor); ok && a != nil {
		return a
	}
	return &Actor{}
}

// SignedInFrom reports whether the request in ctx is a user's, without
// allocating an anonymous Actor as ActorFrom does (it is asked on every
// request's path).
func SignedInFrom(ctx context.Context) bool {
	a, ok := ctx.Value(actorKey{}).(*Actor)
	return ok && a != nil && a.User != nil
}

// SignedIn reports whether the actor is a user.
func (a *Actor) SignedIn() bool { return a.User != nil }

// UserID returns the actor's user id, "" when anonymous.
func (a *Actor) UserID() string {
	if a.User == nil {
		return ""
	}
	return a.User.ID
}

// IsStaff reports whether the actor is a staff user.
func (a *Actor) IsStaff() bool { return a.User != nil && a.User.IsStaff }

// RequireUser returns EUNAUTHENTICATED for anonymous actors.
func (a *Actor) RequireUser() error {
	if a.User == nil {
		return Errorf(EUNAUTHENTICATED, "sign in first")
	}
	return nil
}

// RequireStaff returns EUNAUTHENTICATED for anonymous actors and EFORBIDDEN
// for users who are not staff.
func (a *Actor) RequireStaff() error {
	if err := a.RequireUser(); err != nil {
		return err
	}
	if !a.User.IsStaff {
		return Errorf(EFORBIDDEN, "staff only")
	}
	return nil
}

// CanSeeProblem says whether the actor may read p: everyone sees completed
// live problems; drafts are for staff, plans that can view all problems, and
// their creator; deleted problems for staff only.
func (a *Actor) CanSeeProblem(p *Problem) bool {
	switch {
	case a.IsStaff():
		return true
	case p.IsDeleted:
		return false
	case p.IsCompleted:
		return true
	case a.User == nil:
		return false
	}
	return p.CreatedBy == a.User.ID || (a.Plan != nil && a.Plan.CanViewAllProblems)
}

// CanEditProblem says whether the actor may change p: staff, or its creator.
func (a *Actor) CanEditProblem(p *Problem) bool {
	return a.IsStaff() || (a.User != nil && p.CreatedBy == a.User.ID)
}

// CanSeeHistory says whether the actor may read an execution at all: its
// owner, staff, or anyone when it is public.
func (a *Actor) CanSeeHistory(h *SearchHistory) bool {
	return h.IsCodePublic || a.OwnsOrStaff(h.UserID)
}

// CanSeeCode says whether the actor may read an execution's code: private
// code is never shown to anyone but its owner or staff.
func (a *Actor) CanSeeCode(h *SearchHistory) bool { return a.CanSeeHistory(h) }

// OwnsOrStaff reports whether the actor is the user userID or staff.
func (a *Actor) OwnsOrStaff(userID string) bool {
	return a.IsStaff() || (a.User != nil && a.User.ID == userID)
}

// AuthRequest names what authenticating a session reads in one go: the
// session's user and logout marker, the user's plan (PlanName: the plan
// the session's token names, read beside the user; the user's own plan is
// read after if it differs) and, if UsageDay is set, the user's use of that
// day (for myUsage: what the request shows, read with what it needs).
type AuthRequest struct {
	UserID, Email, SessionID string
	PlanName                 string
	UsageDay                 string
}

// AuthSnapshot is what an AuthRequest read: the session's user, whether the
// session was logged out, the user's plan (nil: none, or it does not
// exist) and the use of the request's UsageDay (nil if not asked).
type AuthSnapshot struct {
	User    *User
	Revoked bool
	Plan    *Plan
	Usage   *DailyUsage
}

// DailyUsage is how many of each metered action a user used on Day (a
// UsageDay string), as read at ReadAt. Spend marks it out of date: a use
// was charged since (by the same request, or a socket's later operation).
type DailyUsage struct {
	Day    string
	Counts map[UsageAction]int
	ReadAt time.Time
	spent  atomic.Bool
}

// Spend records that a use was charged after the counts were read.
func (u *DailyUsage) Spend() { u.spent.Store(true) }

// Spent reports whether a use was charged after the counts were read.
func (u *DailyUsage) Spent() bool { return u.spent.Load() }
