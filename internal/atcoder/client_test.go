package atcoder_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
)

func TestClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SendsUserAgentAndQuery", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.AddSubmissions(atcodertest.Sub(1, 10, "Tourist", "abc100", "abc100_a", "AC"), atcodertest.Sub(2, 20, "Tourist", "abc100", "abc100_b", "WA"))
		c := newClient(t, srv, atcoder.ClientConfig{})
		subs := algoitnytest.Must[[]atcoder.Submission](t)(c.Submissions(ctx, "tourist", 15))
		if len(subs) != 1 || subs[0].ID != 2 || subs[0].ProblemID != "abc100_b" || subs[0].Result != "WA" || subs[0].ExecutionTime == nil {
			t.Fatalf("subs %+v", subs)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || reqs[0].User != "tourist" || reqs[0].FromSecond != 15 || reqs[0].UserAgent != atcoder.DefaultUserAgent {
			t.Fatalf("requests %+v", reqs)
		}
		custom := newClient(t, srv, atcoder.ClientConfig{UserAgent: "AlgoItnyTest/0"})
		algoitnytest.Must[[]atcoder.Submission](t)(custom.Submissions(ctx, "tourist", 0))
		if ua := srv.Requests()[1].UserAgent; ua != "AlgoItnyTest/0" {
			t.Fatalf("user agent %q", ua)
		}
	})

	t.Run("TooManyRequestsThenSuccessHonoursRetryAfter", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.AddSubmissions(atcodertest.Sub(1, 10, "u_1", "abc100", "abc100_a", "AC"))
		srv.FailNext(1, http.StatusTooManyRequests, "1")
		c := newClient(t, srv, atcoder.ClientConfig{})
		subs := algoitnytest.Must[[]atcoder.Submission](t)(c.Submissions(ctx, "u_1", 0))
		reqs := srv.Requests()
		if len(subs) != 1 || len(reqs) != 2 || reqs[0].Status != 429 || reqs[1].Status != 200 {
			t.Fatalf("subs %d, requests %+v", len(subs), reqs)
		}
		if gap := reqs[1].At.Sub(reqs[0].At); gap < 950*time.Millisecond {
			t.Fatalf("retried after %s, the server asked for 1 s", gap)
		}
	})

	t.Run("ServerErrorsRetriedWithBackoff", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.FailNext(2, http.StatusServiceUnavailable, "")
		c := newClient(t, srv, atcoder.ClientConfig{})
		algoitnytest.Must[[]atcoder.Submission](t)(c.Submissions(ctx, "u_1", 0))
		if n := len(srv.Requests()); n != 3 {
			t.Fatalf("%d requests, want 3", n)
		}
	})

	t.Run("GivesUpAfterMaxRetries", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.FailNext(10, http.StatusInternalServerError, "")
		c := newClient(t, srv, atcoder.ClientConfig{MaxRetries: 2})
		_, err := c.Submissions(ctx, "u_1", 0)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		var ae *atcoder.APIError
		if !errors.As(err, &ae) || ae.Status != 500 || !atcoder.IsTemporaryAPIError(err) {
			t.Fatalf("error %v", err)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Fatalf("%d requests, want 3", n)
		}
	})

	t.Run("ClientErrorsNotRetried", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.FailNext(1, http.StatusNotFound, "")
		c := newClient(t, srv, atcoder.ClientConfig{})
		_, err := c.Submissions(ctx, "u_1", 0)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if atcoder.IsTemporaryAPIError(err) || len(srv.Requests()) != 1 {
			t.Fatalf("err %v after %d requests", err, len(srv.Requests()))
		}
	})

	t.Run("LongRetryAfterFailsFast", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		srv.FailNext(1, http.StatusTooManyRequests, "3600")
		c := newClient(t, srv, atcoder.ClientConfig{})
		start := time.Now()
		_, err := c.Submissions(ctx, "u_1", 0)
		var ae *atcoder.APIError
		if !errors.As(err, &ae) || ae.RetryAfter != time.Hour || !ae.Temporary() || time.Since(start) > 5*time.Second {
			t.Fatalf("err %v after %s", err, time.Since(start))
		}
	})

	t.Run("RateIsSharedByConcurrentCallers", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		const interval = 40 * time.Millisecond
		c := newClient(t, srv, atcoder.ClientConfig{MinInterval: interval})
		start := time.Now()
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				if _, err := c.Submissions(ctx, "u_1", 0); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		// The limiter hands out start slots one interval apart; a call may
		// start late, never early, so the k-th call to arrive arrived at
		// least k intervals after the first slot.
		reqs := srv.Requests()
		times := make([]time.Time, len(reqs))
		for i, r := range reqs {
			times[i] = r.At
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for k, at := range times {
			if d := at.Sub(start); d < time.Duration(k)*interval {
				t.Fatalf("call %d arrived %s after the start, before its slot at %s", k, d, time.Duration(k)*interval)
			}
		}
	})

	t.Run("CancelledWhileWaitingForTheLimiter", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		c := newClient(t, srv, atcoder.ClientConfig{MinInterval: time.Hour})
		algoitnytest.Must[[]atcoder.Submission](t)(c.Submissions(ctx, "u_1", 0))
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := c.Submissions(cctx, "u_1", 0); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Fatalf("%d requests", n)
		}
	})

	t.Run("Contests", func(t *testing.T) {
		t.Parallel()
		srv := atcodertest.NewServer(t)
		want := []atcoder.Contest{
			{ID: "abc400", StartEpochSecond: 1743850800, DurationSecond: 6000, Title: "AtCoder Beginner Contest 400", RateChange: " ~ 1999"},
			{ID: "adt_all_20250522_3", StartEpochSecond: 1747904400, DurationSecond: 4800, Title: "AtCoder Daily Training ALL 2025/05/22 18:00start", RateChange: "-"},
		}
		srv.SetContests(want...)
		c := newClient(t, srv, atcoder.ClientConfig{})
		if got := algoitnytest.Must[[]atcoder.Contest](t)(c.Contests(ctx)); !slices.Equal(got, want) {
			t.Fatalf("contests %+v", got)
		}
	})

	t.Run("MalformedBodyNotRetried", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Write([]byte("<html>maintenance</html>"))
		}))
		t.Cleanup(bad.Close)
		c, err := atcoder.NewClient(atcoder.ClientConfig{BaseURL: bad.URL, MinInterval: time.Millisecond})
		algoitnytest.OK(t, err)
		_, err = c.Submissions(ctx, "u_1", 0)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if atcoder.IsTemporaryAPIError(err) || calls.Load() != 1 {
			t.Fatalf("err %v after %d calls", err, calls.Load())
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		for _, base := range []string{"ftp://example.com", "not a url", "/relative"} {
			_, err := atcoder.NewClient(atcoder.ClientConfig{BaseURL: base})
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
		srv := atcodertest.NewServer(t)
		c := newClient(t, srv, atcoder.ClientConfig{})
		_, err := c.Submissions(ctx, "x&user=other", 0)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		if len(srv.Requests()) != 0 {
			t.Fatal("an invalid handle reached the API")
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 5, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, header string
		want         time.Duration
	}{
		{"Seconds", "120", 2 * time.Minute},
		{"HTTPDate", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"DateInThePast", now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Empty", "", 0},
		{"Negative", "-5", 0},
		{"Garbage", "soon", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := atcoder.ParseRetryAfter(tc.header, now); got != tc.want {
				t.Fatalf("ParseRetryAfter(%q) = %s, want %s", tc.header, got, tc.want)
			}
		})
	}
}

func TestAdvance(t *testing.T) {
	t.Parallel()
	sub := func(id, sec int64) atcoder.Submission { return atcoder.Submission{ID: id, EpochSecond: sec} }
	ids := func(subs []atcoder.Submission) []int64 {
		out := []int64{}
		for _, s := range subs {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		cursor algoitny.AtCoderCursor
		page   []atcoder.Submission
		fresh  []int64
		next   algoitny.AtCoderCursor
	}{
		{"EmptyPage", algoitny.AtCoderCursor{Second: 5, SeenIDs: []int64{1}}, nil, []int64{}, algoitny.AtCoderCursor{Second: 5, SeenIDs: []int64{1}}},
		{"FirstPage", algoitny.AtCoderCursor{}, []atcoder.Submission{sub(1, 10), sub(2, 10), sub(3, 11), sub(4, 12), sub(5, 12)}, []int64{1, 2, 3, 4, 5}, algoitny.AtCoderCursor{Second: 12, SeenIDs: []int64{4, 5}}},
		{"BoundarySecondRepeated", algoitny.AtCoderCursor{Second: 12, SeenIDs: []int64{4, 5}}, []atcoder.Submission{sub(4, 12), sub(5, 12), sub(6, 12), sub(7, 13)}, []int64{6, 7}, algoitny.AtCoderCursor{Second: 13, SeenIDs: []int64{7}}},
		{"PageEndsInTheSameSecond", algoitny.AtCoderCursor{Second: 12, SeenIDs: []int64{4}}, []atcoder.Submission{sub(4, 12), sub(5, 12)}, []int64{5}, algoitny.AtCoderCursor{Second: 12, SeenIDs: []int64{4, 5}}},
		{"Unsorted", algoitny.AtCoderCursor{Second: 1}, []atcoder.Submission{sub(9, 30), sub(3, 2), sub(8, 30), sub(1, 0)}, []int64{9, 3, 8}, algoitny.AtCoderCursor{Second: 30, SeenIDs: []int64{8, 9}}},
		{"DuplicateInPage", algoitny.AtCoderCursor{Second: 7}, []atcoder.Submission{sub(2, 7), sub(2, 7)}, []int64{2}, algoitny.AtCoderCursor{Second: 7, SeenIDs: []int64{2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fresh, next := atcoder.Advance(tc.cursor, tc.page)
			if !slices.Equal(ids(fresh), tc.fresh) || next.Second != tc.next.Second || !slices.Equal(next.SeenIDs, tc.next.SeenIDs) {
				t.Fatalf("fresh %v next %+v, want %v %+v", ids(fresh), next, tc.fresh, tc.next)
			}
		})
	}
}

func TestParsing(t *testing.T) {
	t.Parallel()

	t.Run("Handles", func(t *testing.T) {
		t.Parallel()
		for _, h := range []string{"tourist", "rng_58", "abc", "A1234567890_bcde"} {
			algoitnytest.OK(t, atcoder.ValidateHandle(h))
		}
		for _, h := range []string{"", "ab", "A1234567890_bcdef", "bad-name", "two words", "ユーザー", "a&b=c"} {
			err := atcoder.ValidateHandle(h)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
			var e *algoitny.Error
			if !errors.As(err, &e) || e.Field != "handle" {
				t.Fatalf("%q: %v", h, err)
			}
		}
	})

	t.Run("ADTContestIDs", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			id   string
			d    algoitny.ADTDifficulty
			ok   bool
			day  string
			utcM []string
		}{
			{"adt_all_20250522_3", algoitny.ADTAll, true, "2025-05-22", []string{"202505"}},
			{"adt_easy_20250522_1", algoitny.ADTEasy, true, "2025-05-22", []string{"202505"}},
			{"adt_medium_20250101_2", algoitny.ADTMedium, true, "2025-01-01", []string{"202412", "202501"}},
			{"adt_hard_20241130_1", algoitny.ADTHard, true, "2024-11-30", []string{"202411"}},
			{"abc400", 0, false, "", nil},
			{"adt_extreme_20250522_1", 0, false, "", nil},
			{"adt_all_2025052_1", 0, false, "", nil},
		} {
			d, day, ok := atcoder.ParseADTContestID(tc.id)
			if ok != tc.ok || d != tc.d || (ok && day.Format("2006-01-02") != tc.day) || !slices.Equal(atcoder.ADTMonthsOf(tc.id), tc.utcM) {
				t.Fatalf("%s: %v %v %v months %v", tc.id, d, day, ok, atcoder.ADTMonthsOf(tc.id))
			}
		}
		if algoitny.ADTMedium.String() != "MEDIUM" || algoitnytest.Must[algoitny.ADTDifficulty](t)(algoitny.ParseADTDifficulty("hard")) != algoitny.ADTHard {
			t.Fatal("difficulty names")
		}
	})

	t.Run("Months", func(t *testing.T) {
		t.Parallel()
		if m := algoitnytest.Must[time.Time](t)(atcoder.ParseMonth("202412")); !m.Equal(time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("202412 = %s", m)
		}
		for _, m := range []string{"", "2024-12", "202413", "20241", "abcdef", "2024120"} {
			_, err := atcoder.ParseMonth(m)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
	})
}
