// Package history holds the rules for reading users' executions: privacy
// (private code is for its owner and staff only), the public feed, and the
// merged feed of one's own and everyone else's public executions.
package history

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/algoitny/api/internal/algoitny"
)

// Store is what the service needs from storage.
type Store interface {
	GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
	ListUserHistory(ctx context.Context, userID string, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	ListPublicHistory(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	SetHistoryVisibility(ctx context.Context, ref algoitny.HistoryRef, public bool) (*algoitny.SearchHistory, error)
	GetProblem(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
}

// Service applies the history rules on top of a Store.
type Service struct {
	Store Store
}

// Get returns an execution the actor may see (their own, a public one, or
// any for staff). ENOTFOUND otherwise, so private items do not reveal they exist.
func (s *Service) Get(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error) {
	h, err := s.Store.GetHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !algoitny.ActorFrom(ctx).CanSeeHistory(h) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	return h, nil
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

// Public pages through everyone's public executions, newest first.
func (s *Service) Public(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return s.Store.ListPublicHistory(ctx, f, page)
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
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
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

// Feed merges the actor's own executions with everyone else's public ones,
// newest first, under one opaque cursor that remembers where each source
// stopped, so pages neither skip nor repeat items. Anonymous actors get the
// public feed.
func (s *Service) Feed(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
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
	// Read up to first items from each live source; the merge takes at most first.
	var own, public algoitny.Page[*algoitny.SearchHistory]
	if !cur.OwnDone {
		if own, err = s.Store.ListUserHistory(ctx, a.UserID(), algoitny.HistoryFilter{}, algoitny.PageRequest{First: first, After: cur.Own}); err != nil {
			return algoitny.Page[*algoitny.SearchHistory]{}, err
		}
	}
	if !cur.PublicDone {
		// Unfiltered (a filter could make pages short, and the merge must
		// see each source's next items): the caller's own public
		// executions come in both and are taken from the own source only.
		if public, err = s.Store.ListPublicHistory(ctx, algoitny.HistoryFilter{}, algoitny.PageRequest{First: first, After: cur.Public}); err != nil {
			return algoitny.Page[*algoitny.SearchHistory]{}, err
		}
	}
	out := algoitny.Page[*algoitny.SearchHistory]{}
	i, j := 0, 0
	for len(out.Items) < first && (i < len(own.Items) || j < len(public.Items)) {
		if j < len(public.Items) && a.SignedIn() && public.Items[j].UserID == a.UserID() {
			cur.Public = public.Cursors[j] // the caller's own: from the own source
			j++
			continue
		}
		takeOwn := j >= len(public.Items) || (i < len(own.Items) && newer(own.Items[i], public.Items[j]))
		if takeOwn {
			out.Items = append(out.Items, own.Items[i])
			cur.Own = own.Cursors[i]
			i++
		} else {
			out.Items = append(out.Items, public.Items[j])
			cur.Public = public.Cursors[j]
			j++
		}
		out.Cursors = append(out.Cursors, cur.encode())
	}
	// A source is exhausted when all of it was consumed and it has no next page.
	ownLeft := !cur.OwnDone && (i < len(own.Items) || own.HasNextPage)
	publicLeft := !cur.PublicDone && (j < len(public.Items) || public.HasNextPage)
	if n := len(out.Cursors); n > 0 {
		end := cur
		end.OwnDone, end.PublicDone = !ownLeft, !publicLeft
		out.Cursors[n-1] = end.encode()
		out.EndCursor = out.Cursors[n-1]
	}
	out.HasNextPage = ownLeft || publicLeft
	return out, nil
}

// newer orders the feed: later first, ties broken by id for a stable order.
func newer(a, b *algoitny.SearchHistory) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}
