package watch_test

import (
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/watch"
)

func hist(pairs ...int) []int {
	h := make([]int, len(algoitny.LatencyBoundsMs)+1)
	for i := 0; i+1 < len(pairs); i += 2 {
		h[algoitny.LatencyBin(pairs[i])] += pairs[i+1]
	}
	return h
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 30, 0, 0, time.UTC)
	hour := now.Truncate(time.Hour)
	hours := []*algoitny.CheckHourStats{
		{Hour: hour.Add(-29 * 24 * time.Hour), Runs: 100, Up: 0, Latency: hist()},          // in 30 days only
		{Hour: hour.Add(-3 * 24 * time.Hour), Runs: 100, Up: 50, Latency: hist(20000, 50)}, // in 7 days
		{Hour: hour.Add(-23 * time.Hour), Runs: 90, Up: 90, Latency: hist(20, 90)},         // the window's first hour
		{Hour: hour, Runs: 10, Up: 9, Latency: hist(180, 10)},
	}
	day := watch.Summarize(hours, now, watch.StatsDay)
	if day.Hours != 24 || day.Runs != 100 || day.Up != 99 || *day.UptimePercent != 99 {
		t.Fatalf("day %+v", day)
	}
	// 90 runs ≤ 25 ms and 10 in (150, 200]: the median is in the first bin,
	// p95 and p99 in the 200 ms one.
	if *day.P50Ms > 25 || *day.P95Ms <= 150 || *day.P95Ms > 200 || *day.P99Ms <= *day.P95Ms || *day.P99Ms > 200 {
		t.Fatalf("day percentiles %d %d %d", *day.P50Ms, *day.P95Ms, *day.P99Ms)
	}
	week := watch.Summarize(hours, now, watch.StatsWeek)
	if week.Runs != 200 || week.Up != 149 || *week.UptimePercent != 74.5 || *week.P99Ms != 15000 {
		t.Fatalf("week %+v p99 %d", week, *week.P99Ms)
	}
	month := watch.Summarize(hours, now, watch.StatsMonth)
	if month.Runs != 300 || *month.UptimePercent != 49.67 {
		t.Fatalf("month %+v", month)
	}
	empty := watch.Summarize(nil, now, watch.StatsDay)
	if empty.UptimePercent != nil || empty.P50Ms != nil {
		t.Fatalf("empty %+v", empty)
	}
}

// TestStatsFromRuns: uptime % from known results, aggregated as the runs
// are recorded and read back with one query.
func TestStatsFromRuns(t *testing.T) {
	t.Parallel()
	f := setup(t, true)
	tg := newTarget(t)
	u := as("u", testPlan())
	c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
	for _, status := range []int{200, 200, 200, 500} {
		tg.set(status, "", 0)
		f.run(t, c.ID)
	}
	stats := algoitnytest.Must[[]*algoitny.CheckWindowStats](t)(f.svc.Stats(u, c.ID))
	if len(stats) != 3 {
		t.Fatalf("%d windows", len(stats))
	}
	for _, st := range stats {
		if st.Runs != 4 || st.Up != 3 || *st.UptimePercent != 75 || st.P50Ms == nil || *st.P99Ms > 1000 {
			t.Fatalf("%d h: %+v", st.Hours, st)
		}
	}
	if _, err := f.svc.Stats(as("other", testPlan()), c.ID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
		t.Fatalf("another user's stats: %v", err)
	}
}
