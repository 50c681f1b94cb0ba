package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/riverqueue/river"
)

// permanentError is a failure that retrying cannot fix (an unavailable
// language, a problem without tests): the job fails at once with Message.
type permanentError struct {
	Message string
	Err     error
}

func (e *permanentError) Error() string { return e.Message }
func (e *permanentError) Unwrap() error { return e.Err }

func permanent(err error, format string, args ...any) error {
	return &permanentError{Message: fmt.Sprintf(format, args...), Err: err}
}

// run is the frame every worker runs in. It loads the Job record, skips
// jobs that are gone (account deleted) or already final (cancelled, or
// completed by an earlier attempt), moves PENDING to PROCESSING (linking
// the River job, so a crash between enqueue and link is repaired here)
// while it reads the owner, fails the jobs of a deactivated user, and then
// calls body with the job as PROCESSING. What body reports goes through
// the attempt's batcher (progress, announce), which run flushes before it
// returns. Whatever body returns is turned into the record's state:
//
//   - nil: body has completed the job itself.
//   - the job was cancelled (cancelJob): River is told not to retry.
//   - a permanent error, or a failure on the last attempt: FAILED with a
//     message the user can read.
//   - any other failure (or a panic): back to PENDING with the reason, and
//     River retries with backoff.
//
// A job cancelled or finished while it moves to PROCESSING (ECONFLICT)
// ends there; any other failure to move it is retried.
func run[T river.JobArgs](ctx context.Context, r *Runner, job *river.Job[T], jobID string, body func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error) (err error) {
	rec, err := r.cfg.Store.GetJob(ctx, jobID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return river.JobCancel(fmt.Errorf("job %s no longer exists", jobID))
	}
	if err != nil {
		return err
	}
	if rec.Status.Final() {
		return nil
	}
	owner := readOwner(ctx, r, rec) // read while the job moves to PROCESSING
	began, err := r.begin(ctx, rec, job.ID, job.Attempt)
	if algoitny.IsCode(err, algoitny.ECONFLICT) {
		return nil // cancelled or finished concurrently
	}
	if err != nil {
		return err
	}
	// Nothing of the attempt is left unwritten when it returns.
	ctx, b := r.withBatcher(ctx)
	defer b.close()
	if rec.Status != algoitny.JobProcessing { // a crashed attempt's job continues as it was
		r.progress(ctx, began, "started", fmt.Sprintf("attempt %d", job.Attempt), -1)
	}
	defer func() {
		if p := recover(); p != nil {
			r.cfg.Logger.ErrorContext(ctx, "job panicked", "job", jobID, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
		if err != nil {
			err = r.failed(ctx, began, job.Attempt, job.MaxAttempts, err)
		}
	}()
	// Queued before its user was deactivated, a job fails before it costs
	// anything (a sandbox, a page fetch, an LLM call). Not found is
	// retried: the user index may lag behind a brand-new account (a
	// deleted account's jobs are gone with it).
	u, err := owner()
	if err != nil {
		return err
	}
	if u != nil && !u.IsActive {
		return permanent(nil, "the account is deactivated")
	}
	return body(ctx, began, u)
}

// readOwner starts reading the account of a job (none without a UserID)
// and returns a function that waits for it. A job that names its owner's
// email reads the user's item by it (cached); through the user-id index
// otherwise, or when the item found is no longer that user's (the account
// was deleted and its email signed up again).
func readOwner(ctx context.Context, r *Runner, rec *algoitny.Job) func() (*algoitny.User, error) {
	userID, email := rec.UserID, rec.UserEmail
	if userID == "" {
		return func() (*algoitny.User, error) { return nil, nil }
	}
	type result struct {
		u   *algoitny.User
		err error
	}
	ch := make(chan result, 1)
	go func() {
		if email != "" {
			if u, err := r.cfg.Store.GetUserByEmail(ctx, email); err == nil && u.ID == userID {
				ch <- result{u, nil}
				return
			}
		}
		u, err := r.cfg.Store.GetUserByID(ctx, userID)
		ch <- result{u, err}
	}()
	return func() (*algoitny.User, error) {
		res := <-ch
		return res.u, res.err
	}
}

// begin moves a job to PROCESSING; a job still PROCESSING from an attempt
// that crashed continues as it is. rec has just been read: the write is
// conditional on its status (ECONFLICT if a cancellation came in between)
// instead of reading the job again.
func (r *Runner) begin(ctx context.Context, rec *algoitny.Job, riverID int64, attempt int) (*algoitny.Job, error) {
	if rec.Status == algoitny.JobProcessing {
		return rec, nil
	}
	t := algoitny.JobTransition{Status: algoitny.JobProcessing, RiverJobID: &riverID, Attempt: &attempt}
	if rec.Type == algoitny.JobCodeExecution && rec.HistoryID == "" {
		// Chosen once, so that a retried execution writes the same item.
		id, _ := r.cfg.Store.NewHistoryID()
		t.HistoryID = &id
	}
	return r.cfg.Store.TransitionJobFrom(ctx, rec, t)
}

// progress stores a progress step and publishes it with the job: through
// the attempt's batcher when ctx has one (in order, off the worker's
// path), else at once.
func (r *Runner) progress(ctx context.Context, job *algoitny.Job, step, msg string, percent int) {
	p := &algoitny.JobProgress{JobID: job.ID, Step: step, Message: msg, Status: job.Status, Percent: percent}
	if b := batcherFrom(ctx); b != nil {
		b.send(report{job: job, step: p})
		return
	}
	r.writeProgress(ctx, job, p)
}

// progressNow stores a progress step, then publishes it with the job.
func (r *Runner) progressNow(ctx context.Context, job *algoitny.Job, step, msg string, percent int) {
	r.writeProgress(ctx, job, &algoitny.JobProgress{JobID: job.ID, Step: step, Message: msg, Status: job.Status, Percent: percent})
}

// writeProgress stores p, then publishes it with job.
func (r *Runner) writeProgress(ctx context.Context, job *algoitny.Job, p *algoitny.JobProgress) {
	if err := r.cfg.Store.AddJobProgress(ctx, p); err != nil {
		r.cfg.Logger.WarnContext(ctx, "store job progress", "job", job.ID, "err", err)
	}
	r.cfg.Events.PublishJob(ctx, job, p)
}

// finish moves a job to a final status, after everything the attempt
// reported before (its batcher) is stored and published. A job cancelled
// meanwhile stays cancelled (ECONFLICT is not an error here). rec is the
// job as the attempt knows it: while it is PROCESSING the write is
// conditional on that status (nothing else changes a running job's status
// without making it final), instead of reading the job again.
func (r *Runner) finish(ctx context.Context, rec *algoitny.Job, t algoitny.JobTransition, step string) error {
	bg := context.WithoutCancel(ctx)
	batcherFrom(ctx).flush()
	if t.Status == algoitny.JobCompleted && t.ErrorMessage == nil {
		// An earlier attempt's "attempt 1 failed …; retrying" is history
		// once the job has completed.
		none := ""
		t.ErrorMessage = &none
	}
	var done *algoitny.Job
	var err error
	if rec.Status == algoitny.JobProcessing {
		done, err = r.cfg.Store.TransitionJobFrom(bg, rec, t)
	} else {
		done, err = r.cfg.Store.TransitionJob(bg, rec.ID, t)
	}
	if algoitny.IsCode(err, algoitny.ECONFLICT) || algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	msg := ""
	if t.ErrorMessage != nil {
		msg = *t.ErrorMessage
	}
	r.progressNow(bg, done, step, msg, 100)
	return nil
}

// failed turns a worker's error into the record's state and what River
// should do next.
//
// An attempt cut short because this worker stops (its grace period over,
// Runner.Stop) did not fail: it is handed back to the queue at once, its
// attempt not counted (river.JobSnooze(0)), and the record is PENDING again
// with no error message — the job runs anew on the next worker.
func (r *Runner) failed(ctx context.Context, rec *algoitny.Job, attempt, maxAttempts int, err error) error {
	bg := context.WithoutCancel(ctx)
	batcherFrom(ctx).flush() // what the attempt reported comes before its end
	if cur, gerr := r.cfg.Store.GetJob(bg, rec.ID); gerr == nil && cur.Status == algoitny.JobCancelled {
		return river.JobCancel(err) // cancelJob: its processes are already gone
	}
	if r.halting.Load() && ctx.Err() != nil {
		none := ""
		r.cfg.Logger.InfoContext(ctx, "job handed back: the worker stops", "job", rec.ID, "attempt", attempt)
		if next, terr := r.cfg.Store.TransitionJob(bg, rec.ID, algoitny.JobTransition{Status: algoitny.JobPending, ErrorMessage: &none}); terr == nil {
			r.progressNow(bg, next, "requeued", "the worker stopped; the job will run again", -1)
		}
		return river.JobSnooze(0)
	}
	var perm *permanentError
	switch {
	case errors.As(err, &perm):
		msg := perm.Message
		if ferr := r.finish(bg, rec, algoitny.JobTransition{Status: algoitny.JobFailed, ErrorMessage: &msg}, "failed"); ferr != nil {
			return ferr
		}
		return river.JobCancel(err)
	case attempt >= maxAttempts:
		msg := fmt.Sprintf("the job failed %d times and was given up; last error: %s", attempt, userMessage(err))
		if ferr := r.finish(bg, rec, algoitny.JobTransition{Status: algoitny.JobFailed, ErrorMessage: &msg}, "failed"); ferr != nil {
			return ferr
		}
		return err
	}
	r.cfg.Logger.WarnContext(ctx, "job attempt failed; retrying", "job", rec.ID, "attempt", attempt, "err", err)
	msg := fmt.Sprintf("attempt %d failed (%s); retrying", attempt, userMessage(err))
	if next, terr := r.cfg.Store.TransitionJob(bg, rec.ID, algoitny.JobTransition{Status: algoitny.JobPending, ErrorMessage: &msg}); terr == nil {
		r.progressNow(bg, next, "retrying", msg, -1)
	}
	return err
}

// userMessage is what a user may read about an error: domain messages as
// they are, anything else as a generic text.
func userMessage(err error) string {
	var ae *algoitny.Error
	if errors.As(err, &ae) && ae.Code != algoitny.EINTERNAL {
		return ae.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "it took too long"
	}
	return "internal error"
}

func isForbidden(err error) bool { return errors.Is(err, safehttp.ErrForbidden) }
