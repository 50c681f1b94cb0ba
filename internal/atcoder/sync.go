package atcoder

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// API is what a Syncer needs from AtCoder Problems; *Client implements it.
type API interface {
	Submissions(ctx context.Context, handle string, fromSecond int64) ([]Submission, error)
	Contests(ctx context.Context) ([]Contest, error)
	ContestProblems(ctx context.Context) ([]ContestProblem, error)
	Problems(ctx context.Context) ([]Problem, error)
	ProblemModels(ctx context.Context) (map[string]ProblemModel, error)
}

var _ API = (*Client)(nil)

// resultAC is the result of an accepted submission.
const resultAC = "AC"

// maxConflictRetries bounds how often a sync starts over after losing a race
// with another sync of the same user (or a relink).
const maxConflictRetries = 3

// Syncer pulls submissions from the API into the store. It is safe for
// concurrent use; the River workers of internal/jobs share one.
type Syncer struct {
	Store Store
	API   API
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SyncReport says what one sync of one user did.
type SyncReport struct {
	UserID, Handle string
	// Calls is the number of submission pages requested.
	Calls int
	// Fetched counts the submissions received, New those processed for the
	// first time (Fetched-New were boundary repeats), NewAC the accepted
	// ones among New.
	Fetched, New, NewAC int
	// Added counts the problems added to the AC list; Solved is its size.
	Added, Solved int
	// Timed counts the problems already listed whose first-AC time was
	// filled in or moved earlier.
	Timed int
	// Backfill is true when the sync read the history from the start again
	// to fill in the first-AC times of a list stored without them.
	Backfill bool
	// ContestsAdvanced counts ADT contest records whose
	// last_fetched_submission_id was raised.
	ContestsAdvanced int
	// Finished is true when the sync reached the newest submission.
	Finished bool
}

func (s *Syncer) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

func (s *Syncer) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

// SyncUser brings one user's AC list up to date with AtCoder, continuing
// from the stored cursor. It returns ENOTFOUND when the user has no linked
// account, ECONFLICT when other syncs kept winning the race, and EINTERNAL
// (wrapping an *APIError) when the API fails; the failure is recorded on the
// link. Progress committed before an error is kept.
func (s *Syncer) SyncUser(ctx context.Context, userID string) (SyncReport, error) {
	return s.syncFrom(ctx, userID, nil, nil)
}

// syncFrom syncs from the given state (read by the caller, possibly stale),
// or from a fresh read when link is nil. A commit that loses a race starts
// over from a fresh, strongly consistent read.
func (s *Syncer) syncFrom(ctx context.Context, userID string, link *algoitny.AtCoderLink, ac *algoitny.ACList) (SyncReport, error) {
	rep := SyncReport{UserID: userID}
	for attempt := 0; ; attempt++ {
		if link == nil {
			var err error
			if link, ac, err = s.Store.GetAtCoderState(ctx, userID); err != nil {
				return rep, err
			}
		}
		if ac == nil {
			ac = &algoitny.ACList{}
		}
		rep.Handle = link.Handle
		err := s.run(ctx, link, ac, &rep)
		if err == nil {
			return rep, nil
		}
		if algoitny.IsCode(err, algoitny.ECONFLICT) && attempt < maxConflictRetries {
			link, ac = nil, nil
			continue
		}
		if ctx.Err() == nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
			s.recordFailure(ctx, link, err)
		}
		return rep, err
	}
}

// recordFailure notes err on the link (best effort: the error itself is
// what the caller reports).
func (s *Syncer) recordFailure(ctx context.Context, link *algoitny.AtCoderLink, err error) {
	f := algoitny.AtCoderSyncFailure{UserID: link.UserID, LinkID: link.LinkID, At: s.now(), Message: algoitny.ErrorMessage(err), Attempted: !IsTemporaryAPIError(err)}
	var ae *APIError
	if errors.As(err, &ae) {
		f.Message = ae.Error() // status and path only: nothing secret
	}
	if rerr := s.Store.RecordAtCoderSyncFailure(ctx, f); rerr != nil && !algoitny.IsCode(rerr, algoitny.ECONFLICT) {
		s.logger().Warn("atcoder: could not record a sync failure", "user", link.UserID, "err", rerr)
	}
}

// run pages through the submissions after link's cursor and commits each
// page with its cursor. An ECONFLICT means the state read is stale. A list
// stored without first-AC times (ACList.TimesRecorded false) is read again
// from the start: see "First-AC times" in the package documentation.
func (s *Syncer) run(ctx context.Context, link *algoitny.AtCoderLink, ac *algoitny.ACList, rep *SyncReport) error {
	cursor := link.Cursor
	version, acVersion := link.Version, ac.Version
	st := newACState(ac)
	// writeAC forces the first commit of a backfill to store the list with
	// times, so that a backfill interrupted later resumes from its cursor
	// instead of starting over.
	writeAC := false
	if ac.Version > 0 && !ac.TimesRecorded && len(ac.ProblemIDs) > 0 {
		rep.Backfill, writeAC = true, true
		s.logger().Info("atcoder: reading the history again for first-AC times", "user", link.UserID, "handle", link.Handle, "from", formatSecond(cursor.Second))
		cursor = algoitny.AtCoderCursor{}
	}
	contests := contestIndex{}
	for {
		subs, err := s.API.Submissions(ctx, link.Handle, cursor.Second)
		if err != nil {
			return err
		}
		rep.Calls++
		rep.Fetched += len(subs)
		fresh, next := advance(cursor, subs)
		if len(subs) >= SubmissionsPageSize && next.Second == cursor.Second {
			// A full page within one second: asking from that second again
			// would return the same page forever. More than 500 submissions
			// in one second cannot be listed by this API; move on.
			s.logger().Warn("atcoder: a full page of submissions within one second; skipping the rest of that second",
				"handle", link.Handle, "second", formatSecond(cursor.Second))
			next = algoitny.AtCoderCursor{Second: cursor.Second + 1}
		}
		added, timed := 0, 0
		for _, sub := range fresh {
			if sub.Result != resultAC || !validProblemID(sub.ProblemID) {
				continue
			}
			rep.NewAC++
			a, t := st.add(sub.ProblemID, sub.EpochSecond)
			if a {
				added++
			}
			if t {
				timed++
			}
		}
		rep.New += len(fresh)
		// Contest records first: if the commit below fails, the page is
		// fetched again and the (monotonic) updates are repeated harmlessly.
		n, err := s.advanceContests(ctx, contests, fresh)
		if err != nil {
			return err
		}
		rep.ContestsAdvanced += n
		done := len(subs) < SubmissionsPageSize
		c := algoitny.AtCoderSyncCommit{UserID: link.UserID, LinkID: link.LinkID, LinkVersion: version, Cursor: next, Finished: done, At: s.now()}
		changed := added > 0 || timed > 0 || writeAC
		if changed {
			c.AC = st.list(acVersion)
		}
		if err := s.Store.CommitAtCoderSync(ctx, c); err != nil {
			return err
		}
		version++
		if changed {
			acVersion++
			writeAC = false
			rep.Added += added
			rep.Timed += timed
		}
		cursor = next
		if done {
			rep.Finished = true
			rep.Solved = len(st)
			return nil
		}
	}
}

// advance returns the submissions of a page not processed yet (after
// cursor) and the cursor after the page. It does not assume the page is
// sorted.
func advance(cursor algoitny.AtCoderCursor, subs []Submission) ([]Submission, algoitny.AtCoderCursor) {
	seen := make(map[int64]bool, len(cursor.SeenIDs))
	for _, id := range cursor.SeenIDs {
		seen[id] = true
	}
	next := algoitny.AtCoderCursor{Second: cursor.Second, SeenIDs: slices.Clone(cursor.SeenIDs)}
	var fresh []Submission
	for _, sub := range subs {
		if sub.EpochSecond < cursor.Second || (sub.EpochSecond == cursor.Second && seen[sub.ID]) {
			continue
		}
		if sub.EpochSecond == cursor.Second {
			seen[sub.ID] = true // a page repeating an id is processed once
		}
		fresh = append(fresh, sub)
		switch {
		case sub.EpochSecond > next.Second:
			next = algoitny.AtCoderCursor{Second: sub.EpochSecond, SeenIDs: []int64{sub.ID}}
		case sub.EpochSecond == next.Second && !slices.Contains(next.SeenIDs, sub.ID):
			next.SeenIDs = append(next.SeenIDs, sub.ID)
		}
	}
	slices.Sort(next.SeenIDs)
	return fresh, next
}

// contestIndex caches the ADT records of the months one sync touched.
type contestIndex map[string][]algoitny.ADTContest

// find returns the record of contest id, loading the months it can start in.
func (s *Syncer) findContest(ctx context.Context, idx contestIndex, id string) (*algoitny.ADTContest, error) {
	for _, month := range adtMonthsOf(id) {
		cs, ok := idx[month]
		if !ok {
			var err error
			if cs, err = s.Store.ListADTContests(ctx, month); err != nil {
				return nil, err
			}
			idx[month] = cs
		}
		for i := range cs {
			if cs[i].ID == id {
				return &cs[i], nil
			}
		}
	}
	return nil, nil
}

// advanceContests raises last_fetched_submission_id of the ADT contests in
// fresh to the highest submission id seen for each, and returns how many
// records changed. Contests not discovered yet are skipped.
func (s *Syncer) advanceContests(ctx context.Context, idx contestIndex, fresh []Submission) (int, error) {
	maxID := map[string]int64{}
	for _, sub := range fresh {
		if _, _, ok := ParseADTContestID(sub.ContestID); ok && sub.ID > maxID[sub.ContestID] {
			maxID[sub.ContestID] = sub.ID
		}
	}
	ids := make([]string, 0, len(maxID))
	for id := range maxID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	advanced := 0
	for _, id := range ids {
		c, err := s.findContest(ctx, idx, id)
		if err != nil {
			return advanced, err
		}
		if c == nil || c.LastFetchedSubmissionID >= maxID[id] {
			continue
		}
		ok, err := s.Store.AdvanceADTContest(ctx, *c, maxID[id])
		if err != nil {
			return advanced, err
		}
		if ok {
			advanced++
			c.LastFetchedSubmissionID = maxID[id]
		}
	}
	return advanced, nil
}

// DiscoverReport says what DiscoverContests did.
type DiscoverReport struct {
	// ADT is the number of ADT contests the API listed, Added the number
	// newly recorded.
	ADT, Added int
}

// DiscoverContests records the ADT contests of the API's contest list that
// are not recorded yet, partitioned by month (UTC) of their start. Existing
// records are left alone, so their last_fetched_submission_id is kept. It
// returns EINTERNAL when the API or storage fails.
func (s *Syncer) DiscoverContests(ctx context.Context) (DiscoverReport, error) {
	var rep DiscoverReport
	all, err := s.API.Contests(ctx)
	if err != nil {
		return rep, err
	}
	byMonth := map[string]map[string]algoitny.ADTContest{}
	for _, c := range all {
		d, _, ok := ParseADTContestID(c.ID)
		if !ok {
			continue
		}
		ac := algoitny.ADTContest{ID: c.ID, Difficulty: d, Start: time.Unix(c.StartEpochSecond, 0).UTC(), Duration: time.Duration(c.DurationSecond) * time.Second, Title: c.Title}
		m := ac.Month()
		if byMonth[m] == nil {
			byMonth[m] = map[string]algoitny.ADTContest{}
		}
		if _, dup := byMonth[m][c.ID]; !dup {
			rep.ADT++
		}
		byMonth[m][c.ID] = ac
	}
	var added []algoitny.ADTContest
	months := make([]string, 0, len(byMonth))
	for m := range byMonth {
		months = append(months, m)
	}
	slices.Sort(months)
	for _, m := range months {
		existing, err := s.Store.ListADTContests(ctx, m)
		if err != nil {
			return rep, err
		}
		known := make(map[string]bool, len(existing))
		for _, c := range existing {
			known[c.ID] = true
		}
		for _, c := range byMonth[m] {
			if !known[c.ID] {
				added = append(added, c)
			}
		}
	}
	slices.SortFunc(added, func(a, b algoitny.ADTContest) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Difficulty, b.Difficulty), cmp.Compare(a.ID, b.ID))
	})
	if err := s.Store.PutADTContests(ctx, added); err != nil {
		return rep, err
	}
	rep.Added = len(added)
	return rep, nil
}

// SweepOptions bounds one run of Sweep.
type SweepOptions struct {
	// DueBefore selects the links to sync: those never attempted or last
	// attempted before it (the time the sweep began).
	DueBefore time.Time
	// Deadline is when the run stops starting new users (zero: never); the
	// next run continues with the users still due. Every run syncs at least
	// one user, so a run always makes progress.
	Deadline time.Time
}

// SweepReport says what one run of Sweep did.
type SweepReport struct {
	// Synced and Failed count users; Done is true when no user is due any more.
	Synced, Failed int
	Done           bool
}

// sweepPage is how many links Sweep reads (and AC lists it batch-gets) at once.
const sweepPage = 100

// Sweep syncs every linked user due, least recently attempted first, until
// none is due or the deadline passes. The AC lists of each page of links are
// read with one BatchGetItem (seed 004's "load existing AC records for
// merging"); each user's commit is still conditional, so stale reads only
// cost a retry. A user whose sync fails for their own reasons (a handle
// AtCoder does not know) is recorded and skipped; a failure of the API itself
// (429/5xx after retries) stops the run with that error so that River retries
// it later. It returns EINTERNAL when storage fails.
func (s *Syncer) Sweep(ctx context.Context, opts SweepOptions) (SweepReport, error) {
	var rep SweepReport
	attempted := 0
	page := algoitny.PageRequest{First: sweepPage}
	for {
		p, err := s.Store.ListAtCoderLinksDue(ctx, opts.DueBefore, page)
		if err != nil {
			return rep, err
		}
		userIDs := make([]string, len(p.Items))
		for i, l := range p.Items {
			userIDs[i] = l.UserID
		}
		lists, err := s.Store.GetACLists(ctx, userIDs)
		if err != nil {
			return rep, err
		}
		for _, link := range p.Items {
			if attempted > 0 && !opts.Deadline.IsZero() && !s.now().Before(opts.Deadline) {
				return rep, nil
			}
			attempted++
			ac := lists[link.UserID]
			r, err := s.syncFrom(ctx, link.UserID, link, ac)
			switch {
			case err == nil:
				rep.Synced++
				s.logger().Debug("atcoder: synced", "user", r.UserID, "handle", r.Handle, "new", r.New, "added", r.Added, "solved", r.Solved)
			case ctx.Err() != nil:
				return rep, ctx.Err()
			case algoitny.IsCode(err, algoitny.ENOTFOUND):
				// Unlinked since the page was read.
			case IsTemporaryAPIError(err):
				return rep, err
			default:
				rep.Failed++
				s.logger().Warn("atcoder: sync failed", "user", link.UserID, "handle", link.Handle, "err", err)
			}
		}
		if !p.HasNextPage {
			rep.Done = true
			return rep, nil
		}
		page.After = p.EndCursor
	}
}
