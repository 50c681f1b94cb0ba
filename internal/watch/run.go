package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// RunStore is what a run needs from storage (internal/dynamo).
type RunStore interface {
	GetCheck(ctx context.Context, id string) (*algoitny.Check, error)
	// ClaimCheckRun takes the lease of an ACTIVE check whose NextRunAt is
	// planned and whose lease is free or expired; ECONFLICT otherwise.
	ClaimCheckRun(ctx context.Context, id string, planned time.Time, leaseFor time.Duration) (*algoitny.Check, string, error)
	// RecordCheckRun stores a run's result and the next state if the check
	// still holds the lease and the claimed version; ECONFLICT otherwise.
	RecordCheckRun(ctx context.Context, rec *algoitny.CheckRunRecord) error
	// ReleaseCheckLease frees a lease that is still held by leaseID.
	ReleaseCheckLease(ctx context.Context, id, leaseID string) error
}

// Executor runs checks when they are due. The scheduler (a River worker in
// internal/jobs) calls RunDue whenever it wakes up for a check and sleeps
// until the time RunDue returns; everything that makes runs exact lives
// here, so it holds whatever wakes it:
//
//   - A run first claims the check with a conditional write (the planned
//     time must still be NextRunAt, the check ACTIVE, no other run's lease
//     alive), so two wake-ups for one check never run it twice at once.
//   - The result is recorded only if nobody changed the check meanwhile
//     (lease and version); a run overtaken by an edit, a pause or a deletion
//     is dropped.
//   - The next run is planned on the grid of the previous planned time
//     (NextRun): late runs do not drift the schedule and missed runs are
//     skipped, not made up.
//   - FailureThreshold failed runs in a row, or one refused destination,
//     mark the check FAILED with the reason and end its schedule.
type Executor struct {
	Store  RunStore
	Prober *Prober
	Events *Events
	// FailureThreshold is how many failed runs in a row mark a check FAILED
	// (default DefaultFailureThreshold).
	FailureThreshold int
	// ResultsKept bounds the recent results kept per check (default
	// DefaultResultsKept).
	ResultsKept int
	// LeaseFor is how long a claimed run keeps other runs of the check off
	// (default: the prober's timeout + 15 s). A run that outlives its lease
	// cannot record its result if another run took over.
	LeaseFor time.Duration
	Logger   *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Outcome is what RunDue did and when the check should be looked at again.
type Outcome struct {
	// Ran is set when a result was recorded.
	Ran    bool
	Result *algoitny.CheckResult
	// Check is the check's state afterwards; nil once it is deleted.
	Check *algoitny.Check
	// Next is when to call RunDue again; nil when the check no longer runs
	// (deleted, PAUSED, FAILED), which ends its schedule.
	Next *time.Time
}

// earlyTolerance is how early a wake-up may come and still run.
const earlyTolerance = 2 * time.Millisecond

func (x *Executor) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

func (x *Executor) leaseFor() time.Duration {
	if x.LeaseFor > 0 {
		return x.LeaseFor
	}
	timeout := 15 * time.Second
	if x.Prober != nil && x.Prober.Timeout > 0 {
		timeout = x.Prober.Timeout
	}
	return timeout + 15*time.Second
}

// RunDue runs the check id if it is due, and says when to come back. It
// returns only storage errors (EINTERNAL), after which the caller retries;
// a deleted check is an Outcome without Next, not an error.
func (x *Executor) RunDue(ctx context.Context, id string) (Outcome, error) {
	c, err := x.Store.GetCheck(ctx, id)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	if c.Status != algoitny.CheckActive || c.NextRunAt == nil {
		return Outcome{Check: c}, nil
	}
	now := x.now()
	if c.NextRunAt.After(now.Add(earlyTolerance)) {
		return Outcome{Check: c, Next: c.NextRunAt}, nil
	}
	claimed, lease, err := x.Store.ClaimCheckRun(ctx, id, *c.NextRunAt, x.leaseFor())
	if algoitny.IsCode(err, algoitny.ECONFLICT) {
		// Changed since we read it, or another run holds it: come back when
		// that run should be over.
		return x.settled(ctx, id, true)
	}
	if err != nil {
		return Outcome{}, err
	}
	result, probeErr := x.Prober.Probe(ctx, claimed)
	next := x.advance(claimed, result, errors.Is(probeErr, ErrForbidden))
	rec := &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: result, Next: next, Keep: x.ResultsKept}
	if rec.Keep <= 0 {
		rec.Keep = DefaultResultsKept
	}
	err = x.Store.RecordCheckRun(context.WithoutCancel(ctx), rec)
	if err != nil {
		// Edited, paused or deleted during the run (ECONFLICT), or storage
		// failed: the result is dropped and the lease given back.
		if rerr := x.Store.ReleaseCheckLease(context.WithoutCancel(ctx), id, lease); rerr != nil && x.Logger != nil {
			x.Logger.WarnContext(ctx, "release check lease", "check", id, "err", rerr)
		}
		if algoitny.IsCode(err, algoitny.ECONFLICT) {
			return x.settled(ctx, id, false)
		}
		return Outcome{}, err
	}
	x.Events.Publish(ctx, &algoitny.CheckEvent{Check: next, Result: result})
	out := Outcome{Ran: true, Result: result, Check: next}
	if next.Status == algoitny.CheckActive {
		out.Next = next.NextRunAt
	}
	return out, nil
}

// settled rereads a check whose run did not happen and says when to come
// back. held means another run may hold the check: come back no sooner than
// one delay from now, so that two wake-ups do not spin against each other.
func (x *Executor) settled(ctx context.Context, id string, held bool) (Outcome, error) {
	cur, err := x.Store.GetCheck(ctx, id)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Check: cur}
	if cur.Status == algoitny.CheckActive && cur.NextRunAt != nil {
		next := *cur.NextRunAt
		if earliest := x.now().Add(min(cur.Delay(), x.leaseFor())); held && next.Before(earliest) {
			next = earliest
		}
		out.Next = &next
	}
	return out, nil
}

// advance returns the state that follows claimed after result: the result
// recorded, failures counted, FAILED after too many (or at once for a
// refused destination), and the next run planned on the grid.
func (x *Executor) advance(claimed *algoitny.Check, result *algoitny.CheckResult, refused bool) *algoitny.Check {
	threshold := x.FailureThreshold
	if threshold <= 0 {
		threshold = DefaultFailureThreshold
	}
	next := *claimed
	next.Runs++
	next.Version++
	result.CheckID, result.Seq = claimed.ID, next.Runs
	next.LastResult = result
	at := result.CheckedAt
	next.LastExecutedAt = &at
	if result.Failed() {
		next.ConsecutiveFailures++
	} else {
		next.ConsecutiveFailures = 0
	}
	switch {
	case refused:
		next.Status = algoitny.CheckFailed
		next.FailureReason = "stopped: " + result.Error
	case next.ConsecutiveFailures >= threshold:
		next.Status = algoitny.CheckFailed
		next.FailureReason = fmt.Sprintf("stopped after %d failed runs in a row; last error: %s", next.ConsecutiveFailures, result.Error)
	}
	next.NextRunAt = nil
	if next.Status == algoitny.CheckActive {
		planned := NextRun(*claimed.NextRunAt, claimed.Delay(), x.now())
		next.NextRunAt = &planned
	}
	return &next
}
