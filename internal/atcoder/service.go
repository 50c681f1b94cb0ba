package atcoder

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// SyncQueue queues an on-demand sync of one user; Queue implements it with
// a River job that is unique per user while queued or running (the
// service's tests use a stand-in).
type SyncQueue interface {
	// EnqueueSync queues a sync of userID, or reports the one already queued
	// or running. It returns EINTERNAL when the queue fails.
	EnqueueSync(ctx context.Context, userID string) (algoitny.AtCoderSyncResult, error)
}

// MaxSolvedMany bounds the users of one SolvedMany call.
const MaxSolvedMany = 1000

// Service is the AtCoder feature as the GraphQL layer sees it. Every method
// reads the caller from algoitny.ActorFrom(ctx). A user's link and solved
// list are visible to that user and to staff only (EFORBIDDEN for others);
// the ADT contest calendar is public.
type Service struct {
	Store Store
	// Queue runs on-demand syncs (SyncNow, and the first sync after linking).
	Queue SyncQueue
	// API is AtCoder Problems (*Client), asked whether a handle exists
	// before it is linked. Nil skips the check (tests of the storage rules);
	// the server always sets it.
	API SubmissionsAPI
	// Now is the clock of streaks (default time.Now).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// SubmissionsAPI is the part of AtCoder Problems' API that LinkAccount asks
// about a handle: the submissions call the sync itself makes (*Client).
type SubmissionsAPI interface {
	Submissions(ctx context.Context, handle string, fromSecond int64) ([]Submission, error)
}

var _ SubmissionsAPI = (*Client)(nil)

// handleCheckTimeout bounds the existence check of a handle (the client
// retries a failing API with backoff): a link request answers within it.
const handleCheckTimeout = 10 * time.Second

// LinkAccount links the caller's account to an AtCoder handle (3–16 letters,
// digits or underscores) that AtCoder Problems knows: a handle with no
// submission there is refused, since a typo would otherwise be linked
// silently and sync nothing forever. Linking the handle already linked
// changes nothing (and asks nothing); another handle replaces the link and
// clears the solved list. Until the account has completed a sync, linking
// also queues one. It returns EUNAUTHENTICATED, EINVALID (a malformed or
// unknown handle), EUNAVAILABLE (AtCoder Problems cannot be reached to
// check the handle), ECONFLICT (a concurrent link won) and EINTERNAL (the
// link is stored but the sync could not be queued: linking again retries it).
func (s *Service) LinkAccount(ctx context.Context, handle string) (*algoitny.AtCoderLink, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	if err := ValidateHandle(handle); err != nil {
		return nil, err
	}
	if err := s.checkHandle(ctx, a.UserID(), handle); err != nil {
		return nil, err
	}
	link, _, err := s.Store.LinkAtCoder(ctx, a.UserID(), handle)
	if err != nil {
		return nil, err
	}
	if link.LastSyncedAt == nil && s.Queue != nil {
		if _, err := s.Queue.EnqueueSync(ctx, a.UserID()); err != nil {
			return link, err
		}
	}
	return link, nil
}

// checkHandle asks AtCoder Problems whether handle has submissions, unless
// it is the handle userID has linked already. Submissions are what the
// sync reads: a handle without any has nothing to sync, and AtCoder
// Problems answers an unknown user with an empty list just the same.
func (s *Service) checkHandle(ctx context.Context, userID, handle string) error {
	if s.API == nil {
		return nil
	}
	if cur, err := s.Store.GetAtCoderLink(ctx, userID); err == nil && cur != nil && strings.EqualFold(cur.Handle, handle) {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, handleCheckTimeout)
	defer cancel()
	subs, err := s.API.Submissions(cctx, handle, 0)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return &algoitny.Error{Code: algoitny.EUNAVAILABLE, Err: err,
			Message: "AtCoder Problems cannot be reached to check the handle; try again later"}
	case len(subs) == 0:
		return algoitny.Invalid("handle", "AtCoder Problems knows no submission by %q: check the user name (a new account can be linked once AtCoder Problems has seen its first submission)", handle)
	}
	return nil
}

// UnlinkAccount removes the caller's link and solved list. It is not an
// error when nothing is linked. It returns EUNAUTHENTICATED.
func (s *Service) UnlinkAccount(ctx context.Context) error {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return err
	}
	return s.Store.UnlinkAtCoder(ctx, a.UserID())
}

// Handle returns the AtCoder handle linked to userID, "" when none. It
// returns EUNAUTHENTICATED and EFORBIDDEN (another user, caller not staff).
func (s *Service) Handle(ctx context.Context, userID string) (string, error) {
	if err := canRead(ctx, userID); err != nil {
		return "", err
	}
	link, err := s.Store.GetAtCoderLink(ctx, userID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return link.Handle, nil
}

// Solved returns userID's handle and solved problems with their first-AC
// times and the streak computed from them as of now, read in one request.
// It returns EUNAUTHENTICATED, EFORBIDDEN and ENOTFOUND (no linked account).
func (s *Service) Solved(ctx context.Context, userID string) (algoitny.SolvedProblems, error) {
	if err := canRead(ctx, userID); err != nil {
		return algoitny.SolvedProblems{}, err
	}
	link, ac, err := s.Store.GetAtCoderState(ctx, userID)
	if err != nil {
		return algoitny.SolvedProblems{}, err
	}
	ids := ac.ProblemIDs
	if ids == nil {
		ids = []string{}
	}
	return algoitny.SolvedProblems{
		Handle: link.Handle, ProblemIDs: ids, Count: len(ids), LastSyncedAt: link.LastSyncedAt, LastSyncError: link.LastError,
		Problems: solvedProblems(ac), Streak: Streak(ac, s.now()),
	}, nil
}

// SolvedMany returns the solved problems of many users, read with
// BatchGetItem (100 users a call). Users without a list (not linked, not
// synced yet) map to an empty set. It returns EUNAUTHENTICATED, EFORBIDDEN
// (any user other than the caller, unless staff) and EINVALID (more than
// MaxSolvedMany users).
func (s *Service) SolvedMany(ctx context.Context, userIDs []string) (map[string]ProblemSet, error) {
	if len(userIDs) > MaxSolvedMany {
		return nil, algoitny.Invalid("userIds", "at most %d users at once", MaxSolvedMany)
	}
	for _, id := range userIDs {
		if err := canRead(ctx, id); err != nil {
			return nil, err
		}
	}
	lists, err := s.Store.GetACLists(ctx, userIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ProblemSet, len(userIDs))
	for _, id := range userIDs {
		if l, ok := lists[id]; ok {
			out[id] = NewProblemSet(l.ProblemIDs...)
		} else {
			out[id] = ProblemSet{}
		}
	}
	return out, nil
}

// SolvedBy reports, for each of problemIDs, whether userID has solved it on
// AtCoder. It costs exactly one DynamoDB read whatever the number of
// problems (the list is one item), which is what a per-request dataloader of
// "solved by me" flags needs. A user without a list has solved nothing. It
// returns EUNAUTHENTICATED and EFORBIDDEN.
func (s *Service) SolvedBy(ctx context.Context, userID string, problemIDs []string) (map[string]bool, error) {
	if err := canRead(ctx, userID); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(problemIDs))
	if len(problemIDs) == 0 {
		return out, nil
	}
	ac, err := s.Store.GetACList(ctx, userID)
	if err != nil {
		return nil, err
	}
	solved := NewProblemSet(ac.ProblemIDs...)
	for _, id := range problemIDs {
		out[id] = solved.Has(id)
	}
	return out, nil
}

// SyncNow queues a sync of the caller's account and returns at once; see
// SyncResult. Asking while a sync is queued or running returns that one. It
// returns EUNAUTHENTICATED, ENOTFOUND (no linked account) and EINTERNAL (no
// queue configured, or the queue failed).
func (s *Service) SyncNow(ctx context.Context) (algoitny.AtCoderSyncResult, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return algoitny.AtCoderSyncResult{}, err
	}
	link, err := s.Store.GetAtCoderLink(ctx, a.UserID())
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return algoitny.AtCoderSyncResult{}, errNotLinked()
	}
	if err != nil {
		return algoitny.AtCoderSyncResult{}, err
	}
	if s.Queue == nil {
		return algoitny.AtCoderSyncResult{}, algoitny.Internal(nil, "AtCoder sync is not configured")
	}
	res, err := s.Queue.EnqueueSync(ctx, a.UserID())
	if err != nil {
		return algoitny.AtCoderSyncResult{}, err
	}
	res.Handle, res.LastSyncedAt = link.Handle, link.LastSyncedAt
	return res, nil
}

// ADTContests returns the AtCoder Daily Training contests starting in month
// (YYYYMM, UTC), in chronological order, with their problems and
// difficulties: one Query. Anyone may read them; MarkSolvedByMe adds the
// caller's progress. It returns EINVALID (month).
func (s *Service) ADTContests(ctx context.Context, month string) ([]algoitny.ADTContest, error) {
	if _, err := ParseMonth(month); err != nil {
		return nil, err
	}
	return s.Store.ListADTContests(ctx, month)
}

// MarkSolvedByMe fills in SolvedByMe and FirstACAt of the contests'
// problems for the signed-in caller, from one read of the caller's AC list;
// for an anonymous caller, or contests without problems, it reads nothing
// and leaves them false and nil. The contests' problems are changed in
// place. It returns EINTERNAL when storage fails.
func (s *Service) MarkSolvedByMe(ctx context.Context, contests []algoitny.ADTContest) error {
	a := algoitny.ActorFrom(ctx)
	if !a.SignedIn() || !slices.ContainsFunc(contests, func(c algoitny.ADTContest) bool { return len(c.Problems) > 0 }) {
		return nil
	}
	ac, err := s.Store.GetACList(ctx, a.UserID())
	if err != nil {
		return err
	}
	for i := range contests {
		for j := range contests[i].Problems {
			p := &contests[i].Problems[j]
			sec, solved := ac.FirstACOf(p.ProblemID)
			p.SolvedByMe, p.FirstACAt = solved, nil
			if sec > 0 {
				t := time.Unix(sec, 0).UTC()
				p.FirstACAt = &t
			}
		}
	}
	return nil
}

// FilterProblems returns the problems that pass filter, which must be
// ALL for an anonymous caller (EUNAUTHENTICATED otherwise: "unsolved" means
// nothing without a user). The problems must have been through
// MarkSolvedByMe.
func (s *Service) FilterProblems(ctx context.Context, problems []algoitny.ADTContestProblem, filter algoitny.AtCoderProblemFilter) ([]algoitny.ADTContestProblem, error) {
	if filter == "" || filter == algoitny.AtCoderProblemsAll {
		if problems == nil {
			return []algoitny.ADTContestProblem{}, nil
		}
		return problems, nil
	}
	if err := algoitny.ActorFrom(ctx).RequireUser(); err != nil {
		return nil, err
	}
	out := make([]algoitny.ADTContestProblem, 0, len(problems))
	for _, p := range problems {
		if filter.Keeps(p.SolvedByMe) {
			out = append(out, p)
		}
	}
	return out, nil
}

// canRead applies the visibility rule: the user themself or staff.
func canRead(ctx context.Context, userID string) error {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return err
	}
	if !a.OwnsOrStaff(userID) {
		return algoitny.Errorf(algoitny.EFORBIDDEN, "only the user and staff can see a user's AtCoder account")
	}
	return nil
}
