package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// ReapArgs is the periodic stale-job sweep.
type ReapArgs struct{}

// Kind implements river.JobArgs.
func (ReapArgs) Kind() string { return "reap_stale_jobs" }

// InsertOpts makes concurrent sweeps (several replicas) collapse into one.
func (ReapArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// reapWorker repairs Job records that the River job behind them can no longer
// move: a worker killed mid-job (River retries it; the record goes back to
// PENDING instead of sitting in PROCESSING), a River job that was discarded,
// cancelled or deleted (the record becomes FAILED or CANCELLED with the
// reason), and a record whose River job was never inserted or never linked
// (it is queued: its use of the quota, written with it, stays spent).
type reapWorker struct {
	river.WorkerDefaults[ReapArgs]
	runner *Runner
}

// Work implements river.Worker.
func (w *reapWorker) Work(ctx context.Context, _ *river.Job[ReapArgs]) error {
	_, err := w.runner.Reap(ctx)
	return err
}

// maxReapPages bounds one sweep: at most this many pages of stale jobs of
// each status (the rest wait for the next sweep).
const maxReapPages = 10

// unlinkedAfter is how long a PENDING record may stay without its River
// job before the reaper queues it (its insert failed: PostgreSQL was down,
// or the process died right after the charge). A linked one waits
// StaleAfter, as it only waits its turn in the queue.
const unlinkedAfter = time.Minute

// Reap runs one sweep and returns how many records it repaired. It looks at
// every job left PROCESSING for StaleAfter, and PENDING for StaleAfter
// (or, with no River job linked, unlinkedAfter), past those that only wait
// their turn in the queue.
func (r *Runner) Reap(ctx context.Context) (int, error) {
	now := time.Now()
	staleCutoff := now.Add(-r.cfg.StaleAfter)
	repaired := 0
	for _, status := range []algoitny.JobStatus{algoitny.JobProcessing, algoitny.JobPending} {
		cutoff := staleCutoff
		if status == algoitny.JobPending {
			cutoff = now.Add(-min(r.cfg.StaleAfter, unlinkedAfter))
		}
		page := algoitny.PageRequest{First: algoitny.MaxPageSize}
		for range maxReapPages {
			stale, err := r.cfg.Store.ListStaleJobsPage(ctx, status, cutoff, page)
			if err != nil {
				return repaired, err
			}
			for _, job := range stale.Items {
				if job.RiverJobID != 0 && job.UpdatedAt.After(staleCutoff) {
					continue // queued, waiting its turn
				}
				fixed, err := r.reapOne(ctx, job)
				if err != nil {
					r.cfg.Logger.Warn("reaper: could not repair job", "job", job.ID, "err", err)
					continue
				}
				if fixed {
					repaired++
				}
			}
			if !stale.HasNextPage {
				break
			}
			page.After = stale.EndCursor
		}
	}
	return repaired, nil
}

// reapOne decides what a stale record should become from its River job's
// state; an unlinked one is queued.
func (r *Runner) reapOne(ctx context.Context, job *algoitny.Job) (bool, error) {
	if job.RiverJobID == 0 {
		return r.requeue(ctx, job)
	}
	next, reason, ok := algoitny.JobStatus(""), "", false
	row, err := r.client.JobGet(ctx, job.RiverJobID)
	switch {
	case errors.Is(err, river.ErrNotFound):
		next, reason, ok = algoitny.JobFailed, "the job was lost by the job runner; please submit it again", true
	case err != nil:
		return false, err
	default:
		next, reason, ok = reapDecision(job.Status, row)
	}
	if !ok || next == job.Status {
		return false, nil
	}
	t := algoitny.JobTransition{Status: next}
	if next == algoitny.JobFailed {
		t.ErrorMessage = &reason
	}
	repaired, err := r.cfg.Store.TransitionJob(ctx, job.ID, t)
	if algoitny.IsCode(err, algoitny.ECONFLICT) { // it moved meanwhile: nothing to repair
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Stored and published: subscribers waiting on the job see it end.
	r.progress(ctx, repaired, "reaper", reason, -1)
	return true, nil
}

// requeue queues a record that has no River job linked: its River insert
// failed, or its process died before or right after it (the insert is
// unique by record, so a River job already there is found and linked, not
// doubled). The job was paid for with the record: it runs, and its use
// stays spent. A failure is retried at the next sweep.
func (r *Runner) requeue(ctx context.Context, stale *algoitny.Job) (bool, error) {
	// The index the sweep reads lags: act on the record as it is.
	job, err := r.cfg.Store.GetJob(ctx, stale.ID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if job.Status.Final() || job.RiverJobID != 0 {
		return false, nil
	}
	linked, err := r.Enqueue(ctx, job)
	if err != nil {
		return false, err
	}
	r.progress(ctx, linked, "reaper", "queued late: the job runner could not be reached when the job was submitted", -1)
	return true, nil
}

// reapDecision maps a River job state to what its stale record should become.
func reapDecision(status algoitny.JobStatus, row *rivertype.JobRow) (algoitny.JobStatus, string, bool) {
	switch row.State {
	case rivertype.JobStateDiscarded:
		msg := "the job failed too many times"
		if n := len(row.Errors); n > 0 {
			msg = fmt.Sprintf("the job failed %d times; last error: %s", n, row.Errors[n-1].Error)
		}
		return algoitny.JobFailed, msg, true
	case rivertype.JobStateCancelled:
		return algoitny.JobCancelled, "the job was cancelled", true
	case rivertype.JobStateCompleted:
		// River finished but the record never reached a final state.
		return algoitny.JobFailed, "the job finished without storing its result; please submit it again", true
	case rivertype.JobStateAvailable, rivertype.JobStateRetryable, rivertype.JobStateScheduled, rivertype.JobStatePending:
		// Back in the queue (a worker died and River rescued it): waiting, not processing.
		if status == algoitny.JobProcessing {
			return algoitny.JobPending, "the worker stopped; the job is queued again", true
		}
	}
	return "", "", false // running: a worker is on it
}
