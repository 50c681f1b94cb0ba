package atcoder_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
)

// utc parses an RFC 3339 time.
func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// listAt builds an AC list of one problem per time (unknown for "").
func listAt(t testing.TB, times ...string) *algoitny.ACList {
	t.Helper()
	l := &algoitny.ACList{TimesRecorded: true}
	for i, s := range times {
		l.ProblemIDs = append(l.ProblemIDs, fmt.Sprintf("abc%03d_a", i))
		var sec int64
		if s != "" {
			sec = utc(t, s).Unix()
		}
		l.FirstAC = append(l.FirstAC, sec)
	}
	return l
}

func TestStreak(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		times []string
		now   string
		want  algoitny.AtCoderStreak
	}{
		{"Nothing", nil, "2025-05-22T00:00:00Z", algoitny.AtCoderStreak{}},
		{
			// 14:30 UTC is 23:30 JST; 15:30 UTC is 00:30 JST of the next day.
			"TwoDaysAcrossMidnightJST", []string{"2025-05-21T14:30:00Z", "2025-05-21T15:30:00Z"}, "2025-05-22T03:00:00Z",
			algoitny.AtCoderStreak{Current: 2, Longest: 2, Days: 2, LastDay: "2025-05-22"},
		},
		{
			// The same two UTC days are one JST day: 00:30 and 23:30 JST of the 22nd.
			"OneDayJSTAcrossMidnightUTC", []string{"2025-05-21T15:30:00Z", "2025-05-22T14:30:00Z"}, "2025-05-22T03:00:00Z",
			algoitny.AtCoderStreak{Current: 1, Longest: 1, Days: 1, LastDay: "2025-05-22"},
		},
		{
			"LastSecondOfTheJSTDay", []string{"2025-05-21T14:59:59Z", "2025-05-21T15:00:00Z"}, "2025-05-22T03:00:00Z",
			algoitny.AtCoderStreak{Current: 2, Longest: 2, Days: 2, LastDay: "2025-05-22"},
		},
		{
			// Streak days 19–21 May (JST); "now" is 22 May 10:00 JST: the
			// streak ends yesterday and still counts.
			"CurrentEndingYesterday", []string{"2025-05-19T03:00:00Z", "2025-05-20T03:00:00Z", "2025-05-20T05:00:00Z", "2025-05-21T03:00:00Z"}, "2025-05-22T01:00:00Z",
			algoitny.AtCoderStreak{Current: 3, Longest: 3, Days: 3, LastDay: "2025-05-21"},
		},
		{
			// 22 May 23:59:59 JST: yesterday is still the 21st.
			"CurrentAtTheLastSecondOfToday", []string{"2025-05-19T03:00:00Z", "2025-05-20T03:00:00Z", "2025-05-21T03:00:00Z"}, "2025-05-22T14:59:59Z",
			algoitny.AtCoderStreak{Current: 3, Longest: 3, Days: 3, LastDay: "2025-05-21"},
		},
		{
			// 23 May 00:00 JST (22 May 15:00 UTC): the 22nd passed without a
			// new AC, the streak is broken.
			"BrokenAtMidnightJST", []string{"2025-05-19T03:00:00Z", "2025-05-20T03:00:00Z", "2025-05-21T03:00:00Z"}, "2025-05-22T15:00:00Z",
			algoitny.AtCoderStreak{Current: 0, Longest: 3, Days: 3, LastDay: "2025-05-21"},
		},
		{
			// A gap (the 18th) splits the runs; the current one is shorter
			// than the longest.
			"CurrentShorterThanLongest", []string{"2025-05-14T03:00:00Z", "2025-05-15T03:00:00Z", "2025-05-16T03:00:00Z", "2025-05-17T03:00:00Z", "2025-05-19T03:00:00Z", "2025-05-20T03:00:00Z"}, "2025-05-20T10:00:00Z",
			algoitny.AtCoderStreak{Current: 2, Longest: 4, Days: 6, LastDay: "2025-05-20"},
		},
		{
			"UnknownTimesCountForNothing", []string{"", "2025-05-20T03:00:00Z", ""}, "2025-05-20T10:00:00Z",
			algoitny.AtCoderStreak{Current: 1, Longest: 1, Days: 1, LastDay: "2025-05-20", Uncounted: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := atcoder.Streak(listAt(t, tc.times...), utc(t, tc.now)); got != tc.want {
				t.Fatalf("streak %+v, want %+v", got, tc.want)
			}
		})
	}
	// A list stored before times were kept counts every problem as unknown.
	legacy := &algoitny.ACList{ProblemIDs: []string{"abc100_a", "abc100_b"}}
	if got := atcoder.Streak(legacy, time.Now()); got != (algoitny.AtCoderStreak{Uncounted: 2}) {
		t.Fatalf("legacy list %+v", got)
	}
}

// TestStreakFromTheFakeServer syncs submissions from the fake AtCoder
// Problems server and reads the streak through the service, with a fixed
// clock.
func TestStreakFromTheFakeServer(t *testing.T) {
	t.Parallel()
	b := setup(t, atcoder.ClientConfig{})
	sec := func(s string) int64 { return utc(t, s).Unix() }
	b.srv.AddSubmissions(
		// 19 May JST: a new AC.
		atcodertest.Sub(1, sec("2025-05-19T01:00:00Z"), "streaker", "abc100", "abc100_a", "AC"),
		// 20 May 23:30 JST and 21 May 00:30 JST: two days.
		atcodertest.Sub(2, sec("2025-05-20T14:30:00Z"), "streaker", "abc100", "abc100_b", "AC"),
		atcodertest.Sub(3, sec("2025-05-20T15:30:00Z"), "streaker", "abc100", "abc100_c", "AC"),
		// 22 May JST: only a problem solved before and a wrong answer, so
		// no streak day.
		atcodertest.Sub(4, sec("2025-05-22T01:00:00Z"), "streaker", "abc100", "abc100_a", "AC"),
		atcodertest.Sub(5, sec("2025-05-22T02:00:00Z"), "streaker", "abc100", "abc100_d", "WA"),
	)
	link(t, b, "u1", "streaker")
	algoitnytest.Must[atcoder.SyncReport](t)(b.syncer.SyncUser(context.Background(), "u1"))

	var now time.Time
	s := &atcoder.Service{Store: b.db, Now: func() time.Time { return now }}
	for _, step := range []struct {
		now  string
		want algoitny.AtCoderStreak
	}{
		// 22 May 10:00 JST: the run 19–21 May ends yesterday.
		{"2025-05-22T01:00:00Z", algoitny.AtCoderStreak{Current: 3, Longest: 3, Days: 3, LastDay: "2025-05-21"}},
		// 23 May 00:00 JST: the 22nd had no new AC, the streak is broken.
		{"2025-05-22T15:00:00Z", algoitny.AtCoderStreak{Current: 0, Longest: 3, Days: 3, LastDay: "2025-05-21"}},
	} {
		now = utc(t, step.now)
		got := algoitnytest.Must[algoitny.SolvedProblems](t)(s.Solved(as("u1", false), "u1"))
		if got.Streak != step.want {
			t.Fatalf("at %s: streak %+v, want %+v", step.now, got.Streak, step.want)
		}
		var firsts []string
		for _, p := range got.Problems {
			firsts = append(firsts, p.ProblemID+"@"+p.FirstACAt.Format(time.RFC3339))
		}
		if want := []string{"abc100_a@2025-05-19T01:00:00Z", "abc100_b@2025-05-20T14:30:00Z", "abc100_c@2025-05-20T15:30:00Z"}; !slices.Equal(firsts, want) {
			t.Fatalf("first ACs %v, want %v", firsts, want)
		}
	}
	// Others see nothing.
	_, err := s.Solved(as("u2", false), "u1")
	algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
}
