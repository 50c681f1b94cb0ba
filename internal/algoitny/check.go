package algoitny

import (
	"encoding/base64"
	"slices"
	"strings"
	"time"
)

// URL checks (seed 002): a user's URL fetched on a schedule, the results of
// its runs and the events pushed to subscribers. The rules (validation,
// plans' limits, the scheduler) live in internal/watch; storage in
// internal/dynamo. The types are here so that storage and the API share them
// without importing the feature.

// CheckType is what a check looks for (seed 002's checkType). Values are
// stored and appear in index keys, so the set is closed.
type CheckType string

// The check types.
const (
	// CheckAvailability is UP when the URL answers with a status below 400.
	CheckAvailability CheckType = "AVAILABILITY"
	// CheckKeyword is UP when the page answers and contains Keyword (or, with
	// Invert, does not contain it).
	CheckKeyword CheckType = "KEYWORD"
)

// CheckTypes lists every check type.
var CheckTypes = []CheckType{CheckAvailability, CheckKeyword}

// ParseCheckType returns the type named s (case-insensitive). It returns
// EINVALID naming the field "type" for anything else.
func ParseCheckType(s string) (CheckType, error) {
	t := CheckType(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(CheckTypes, t) {
		return t, nil
	}
	return "", Invalid("type", "unknown check type %q", s)
}

// CheckStatus is whether a check runs, as its owner set it: ACTIVE checks
// run every DelayMs (slower while DOWN, see CheckState), PAUSED ones wait for
// Resume (watch.Service). FAILED is legacy: older versions stopped a check
// for good after too many failures; no run sets it any more, and the
// scheduler's sweep turns stored FAILED checks back into ACTIVE ones that
// are DOWN (watch.Revive).
type CheckStatus string

// The check statuses.
const (
	CheckActive CheckStatus = "ACTIVE"
	CheckPaused CheckStatus = "PAUSED"
	// CheckFailed is legacy (see CheckStatus): read, never written by runs.
	CheckFailed CheckStatus = "FAILED"
)

// CheckState is what the runs say of the watched URL, apart from the
// owner's CheckStatus: UP once a run fetched the page, DOWN after
// watch.DefaultFailureThreshold failed runs in a row (each run retried a few
// times first) or at once for a refused destination, UNKNOWN before either.
// A DOWN check keeps running, at a slower pace, and the first good run makes
// it UP again. Changes between UP and DOWN are the ones notified.
type CheckState string

// The check states.
const (
	CheckStateUnknown CheckState = "UNKNOWN"
	CheckStateUp      CheckState = "UP"
	CheckStateDown    CheckState = "DOWN"
)

// CheckStateChange is a change of a check's state between UP and DOWN, as
// published in its events and sent to its owner's notification channels.
type CheckStateChange struct {
	From CheckState `json:"from"`
	To   CheckState `json:"to"`
	// Reason says why: the last error for DOWN, the good run for UP.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// InMaintenance is set when the run fell in one of the check's
	// maintenance windows: the change is recorded and published, but not
	// notified.
	InMaintenance bool `json:"inMaintenance,omitempty"`
}

// MaintenanceWindow is a time range [Start, End) during which a check's
// changes of state are not notified (planned downtime).
type MaintenanceWindow struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// InMaintenance reports whether t falls in one of the check's maintenance
// windows.
func (c *Check) InMaintenance(t time.Time) bool {
	for _, w := range c.Maintenance {
		if !t.Before(w.Start) && t.Before(w.End) {
			return true
		}
	}
	return false
}

// CheckStatuses lists every check status.
var CheckStatuses = []CheckStatus{CheckActive, CheckPaused, CheckFailed}

// ParseCheckStatus returns the status named s (case-insensitive). It returns
// EINVALID naming the field "status" for anything else.
func ParseCheckStatus(s string) (CheckStatus, error) {
	st := CheckStatus(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(CheckStatuses, st) {
		return st, nil
	}
	return "", Invalid("status", "unknown check status %q", s)
}

// CheckResultStatus is the verdict of one run.
type CheckResultStatus string

// The result statuses.
const (
	CheckUp   CheckResultStatus = "UP"
	CheckDown CheckResultStatus = "DOWN"
)

// CheckResultRetention is how long a run's result is kept (DynamoDB TTL).
const CheckResultRetention = 24 * time.Hour

// Check is a URL watch (seed 002's CHECK item): a user's URL fetched every
// DelayMs, with the outcome of the last run. Keyword and Invert are the
// seed's type-specific attributes.
type Check struct {
	ID     string
	UserID string
	URL    string
	Type   CheckType
	// Keyword is what a KEYWORD check looks for (case-insensitive); "" for
	// AVAILABILITY checks.
	Keyword string
	// Invert makes a KEYWORD check UP when the keyword is absent.
	Invert  bool
	DelayMs int
	// Maintenance lists the windows in which changes of state are not
	// notified, oldest first.
	Maintenance []MaintenanceWindow
	Status      CheckStatus
	// State is what the runs say (UNKNOWN before the first decisive run).
	State CheckState
	// StateChangedAt is when State last changed; nil while UNKNOWN.
	StateChangedAt *time.Time
	// Silenced is the net change of State that maintenance windows kept
	// from the owner's notification channels (From: the state they were
	// last told of), nil when there is none: the first run outside a window
	// notifies it if State is still Silenced.To (a site that went DOWN in a
	// window and stayed DOWN is announced when the window ends), and a
	// change back inside a window cancels it.
	Silenced *CheckStateChange
	// FailureReason says why the check is DOWN (or, for a legacy FAILED
	// check, why it stopped); "" otherwise.
	FailureReason string
	// ConsecutiveFailures counts the failed runs since the last good one.
	ConsecutiveFailures int
	CreatedAt           time.Time
	// UpdatedAt changes when the user changes the check (runs set
	// LastExecutedAt instead).
	UpdatedAt      time.Time
	LastExecutedAt *time.Time
	LastResult     *CheckResult
	// NextRunAt is the planned time of the next run while the check is
	// ACTIVE (nil otherwise). Runs are planned on a grid of DelayMs from the
	// previous planned time, so late runs do not make the schedule drift.
	NextRunAt *time.Time
	// Runs counts the results recorded so far; it numbers them.
	Runs int64
	// Version grows with every change (by the user or by a run), so that
	// concurrent writers and event subscribers can tell old from new.
	Version int64
}

// CertificateExpiresAt is when the certificate seen by the last run
// expires; nil before a run over https got an answer.
func (c *Check) CertificateExpiresAt() *time.Time {
	if c.LastResult == nil {
		return nil
	}
	return c.LastResult.CertNotAfter
}

// CertificateWarning reports whether the last run saw a certificate that
// expires within the warning threshold.
func (c *Check) CertificateWarning() bool { return c.LastResult != nil && c.LastResult.CertExpiresSoon }

// Delay returns DelayMs as a duration.
func (c *Check) Delay() time.Duration { return time.Duration(c.DelayMs) * time.Millisecond }

// CheckResult is the outcome of one run (seed 002's lastResult).
type CheckResult struct {
	CheckID string
	// Seq numbers the check's results from 1; a higher Seq is newer.
	Seq    int64
	Status CheckResultStatus
	// ResponseTimeMs is how long the request took (until the error, for
	// failed ones).
	ResponseTimeMs int
	// Attempts is how many fetches the run made: 1, plus the quick retries
	// of a failing fetch (watch.Prober.Retries).
	Attempts int
	// HTTPStatus is the final response's status code, 0 when none came.
	HTTPStatus int
	// CertNotAfter is when the https server's certificate expires (the
	// final response's, after redirects); nil over http or without answer.
	CertNotAfter *time.Time
	// CertExpiresSoon is set when CertNotAfter is within the warning
	// threshold (watch.DefaultCertWarning, 14 days) of the run.
	CertExpiresSoon bool
	// KeywordFound is set for KEYWORD checks whose page was read.
	KeywordFound *bool
	// Error says why the run failed ("" when the page was fetched): a
	// network error, a refused address or an HTTP error status.
	Error     string
	CheckedAt time.Time
}

// Failed reports whether the run failed: the page could not be fetched, or
// a KEYWORD check's keyword was missing (or, inverted, present). Failed
// runs count toward DOWN, and Error says why.
func (r *CheckResult) Failed() bool { return r.Error != "" || r.Status == CheckDown }

// CheckFilter selects checks of everyone (staff lists). Type is required:
// seed 002's Type-Status index is partitioned by type.
type CheckFilter struct {
	Type   CheckType
	Status *CheckStatus
}

// CheckInput is a new check.
type CheckInput struct {
	URL  string
	Type CheckType
	// Keyword is required for KEYWORD checks and refused for AVAILABILITY ones.
	Keyword string
	Invert  bool
	// DelayMs is the delay between runs; 0 means watch.DefaultDelayMs (or the
	// plan's minimum when that is longer).
	DelayMs int
	// Maintenance lists windows in which changes of state are not notified.
	Maintenance []MaintenanceWindow
}

// CheckUpdate changes some settings of a check; nil fields are left alone.
// Changing the type to AVAILABILITY drops the keyword.
type CheckUpdate struct {
	URL     *string
	Type    *CheckType
	Keyword *string
	Invert  *bool
	DelayMs *int
	// Maintenance, when set, replaces the maintenance windows (empty: none).
	Maintenance *[]MaintenanceWindow
}

// CheckEvent is a change of a check pushed to subscribers: a run's result,
// a change by its owner, or its deletion. It carries the whole check, so
// subscribers need no read per event.
type CheckEvent struct {
	// Check is the check after the change (before it, for a deletion).
	Check *Check `json:"check"`
	// Result is set when the event is a run's result.
	Result *CheckResult `json:"result,omitempty"`
	// Deleted is set on the last event of a deleted check.
	Deleted bool `json:"deleted,omitempty"`
	// StateChange is set when the run changed the check's state (UP ↔ DOWN).
	StateChange *CheckStateChange `json:"stateChange,omitempty"`
}

// CheckRunRecord is what a run writes: the state it claimed the check in, its
// result and the state that follows. Storage writes it only if the check
// still holds LeaseID and Version, i.e. nobody changed it during the run.
type CheckRunRecord struct {
	Claimed *Check
	LeaseID string
	Result  *CheckResult
	Next    *Check
	// Keep is how many results of the check are kept; the one that falls out
	// is deleted with the write.
	Keep int
	// Alert, when set, is the change of state to announce, stored in the
	// notification outbox with the run (its ID and CreatedAt are assigned
	// then).
	Alert *CheckAlert
}

// CheckStatsRetention is how long a check's hourly statistics are kept
// (DynamoDB TTL): the longest window read, 30 days, and a day more.
const CheckStatsRetention = 31 * 24 * time.Hour

// LatencyBoundsMs are the upper bounds (inclusive, ms) of the response-time
// histogram kept per hour; a last bin holds everything slower. Percentiles
// are estimated within a bin, so the bounds are denser where checks usually
// answer.
var LatencyBoundsMs = []int{25, 50, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000, 15000}

// LatencyBin returns the histogram bin of a response time: the index of
// the first bound it does not exceed, or len(LatencyBoundsMs) past them.
func LatencyBin(ms int) int {
	for i, b := range LatencyBoundsMs {
		if ms <= b {
			return i
		}
	}
	return len(LatencyBoundsMs)
}

// CheckHourStats is one hour of a check's runs, aggregated as they are
// recorded: how many ran, how many were UP, and the histogram of response
// times (len(LatencyBoundsMs)+1 bins) of the runs that got an HTTP answer.
type CheckHourStats struct {
	Hour    time.Time
	Runs    int
	Up      int
	Latency []int
}

// CheckWindowStats summarises a check's runs over a window (the last 24
// hours, 7 or 30 days, in whole hours, the current one included).
type CheckWindowStats struct {
	// Hours is the window's length: 24, 168 or 720.
	Hours int
	Runs  int
	Up    int
	// UptimePercent is 100 × Up / Runs; nil without runs.
	UptimePercent *float64
	// P50Ms, P95Ms and P99Ms are response-time percentiles estimated from
	// the histogram (linear within a bin); nil without answered runs.
	P50Ms, P95Ms, P99Ms *int
}

// GlobalID is an entity's id as the API shows it: base64url of
// "Type:part1:part2…", opaque to clients. It is written here so that what
// leaves the API by other ways (webhook payloads) names entities alike.
func GlobalID(typ string, parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + strings.Join(parts, ":")))
}
