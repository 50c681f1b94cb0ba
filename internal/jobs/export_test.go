package jobs

import (
	"context"
	"log/slog"

	"github.com/algoitny/api/internal/algoitny"
)

// NewBareRunner is a Runner without River, for the batcher's tests.
func NewBareRunner(cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg}
}

// Attempt is what a worker's attempt reports through, as the workers use it.
type Attempt struct {
	r   *Runner
	ctx context.Context
	b   *batcher
}

// NewAttempt starts an attempt's batcher.
func (r *Runner) NewAttempt(ctx context.Context) *Attempt {
	ctx, b := r.withBatcher(ctx)
	return &Attempt{r: r, ctx: ctx, b: b}
}

func (a *Attempt) Progress(job *algoitny.Job, step string) { a.r.progress(a.ctx, job, step, "", 0) }
func (a *Attempt) Announce(ev algoitny.ExecutionEvent)     { a.r.announce(a.ctx, ev) }
func (a *Attempt) TakeTests() []algoitny.ExecutionEvent    { return a.b.takeTests() }
func (a *Attempt) Flush()                                  { a.b.flush() }
func (a *Attempt) Close()                                  { a.b.close() }

// Finish is Runner.finish within the attempt.
func (a *Attempt) Finish(rec *algoitny.Job, t algoitny.JobTransition, step string) error {
	return a.r.finish(a.ctx, rec, t, step)
}

// Complete is the execution worker's end within the attempt.
func (a *Attempt) Complete(rec *algoitny.Job, h *algoitny.SearchHistory, pending []algoitny.ExecutionEvent) error {
	return a.r.complete(a.ctx, rec, h, pending)
}

// StartAgain is startAgain, for its test.
func StartAgain(ctx context.Context, start func() ([]*int, bool, error)) ([]*int, bool, error) {
	return startAgain(ctx, start)
}
