// Package history holds the rules for reading users' executions: privacy
// (private code is for its owner and staff only), the public feed, and the
// merged feed of one's own and everyone else's public executions.
//
// An execution is public only while its problem is published: one made
// public stays as its owner set it (isCodePublic), but while its problem is
// deleted or back to a draft nobody else sees it — not in publicHistory, not
// in historyFeed, not by id — since a public execution shows its problem's
// title and every test's output. The rule is applied when reading (the
// problems of a page are read in one request), so it holds at once, for
// every execution, whatever order the writes happen in; the owner's choice
// takes effect again if the problem is published again.
package history

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// Store is what the service needs from storage.
type Store interface {
	GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
	// GetHistoriesAndProblems reads executions (from the table, never an
	// index) and problems in one request; missing ones are absent.
	GetHistoriesAndProblems(ctx context.Context, refs []algoitny.HistoryRef, problems []algoitny.ProblemRef) (map[algoitny.HistoryRef]*algoitny.SearchHistory, map[algoitny.ProblemRef]*algoitny.Problem, error)
	ListUserHistory(ctx context.Context, userID string, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	ListPublicHistory(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	SetHistoryVisibility(ctx context.Context, ref algoitny.HistoryRef, public bool) (*algoitny.SearchHistory, error)
	GetProblem(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
	GetUserStats(ctx context.Context, userID string) (*algoitny.UserStats, error)
	Leaderboard(ctx context.Context, n int) ([]algoitny.LeaderboardEntry, error)
	// GetUsersForDisplay may answer from a copy at most the store's
	// display bound old (the leaderboard's users).
	GetUsersForDisplay(ctx context.Context, emails []string) (map[string]*algoitny.User, error)
}

// Service applies the history rules on top of a Store.
type Service struct {
	Store Store
}

// Get returns an execution the actor may see (their own, a public one of a
// published problem, or any for staff). ENOTFOUND otherwise, so private
// items do not reveal they exist.
func (s *Service) Get(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error) {
	h, err := s.Store.GetHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	a := algoitny.ActorFrom(ctx)
	if !a.CanSeeHistory(h) {
		return nil, notFound()
	}
	if !a.OwnsOrStaff(h.UserID) { // seen because it is public
		p, err := s.Store.GetProblem(ctx, problemOf(h))
		if err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return nil, err
		}
		if p == nil || !p.IsPublished() {
			return nil, notFound()
		}
	}
	return h, nil
}

func notFound() error { return algoitny.Errorf(algoitny.ENOTFOUND, "history not found") }

func problemOf(h *algoitny.SearchHistory) algoitny.ProblemRef {
	return algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID}
}

// stillPublic returns, of items listed by the public index, the table's
// copy of each that is public now and of a published problem (see the
// package doc). The index (GSI1) is eventually consistent in DynamoDB: an
// execution made private a moment ago may still be listed there, with its
// code. The table's copy decides — an execution is security state, which no
// replica's cache serves stale (internal/dynamo/partitions.go) — and is what
// the page shows. The executions and their problems are read in one
// request (often answered from the cache).
func (s *Service) stillPublic(ctx context.Context, items []*algoitny.SearchHistory) (map[algoitny.HistoryRef]*algoitny.SearchHistory, error) {
	out := make(map[algoitny.HistoryRef]*algoitny.SearchHistory, len(items))
	if len(items) == 0 {
		return out, nil
	}
	refs := make([]algoitny.HistoryRef, len(items))
	var problems []algoitny.ProblemRef
	for i, h := range items {
		refs[i] = h.Ref()
		if p := problemOf(h); !slices.Contains(problems, p) {
			problems = append(problems, p) // an execution's problem never changes
		}
	}
	current, published, err := s.Store.GetHistoriesAndProblems(ctx, refs, problems)
	if err != nil {
		return nil, err
	}
	for ref, h := range current {
		if p := published[problemOf(h)]; h.IsCodePublic && p != nil && p.IsPublished() {
			out[ref] = h
		}
	}
	return out, nil
}

// dropNotPublic keeps, of a page of the public index, the executions that
// are public now (stillPublic), as the table has them. The page may come
// back short, even empty, with its end cursor and hasNextPage as read (like
// any filtered list).
func (s *Service) dropNotPublic(ctx context.Context, page algoitny.Page[*algoitny.SearchHistory]) (algoitny.Page[*algoitny.SearchHistory], error) {
	current, err := s.stillPublic(ctx, page.Items)
	if err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	out := algoitny.Page[*algoitny.SearchHistory]{EndCursor: page.EndCursor, HasNextPage: page.HasNextPage,
		StartCursor: page.StartCursor, HasPreviousPage: page.HasPreviousPage}
	for i, h := range page.Items {
		if c := current[h.Ref()]; c != nil {
			out.Items = append(out.Items, c)
			out.Cursors = append(out.Cursors, page.Cursors[i])
		}
	}
	return out, nil
}

// Mine pages through the signed-in user's executions, newest first.
// EUNAUTHENTICATED when anonymous.
func (s *Service) Mine(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	return s.Store.ListUserHistory(ctx, a.UserID(), f, page)
}

// Public pages through everyone's public executions of published problems,
// newest first (see the package doc). A page may hold fewer than first
// items, even none, with hasNextPage true.
func (s *Service) Public(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	p, err := s.Store.ListPublicHistory(ctx, f, page)
	if err != nil {
		return p, err
	}
	return s.dropNotPublic(ctx, p)
}

// SetVisibility makes the actor's own execution public or private (staff may
// change anyone's). ENOTFOUND for others' executions; EINVALID to make an
// execution of a draft (or deleted) problem public (Problem.IsPublished).
func (s *Service) SetVisibility(ctx context.Context, ref algoitny.HistoryRef, public bool) (*algoitny.SearchHistory, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	if !a.OwnsOrStaff(ref.UserID) {
		return nil, notFound()
	}
	if public {
		h, err := s.Store.GetHistory(ctx, ref)
		if err != nil {
			return nil, err
		}
		// Read fresh: the answer decides a write.
		p, err := s.Store.GetProblem(algoitny.WithFreshReads(ctx), algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})
		if err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return nil, err
		}
		if p == nil || !p.IsPublished() {
			return nil, algoitny.Invalid("isCodePublic", "executions of a draft or deleted problem cannot be public")
		}
	}
	return s.Store.SetHistoryVisibility(ctx, ref, public)
}

// feedCursor remembers where each source of the merged feed stopped.
type feedCursor struct {
	Own    string `json:"o,omitempty"`
	Public string `json:"p,omitempty"`
	// OwnDone and PublicDone mark exhausted sources.
	OwnDone    bool `json:"od,omitempty"`
	PublicDone bool `json:"pd,omitempty"`
}

func (c feedCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeFeedCursor(s string) (feedCursor, error) {
	var c feedCursor
	if s == "" {
		return c, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, algoitny.Invalid("after", "invalid cursor")
	}
	return c, nil
}

// Feed merges the actor's own executions with everyone else's public ones
// (of published problems), newest first, under one opaque cursor that
// remembers where each source stopped, so pages neither skip nor repeat
// items; a page may hold fewer than first items when one source's page ran
// out before the other's. Anonymous actors get the public feed.
func (s *Service) Feed(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	if page.IsBackward() { // a merge of two lists, each read forward
		return algoitny.Page[*algoitny.SearchHistory]{}, algoitny.ErrForwardOnly()
	}
	first, err := page.Validate()
	if err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	cur, err := decodeFeedCursor(page.After)
	if err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	a := algoitny.ActorFrom(ctx)
	if !a.SignedIn() {
		cur.OwnDone = true
	}
	src, err := s.readFeed(ctx, a, cur, first)
	if err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	m := feedMerge{feedSources: src, caller: a, cur: cur}
	m.merge(first)
	out := m.end()
	out.HasPreviousPage = page.After != ""
	return out, nil
}

// feedSources is one read of the feed's two sources.
type feedSources struct {
	own, public algoitny.Page[*algoitny.SearchHistory]
	// current holds the public items still public now, by reference.
	current map[algoitny.HistoryRef]*algoitny.SearchHistory
}

// readFeed reads up to first items from each live source after cur (the
// merge takes at most first), and which public ones are still public.
func (s *Service) readFeed(ctx context.Context, a *algoitny.Actor, cur feedCursor, first int) (feedSources, error) {
	var src feedSources
	var err error
	if !cur.OwnDone {
		if src.own, err = s.Store.ListUserHistory(ctx, a.UserID(), algoitny.HistoryFilter{}, algoitny.PageRequest{First: first, After: cur.Own}); err != nil {
			return src, err
		}
	}
	if !cur.PublicDone {
		// Unfiltered (a filter could make pages short, and the merge must
		// see each source's next items): the caller's own public
		// executions come in both and are taken from the own source only.
		if src.public, err = s.Store.ListPublicHistory(ctx, algoitny.HistoryFilter{}, algoitny.PageRequest{First: first, After: cur.Public}); err != nil {
			return src, err
		}
	}
	src.current, err = s.stillPublic(ctx, src.public.Items)
	return src, err
}

// feedMerge is the merge of one page of the feed: the sources read, the
// cursor as far as they were consumed (i and j items of the own and the
// public page), and the page so far.
type feedMerge struct {
	feedSources
	caller *algoitny.Actor
	cur    feedCursor
	i, j   int
	out    algoitny.Page[*algoitny.SearchHistory]
}

// merge takes up to first items, newest first, each with the cursor after
// it.
func (m *feedMerge) merge(first int) {
	own, public := m.own, m.public
	for len(m.out.Items) < first {
		ownHas, publicHas := m.i < len(own.Items), m.j < len(public.Items)
		// A source whose page is used up but that has more: its next items
		// may come first, so this page ends here (short, even empty) and
		// the next one reads on from where both sources stopped.
		if !ownHas && own.HasNextPage {
			if own.EndCursor != "" {
				m.cur.Own = own.EndCursor
			}
			return
		}
		if !publicHas && public.HasNextPage {
			if public.EndCursor != "" {
				m.cur.Public = public.EndCursor
			}
			return
		}
		if !ownHas && !publicHas {
			return
		}
		if publicHas && m.skipPublic(public.Items[m.j]) {
			m.cur.Public = public.Cursors[m.j]
			m.j++
			continue
		}
		if !publicHas || (ownHas && newer(own.Items[m.i], public.Items[m.j])) {
			m.out.Items = append(m.out.Items, own.Items[m.i])
			m.cur.Own = own.Cursors[m.i]
			m.i++
		} else {
			m.out.Items = append(m.out.Items, m.current[public.Items[m.j].Ref()])
			m.cur.Public = public.Cursors[m.j]
			m.j++
		}
		m.out.Cursors = append(m.out.Cursors, m.cur.encode())
	}
}

// skipPublic reports whether a public item stays out of the feed: the
// caller's own (taken from the own source), or no longer public now
// (nobody else sees it).
func (m *feedMerge) skipPublic(h *algoitny.SearchHistory) bool {
	return (m.caller.SignedIn() && h.UserID == m.caller.UserID()) || m.current[h.Ref()] == nil
}

// end returns the merged page with whether there is more and its end
// cursor, which marks each source exhausted when all of it was consumed
// and it has no next page.
func (m *feedMerge) end() algoitny.Page[*algoitny.SearchHistory] {
	out := m.out
	ownLeft := !m.cur.OwnDone && (m.i < len(m.own.Items) || m.own.HasNextPage)
	publicLeft := !m.cur.PublicDone && (m.j < len(m.public.Items) || m.public.HasNextPage)
	out.HasNextPage = ownLeft || publicLeft
	end := m.cur
	end.OwnDone, end.PublicDone = !ownLeft, !publicLeft
	if n := len(out.Cursors); n > 0 {
		out.Cursors[n-1] = end.encode()
		out.EndCursor, out.StartCursor = out.Cursors[n-1], out.Cursors[0]
	} else if out.HasNextPage {
		// Every item read was skipped: the next page starts after them.
		out.EndCursor = end.encode()
	}
	return out
}

// newer orders the feed: later first, ties broken by id for a stable order.
func newer(a, b *algoitny.SearchHistory) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// Stats returns a user's execution statistics (seed 001 #31) to the user
// themselves and staff; nil (no error) for anyone else, so a user's
// activity is theirs to see.
func (s *Service) Stats(ctx context.Context, userID string) (*algoitny.UserStats, error) {
	if !algoitny.ActorFrom(ctx).OwnsOrStaff(userID) {
		return nil, nil
	}
	return s.Store.GetUserStats(ctx, userID)
}

// DefaultLeaderboardSize is the leaderboard's length when none is asked.
const DefaultLeaderboardSize = 20

// Leaderboard returns the users who solved the most published problems
// (seed 001 #33), best first, at most first (1–100, 0 for the default);
// anyone may read it. Deactivated users are left out and the others ranked
// among themselves, so the list may hold fewer than first. EINVALID for
// first out of range.
func (s *Service) Leaderboard(ctx context.Context, first int) ([]algoitny.LeaderboardEntry, error) {
	if first == 0 {
		first = DefaultLeaderboardSize
	}
	if first < 1 || first > algoitny.MaxPageSize {
		return nil, algoitny.Invalid("first", "first must be between 1 and %d", algoitny.MaxPageSize)
	}
	entries, err := s.Store.Leaderboard(ctx, first)
	if err != nil || len(entries) == 0 {
		return entries, err
	}
	emails := make([]string, 0, len(entries))
	for _, e := range entries {
		emails = append(emails, strings.ToLower(e.UserEmail))
	}
	// Who is listed is display data, not a decision: a user deactivated on
	// another replica may stay listed up to the display bound (at once
	// gone on this one), and the read leaves the entries' authors warm.
	users, err := s.Store.GetUsersForDisplay(ctx, emails)
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if u := users[strings.ToLower(e.UserEmail)]; u == nil || !u.IsActive {
			continue
		}
		e.Rank = len(out) + 1
		if n := len(out); n > 0 && out[n-1].SolvedProblems == e.SolvedProblems {
			e.Rank = out[n-1].Rank
		}
		out = append(out, e)
	}
	return out, nil
}
