package watch

import (
	"time"
)

// Limits and defaults of checks.
const (
	// MaxURLLen bounds a check's URL.
	MaxURLLen = 2000
	// MaxKeywordLen bounds a KEYWORD check's keyword.
	MaxKeywordLen = 200
	// MaxDelayMs is the longest delay between runs: one day.
	MaxDelayMs = 24 * 60 * 60 * 1000
	// DefaultDelayMs is the delay of a check created without one (seed 002's
	// example), raised to the plan's minimum when that is longer.
	DefaultDelayMs = 5 * 60 * 1000
	// DefaultMinDelayMs is the floor under every plan's MinCheckDelayMs,
	// staff included: it protects the targets, not the plan.
	DefaultMinDelayMs = 1000
	// DefaultFailureThreshold is how many failed runs in a row mark a check
	// FAILED.
	DefaultFailureThreshold = 5
	// DefaultResultsKept is how many recent results are kept per check at
	// most (one a minute for a day); older ones are deleted as new ones come.
	DefaultResultsKept = 1440
	// DefaultRecentResults is how many results RecentResults returns when
	// asked for 0.
	DefaultRecentResults = 20
)

// NextRun returns the first time on planned's grid of delay that is after
// now: the next run is planned from the previous planned time, not from when
// the run happened, and missed runs are skipped rather than made up.
func NextRun(planned time.Time, delay time.Duration, now time.Time) time.Time {
	if delay <= 0 {
		return now
	}
	next := planned.Add(delay)
	if !next.After(now) {
		missed := now.Sub(next)/delay + 1
		next = next.Add(missed * delay)
	}
	return next
}
