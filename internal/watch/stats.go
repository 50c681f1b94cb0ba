package watch

import (
	"context"
	"math"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Statistics of a check (issue 20): uptime % and response-time percentiles
// over 24 hours, 7 and 30 days. Storage aggregates every run into its
// hour's item as the run is recorded (algoitny.CheckHourStats), so reading
// them is one Query of at most 30 days of hours, whatever the check's pace.

// The windows of CheckStats.
const (
	StatsDay   = 24 * time.Hour
	StatsWeek  = 7 * 24 * time.Hour
	StatsMonth = 30 * 24 * time.Hour
)

// StatsStore is what statistics need from storage (internal/dynamo).
type StatsStore interface {
	// ListCheckStats returns the hours from `from` to `to`, oldest first.
	ListCheckStats(ctx context.Context, id string, from, to time.Time) ([]*algoitny.CheckHourStats, error)
}

// Stats returns a check's statistics over the last 24 hours, 7 days and 30
// days (whole hours, the current one included), read with one Query. It
// returns EUNAUTHENTICATED and ENOTFOUND.
func (s *Service) Stats(ctx context.Context, id string) ([]*algoitny.CheckWindowStats, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	hours, err := s.Store.ListCheckStats(ctx, id, windowStart(now, StatsMonth), now)
	if err != nil {
		return nil, err
	}
	out := make([]*algoitny.CheckWindowStats, 0, 3)
	for _, w := range []time.Duration{StatsDay, StatsWeek, StatsMonth} {
		out = append(out, Summarize(hours, now, w))
	}
	return out, nil
}

// windowStart is the first hour of a window ending in now's hour.
func windowStart(now time.Time, window time.Duration) time.Time {
	return now.Truncate(time.Hour).Add(-window + time.Hour)
}

// Summarize adds up the hours of hours that fall in the window ending in
// now's hour: runs, UP runs, uptime %, and the 50th, 95th and 99th
// percentiles of the response times (estimated linearly within histogram
// bins; the last, open bin reports its lower bound).
func Summarize(hours []*algoitny.CheckHourStats, now time.Time, window time.Duration) *algoitny.CheckWindowStats {
	from := windowStart(now.UTC(), window)
	st := &algoitny.CheckWindowStats{Hours: int(window / time.Hour)}
	hist := make([]int, len(algoitny.LatencyBoundsMs)+1)
	for _, h := range hours {
		if h.Hour.Before(from) || h.Hour.After(now) {
			continue
		}
		st.Runs += h.Runs
		st.Up += h.Up
		for i, n := range h.Latency {
			if i < len(hist) {
				hist[i] += n
			}
		}
	}
	if st.Runs > 0 {
		pct := math.Round(10000*float64(st.Up)/float64(st.Runs)) / 100
		st.UptimePercent = &pct
	}
	st.P50Ms, st.P95Ms, st.P99Ms = percentile(hist, 0.50), percentile(hist, 0.95), percentile(hist, 0.99)
	return st
}

// percentile estimates the p-th quantile of a latency histogram; nil when
// it is empty.
func percentile(hist []int, p float64) *int {
	total := 0
	for _, n := range hist {
		total += n
	}
	if total == 0 {
		return nil
	}
	rank := int(math.Ceil(p * float64(total)))
	cum := 0
	for i, n := range hist {
		if n == 0 || cum+n < rank {
			cum += n
			continue
		}
		lo := 0
		if i > 0 {
			lo = algoitny.LatencyBoundsMs[i-1]
		}
		if i == len(algoitny.LatencyBoundsMs) {
			return &lo
		}
		hi := algoitny.LatencyBoundsMs[i]
		v := lo + int(math.Round(float64(hi-lo)*float64(rank-cum)/float64(n)))
		return &v
	}
	return nil
}
