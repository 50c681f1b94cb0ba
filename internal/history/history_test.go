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
