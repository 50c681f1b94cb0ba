package atcoder_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
)

// history returns n submissions of user, three a second from firstSecond, so
// that pages of 500 end in the middle of a second. Every third is accepted;
// problems cycle through 150, so most accepted problems are accepted again
// and again.
func history(user string, n int, firstID, firstSecond int64) []atcoder.Submission {
	results := []string{"AC", "WA", "TLE"}
	subs := make([]atcoder.Submission, n)
	for i := range subs {
		p := i % 150
		subs[i] = atcodertest.Sub(firstID+int64(i), firstSecond+int64(i/3), user, fmt.Sprintf("abc%03d", 100+p/6), fmt.Sprintf("abc%03d_%c", 100+p/6, 'a'+p%6), results[i%3])
	}
	return subs
}

// acOf returns the sorted distinct problems accepted in subs.
func acOf(subs []atcoder.Submission) []string {
	var ids []string
	for _, s := range subs {
		if s.Result == "AC" {
			ids = append(ids, s.ProblemID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func link(t testing.TB, b bundle, userID, handle string) {
	t.Helper()
	if _, _, err := b.db.LinkAtCoder(context.Background(), userID, handle); err != nil {
		t.Fatal(err)
	}
}

func acList(t testing.TB, b bundle, userID string) []string {
	t.Helper()
	return algoitnytest.Must[*algoitny.ACList](t)(b.db.GetACList(context.Background(), userID)).ProblemIDs
}

func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ManyPagesSharingSeconds", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		subs := history("tourist", 1234, 1000, 1_700_000_000)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "tourist")

		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		want := acOf(subs)
		if rep.Calls != 3 || rep.New != 1234 || rep.Fetched != 1238 || rep.NewAC != 412 || rep.Added != len(want) || rep.Solved != len(want) || !rep.Finished {
			t.Fatalf("report %+v (want %d problems)", rep, len(want))
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, want) {
			t.Fatalf("list %v, want %v", got, want)
		}
		// Each page asked from the last second of the previous one.
		var from []int64
		for _, r := range b.srv.SubmissionRequests() {
			from = append(from, r.FromSecond)
		}
		if !slices.Equal(from, []int64{0, subs[499].EpochSecond, subs[997].EpochSecond}) {
			t.Fatalf("from_second %v", from)
		}
		l := algoitnytest.Must[*algoitny.AtCoderLink](t)(b.db.GetAtCoderLink(ctx, "u1"))
		if l.LastSyncedAt == nil || l.LastAttemptAt == nil || l.LastError != "" || l.Cursor.Second != subs[1233].EpochSecond || !slices.Equal(l.Cursor.SeenIDs, []int64{subs[1233].ID}) {
			t.Fatalf("link %+v", l)
		}

		// New submissions, one in the very second the cursor stopped at.
		last := subs[1233].EpochSecond
		b.srv.AddSubmissions(
			atcodertest.Sub(5000, last, "tourist", "abc999", "abc999_z", "AC"),
			atcodertest.Sub(5001, last+5, "tourist", "abc999", "abc999_y", "WA"),
			atcodertest.Sub(5002, last+5, "tourist", "abc999", "abc999_y", "AC"),
			atcodertest.Sub(5003, last+6, "tourist", "abc100", "abc100_a", "AC"), // solved already
		)
		rep, err = b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.Calls != 1 || rep.New != 4 || rep.NewAC != 3 || rep.Added != 2 || rep.Solved != len(want)+2 {
			t.Fatalf("incremental report %+v", rep)
		}
		// Nothing new: one call, nothing processed.
		rep, err = b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.Calls != 1 || rep.New != 0 || rep.Added != 0 || rep.Fetched != 1 {
			t.Fatalf("idle report %+v", rep)
		}
	})

	t.Run("RestartContinuesWhereItStopped", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{MaxRetries: -1})
		subs := history("chokudai", 1234, 1000, 1_700_000_000)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "chokudai")

		b.srv.FailSubmissionsAfter(2, http.StatusBadGateway)
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if !atcoder.IsTemporaryAPIError(err) || rep.Calls != 2 || rep.New != 998 || rep.Finished {
			t.Fatalf("first run: %+v, %v", rep, err)
		}
		// Two pages are committed: the list, and the cursor in the middle of a second.
		l, ac, err := b.db.GetAtCoderState(ctx, "u1")
		algoitnytest.OK(t, err)
		if !slices.Equal(ac.ProblemIDs, acOf(subs[:998])) {
			t.Fatalf("list after two pages: %d problems, want %d", len(ac.ProblemIDs), len(acOf(subs[:998])))
		}
		if l.Cursor.Second != subs[997].EpochSecond || !slices.Equal(l.Cursor.SeenIDs, []int64{subs[996].ID, subs[997].ID}) {
			t.Fatalf("cursor %+v", l.Cursor)
		}
		if !strings.Contains(l.LastError, "502") || l.LastSyncedAt != nil || l.LastAttemptAt != nil {
			t.Fatalf("link after the failure %+v", l)
		}

		b.srv.Heal()
		before := len(b.srv.SubmissionRequests())
		rep, err = b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		reqs := b.srv.SubmissionRequests()[before:]
		if reqs[0].FromSecond != l.Cursor.Second {
			t.Fatalf("restarted from %d, want %d", reqs[0].FromSecond, l.Cursor.Second)
		}
		// Only the two submissions of the boundary second came again, and
		// were not processed again; every other one was processed exactly once.
		if rep.New != 1234-998 || rep.Fetched-rep.New != 2 || !rep.Finished {
			t.Fatalf("second run %+v", rep)
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, acOf(subs)) {
			t.Fatalf("final list %d problems, want %d", len(got), len(acOf(subs)))
		}
		if l := algoitnytest.Must[*algoitny.AtCoderLink](t)(b.db.GetAtCoderLink(ctx, "u1")); l.LastError != "" || l.LastSyncedAt == nil {
			t.Fatalf("link after the sync %+v", l)
		}
	})

	t.Run("TooManyRequestsThenSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		subs := history("u_429", 600, 1, 1_600_000_000)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "u_429")
		b.srv.FailNext(1, http.StatusTooManyRequests, "1")
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		reqs := b.srv.SubmissionRequests()
		if reqs[0].Status != 429 || len(reqs) != 3 || rep.Calls != 2 || rep.New != 600 {
			t.Fatalf("requests %+v report %+v", reqs, rep)
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, acOf(subs)) {
			t.Fatalf("list %v", got)
		}
	})

	t.Run("DuplicateAcceptedSubmissions", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		var subs []atcoder.Submission
		for i := range int64(10) {
			subs = append(subs, atcodertest.Sub(100+i, 1000+i/2, "dup", "abc100", "abc100_a", "AC"))
		}
		subs = append(subs, atcodertest.Sub(200, 2000, "dup", "abc100", "abc100_b", "WA"), atcodertest.Sub(201, 2000, "dup", "abc100", "abc100_b", "CE"))
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "dup")
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.NewAC != 10 || rep.Added != 1 || rep.Solved != 1 {
			t.Fatalf("report %+v", rep)
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, []string{"abc100_a"}) {
			t.Fatalf("list %v", got)
		}
	})

	t.Run("FullPageWithinOneSecond", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		var subs []atcoder.Submission
		for i := range int64(600) {
			subs = append(subs, atcodertest.Sub(i+1, 5000, "bot", "abc001", fmt.Sprintf("abc001_%c", 'a'+i%2), "AC"))
		}
		subs = append(subs, atcodertest.Sub(9999, 5001, "bot", "abc002", "abc002_a", "AC"))
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "bot")
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.Calls != 3 || !rep.Finished {
			t.Fatalf("report %+v", rep)
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, []string{"abc001_a", "abc001_b", "abc002_a"}) {
			t.Fatalf("list %v", got)
		}
	})

	t.Run("ConcurrentSyncsOfOneUser", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		subs := history("busy", 1500, 1, 1_650_000_000)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "busy")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = b.syncer.SyncUser(ctx, "u1") })
		}
		wg.Wait()
		succeeded := 0
		for _, err := range errs {
			switch {
			case err == nil:
				succeeded++
			case !algoitny.IsCode(err, algoitny.ECONFLICT):
				t.Fatal(err)
			}
		}
		if succeeded == 0 {
			t.Fatal("no sync succeeded")
		}
		if got := acList(t, b, "u1"); !slices.Equal(got, acOf(subs)) {
			t.Fatalf("list %d problems, want %d", len(got), len(acOf(subs)))
		}
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.New != 0 || rep.Calls != 1 {
			t.Fatalf("after the races: %+v", rep)
		}
	})

	t.Run("RelinkStartsOver", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		b.srv.AddSubmissions(atcodertest.Sub(1, 10, "first", "abc100", "abc100_a", "AC"), atcodertest.Sub(2, 10, "second", "abc200", "abc200_a", "AC"))
		link(t, b, "u1", "first")
		algoitnytest.Must[atcoder.SyncReport](t)(b.syncer.SyncUser(ctx, "u1"))
		link(t, b, "u1", "second")
		if got := acList(t, b, "u1"); len(got) != 0 {
			t.Fatalf("the old handle's list survived: %v", got)
		}
		algoitnytest.Must[atcoder.SyncReport](t)(b.syncer.SyncUser(ctx, "u1"))
		if got := acList(t, b, "u1"); !slices.Equal(got, []string{"abc200_a"}) {
			t.Fatalf("list %v", got)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		_, err := b.syncer.SyncUser(ctx, "nobody")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		if len(b.srv.Requests()) != 0 {
			t.Fatal("called the API for a user without a link")
		}
	})
}

func TestADTContestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, atcoder.ClientConfig{})
	unix := func(s string) int64 {
		v, err := time.Parse(time.RFC3339, s)
		algoitnytest.OK(t, err)
		return v.Unix()
	}
	b.srv.SetContests(
		atcoder.Contest{ID: "abc400", StartEpochSecond: unix("2025-04-05T12:00:00Z"), DurationSecond: 6000, Title: "AtCoder Beginner Contest 400", RateChange: " ~ 1999"},
		atcoder.Contest{ID: "adt_all_20250522_3", StartEpochSecond: unix("2025-05-22T09:00:00Z"), DurationSecond: 4800, Title: "AtCoder Daily Training ALL 2025/05/22 18:00start", RateChange: "-"},
		// Midnight JST on June 1st is still May in UTC.
		atcoder.Contest{ID: "adt_easy_20250601_1", StartEpochSecond: unix("2025-05-31T15:00:00Z"), DurationSecond: 4800, Title: "AtCoder Daily Training EASY 2025/06/01 00:00start", RateChange: "-"},
		atcoder.Contest{ID: "adt_hard_20250601_2", StartEpochSecond: unix("2025-06-01T09:00:00Z"), DurationSecond: 4800, Title: "AtCoder Daily Training HARD 2025/06/01 18:00start", RateChange: "-"},
	)
	rep := algoitnytest.Must[atcoder.DiscoverReport](t)(b.syncer.DiscoverContests(ctx))
	if rep.ADT != 3 || rep.Added != 3 {
		t.Fatalf("discovery %+v", rep)
	}
	if rep := algoitnytest.Must[atcoder.DiscoverReport](t)(b.syncer.DiscoverContests(ctx)); rep.Added != 0 {
		t.Fatalf("second discovery %+v", rep)
	}
	may := algoitnytest.Must[[]algoitny.ADTContest](t)(b.db.ListADTContests(ctx, "202505"))
	if len(may) != 2 || may[0].ID != "adt_all_20250522_3" || may[1].ID != "adt_easy_20250601_1" {
		t.Fatalf("May %+v", may)
	}

	sec := unix("2025-05-22T09:10:00Z")
	b.srv.AddSubmissions(
		atcodertest.Sub(100, sec, "alice", "adt_all_20250522_3", "abc300_a", "AC"),
		atcodertest.Sub(105, sec+60, "alice", "adt_all_20250522_3", "abc300_b", "WA"),
		atcodertest.Sub(103, sec+30, "alice", "adt_all_20250522_3", "abc300_c", "AC"),
		atcodertest.Sub(110, sec+90, "alice", "adt_easy_20250601_1", "abc301_a", "AC"),
		atcodertest.Sub(120, sec+95, "alice", "adt_all_20250101_9", "abc302_a", "AC"), // not discovered
		atcodertest.Sub(130, sec+99, "alice", "abc400", "abc400_a", "AC"),
		atcodertest.Sub(50, sec-99, "bob", "adt_all_20250522_3", "abc300_a", "AC"),
		atcodertest.Sub(60, sec-98, "bob", "adt_all_20250522_3", "abc300_b", "AC"),
	)
	link(t, b, "alice", "alice")
	link(t, b, "bob", "bob")
	if r := algoitnytest.Must[atcoder.SyncReport](t)(b.syncer.SyncUser(ctx, "alice")); r.ContestsAdvanced != 2 || r.Solved != 5 {
		t.Fatalf("alice %+v", r)
	}
	// Bob's older submissions do not lower the mark.
	if r := algoitnytest.Must[atcoder.SyncReport](t)(b.syncer.SyncUser(ctx, "bob")); r.ContestsAdvanced != 0 {
		t.Fatalf("bob %+v", r)
	}
	// Rediscovery keeps the marks.
	algoitnytest.Must[atcoder.DiscoverReport](t)(b.syncer.DiscoverContests(ctx))
	marks := map[string]int64{}
	for _, m := range []string{"202505", "202506"} {
		for _, c := range algoitnytest.Must[[]algoitny.ADTContest](t)(b.db.ListADTContests(ctx, m)) {
			marks[c.ID] = c.LastFetchedSubmissionID
		}
	}
	if marks["adt_all_20250522_3"] != 105 || marks["adt_easy_20250601_1"] != 110 || marks["adt_hard_20250601_2"] != 0 || len(marks) != 3 {
		t.Fatalf("marks %v", marks)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SyncsEveryDueUser", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		want := map[string][]string{}
		for i := range 5 {
			h := fmt.Sprintf("handle_%d", i)
			subs := history(h, 100*(i+1), int64(i*10_000), 1_600_000_000)
			b.srv.AddSubmissions(subs...)
			link(t, b, fmt.Sprintf("u%d", i), h)
			want[fmt.Sprintf("u%d", i)] = acOf(subs)
		}
		start := time.Now()
		rep, err := b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: start, Deadline: start.Add(time.Minute)})
		algoitnytest.OK(t, err)
		if rep.Synced != 5 || rep.Failed != 0 || !rep.Done {
			t.Fatalf("sweep %+v", rep)
		}
		for u, ids := range want {
			if got := acList(t, b, u); !slices.Equal(got, ids) {
				t.Fatalf("%s: %d problems, want %d", u, len(got), len(ids))
			}
		}
		// Everyone was attempted after start: nothing is due for that sweep.
		if rep := algoitnytest.Must[atcoder.SweepReport](t)(b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: start})); rep.Synced != 0 || !rep.Done {
			t.Fatalf("repeated sweep %+v", rep)
		}
		// Out of budget: each run still syncs one user, and runs continue
		// with the users still due until none is.
		again := time.Now()
		time.Sleep(2 * time.Millisecond) // attempts are kept to the millisecond
		for i := range 5 {
			rep := algoitnytest.Must[atcoder.SweepReport](t)(b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: again, Deadline: time.Now()}))
			if rep.Synced != 1 || rep.Done != (i == 4) {
				t.Fatalf("run %d without budget: %+v", i, rep)
			}
		}
	})

	t.Run("UserFailuresAreSkippedAPIFailuresStop", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{MaxRetries: -1})
		for i := range 3 {
			link(t, b, fmt.Sprintf("u%d", i), fmt.Sprintf("handle_%d", i))
		}
		b.srv.FailNext(1, http.StatusNotFound, "") // u0's call: AtCoder Problems refuses this user
		rep, err := b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: time.Now()})
		algoitnytest.OK(t, err)
		if rep.Synced != 2 || rep.Failed != 1 || !rep.Done {
			t.Fatalf("sweep %+v", rep)
		}
		if l := algoitnytest.Must[*algoitny.AtCoderLink](t)(b.db.GetAtCoderLink(ctx, "u0")); !strings.Contains(l.LastError, "404") || l.LastAttemptAt == nil || l.LastSyncedAt != nil {
			t.Fatalf("u0 %+v", l)
		}

		// The API is down: the run stops with a temporary error and the user
		// stays due, first in line for the retry.
		b.srv.FailNext(1, http.StatusServiceUnavailable, "")
		later := time.Now().Add(time.Hour)
		rep, err = b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: later})
		if !atcoder.IsTemporaryAPIError(err) || rep.Synced != 0 || rep.Done {
			t.Fatalf("sweep during an outage: %+v, %v", rep, err)
		}
		due := algoitnytest.Must[algoitny.Page[*algoitny.AtCoderLink]](t)(b.db.ListAtCoderLinksDue(ctx, later, algoitny.PageRequest{First: 10}))
		if len(due.Items) != 3 || !strings.Contains(due.Items[0].LastError, "503") {
			t.Fatalf("due after the outage: %+v", due.Items)
		}
		rep, err = b.syncer.Sweep(ctx, atcoder.SweepOptions{DueBefore: later})
		algoitnytest.OK(t, err)
		if rep.Synced != 3 || !rep.Done {
			t.Fatalf("sweep after the outage %+v", rep)
		}
	})
}

// firstACOf returns each accepted problem's earliest accepted second in subs.
func firstACOf(subs []atcoder.Submission) map[string]int64 {
	out := map[string]int64{}
	for _, s := range subs {
		if s.Result != "AC" {
			continue
		}
		if cur, ok := out[s.ProblemID]; !ok || s.EpochSecond < cur {
			out[s.ProblemID] = s.EpochSecond
		}
	}
	return out
}

// checkFirstAC fails unless userID's list holds exactly want's problems with
// want's times.
func checkFirstAC(t *testing.T, b bundle, userID string, want map[string]int64) {
	t.Helper()
	l := algoitnytest.Must[*algoitny.ACList](t)(b.db.GetACList(context.Background(), userID))
	if !l.TimesRecorded || len(l.ProblemIDs) != len(want) {
		t.Fatalf("list: recorded=%v, %d problems, want %d", l.TimesRecorded, len(l.ProblemIDs), len(want))
	}
	for id, sec := range want {
		if got, found := l.FirstACOf(id); !found || got != sec {
			t.Fatalf("first AC of %s = %d (listed %v), want %d", id, got, found, sec)
		}
	}
}

func TestFirstAC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("OutOfOrderAndDuplicateSubmissions", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		// 496 wrong answers, so that the first page (500) ends inside second
		// 5000, which holds two accepted submissions of abc100_b.
		var subs []atcoder.Submission
		for i := range int64(496) {
			subs = append(subs, atcodertest.Sub(10_000+i, 100+i, "ooo", "abc001", "abc001_a", "WA"))
		}
		subs = append(subs,
			atcodertest.Sub(50, 1000, "ooo", "abc100", "abc100_a", "WA"),
			atcodertest.Sub(40, 1001, "ooo", "abc100", "abc100_a", "AC"), // ids do not follow time
			atcodertest.Sub(10, 1005, "ooo", "abc100", "abc100_a", "AC"), // a later AC with a smaller id
			atcodertest.Sub(20_001, 5000, "ooo", "abc100", "abc100_b", "AC"),
			atcodertest.Sub(20_000, 5000, "ooo", "abc100", "abc100_b", "AC"), // same second: the page boundary
			atcodertest.Sub(20_002, 5001, "ooo", "abc100", "abc100_b", "AC"),
			atcodertest.Sub(70, 6000, "ooo", "abc100", "abc100_c", "CE"),
		)
		b.srv.AddSubmissions(subs...)
		b.srv.ReversePages(true)
		link(t, b, "u1", "ooo")
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		// Newest first within the page, abc100_a's AC at 1005 came before the
		// one at 1001, which moved its time earlier (Timed).
		if rep.Calls != 2 || rep.Added != 2 || rep.Timed != 1 || rep.NewAC != 5 {
			t.Fatalf("report %+v", rep)
		}
		checkFirstAC(t, b, "u1", map[string]int64{"abc100_a": 1001, "abc100_b": 5000})

		// Later: a new problem, and more accepted submissions of the old ones.
		b.srv.AddSubmissions(
			atcodertest.Sub(30_000, 7000, "ooo", "abc100", "abc100_a", "AC"),
			atcodertest.Sub(30_001, 7000, "ooo", "abc100", "abc100_c", "AC"),
			atcodertest.Sub(30_002, 7001, "ooo", "abc100", "abc100_c", "AC"),
		)
		rep, err = b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		// abc100_c entered at 7001 (newest first) and moved to 7000.
		if rep.Added != 1 || rep.Timed != 1 || rep.Backfill {
			t.Fatalf("second report %+v", rep)
		}
		want := map[string]int64{"abc100_a": 1001, "abc100_b": 5000, "abc100_c": 7000}
		checkFirstAC(t, b, "u1", want)
		b.srv.ReversePages(false)
		if got := firstACOf(append(subs, atcodertest.Sub(30_001, 7000, "ooo", "abc100", "abc100_c", "AC"))); !maps.Equal(got, want) {
			t.Fatalf("the test's own expectation is off: %v", got)
		}
	})

	// storeLegacy stores the list of subs as the code before first-AC times
	// did: the ids only, with the cursor at the end of the history.
	storeLegacy := func(t *testing.T, b bundle, userID string, subs []atcoder.Submission) {
		t.Helper()
		l := algoitnytest.Must[*algoitny.AtCoderLink](t)(b.db.GetAtCoderLink(ctx, userID))
		last := subs[len(subs)-1]
		algoitnytest.OK(t, b.db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{
			UserID: userID, LinkID: l.LinkID, LinkVersion: l.Version,
			Cursor: algoitny.AtCoderCursor{Second: last.EpochSecond, SeenIDs: []int64{last.ID}},
			AC:     &algoitny.ACList{ProblemIDs: acOf(subs)}, Finished: true, At: time.Now(),
		}))
		if got := algoitnytest.Must[*algoitny.ACList](t)(b.db.GetACList(ctx, userID)); got.TimesRecorded {
			t.Fatal("the legacy list has times")
		}
	}

	t.Run("ListWithoutTimesIsReadAgainFromTheStart", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{})
		subs := history("legacy", 1234, 1000, 1_700_000_000)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "legacy")
		storeLegacy(t, b, "u1", subs)

		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		want := firstACOf(subs)
		if !rep.Backfill || rep.Calls != 3 || rep.Added != 0 || rep.Timed != len(want) || rep.Solved != len(want) {
			t.Fatalf("backfill report %+v (%d problems)", rep, len(want))
		}
		if r := b.srv.SubmissionRequests(); r[0].FromSecond != 0 {
			t.Fatalf("the backfill asked from %d", r[0].FromSecond)
		}
		checkFirstAC(t, b, "u1", want)
		// Done once: the next sync continues from the cursor.
		rep, err = b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if rep.Backfill || rep.Calls != 1 || rep.New != 0 {
			t.Fatalf("after the backfill %+v", rep)
		}
	})

	t.Run("InterruptedBackfillResumesFromItsCursor", func(t *testing.T) {
		t.Parallel()
		b := setup(t, atcoder.ClientConfig{MaxRetries: -1})
		// A first page without any accepted submission, then the history.
		var subs []atcoder.Submission
		for i := range int64(500) {
			subs = append(subs, atcodertest.Sub(1+i, 1_600_000_000+i, "legacy2", "abc001", "abc001_a", "WA"))
		}
		subs = append(subs, history("legacy2", 1234, 1000, 1_700_000_000)...)
		b.srv.AddSubmissions(subs...)
		link(t, b, "u1", "legacy2")
		storeLegacy(t, b, "u1", subs)

		b.srv.FailSubmissionsAfter(1, http.StatusBadGateway)
		_, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		// The first page changed no problem, yet its commit stored the list
		// with times (all unknown so far): the backfill has begun.
		l := algoitnytest.Must[*algoitny.ACList](t)(b.db.GetACList(ctx, "u1"))
		if !l.TimesRecorded || !slices.Equal(l.ProblemIDs, acOf(subs)) || slices.ContainsFunc(l.FirstAC, func(s int64) bool { return s != 0 }) {
			t.Fatalf("after one page: %+v", l)
		}

		b.srv.Heal()
		before := len(b.srv.SubmissionRequests())
		rep, err := b.syncer.SyncUser(ctx, "u1")
		algoitnytest.OK(t, err)
		if r := b.srv.SubmissionRequests()[before]; r.FromSecond != subs[499].EpochSecond || rep.Backfill {
			t.Fatalf("resumed from %d (backfill again: %v), want %d", r.FromSecond, rep.Backfill, subs[499].EpochSecond)
		}
		checkFirstAC(t, b, "u1", firstACOf(subs))
	})
}
