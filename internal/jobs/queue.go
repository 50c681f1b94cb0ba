package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// queueTimeout bounds queueing one stored job: the River insert and the link.
const queueTimeout = 10 * time.Second

// queue inserts the River job of a stored job and links the record to it
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
func (r *Runner) queue(ctx context.Context, job *algoitny.Job) (*algoitny.Job, error) {
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
