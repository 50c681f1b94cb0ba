package history_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/history"
)

// listStore is an in-memory Store of executions, newest first.
type listStore struct {
	history.Store                           // the methods the feed does not use
	all           []*algoitny.SearchHistory // newest first
	// unpublished problems (by id); every other problem is published.
	unpublished map[string]bool
	// problemReads counts GetHistoriesAndProblems calls.
	problemReads int
	// table holds executions as the table has them when they differ from
	// all (what the public index lists): an index that lags.
	table map[algoitny.HistoryRef]*algoitny.SearchHistory
}

func (s *listStore) GetHistoriesAndProblems(_ context.Context, refs []algoitny.HistoryRef, problems []algoitny.ProblemRef) (map[algoitny.HistoryRef]*algoitny.SearchHistory, map[algoitny.ProblemRef]*algoitny.Problem, error) {
	s.problemReads++
	hs := map[algoitny.HistoryRef]*algoitny.SearchHistory{}
	for _, r := range refs {
		if h := s.table[r]; h != nil {
			hs[r] = h
			continue
		}
		for _, h := range s.all {
			if h.Ref() == r {
				hs[r] = h
			}
		}
	}
	ps := map[algoitny.ProblemRef]*algoitny.Problem{}
	for _, r := range problems {
		ps[r] = &algoitny.Problem{Platform: r.Platform, ProblemID: r.ProblemID, IsCompleted: !s.unpublished[r.ProblemID]}
	}
	return hs, ps, nil
}

func (s *listStore) ListUserHistory(_ context.Context, userID string, _ algoitny.HistoryFilter, p algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return s.page(p, len(s.all), func(h *algoitny.SearchHistory) bool { return h.UserID == userID })
}

func (s *listStore) ListPublicHistory(_ context.Context, f algoitny.HistoryFilter, p algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	if f != (algoitny.HistoryFilter{}) {
		return algoitny.Page[*algoitny.SearchHistory]{}, fmt.Errorf("the feed filtered the public list (%+v): its pages could come back short", f)
	}
	return s.page(p, len(s.all), func(h *algoitny.SearchHistory) bool { return h.IsCodePublic })
}

// page reads at most scan items after the cursor (an index into all) and
// returns those that match, up to p.First.
func (s *listStore) page(p algoitny.PageRequest, scan int, match func(*algoitny.SearchHistory) bool) (algoitny.Page[*algoitny.SearchHistory], error) {
	i := 0
	if p.After != "" {
		n, err := strconv.Atoi(p.After)
		if err != nil {
			return algoitny.Page[*algoitny.SearchHistory]{}, err
		}
		i = n + 1
	}
	var out algoitny.Page[*algoitny.SearchHistory]
	for read := 0; i < len(s.all); i++ {
		if read == scan {
			out.HasNextPage, out.EndCursor = true, strconv.Itoa(i-1)
			return out, nil
		}
		read++
		if !match(s.all[i]) {
			continue
		}
		if len(out.Items) == p.First {
			out.HasNextPage = true
			return out, nil
		}
		out.Items = append(out.Items, s.all[i])
		out.Cursors = append(out.Cursors, strconv.Itoa(i))
		out.EndCursor = strconv.Itoa(i)
	}
	return out, nil
}

// TestFeedMergesOwnAndPublic: the feed merges the caller's executions with
// everyone else's public ones newest first, each once — the caller's own
// public executions, which come in both sources, included — across pages,
// even when runs of the caller's own public executions fill whole pages of
// the public list.
func TestFeedMergesOwnAndPublic(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &listStore{}
	var want []string
	for i := range 40 {
		h := &algoitny.SearchHistory{ID: fmt.Sprintf("h%02d", 40-i), CreatedAt: t0.Add(time.Duration(40-i) * time.Minute)}
		switch {
		case i%10 < 7: // runs of the caller's own public executions
			h.UserID, h.IsCodePublic = "me", true
		case i%10 == 7:
			h.UserID = "me" // private
		case i%10 == 8:
			h.UserID, h.IsCodePublic = "other", true
		default:
			h.UserID = "other" // private: not in the feed
		}
		store.all = append(store.all, h)
		if h.UserID == "me" || h.IsCodePublic {
			want = append(want, h.ID)
		}
	}
	svc := &history.Service{Store: store}
	ctx := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "me"}})
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 40 {
			t.Fatal("the feed never ends")
		}
		p, err := svc.Feed(ctx, algoitny.PageRequest{First: 3, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Items {
			got = append(got, h.ID)
		}
		if !p.HasNextPage {
			break
		}
		after = p.EndCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("feed:\n%s\nwant:\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// TestUnpublishedProblemsLeaveThePublicLists: public executions of a problem
// that is deleted or back to a draft leave publicHistory and everyone
// else's feed (their owner still has them), even when they fill whole
// pages; the problems of a page are read in one request.
func TestUnpublishedProblemsLeaveThePublicLists(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &listStore{unpublished: map[string]bool{"gone": true}}
	var wantPublic, wantMine []string
	for i := range 30 {
		h := &algoitny.SearchHistory{ID: fmt.Sprintf("h%02d", 30-i), CreatedAt: t0.Add(time.Duration(30-i) * time.Minute), IsCodePublic: true, UserID: "other", ProblemID: "ok"}
		if i >= 5 && i < 20 { // a run longer than several pages
			h.ProblemID = "gone"
		}
		if i%7 == 3 {
			h.UserID = "me"
		}
		store.all = append(store.all, h)
		if h.ProblemID == "ok" {
			wantPublic = append(wantPublic, h.ID)
		}
		if h.ProblemID == "ok" || h.UserID == "me" {
			wantMine = append(wantMine, h.ID)
		}
	}
	svc := &history.Service{Store: store}
	collect := func(t *testing.T, next func(after string) (algoitny.Page[*algoitny.SearchHistory], error)) []string {
		t.Helper()
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			if pages > 40 {
				t.Fatal("the list never ends")
			}
			p, err := next(after)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range p.Items {
				got = append(got, h.ID)
			}
			if !p.HasNextPage {
				return got
			}
			if p.EndCursor == "" || p.EndCursor == after {
				t.Fatalf("page %d does not move on (end cursor %q)", pages, p.EndCursor)
			}
			after = p.EndCursor
		}
	}
	me := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "me"}})
	anon := context.Background()
	if got := collect(t, func(after string) (algoitny.Page[*algoitny.SearchHistory], error) {
		return svc.Public(anon, algoitny.HistoryFilter{}, algoitny.PageRequest{First: 3, After: after})
	}); !slices.Equal(got, wantPublic) {
		t.Fatalf("public:\n%s\nwant:\n%s", strings.Join(got, " "), strings.Join(wantPublic, " "))
	}
	if got := collect(t, func(after string) (algoitny.Page[*algoitny.SearchHistory], error) {
		return svc.Feed(anon, algoitny.PageRequest{First: 3, After: after})
	}); !slices.Equal(got, wantPublic) {
		t.Fatalf("anonymous feed:\n%s\nwant:\n%s", strings.Join(got, " "), strings.Join(wantPublic, " "))
	}
	if got := collect(t, func(after string) (algoitny.Page[*algoitny.SearchHistory], error) {
		return svc.Feed(me, algoitny.PageRequest{First: 3, After: after})
	}); !slices.Equal(got, wantMine) {
		t.Fatalf("my feed:\n%s\nwant:\n%s", strings.Join(got, " "), strings.Join(wantMine, " "))
	}
	reads := store.problemReads
	if _, err := svc.Public(anon, algoitny.HistoryFilter{}, algoitny.PageRequest{First: 20}); err != nil || store.problemReads != reads+1 {
		t.Fatalf("a page of 20 read problems %d times (%v)", store.problemReads-reads, err)
	}
}

// TestIndexLagDoesNotLeakPrivateCode: DynamoDB's indexes are eventually
// consistent, so the public index may still list an execution its owner
// made private a moment ago, with its code. The public list and the feed
// show what the table holds now: not that execution, and the table's copy
// of the others.
func TestIndexLagDoesNotLeakPrivateCode(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*algoitny.SearchHistory
	for i := range 4 {
		all = append(all, &algoitny.SearchHistory{ID: fmt.Sprintf("h%d", i), UserID: "bob", Platform: algoitny.PlatformBaekjoon,
			ProblemID: "1000", IsCodePublic: true, Code: fmt.Sprintf("code %d", i), CreatedAt: at.Add(-time.Duration(i) * time.Minute)})
	}
	private := *all[1]
	private.IsCodePublic = false
	renamed := *all[2]
	renamed.Code = "code 2, as stored now"
	store := &listStore{all: all, table: map[algoitny.HistoryRef]*algoitny.SearchHistory{all[1].Ref(): &private, all[2].Ref(): &renamed}}
	svc := &history.Service{Store: store}
	anon := context.Background()
	check := func(what string, p algoitny.Page[*algoitny.SearchHistory], err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range p.Items {
			got = append(got, h.Code)
		}
		if want := []string{"code 0", "code 2, as stored now", "code 3"}; !slices.Equal(got, want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	p, err := svc.Public(anon, algoitny.HistoryFilter{}, algoitny.PageRequest{First: 10})
	check("publicHistory", p, err)
	p, err = svc.Feed(anon, algoitny.PageRequest{First: 10})
	check("historyFeed", p, err)
}
