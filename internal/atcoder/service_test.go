package atcoder_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
	"github.com/algoitny/api/internal/dynamo"
)

// fakeQueue records sync requests; a user queued twice is AlreadyQueued.
type fakeQueue struct {
	mu     sync.Mutex
	queued []string
	err    error
}

func (q *fakeQueue) EnqueueSync(_ context.Context, userID string) (algoitny.AtCoderSyncResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return algoitny.AtCoderSyncResult{}, q.err
	}
	dup := slices.Contains(q.queued, userID)
	q.queued = append(q.queued, userID)
	return algoitny.AtCoderSyncResult{JobID: int64(len(q.queued)), AlreadyQueued: dup}, nil
}

func (q *fakeQueue) calls() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.queued)
}

func newService(t *testing.T) (*atcoder.Service, *dynamo.DB, *fakeQueue) {
	t.Helper()
	db := newDB(t)
	q := &fakeQueue{}
	return &atcoder.Service{Store: db, Queue: q}, db, q
}

// finishSync stores ids as userID's list, as a completed sync would.
func finishSync(t *testing.T, db *dynamo.DB, userID string, ids []string) {
	t.Helper()
	ctx := context.Background()
	l := algoitnytest.Must[*algoitny.AtCoderLink](t)(db.GetAtCoderLink(ctx, userID))
	algoitnytest.OK(t, db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: userID, LinkID: l.LinkID, LinkVersion: l.Version, AC: &algoitny.ACList{ProblemIDs: ids}, Finished: true, At: time.Now()}))
}

func TestService(t *testing.T) {
	t.Parallel()

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		t.Parallel()
		s, _, _ := newService(t)
		anon := context.Background()
		_, err := s.LinkAccount(anon, "tourist")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		algoitnytest.ErrCode(t, s.UnlinkAccount(anon), algoitny.EUNAUTHENTICATED)
		_, err = s.Handle(anon, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = s.Solved(anon, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = s.SolvedMany(anon, []string{"u1"})
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = s.SolvedBy(anon, "u1", []string{"abc100_a"})
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = s.SyncNow(anon)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		// The contest calendar is public.
		algoitnytest.Must[[]algoitny.ADTContest](t)(s.ADTContests(anon, "202505"))
	})

	t.Run("LinkAccount", func(t *testing.T) {
		t.Parallel()
		s, db, q := newService(t)
		ctx := as("u1", false)
		for _, h := range []string{"", "ab", "way_too_long_handle_", "no-dash", "a b c"} {
			_, err := s.LinkAccount(ctx, h)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
		l := algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		if l.Handle != "tourist" || l.UserID != "u1" {
			t.Fatalf("link %+v", l)
		}
		if h := algoitnytest.Must[string](t)(s.Handle(ctx, "u1")); h != "tourist" {
			t.Fatalf("handle %q", h)
		}
		// Linking queues a first sync; linking again before it ran asks again
		// (the queue dedupes), after it ran it does not.
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		finishSync(t, db, "u1", []string{"abc100_a"})
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "Tourist"))
		if got := q.calls(); !slices.Equal(got, []string{"u1", "u1"}) {
			t.Fatalf("queued %v", got)
		}
		// The link stands even when queueing fails; linking again retries.
		q.err = algoitny.Internal(errors.New("queue down"), "could not queue")
		_, err := s.LinkAccount(as("u2", false), "chokudai")
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if h := algoitnytest.Must[string](t)(s.Handle(as("u2", false), "u2")); h != "chokudai" {
			t.Fatalf("u2 handle %q", h)
		}
	})

	t.Run("ErrUnknownHandle", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.AddSubmissions(atcodertest.Sub(1, 10, "tourist", "abc100", "abc100_a", "AC"))
		s, _, q := newService(t)
		s.API = newClient(t, srv, atcoder.ClientConfig{MaxRetries: -1})
		ctx := as("u1", false)
		_, err := s.LinkAccount(ctx, "no_such_user")
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		if h := algoitnytest.Must[string](t)(s.Handle(ctx, "u1")); h != "" || len(q.calls()) != 0 {
			t.Fatalf("an unknown handle was linked (%q) or synced (%v)", h, q.calls())
		}
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "Tourist"))
		asked := len(srv.SubmissionRequests())
		// The handle linked already is not asked about again.
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		if n := len(srv.SubmissionRequests()); n != asked {
			t.Fatalf("%d calls to relink the same handle", n-asked)
		}
		// AtCoder Problems down: UNAVAILABLE, and the link stays as it was.
		srv.FailNext(1, http.StatusServiceUnavailable, "")
		_, err = s.LinkAccount(ctx, "chokudai")
		algoitnytest.ErrCode(t, err, algoitny.EUNAVAILABLE)
		if h := algoitnytest.Must[string](t)(s.Handle(ctx, "u1")); h != "Tourist" && h != "tourist" {
			t.Fatalf("handle %q after a failed check", h)
		}
	})

	t.Run("UnlinkAccount", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		ctx := as("u1", false)
		algoitnytest.OK(t, s.UnlinkAccount(ctx)) // nothing linked: fine
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		finishSync(t, db, "u1", []string{"abc100_a"})
		algoitnytest.OK(t, s.UnlinkAccount(ctx))
		if h := algoitnytest.Must[string](t)(s.Handle(ctx, "u1")); h != "" {
			t.Fatalf("handle after unlink %q", h)
		}
		_, err := s.Solved(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		if got := algoitnytest.Must[map[string]bool](t)(s.SolvedBy(ctx, "u1", []string{"abc100_a"})); got["abc100_a"] {
			t.Fatal("the list survived unlinking")
		}
	})

	t.Run("Solved", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		ctx := as("u1", false)
		_, err := s.Solved(ctx, "u1")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		got := algoitnytest.Must[algoitny.SolvedProblems](t)(s.Solved(ctx, "u1"))
		if got.Handle != "tourist" || got.Count != 0 || got.ProblemIDs == nil || got.LastSyncedAt != nil {
			t.Fatalf("before the first sync: %+v", got)
		}
		finishSync(t, db, "u1", []string{"abc100_a", "abc100_b"})
		got = algoitnytest.Must[algoitny.SolvedProblems](t)(s.Solved(ctx, "u1"))
		if got.Count != 2 || !slices.Equal(got.ProblemIDs, []string{"abc100_a", "abc100_b"}) || got.LastSyncedAt == nil {
			t.Fatalf("after a sync: %+v", got)
		}
	})

	t.Run("ErrForbiddenUnlessSelfOrStaff", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(as("u1", false), "tourist"))
		finishSync(t, db, "u1", []string{"abc100_a"})
		other := as("u2", false)
		_, err := s.Handle(other, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
		_, err = s.Solved(other, "u1")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
		_, err = s.SolvedBy(other, "u1", []string{"abc100_a"})
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
		_, err = s.SolvedMany(other, []string{"u2", "u1"})
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
		staff := as("admin", true)
		if got := algoitnytest.Must[algoitny.SolvedProblems](t)(s.Solved(staff, "u1")); got.Count != 1 {
			t.Fatalf("staff sees %+v", got)
		}
	})

	t.Run("SolvedByCostsOneRead", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		ctx := as("u1", false)
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist"))
		var solved, asked []string
		for i := range 100 {
			id := fmt.Sprintf("abc%03d_a", i)
			asked = append(asked, id)
			if i%2 == 0 {
				solved = append(solved, id)
			}
		}
		// Enough other problems that the list is stored compressed.
		finishSync(t, db, "u1", slices.Sorted(slices.Values(append(slices.Clone(solved), atcoderLikeIDs(3000)...))))
		cctx, counter := dynamo.WithRequestCounter(ctx)
		got := algoitnytest.Must[map[string]bool](t)(s.SolvedBy(cctx, "u1", asked))
		if n := counter.Count(); n != 1 {
			t.Fatalf("%d DynamoDB requests for 100 problems, want 1", n)
		}
		for i, id := range asked {
			if got[id] != (i%2 == 0) {
				t.Fatalf("%s solved = %v", id, got[id])
			}
		}
		// A user without a list has solved nothing, for the same price.
		cctx, counter = dynamo.WithRequestCounter(as("u9", false))
		got = algoitnytest.Must[map[string]bool](t)(s.SolvedBy(cctx, "u9", asked))
		if counter.Count() != 1 || len(got) != 100 || got[asked[0]] {
			t.Fatalf("unlinked user: %d requests, %v", counter.Count(), got)
		}
	})

	t.Run("SolvedMany", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		for i := range 3 {
			u := fmt.Sprintf("u%d", i)
			algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(as(u, false), fmt.Sprintf("handle_%d", i)))
			if i > 0 {
				finishSync(t, db, u, []string{fmt.Sprintf("abc%03d_a", i)})
			}
		}
		staff := as("admin", true)
		got := algoitnytest.Must[map[string]atcoder.ProblemSet](t)(s.SolvedMany(staff, []string{"u0", "u1", "u2", "nobody"}))
		if len(got) != 4 || len(got["u0"]) != 0 || !got["u1"].Has("abc001_a") || !got["u2"].Has("abc002_a") || got["u2"].Has("abc001_a") || len(got["nobody"]) != 0 {
			t.Fatalf("solved %v", got)
		}
		// Users may ask about themselves.
		own := algoitnytest.Must[map[string]atcoder.ProblemSet](t)(s.SolvedMany(as("u1", false), []string{"u1"}))
		if !slices.Equal(own["u1"].Sorted(), []string{"abc001_a"}) {
			t.Fatalf("own %v", own)
		}
		_, err := s.SolvedMany(staff, make([]string, atcoder.MaxSolvedMany+1))
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("SyncNow", func(t *testing.T) {
		t.Parallel()
		s, _, q := newService(t)
		ctx := as("u1", false)
		_, err := s.SyncNow(ctx)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.Must[*algoitny.AtCoderLink](t)(s.LinkAccount(ctx, "tourist")) // queues job 1
		res := algoitnytest.Must[algoitny.AtCoderSyncResult](t)(s.SyncNow(ctx))
		if res.Handle != "tourist" || !res.AlreadyQueued || res.JobID != 2 || res.LastSyncedAt != nil {
			t.Fatalf("result %+v", res)
		}
		if got := q.calls(); len(got) != 2 {
			t.Fatalf("queued %v", got)
		}
		unconfigured := &atcoder.Service{Store: s.Store}
		_, err = unconfigured.SyncNow(ctx)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	})

	t.Run("ADTContests", func(t *testing.T) {
		t.Parallel()
		s, db, _ := newService(t)
		ctx := context.Background()
		for _, m := range []string{"", "2025-05", "202513", "May 2025"} {
			_, err := s.ADTContests(ctx, m)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
		start := time.Date(2025, 5, 22, 9, 0, 0, 0, time.UTC)
		algoitnytest.OK(t, db.PutADTContests(ctx, []algoitny.ADTContest{
			{ID: "adt_all_20250522_3", Difficulty: algoitny.ADTAll, Start: start.Add(time.Hour), Duration: 80 * time.Minute},
			{ID: "adt_hard_20250522_1", Difficulty: algoitny.ADTHard, Start: start, Duration: 80 * time.Minute},
			{ID: "adt_easy_20250522_1", Difficulty: algoitny.ADTEasy, Start: start, Duration: 80 * time.Minute},
		}))
		var ids []string
		for _, c := range algoitnytest.Must[[]algoitny.ADTContest](t)(s.ADTContests(ctx, "202505")) {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, []string{"adt_easy_20250522_1", "adt_hard_20250522_1", "adt_all_20250522_3"}) {
			t.Fatalf("contests %v", ids)
		}
	})
}

// atcoderLikeIDs returns n ids shaped like AtCoder's that none of the tests ask about.
func atcoderLikeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("arc%03d_%c", i/6, 'a'+i%6)
	}
	return ids
}
