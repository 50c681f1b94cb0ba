package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

func newHistory(user string, platform algoitny.Platform, problem string, lang algoitny.Language, public bool) *algoitny.SearchHistory {
	return &algoitny.SearchHistory{
		UserID: user, UserEmail: user + "@example.com", Platform: platform, ProblemID: problem, ProblemTitle: "T" + problem,
		Language: lang, Code: "print(1)", IsCodePublic: public, PassedCount: 1, FailedCount: 1, TotalCount: 2,
		Verdict: algoitny.VerdictWrongAnswer,
		TestResults: []algoitny.TestResult{
			{TestCaseID: "a", Verdict: algoitny.VerdictAccepted, Output: "3", TimeMs: 4, MemoryKB: 900},
			{TestCaseID: "b", Verdict: algoitny.VerdictWrongAnswer, Output: "4", TimeMs: 5, MemoryKB: 901, Message: "expected 5"},
		},
	}
}

func historyProblems(hs []*algoitny.SearchHistory) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ProblemID)
	}
	return fmt.Sprint(out)
}

func TestHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// A filter that matches little reads a bounded number of items per page:
	// the page ends early (maybe empty) with hasNextPage, and following the
	// cursors still yields every match, in order, once.
	t.Run("FilteredPagesAreBounded", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		dynamo.BoundFilteredReads(db, 4, 2) // at most 2 calls of 4 items
		var want []string
		for i := range 20 {
			lang := algoitny.LanguagePython
			if i%7 == 0 { // 0, 7, 14
				lang = algoitny.LanguageC
			}
			h := newHistory("bounded", algoitny.PlatformBaekjoon, fmt.Sprint(1000+i), lang, true)
			algoitnytest.OK(t, db.CreateHistory(ctx, h))
			if lang == algoitny.LanguageC {
				want = append([]string{h.ProblemID}, want...) // newest first
			}
		}
		c := algoitny.LanguageC
		for _, list := range []struct {
			name string
			page func(ctx context.Context, p algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
		}{
			{"user", func(ctx context.Context, p algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListUserHistory(ctx, "bounded", algoitny.HistoryFilter{Language: &c}, p)
			}},
			{"public", func(ctx context.Context, p algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListPublicHistory(ctx, algoitny.HistoryFilter{Language: &c}, p)
			}},
		} {
			var got []string
			pages, short := 0, 0
			for after := ""; ; pages++ {
				if pages > 20 {
					t.Fatalf("%s: the pages never end", list.name)
				}
				rctx, counter := dynamo.WithRequestCounter(ctx)
				p, err := list.page(rctx, algoitny.PageRequest{First: 2, After: after})
				algoitnytest.OK(t, err)
				if n := counter.Count(); n > 2 {
					t.Fatalf("%s: a filtered page made %d DynamoDB requests, bound 2", list.name, n)
				}
				for _, h := range p.Items {
					got = append(got, h.ProblemID)
				}
				if len(p.Items) < 2 && p.HasNextPage {
					short++
				}
				if !p.HasNextPage {
					break
				}
				after = p.EndCursor
			}
			if strings.Join(got, ",") != strings.Join(want, ",") || short == 0 {
				t.Fatalf("%s: followed the cursors to %v (%d short pages), want %v and some short pages", list.name, got, short, want)
			}
		}
	})

	t.Run("CreateGetBatch", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		h := newHistory("u1", algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateHistory(ctx, h))
		got := algoitnytest.Must[*algoitny.SearchHistory](t)(db.GetHistory(ctx, h.Ref()))
		if got.ID != h.ID || got.UserEmail != "u1@example.com" || len(got.TestResults) != 2 || got.TestResults[1].Message != "expected 5" || got.Verdict != algoitny.VerdictWrongAnswer {
			t.Fatalf("got %+v", got)
		}
		if !got.CreatedAt.Equal(h.CreatedAt) {
			t.Fatalf("created %v, read %v", h.CreatedAt, got.CreatedAt)
		}
		// A job retrying its write with a pre-assigned id gets a conflict, not a duplicate.
		dup := *h
		algoitnytest.ErrCode(t, db.CreateHistory(ctx, &dup), algoitny.ECONFLICT)

		_, err := db.GetHistory(ctx, algoitny.HistoryRef{UserID: "u2", ID: h.ID})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.GetHistory(ctx, algoitny.HistoryRef{UserID: "u1", ID: "not-a-uuid"})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

		h2 := newHistory("u2", algoitny.PlatformBaekjoon, "1001", algoitny.LanguageC, true)
		algoitnytest.OK(t, db.CreateHistory(ctx, h2))
		many := algoitnytest.Must[map[algoitny.HistoryRef]*algoitny.SearchHistory](t)(db.GetHistories(ctx, []algoitny.HistoryRef{h.Ref(), h2.Ref(), {UserID: "u9", ID: h.ID}, {UserID: "x", ID: "junk"}}))
		if len(many) != 2 || many[h2.Ref()].ProblemID != "1001" {
			t.Fatalf("batch = %v", many)
		}
	})

	t.Run("ListsAndFeeds", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		// u1: 7 executions (odd ones public); u2: 3 (all public).
		for i := range 7 {
			platform := algoitny.PlatformBaekjoon
			if i >= 5 {
				platform = algoitny.PlatformAtCoder
			}
			algoitnytest.OK(t, db.CreateHistory(ctx, newHistory("u1", platform, fmt.Sprint(i), algoitny.LanguagePython, i%2 == 1)))
		}
		for i := range 3 {
			algoitnytest.OK(t, db.CreateHistory(ctx, newHistory("u2", algoitny.PlatformBaekjoon, fmt.Sprint(10+i), algoitny.LanguageCPP, true)))
		}
		// #7 own history over 3 pages, newest first.
		own, pages := listAll(t, 3, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, r)
		})
		if got := historyProblems(own); got != "[6 5 4 3 2 1 0]" || pages != 3 {
			t.Fatalf("own = %s in %d pages", got, pages)
		}
		// #11 filtered within the user's partition.
		ac := algoitny.PlatformAtCoder
		filtered, _ := listAll(t, 1, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{Platform: &ac}, r)
		})
		if got := historyProblems(filtered); got != "[6 5]" {
			t.Fatalf("filtered = %s", got)
		}
		// #8 public feed: only public items, everyone's, newest first.
		public, _ := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListPublicHistory(ctx, algoitny.HistoryFilter{}, r)
		})
		if got := historyProblems(public); got != "[12 11 10 5 3 1]" {
			t.Fatalf("public = %s", got)
		}
		cpp := algoitny.LanguageCPP
		publicCPP, _ := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListPublicHistory(ctx, algoitny.HistoryFilter{Language: &cpp}, r)
		})
		if got := historyProblems(publicCPP); got != "[12 11 10]" {
			t.Fatalf("public cpp = %s", got)
		}
		// GSI2 / GSI3 across users.
		byPlatform, _ := listAll(t, 4, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListHistoryByPlatform(ctx, algoitny.PlatformAtCoder, r)
		})
		if got := historyProblems(byPlatform); got != "[6 5]" {
			t.Fatalf("by platform = %s", got)
		}
		byLang, _ := listAll(t, 4, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListHistoryByLanguage(ctx, algoitny.LanguageCPP, r)
		})
		if got := historyProblems(byLang); got != "[12 11 10]" {
			t.Fatalf("by language = %s", got)
		}
		// Visibility toggles move items in and out of the feed.
		h := own[0] // problem 6, private
		algoitnytest.Must[*algoitny.SearchHistory](t)(db.SetHistoryVisibility(ctx, h.Ref(), true))
		algoitnytest.Must[*algoitny.SearchHistory](t)(db.SetHistoryVisibility(ctx, own[1].Ref(), false)) // problem 5
		public, _ = listAll(t, 10, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
			return db.ListPublicHistory(ctx, algoitny.HistoryFilter{}, r)
		})
		if got := historyProblems(public); got != "[12 11 10 6 3 1]" {
			t.Fatalf("public after toggles = %s", got)
		}
		_, err := db.SetHistoryVisibility(ctx, algoitny.HistoryRef{UserID: "u3", ID: h.ID}, true)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("Summaries", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		for i := range 5 {
			h := newHistory("u1", algoitny.PlatformBaekjoon, fmt.Sprint(i), algoitny.LanguagePython, i != 2)
			h.CompileMessage, h.Hints, h.MaxTimeMs = "warning", []string{"think"}, 40+i
			algoitnytest.OK(t, db.CreateHistory(ctx, h))
		}
		summaries := algoitny.WithHistorySummaries(ctx, true)
		py := algoitny.LanguagePython
		for name, list := range map[string]func(context.Context, algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error){
			"user": func(ctx context.Context, r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, r)
			},
			"public, filtered": func(ctx context.Context, r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListPublicHistory(ctx, algoitny.HistoryFilter{Language: &py}, r)
			},
			"platform": func(ctx context.Context, r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListHistoryByPlatform(ctx, algoitny.PlatformBaekjoon, r)
			},
			"language": func(ctx context.Context, r algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
				return db.ListHistoryByLanguage(ctx, py, r)
			},
		} {
			// Page by page: the same items, cursors and pages, without details.
			full, after, n := []*algoitny.SearchHistory{}, "", 0
			for {
				want := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(list(ctx, algoitny.PageRequest{First: 2, After: after}))
				got := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(list(summaries, algoitny.PageRequest{First: 2, After: after}))
				if !reflect.DeepEqual(got.Cursors, want.Cursors) || got.HasNextPage != want.HasNextPage || len(got.Items) != len(want.Items) {
					t.Fatalf("%s: summary page %+v, full page %+v", name, got, want)
				}
				for i, h := range got.Items {
					w := *want.Items[i]
					if w.Summary || w.Code == "" || len(w.TestResults) != 2 || len(w.Hints) != 1 || w.CompileMessage == "" {
						t.Fatalf("%s: a full read lacks details: %+v", name, w)
					}
					w.Code, w.CompileMessage, w.TestResults, w.Hints, w.Summary = "", "", []algoitny.TestResult{}, nil, true
					if !reflect.DeepEqual(*h, w) {
						t.Fatalf("%s: summary\n%+v\nwant\n%+v", name, *h, w)
					}
				}
				full, n = append(full, want.Items...), n+1
				if !want.HasNextPage {
					break
				}
				after = want.EndCursor
			}
			if len(full) < 4 || n < 2 {
				t.Fatalf("%s: %d items in %d pages", name, len(full), n)
			}
			// A list nested in a summary page may turn summaries off again.
			again := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(list(algoitny.WithHistorySummaries(summaries, false), algoitny.PageRequest{First: 1}))
			if h := again.Items[0]; h.Summary || h.Code == "" || len(h.TestResults) != 2 {
				t.Fatalf("%s: summaries turned off, still %+v", name, h)
			}
		}
	})

	t.Run("HintsAndStats", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		h := newHistory("u1", algoitny.PlatformBaekjoon, "1", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateHistory(ctx, h))
		algoitnytest.OK(t, db.CreateHistory(ctx, newHistory("u2", algoitny.PlatformBaekjoon, "1", algoitny.LanguagePython, false)))
		algoitnytest.OK(t, db.CreateHistory(ctx, newHistory("u2", algoitny.PlatformAtCoder, "1", algoitny.LanguageGo, false)))
		got := algoitnytest.Must[*algoitny.SearchHistory](t)(db.SetHints(ctx, h.Ref(), []string{"check overflow", "sort first"}))
		if !slices.Equal(got.Hints, []string{"check overflow", "sort first"}) {
			t.Fatalf("hints %v", got.Hints)
		}
		c := &algoitny.Counterexample{Input: "1\n2 3\n", ExpectedOutput: "5\n", ActualOutput: "6\n", Verdict: algoitny.VerdictWrongAnswer,
			Seed: 8, Args: []string{"8", "2"}, Shrunk: true}
		algoitnytest.Must[*algoitny.SearchHistory](t)(db.SetCounterexample(ctx, h.Ref(), c))
		got = algoitnytest.Must[*algoitny.SearchHistory](t)(db.GetHistory(ctx, h.Ref()))
		if got.Counterexample == nil || !reflect.DeepEqual(*got.Counterexample, *c) || len(got.Hints) != 2 {
			t.Fatalf("counterexample %+v", got.Counterexample)
		}
		page := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(db.ListUserHistory(algoitny.WithHistorySummaries(ctx, true), "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{First: 10}))
		if len(page.Items) != 1 || page.Items[0].Counterexample != nil {
			t.Fatalf("a summary with its counterexample: %+v", page.Items)
		}
		_, err := db.SetCounterexample(ctx, algoitny.HistoryRef{UserID: "u1", ID: "nope"}, c)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		stats := algoitnytest.Must[[]algoitny.ExecutionStat](t)(db.ExecutionStats(ctx))
		want := []algoitny.ExecutionStat{{Platform: "atcoder", Language: "go", Count: 1}, {Platform: "baekjoon", Language: "python", Count: 2}}
		if !slices.Equal(stats, want) {
			t.Fatalf("stats %v, want %v", stats, want)
		}
	})
}

// An execution belongs to a running job: once the job is cancelled (by its
// owner or by the deletion of the account) a worker that finishes late
// cannot add it to a partition that was emptied.
func TestHistoryOfAJobNeedsItRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	u := &algoitny.User{Email: "u1@example.com", IsActive: true}
	algoitnytest.OK(t, db.CreateUser(ctx, u, nil))
	job := func() *algoitny.Job {
		j, _, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: u.ID, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Language: algoitny.LanguagePython})
		algoitnytest.OK(t, err)
		return j
	}
	forJob := func(j *algoitny.Job) *algoitny.SearchHistory {
		h := newHistory(u.ID, algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
		h.JobID = j.ID
		return h
	}

	pending := job()
	algoitnytest.ErrCode(t, db.CreateHistory(ctx, forJob(pending)), algoitny.ECONFLICT)
	running := job()
	algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, running.ID, algoitny.JobTransition{Status: algoitny.JobProcessing}))
	h := forJob(running)
	algoitnytest.OK(t, db.CreateHistory(ctx, h))
	dup := *h
	algoitnytest.ErrCode(t, db.CreateHistory(ctx, &dup), algoitny.ECONFLICT)

	late := job()
	algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, late.ID, algoitny.JobTransition{Status: algoitny.JobProcessing}))
	algoitnytest.OK(t, db.DeleteAccount(ctx, u))
	if j, err := db.GetJob(ctx, late.ID); err == nil {
		t.Fatalf("job of a deleted account left: %+v", j)
	}
	algoitnytest.ErrCode(t, db.CreateHistory(ctx, forJob(late)), algoitny.ECONFLICT)
	if n, err := db.CountUserItems(ctx, u.ID); err != nil || n != 0 {
		t.Fatalf("%d items left (%v)", n, err)
	}
}
