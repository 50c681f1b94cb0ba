package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/riverqueue/river"
)

// queueTimeout bounds queueing one stored job: the River insert and the link.
const queueTimeout = 10 * time.Second

// Enqueue inserts the River job of a stored job and links the record to it
// (TASK#{river id}). The insert is unique by the job's id (each kind's
// InsertOpts), so a job queued twice — by the request that stored it and by
// the reaper, or by a retry — has one River job: the second insert finds the
// first one and links that. It runs to the end even if ctx is cancelled (a
// client that hung up), for at most queueTimeout.
//
// It returns the job as stored, linked when it could be. An error means the
// job is not linked: the River insert failed (the record stays PENDING and
// unlinked, and the reaper queues it later), or the link did (the worker
// links the record when it starts, and the reaper if it never does).
//
// It implements submissions.Enqueuer.
func (r *Runner) Enqueue(ctx context.Context, job *algoitny.Job) (*algoitny.Job, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queueTimeout)
	defer cancel()
	res, err := r.client.Insert(ctx, argsFor(string(job.Type), job.ID), nil)
	if err != nil {
		return job, fmt.Errorf("queue job %s: %w", job.ID, err)
	}
	for attempt := 0; ; attempt++ {
		linked, err := r.cfg.Store.SetRiverJobID(ctx, job.ID, res.Job.ID)
		if err == nil {
			return linked, nil
		}
		if attempt == 2 || algoitny.IsCode(err, algoitny.ENOTFOUND) || ctx.Err() != nil {
			return job, fmt.Errorf("link job %s to River job %d: %w", job.ID, res.Job.ID, err)
		}
		time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
	}
}

// Cancel cancels the River job of a record the caller moved to CANCELLED:
// River cancels a running job's context (the worker kills its processes)
// and makes sure a queued one never starts. A record never linked to a
// River job, or whose River job is gone, needs nothing (nil); the worker
// checks the record before it starts and before it stores results. It
// implements submissions.Enqueuer.
func (r *Runner) Cancel(ctx context.Context, job *algoitny.Job) error {
	if job.RiverJobID == 0 {
		return nil
	}
	if _, err := r.client.JobCancel(ctx, job.RiverJobID); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("cancel River job %d of job %s: %w", job.RiverJobID, job.ID, err)
	}
	return nil
}
