package watch

import (
	"time"

	"github.com/algoitny/api/internal/algoitny"
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
	// DefaultFailureThreshold is how many failed runs in a row (each after
	// its retries) make a check DOWN.
	DefaultFailureThreshold = 5
	// DefaultRetries is how many times a run retries a failed fetch, after
	// DefaultRetryBackoff and then twice as long each time, before the run
	// counts as failed: a dropped connection is not an outage.
	DefaultRetries = 2
	// DefaultRetryBackoff is the wait before a run's first retry.
	DefaultRetryBackoff = time.Second
	// MaxDownDelay caps the pace of a DOWN check: its delay doubles with
	// every further failed run up to this (or its own delay, if longer).
	MaxDownDelay = time.Hour
	// DefaultResultsKept is how many recent results are kept per check at
	// most (one a minute for a day); older ones are deleted as new ones come.
	DefaultResultsKept = 1440
	// DefaultCertWarning is how close to its expiry an https check's
	// certificate is flagged (CheckResult.CertExpiresSoon).
	DefaultCertWarning = 14 * 24 * time.Hour
	// MaxMaintenanceWindows bounds a check's maintenance windows.
	MaxMaintenanceWindows = 20
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

// DownDelay is the time between runs of a DOWN check of the given delay
// after `over` failed runs beyond the threshold: the delay doubled per run,
// capped at MaxDownDelay (never below the check's own delay). A DOWN check
// keeps running to see its recovery, but a dead site is not hammered.
func DownDelay(delay time.Duration, over int) time.Duration {
	limit := max(delay, MaxDownDelay)
	d := delay
	for range max(over, 0) {
		if d >= limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}

// Revive turns a check stored FAILED by an older version (which stopped
// checks for good) into what it is now: ACTIVE and DOWN with its reason,
// running from now. It reports whether c was changed.
func Revive(c *algoitny.Check, now time.Time) bool {
	if c.Status != algoitny.CheckFailed {
		return false
	}
	now = now.UTC()
	c.Status, c.NextRunAt = algoitny.CheckActive, &now
	if c.State != algoitny.CheckStateDown {
		c.State, c.StateChangedAt = algoitny.CheckStateDown, &now
	}
	return true
}
