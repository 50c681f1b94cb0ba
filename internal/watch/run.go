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

// Executor runs checks when they are due. The scheduler (Checks, a River
// worker) calls RunDue whenever it wakes up for a check and sleeps
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
//   - A run's failed fetch is retried a few times (Prober.Retries) before
//     the run counts as failed. FailureThreshold failed runs in a row, or
//     one refused destination, make the check DOWN with the reason; it
//     keeps running, each further failure doubling its delay (DownDelay),
//     and its first good run makes it UP again at its own pace. Changes
//     between UP and DOWN are published and handed to Alerts, except in
//     the check's maintenance windows (recorded and published only).
type Executor struct {
	Store  RunStore
	Prober *Prober
	Events *Events
	// FailureThreshold is how many failed runs in a row make a check DOWN
	// (default DefaultFailureThreshold).
	FailureThreshold int
	// ResultsKept bounds the recent results kept per check (default
	// DefaultResultsKept).
	ResultsKept int
	// LeaseFor is how long a claimed run keeps other runs of the check off
	// (default: the prober's timeout + 15 s). A run that outlives its lease
	// cannot record its result if another run took over.
	LeaseFor time.Duration
	// Alerts is told about every recorded change of state (nil: nobody).
	Alerts Alerter
	Logger *slog.Logger
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
	// (deleted, PAUSED), which ends its schedule.
	Next *time.Time
	// StateChange is set when the recorded run changed the check's state.
	StateChange *algoitny.CheckStateChange
}

// Alerter dispatches a change of a check's state after the run that made
// it was recorded together with the alert, in the notification outbox
// (Notifications: it queues one delivery per notification channel of
// the owner, then removes the alert; tests use stand-ins, a crashed
// process among them). Dispatching an alert twice must be
// harmless. An error is only logged: the alert stays in the outbox and the
// alerter's sweep dispatches it again.
type Alerter interface {
	Alert(ctx context.Context, a *algoitny.CheckAlert) error
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
	if x.Prober != nil {
		timeout = x.Prober.MaxDuration()
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
	next, change := x.advance(claimed, result, errors.Is(probeErr, ErrForbidden))
	notify := notification(next, change, x.now())
	rec := &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: result, Next: next, Keep: x.ResultsKept}
	if rec.Keep <= 0 {
		rec.Keep = DefaultResultsKept
	}
	if notify != nil && x.Alerts != nil {
		// The run is recorded whatever happens to its alert (the lease is
		// held until then).
		if payload, err := Payload(next, notify); err != nil && x.Logger != nil {
			x.Logger.ErrorContext(ctx, "encode check alert", "check", id, "err", err)
		} else if err == nil {
			rec.Alert = &algoitny.CheckAlert{UserID: next.UserID, CheckID: next.ID, State: notify.To, Payload: payload}
		}
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
	x.Events.Publish(ctx, &algoitny.CheckEvent{Check: next, Result: result, StateChange: change})
	if rec.Alert != nil {
		if err := x.Alerts.Alert(context.WithoutCancel(ctx), rec.Alert); err != nil && x.Logger != nil {
			x.Logger.WarnContext(ctx, "dispatch check alert (the outbox sweep retries it)", "check", id, "state", notify.To, "err", err)
		}
	}
	out := Outcome{Ran: true, Result: result, Check: next, StateChange: change}
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

// silence returns a check's Silenced after a run with change (nil: none):
// a change inside a maintenance window is added to what the owner was not
// told (and cancels it when it goes back to the state they were told of);
// a change outside one is notified itself, so nothing is left silenced.
// The first run outside a window with no change keeps Silenced:
// notification (below) reads it.
func silence(silenced, change *algoitny.CheckStateChange) *algoitny.CheckStateChange {
	switch {
	case change == nil:
		return silenced
	case !change.InMaintenance:
		return nil
	case silenced == nil:
		c := *change
		return &c
	case change.To == silenced.From || (silenced.From == algoitny.CheckStateUnknown && change.To == algoitny.CheckStateUp):
		return nil // back to what the owner was told (a first UP is never notified)
	default:
		c := *change
		c.From = silenced.From
		return &c
	}
}

// notification returns the change a run notifies: the run's own change
// outside a maintenance window, or, on the first run outside one, a change
// the windows silenced that still holds (then next.Silenced is cleared).
func notification(next *algoitny.Check, change *algoitny.CheckStateChange, now time.Time) *algoitny.CheckStateChange {
	if change != nil {
		if change.InMaintenance {
			return nil
		}
		return change
	}
	s := next.Silenced
	if s == nil || next.InMaintenance(now) {
		return nil
	}
	next.Silenced = nil
	if s.To != next.State {
		return nil
	}
	late := *s
	late.InMaintenance = false
	late.Reason += " (during a maintenance window)"
	return &late
}

// advance returns the state that follows claimed after result: the result
// recorded, failures counted, the state changed (DOWN after too many
// failures or at once for a refused destination, UP on a good run), and the
// next run planned on the grid — of the check's delay, or of DownDelay while
// DOWN. The change is nil when the state stayed (or only left UNKNOWN for UP).
func (x *Executor) advance(claimed *algoitny.Check, result *algoitny.CheckResult, refused bool) (*algoitny.Check, *algoitny.CheckStateChange) {
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
	failed := result.Failed()
	if failed {
		next.ConsecutiveFailures++
	} else {
		next.ConsecutiveFailures = 0
	}
	var change *algoitny.CheckStateChange
	switch {
	case refused || (failed && next.ConsecutiveFailures >= threshold):
		reason := fmt.Sprintf("%d failed runs in a row; last error: %s", next.ConsecutiveFailures, result.Error)
		if refused {
			reason = result.Error
		}
		if next.State != algoitny.CheckStateDown {
			change = &algoitny.CheckStateChange{From: next.State, To: algoitny.CheckStateDown, Reason: reason, At: at}
			next.State, next.StateChangedAt, next.FailureReason = algoitny.CheckStateDown, &at, reason
		}
	case !failed && next.State != algoitny.CheckStateUp:
		if next.State == algoitny.CheckStateDown {
			reason := "the page was fetched again"
			if result.HTTPStatus > 0 {
				reason = fmt.Sprintf("the page answered HTTP %d", result.HTTPStatus)
			}
			change = &algoitny.CheckStateChange{From: algoitny.CheckStateDown, To: algoitny.CheckStateUp, Reason: reason, At: at}
		}
		next.State, next.StateChangedAt, next.FailureReason = algoitny.CheckStateUp, &at, ""
	}
	if change != nil {
		change.InMaintenance = next.InMaintenance(x.now()) // the run's time on the executor's clock
	}
	next.Silenced = silence(claimed.Silenced, change)
	next.NextRunAt = nil
	if next.Status == algoitny.CheckActive {
		delay := claimed.Delay()
		if next.State == algoitny.CheckStateDown {
			over := next.ConsecutiveFailures - threshold + 1
			if refused {
				over = max(over, 1)
			}
			delay = DownDelay(delay, over)
		}
		planned := NextRun(*claimed.NextRunAt, delay, x.now())
		next.NextRunAt = &planned
	}
	return &next, change
}
