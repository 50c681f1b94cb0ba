package dynamo_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

// storeACList links userID to handle and commits ids as its AC list.
func storeACList(t testing.TB, db *dynamo.DB, userID, handle string, ids []string) *algoitny.AtCoderLink {
	t.Helper()
	ctx := context.Background()
	link, _, err := db.LinkAtCoder(ctx, userID, handle)
	algoitnytest.OK(t, err)
	algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{
		UserID: userID, LinkID: link.LinkID, LinkVersion: link.Version,
		Cursor: algoitny.AtCoderCursor{Second: 1}, AC: &algoitny.ACList{ProblemIDs: ids}, Finished: true, At: time.Now(),
	}))
	return link
}

// atcoderIDs returns n distinct problem ids shaped like AtCoder's, sorted.
func atcoderIDs(n int) []string {
	families := []string{"abc", "arc", "agc", "adt_all", "typical90", "past202412", "joi2024yo1a", "practice2"}
	ids := make([]string, 0, n)
	for i := 0; len(ids) < n; i++ {
		f := families[i%len(families)]
		ids = append(ids, fmt.Sprintf("%s%03d_%c", f, i/len(families)/7, 'a'+rune(i/len(families)%7)))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// seedListBytes is the size of ids as the seed's plain list attribute.
func seedListBytes(ids []string) int {
	n := len("ac_problems") + 3
	for _, id := range ids {
		n += len(id) + 1
	}
	return n
}

func TestAtCoderLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("LinkRelinkUnlink", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		link, changed, err := db.LinkAtCoder(ctx, "u1", "tourist")
		algoitnytest.OK(t, err)
		if !changed || link.Handle != "tourist" || link.LinkID == "" || link.Version != 0 || link.LastSyncedAt != nil {
			t.Fatalf("link %+v changed=%v", link, changed)
		}
		got := algoitnytest.Must[*algoitny.AtCoderLink](t)(db.GetAtCoderLink(ctx, "u1"))
		if got.Handle != "tourist" || got.LinkID != link.LinkID {
			t.Fatalf("got %+v", got)
		}
		storeACList(t, db, "u2", "chokudai", []string{"abc001_a"})

		// The same handle, in another case, is the same account.
		again, changed, err := db.LinkAtCoder(ctx, "u1", "Tourist")
		algoitnytest.OK(t, err)
		if changed || again.LinkID != link.LinkID || again.Handle != "tourist" {
			t.Fatalf("relink same handle: %+v changed=%v", again, changed)
		}
		algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "u1", LinkID: link.LinkID, AC: &algoitny.ACList{ProblemIDs: []string{"abc001_a", "abc001_b"}}, At: time.Now()}))

		// Another handle replaces the link and drops the old list.
		other, changed, err := db.LinkAtCoder(ctx, "u1", "rng_58")
		algoitnytest.OK(t, err)
		if !changed || other.LinkID == link.LinkID || other.Handle != "rng_58" {
			t.Fatalf("relink other handle: %+v changed=%v", other, changed)
		}
		l, ac, err := db.GetAtCoderState(ctx, "u1")
		algoitnytest.OK(t, err)
		if l.Handle != "rng_58" || len(ac.ProblemIDs) != 0 || ac.Version != 0 || l.Version != 0 {
			t.Fatalf("after relink: %+v %+v", l, ac)
		}

		algoitnytest.OK(t, db.UnlinkAtCoder(ctx, "u1"))
		_, err = db.GetAtCoderLink(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, _, err = db.GetAtCoderState(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.OK(t, db.UnlinkAtCoder(ctx, "u1")) // idempotent
		// The other user is untouched.
		if ac := algoitnytest.Must[*algoitny.ACList](t)(db.GetACList(ctx, "u2")); !slices.Equal(ac.ProblemIDs, []string{"abc001_a"}) {
			t.Fatalf("u2's list %v", ac.ProblemIDs)
		}
	})

	t.Run("CommitIsConditional", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		link, _, err := db.LinkAtCoder(ctx, "u1", "tourist")
		algoitnytest.OK(t, err)
		commit := func(linkID string, version, acVersion int64, ids ...string) error {
			c := algoitny.AtCoderSyncCommit{UserID: "u1", LinkID: linkID, LinkVersion: version, Cursor: algoitny.AtCoderCursor{Second: 100 + version, SeenIDs: []int64{7, 9}}, At: time.Now()}
			if ids != nil {
				c.AC = &algoitny.ACList{ProblemIDs: ids, Version: acVersion}
			}
			return db.CommitAtCoderSync(ctx, c)
		}
		algoitnytest.OK(t, commit(link.LinkID, 0, 0, "abc001_a"))
		algoitnytest.ErrCode(t, commit(link.LinkID, 0, 1, "abc001_b"), algoitny.ECONFLICT) // stale link version
		algoitnytest.ErrCode(t, commit(link.LinkID, 1, 0, "abc001_b"), algoitny.ECONFLICT) // stale list version
		algoitnytest.ErrCode(t, commit("other-link", 1, 1), algoitny.ECONFLICT)            // another link
		// The failed transactions changed nothing.
		l, ac, err := db.GetAtCoderState(ctx, "u1")
		algoitnytest.OK(t, err)
		if l.Version != 1 || ac.Version != 1 || !slices.Equal(ac.ProblemIDs, []string{"abc001_a"}) || l.Cursor.Second != 100 || !slices.Equal(l.Cursor.SeenIDs, []int64{7, 9}) {
			t.Fatalf("state %+v %+v", l, ac)
		}
		algoitnytest.OK(t, commit(link.LinkID, 1, 1, "abc001_a", "abc001_b"))
		algoitnytest.OK(t, commit(link.LinkID, 2, 0)) // cursor only
		l, ac, err = db.GetAtCoderState(ctx, "u1")
		algoitnytest.OK(t, err)
		if l.Version != 3 || ac.Version != 2 || len(ac.ProblemIDs) != 2 || l.Cursor.Second != 102 {
			t.Fatalf("state %+v %+v", l, ac)
		}
		// An empty cursor id list round-trips as empty.
		algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "u1", LinkID: link.LinkID, LinkVersion: 3, Cursor: algoitny.AtCoderCursor{Second: 5}, At: time.Now()}))
		if l := algoitnytest.Must[*algoitny.AtCoderLink](t)(db.GetAtCoderLink(ctx, "u1")); len(l.Cursor.SeenIDs) != 0 || l.Cursor.Second != 5 {
			t.Fatalf("cursor %+v", l.Cursor)
		}
		// Nothing to commit against once unlinked.
		algoitnytest.OK(t, db.UnlinkAtCoder(ctx, "u1"))
		algoitnytest.ErrCode(t, commit(link.LinkID, 4, 0), algoitny.ECONFLICT)
		algoitnytest.ErrCode(t, db.RecordAtCoderSyncFailure(ctx, algoitny.AtCoderSyncFailure{UserID: "u1", LinkID: link.LinkID, At: time.Now(), Message: "x"}), algoitny.ECONFLICT)
	})

	t.Run("DueLinksLeastRecentlyAttemptedFirst", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		t0 := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
		links := map[string]*algoitny.AtCoderLink{}
		for _, u := range []string{"u1", "u2", "u3", "u4"} {
			links[u] = algoitnytest.Must[*algoitny.AtCoderLink](t)(func() (*algoitny.AtCoderLink, error) {
				l, _, err := db.LinkAtCoder(ctx, u, "h_"+u)
				return l, err
			}())
		}
		// u2 synced at t0+1h, u4 failed at t0 (attempted), u3 failed on the API (not attempted).
		algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "u2", LinkID: links["u2"].LinkID, Finished: true, At: t0.Add(time.Hour)}))
		algoitnytest.OK(t, db.RecordAtCoderSyncFailure(ctx, algoitny.AtCoderSyncFailure{UserID: "u4", LinkID: links["u4"].LinkID, At: t0, Message: "HTTP 404", Attempted: true}))
		algoitnytest.OK(t, db.RecordAtCoderSyncFailure(ctx, algoitny.AtCoderSyncFailure{UserID: "u3", LinkID: links["u3"].LinkID, At: t0, Message: "HTTP 503"}))
		due := func(before time.Time, first int) []string {
			t.Helper()
			var ids []string
			page := algoitny.PageRequest{First: first}
			for {
				p := algoitnytest.Must[algoitny.Page[*algoitny.AtCoderLink]](t)(db.ListAtCoderLinksDue(ctx, before, page))
				for _, l := range p.Items {
					ids = append(ids, l.UserID)
				}
				if !p.HasNextPage {
					return ids
				}
				page.After = p.EndCursor
			}
		}
		if got := due(t0.Add(2*time.Hour), 1); !slices.Equal(got, []string{"u1", "u3", "u4", "u2"}) {
			t.Fatalf("due = %v", got)
		}
		if got := due(t0.Add(time.Hour), 2); !slices.Equal(got, []string{"u1", "u3", "u4"}) {
			t.Fatalf("due before the sync = %v", got)
		}
		l := algoitnytest.Must[*algoitny.AtCoderLink](t)(db.GetAtCoderLink(ctx, "u3"))
		if l.LastError != "HTTP 503" || l.LastAttemptAt != nil {
			t.Fatalf("u3 %+v", l)
		}
		// A finished sync clears the error.
		algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "u3", LinkID: links["u3"].LinkID, Finished: true, At: t0.Add(3 * time.Hour)}))
		if l := algoitnytest.Must[*algoitny.AtCoderLink](t)(db.GetAtCoderLink(ctx, "u3")); l.LastError != "" || l.LastSyncedAt == nil || !l.LastSyncedAt.Equal(t0.Add(3*time.Hour)) {
			t.Fatalf("u3 after sync %+v", l)
		}
		_, err := db.ListAtCoderLinksDue(ctx, t0, algoitny.PageRequest{First: 101})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
}

func TestACListStorage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)

	roundTrip := func(t *testing.T, userID string, ids []string) dynamo.ACItemInfo {
		t.Helper()
		storeACList(t, db, userID, "handle_"+userID, ids)
		got := algoitnytest.Must[*algoitny.ACList](t)(db.GetACList(ctx, userID))
		if !slices.Equal(got.ProblemIDs, ids) || got.Version != 1 {
			t.Fatalf("round trip: %d ids back of %d (version %d)", len(got.ProblemIDs), len(ids), got.Version)
		}
		_, ac, err := db.GetAtCoderState(ctx, userID)
		algoitnytest.OK(t, err)
		if !slices.Equal(ac.ProblemIDs, ids) {
			t.Fatal("state read differs")
		}
		return algoitnytest.Must[dynamo.ACItemInfo](t)(db.ACItemInfo(ctx, userID))
	}

	t.Run("SmallListIsTheSeedsList", func(t *testing.T) {
		t.Parallel()
		ids := atcoderIDs(100)
		info := roundTrip(t, "small", ids)
		if info.Encoding != "list" || info.Bytes < seedListBytes(ids) || info.Bytes > seedListBytes(ids)+300 {
			t.Fatalf("info %+v, list alone %d bytes", info, seedListBytes(ids))
		}
	})

	t.Run("TenThousandIDs", func(t *testing.T) {
		t.Parallel()
		ids := atcoderIDs(10_000)
		if len(ids) != 10_000 {
			t.Fatalf("%d ids", len(ids))
		}
		info := roundTrip(t, "heavy", ids)
		// As the seed's list this would be ~120 KB: 30 read units a strongly
		// consistent read. Compressed it is a fraction of that.
		t.Logf("10,000 ids: seed list %d bytes, stored %d bytes (%s)", seedListBytes(ids), info.Bytes, info.Encoding)
		if info.Encoding != "gzip" || info.Bytes > 32<<10 || info.Bytes*4 > seedListBytes(ids) {
			t.Fatalf("info %+v", info)
		}
	})

	t.Run("TenThousandLongIDsWouldExceedTheLimitAsAList", func(t *testing.T) {
		t.Parallel()
		ids := make([]string, 10_000)
		for i := range ids {
			ids[i] = fmt.Sprintf("a_very_long_contest_name_for_testing_%05d_ex", i)
		}
		const limit = 400 << 10
		if seedListBytes(ids) <= limit {
			t.Fatalf("the seed's list is only %d bytes; make the ids longer", seedListBytes(ids))
		}
		info := roundTrip(t, "long", ids)
		t.Logf("10,000 long ids: seed list %d bytes (over the %d-byte item limit), stored %d bytes", seedListBytes(ids), limit, info.Bytes)
		if info.Encoding != "gzip" || info.Bytes > limit/4 {
			t.Fatalf("info %+v", info)
		}
	})

	t.Run("IncompressibleListIsRefusedNotFailedInDynamoDB", func(t *testing.T) {
		t.Parallel()
		r := rand.New(rand.NewChaCha8([32]byte{9}))
		ids := make([]string, 20_000)
		b := make([]byte, 20)
		for i := range ids {
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			ids[i] = hex.EncodeToString(b)
		}
		slices.Sort(ids)
		link, _, err := db.LinkAtCoder(ctx, "random", "random_ids")
		algoitnytest.OK(t, err)
		err = db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "random", LinkID: link.LinkID, AC: &algoitny.ACList{ProblemIDs: ids}, At: time.Now()})
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		l, ac, err := db.GetAtCoderState(ctx, "random")
		algoitnytest.OK(t, err)
		if l.Version != 0 || len(ac.ProblemIDs) != 0 {
			t.Fatalf("a refused commit changed the state: %+v %d ids", l, len(ac.ProblemIDs))
		}
	})
}

func TestACListFirstACTimes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	commit := func(t *testing.T, userID string, l *algoitny.ACList) *algoitny.ACList {
		t.Helper()
		link, _, err := db.LinkAtCoder(ctx, userID, "h_"+userID)
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: userID, LinkID: link.LinkID, LinkVersion: link.Version, AC: l, At: time.Now()}))
		got := algoitnytest.Must[*algoitny.ACList](t)(db.GetACList(ctx, userID))
		_, state, err := db.GetAtCoderState(ctx, userID)
		algoitnytest.OK(t, err)
		lists := algoitnytest.Must[map[string]*algoitny.ACList](t)(db.GetACLists(ctx, []string{userID}))
		for _, other := range []*algoitny.ACList{state, lists[userID]} {
			if !slices.Equal(other.ProblemIDs, got.ProblemIDs) || !slices.Equal(other.FirstAC, got.FirstAC) || other.TimesRecorded != got.TimesRecorded {
				t.Fatalf("the reads disagree: %+v vs %+v", other, got)
			}
		}
		return got
	}
	timesOf := func(ids []string) []int64 {
		ts := make([]int64, len(ids))
		for i := range ts {
			ts[i] = 1_700_000_000 + int64(i)*86_400
		}
		ts[len(ts)/2] = 0 // unknown
		return ts
	}

	for _, n := range []int{3, 10_000} {
		t.Run(fmt.Sprintf("%dProblems", n), func(t *testing.T) {
			t.Parallel()
			ids := atcoderIDs(n)
			want := timesOf(ids)
			got := commit(t, fmt.Sprintf("times%d", n), &algoitny.ACList{ProblemIDs: ids, FirstAC: want, TimesRecorded: true})
			if !got.TimesRecorded || !slices.Equal(got.ProblemIDs, ids) || !slices.Equal(got.FirstAC, want) {
				t.Fatalf("round trip: recorded=%v, %d ids, %d times", got.TimesRecorded, len(got.ProblemIDs), len(got.FirstAC))
			}
			if s, found := got.FirstACOf(ids[0]); !found || s != want[0] {
				t.Fatalf("FirstACOf(%s) = %d %v", ids[0], s, found)
			}
			if _, found := got.FirstACOf("zzz_none"); found {
				t.Fatal("FirstACOf found a problem not in the list")
			}
			info := algoitnytest.Must[dynamo.ACItemInfo](t)(db.ACItemInfo(ctx, fmt.Sprintf("times%d", n)))
			t.Logf("%d problems with times: %d bytes (%s)", n, info.Bytes, info.Encoding)
			if (n == 3) != (info.Encoding == "list") || info.Bytes > 96<<10 {
				t.Fatalf("info %+v", info)
			}
		})
	}

	t.Run("ListWithoutTimesReadsAsNotRecorded", func(t *testing.T) {
		t.Parallel()
		// What the code before issue 20 stored: the ids only.
		got := commit(t, "legacy", &algoitny.ACList{ProblemIDs: []string{"abc100_a", "abc100_b"}})
		if got.TimesRecorded || got.FirstAC != nil || len(got.ProblemIDs) != 2 {
			t.Fatalf("legacy list %+v", got)
		}
		if s, found := got.FirstACOf("abc100_b"); !found || s != 0 {
			t.Fatalf("FirstACOf on a legacy list = %d %v", s, found)
		}
	})

	t.Run("MismatchedTimesAreRefused", func(t *testing.T) {
		t.Parallel()
		link, _, err := db.LinkAtCoder(ctx, "bad", "h_bad")
		algoitnytest.OK(t, err)
		err = db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: "bad", LinkID: link.LinkID, AC: &algoitny.ACList{ProblemIDs: []string{"a", "b"}, FirstAC: []int64{1}, TimesRecorded: true}, At: time.Now()})
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	})
}

func TestACListsBatchGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	const users = 250
	want := map[string][]string{}
	for i := range users {
		id := fmt.Sprintf("user%03d", i)
		want[id] = []string{fmt.Sprintf("abc%03d_a", i), fmt.Sprintf("abc%03d_b", i)}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for id, ids := range want {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			link, _, err := db.LinkAtCoder(ctx, id, "h"+id)
			if err == nil {
				err = db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: id, LinkID: link.LinkID, AC: &algoitny.ACList{ProblemIDs: ids}, At: time.Now()})
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	keys := slices.Sorted(maps.Keys(want))
	keys = append(keys, "nobody1", "nobody2", keys[0]) // unknown users and a duplicate
	cctx, counter := dynamo.WithRequestCounter(ctx)
	got, err := db.GetACLists(cctx, keys)
	algoitnytest.OK(t, err)
	if n := counter.Count(); n != 3 {
		t.Fatalf("%d requests for %d users, want 3 BatchGetItem calls of ≤100 keys", n, users)
	}
	if len(got) != users {
		t.Fatalf("%d lists, want %d", len(got), users)
	}
	for id, ids := range want {
		if l := got[id]; l == nil || !slices.Equal(l.ProblemIDs, ids) {
			t.Fatalf("%s: %+v", id, l)
		}
	}
	if _, ok := got["nobody1"]; ok {
		t.Fatal("an unknown user has a list")
	}
}

func TestADTContests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		algoitnytest.OK(t, err)
		return v
	}
	contest := func(id string, d algoitny.ADTDifficulty, start string) algoitny.ADTContest {
		return algoitny.ADTContest{ID: id, Difficulty: d, Start: at(start), Duration: 80 * time.Minute, Title: "AtCoder Daily Training " + id}
	}

	t.Run("MonthPartitionsAcrossTheNewYear", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		cs := []algoitny.ADTContest{
			contest("adt_all_20250102_1", algoitny.ADTAll, "2025-01-02T09:00:00Z"),
			contest("adt_all_20241231_3", algoitny.ADTAll, "2024-12-31T10:00:00Z"),
			// 01:00 JST on New Year's Day is still December in UTC.
			contest("adt_medium_20250101_1", algoitny.ADTMedium, "2024-12-31T16:00:00Z"),
			contest("adt_hard_20250101_2", algoitny.ADTHard, "2025-01-01T00:00:00Z"),
			contest("adt_easy_20241231_3", algoitny.ADTEasy, "2024-12-31T10:00:00Z"),
			contest("adt_easy_20241130_1", algoitny.ADTEasy, "2024-11-30T23:59:59Z"),
		}
		// Enough February contests for several BatchWriteItem calls.
		for i := range 60 {
			start := at("2025-02-01T08:00:00Z").Add(time.Duration(i/4) * 24 * time.Hour)
			d := algoitny.ADTDifficulty(i%4 + 1)
			cs = append(cs, algoitny.ADTContest{ID: fmt.Sprintf("adt_%s_202502%02d_1", map[algoitny.ADTDifficulty]string{1: "easy", 2: "medium", 3: "hard", 4: "all"}[d], i/4+1), Difficulty: d, Start: start, Duration: time.Hour})
		}
		algoitnytest.OK(t, db.PutADTContests(ctx, cs))
		ids := func(month string) []string {
			t.Helper()
			var out []string
			for _, c := range algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, month)) {
				out = append(out, c.ID)
			}
			return out
		}
		if got := ids("202412"); !slices.Equal(got, []string{"adt_easy_20241231_3", "adt_all_20241231_3", "adt_medium_20250101_1"}) {
			t.Fatalf("December: %v", got)
		}
		if got := ids("202501"); !slices.Equal(got, []string{"adt_hard_20250101_2", "adt_all_20250102_1"}) {
			t.Fatalf("January: %v", got)
		}
		if got := ids("202411"); !slices.Equal(got, []string{"adt_easy_20241130_1"}) {
			t.Fatalf("November: %v", got)
		}
		feb := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202502"))
		if len(feb) != 60 || !slices.IsSortedFunc(feb, func(a, b algoitny.ADTContest) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return int(a.Difficulty - b.Difficulty)
		}) {
			t.Fatalf("February: %d contests, sorted=%v", len(feb), feb)
		}
		if got := ids("202503"); len(got) != 0 {
			t.Fatalf("March: %v", got)
		}
		// Attributes round-trip.
		dec := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202412"))
		if c := dec[2]; c.Difficulty != algoitny.ADTMedium || !c.Start.Equal(at("2024-12-31T16:00:00Z")) || c.Duration != 80*time.Minute || c.Title == "" || c.Month() != "202412" {
			t.Fatalf("decoded %+v", c)
		}
	})

	t.Run("Problems", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := contest("adt_all_20250522_3", algoitny.ADTAll, "2025-05-22T10:00:00Z")
		algoitnytest.OK(t, db.PutADTContests(ctx, []algoitny.ADTContest{c}))
		if got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505")); got[0].Problems != nil {
			t.Fatalf("problems before any sync: %+v", got[0].Problems)
		}
		ps := []algoitny.ADTContestProblem{
			{ProblemID: "abc300_a", Index: "A", Title: "N-choice question", Difficulty: &algoitny.AtCoderDifficulty{Raw: -1012.5}},
			{ProblemID: "abc305_c", Index: "B", Title: "Snuke the Cookie Picker", Difficulty: &algoitny.AtCoderDifficulty{Raw: 812, IsExperimental: true}},
			{ProblemID: "abc310_g", Index: "C"}, // no title, no model
		}
		if !algoitnytest.Must[bool](t)(db.SetADTContestProblems(ctx, c, ps)) {
			t.Fatal("the record was not found")
		}
		algoitnytest.OK(t, db.PutADTContests(ctx, []algoitny.ADTContest{contest("adt_easy_20250523_1", algoitny.ADTEasy, "2025-05-23T10:00:00Z")}))
		cctx, counter := dynamo.WithRequestCounter(ctx)
		got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(cctx, "202505"))
		if counter.Count() != 1 || len(got) != 2 {
			t.Fatalf("%d requests, %d contests", counter.Count(), len(got))
		}
		if !reflect.DeepEqual(got[0].Problems, ps) || got[1].Problems != nil {
			t.Fatalf("problems %+v / %+v", got[0].Problems, got[1].Problems)
		}
		// Advancing the record keeps its problems; replacing them with none
		// stores an empty list.
		algoitnytest.Must[bool](t)(db.AdvanceADTContest(ctx, c, 5))
		if got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505")); len(got[0].Problems) != 3 || got[0].LastFetchedSubmissionID != 5 {
			t.Fatalf("after advancing %+v", got[0])
		}
		algoitnytest.Must[bool](t)(db.SetADTContestProblems(ctx, c, nil))
		if got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505")); got[0].Problems == nil || len(got[0].Problems) != 0 {
			t.Fatalf("after clearing %+v", got[0].Problems)
		}
		// A record that does not exist is not created; nor is one of another
		// contest at the same key overwritten.
		if algoitnytest.Must[bool](t)(db.SetADTContestProblems(ctx, contest("adt_hard_20250524_1", algoitny.ADTHard, "2025-05-24T10:00:00Z"), ps)) {
			t.Fatal("stored problems of a contest that is not recorded")
		}
		impostor := c
		impostor.ID = "adt_all_20250522_9"
		if algoitnytest.Must[bool](t)(db.SetADTContestProblems(ctx, impostor, ps)) {
			t.Fatal("stored problems into another contest's record")
		}
		if got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505")); len(got) != 2 {
			t.Fatalf("records %+v", got)
		}
	})

	t.Run("LastFetchedSubmissionIDOnlyGrows", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := contest("adt_all_20250522_3", algoitny.ADTAll, "2025-05-22T10:00:00Z")
		algoitnytest.OK(t, db.PutADTContests(ctx, []algoitny.ADTContest{c}))
		for _, step := range []struct {
			id   int64
			want bool
		}{{66203973, true}, {66200000, false}, {66203973, false}, {66300000, true}} {
			if got := algoitnytest.Must[bool](t)(db.AdvanceADTContest(ctx, c, step.id)); got != step.want {
				t.Fatalf("advance to %d = %v, want %v", step.id, got, step.want)
			}
		}
		got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505"))
		if len(got) != 1 || got[0].LastFetchedSubmissionID != 66300000 {
			t.Fatalf("records %+v", got)
		}
		missing := contest("adt_easy_20250523_1", algoitny.ADTEasy, "2025-05-23T10:00:00Z")
		if algoitnytest.Must[bool](t)(db.AdvanceADTContest(ctx, missing, 1)) {
			t.Fatal("advanced a contest that is not recorded")
		}
		if got := algoitnytest.Must[[]algoitny.ADTContest](t)(db.ListADTContests(ctx, "202505")); len(got) != 1 {
			t.Fatalf("the update created a record: %+v", got)
		}
	})
}
