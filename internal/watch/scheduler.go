package watch

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// CheckArgs wakes the scheduler for one URL check. Each ACTIVE check has
// one such job: it runs the check when due and then snoozes until the next
// planned run, so the job row is the check's schedule (it survives
// restarts in Postgres). Uniqueness by check id keeps it to one job per
// check however often Schedule and the sweep insert it.
type CheckArgs struct {
	CheckID string `json:"check_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (CheckArgs) Kind() string { return "watch_check" }

// InsertOpts: unique per check while queued, scheduled, running or waiting
// for a retry; a few retries cover storage errors (after them the sweep
// starts the schedule again).
func (CheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
		rivertype.JobStateRetryable, rivertype.JobStateScheduled,
	}}}
}

// CheckSweepArgs is the periodic "ensure scheduled" sweep of URL checks.
type CheckSweepArgs struct{}

// Kind implements river.JobArgs.
func (CheckSweepArgs) Kind() string { return "watch_sweep" }

// InsertOpts makes concurrent sweeps (several replicas) collapse into one.
func (CheckSweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// CheckStore is what the URL-check scheduler needs from storage
// (internal/dynamo).
type CheckStore interface {
	RunStore
	ListChecks(ctx context.Context, f algoitny.CheckFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error)
	UpdateCheck(ctx context.Context, c *algoitny.Check) (*algoitny.Check, error)
	ListOverdueChecks(ctx context.Context, t algoitny.CheckType, before time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error)
}

// ChecksConfig configures the URL-check scheduler.
type ChecksConfig struct {
	Store CheckStore
	// River inserts and wakes the checks' jobs (any client of the runner's
	// schema: an insert-only one works, and API-only replicas use one).
	// Without it Schedule and Sweep return EINTERNAL.
	River *river.Client[pgx.Tx]
	// Fetch fetches the checked URLs (default: a safehttp.Client with
	// RunTimeout, a 1 MB body cap and any port; tests allow-list their
	// servers).
	// Use a client of its own: a MinHostInterval would delay runs.
	Fetch Fetcher
	// Events publishes every result to the check's subscribers.
	Events *Events
	Logger *slog.Logger
	// FailureThreshold is how many failed runs in a row make a check DOWN
	// (default DefaultFailureThreshold, 5).
	FailureThreshold int
	// Retries is how many times a run retries a failed fetch before it
	// counts as failed (0: DefaultRetries; negative: none).
	Retries int
	// RetryBackoff is the wait before a run's first retry, doubled for each
	// next one (default DefaultRetryBackoff).
	RetryBackoff time.Duration
	// CertWarning is how close to its expiry an https check's certificate
	// is flagged (default DefaultCertWarning, 14 days).
	CertWarning time.Duration
	// Alerts is told about every change of a check's state (nil: nobody;
	// *Notifications in production).
	Alerts Alerter
	// ResultsKept bounds the recent results kept per check (default
	// DefaultResultsKept, 1440).
	ResultsKept int
	// RunTimeout bounds one run's fetch (default 15 s).
	RunTimeout time.Duration
	// SweepInterval is how often the sweep looks for ACTIVE checks whose
	// run is overdue — their job was lost (never inserted after a crash,
	// discarded after failing retries, River's tables reset) — and
	// schedules them again (default 1 min).
	SweepInterval time.Duration
	// OverdueAfter is how late a planned run must be for the sweep to act
	// (default 30 s: longer than River's 5 s scheduling tick and a run).
	OverdueAfter time.Duration
	// Queue is the River queue of check jobs (default river.QueueDefault).
	// A dedicated queue keeps checks from delaying code executions; the
	// runner's client must then serve it.
	Queue string
}

// Checks is the scheduler of URL checks, a plugin of the job runner
// (jobs.Config.Plugins): its worker runs a check when due
// (Executor.RunDue: a conditional lease on the check, the fetch, the
// result recorded only if nothing changed) and snoozes the check's job
// until the next planned run; its periodic sweep reschedules ACTIVE checks
// whose job was lost. It is also the Scheduler the service calls after
// Create, Update and Resume. Paused and deleted checks end their job at
// its next wake-up without running; DOWN ones keep it, at a slower pace.
type Checks struct {
	cfg  ChecksConfig
	exec *Executor
}

var _ Scheduler = (*Checks)(nil)

// riverSchedulerInterval is how often River moves scheduled jobs to
// available (its default; a client option that cannot be changed). A job
// snoozed for longer than it may wake up that much late, so long sleeps
// end one interval early and the rest is snoozed "available", which River
// fetches on time.
const riverSchedulerInterval = 5 * time.Second

// NewChecks returns the URL-check scheduler. Pass it in jobs.Config.Plugins
// of the runner that works jobs.
func NewChecks(cfg ChecksConfig) *Checks {
	cfg.RunTimeout = cmp.Or(cfg.RunTimeout, 15*time.Second)
	cfg.SweepInterval = cmp.Or(cfg.SweepInterval, time.Minute)
	cfg.OverdueAfter = cmp.Or(cfg.OverdueAfter, 30*time.Second)
	cfg.Queue = cmp.Or(cfg.Queue, river.QueueDefault)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Fetch == nil {
		cfg.Fetch = safehttp.New(safehttp.Config{Timeout: cfg.RunTimeout, MaxBodyBytes: 1 << 20, AnyPort: true})
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	c := &Checks{cfg: cfg}
	prober := &Prober{Fetch: cfg.Fetch, Timeout: cfg.RunTimeout, Retries: cfg.Retries, RetryBackoff: cfg.RetryBackoff, CertWarning: cfg.CertWarning}
	c.exec = &Executor{
		Store: cfg.Store, Prober: prober, Events: cfg.Events, Alerts: cfg.Alerts,
		FailureThreshold: cfg.FailureThreshold, ResultsKept: cfg.ResultsKept, Logger: cfg.Logger,
	}
	return c
}

// Queues returns the checks' queue when it is not the default: checks
// wait on the network, so a queue of their own with many workers keeps
// them off the executions' workers.
func (c *Checks) Queues() map[string]river.QueueConfig {
	if c.cfg.Queue == river.QueueDefault {
		return nil
	}
	return map[string]river.QueueConfig{c.cfg.Queue: {MaxWorkers: 50}}
}

// Register adds the check worker and the sweep worker.
func (c *Checks) Register(workers *river.Workers) error {
	if err := river.AddWorkerSafely(workers, &checkWorker{checks: c}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, &checkSweepWorker{checks: c})
}

// PeriodicJobs returns the sweep, every SweepInterval and once at start.
func (c *Checks) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(c.cfg.SweepInterval),
		func() (river.JobArgs, *river.InsertOpts) { return CheckSweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: "watch_sweep", RunOnStart: true},
	)}
}

// errNoRiver is returned by Schedule and Sweep without ChecksConfig.River.
var errNoRiver = algoitny.Internal(errors.New("watch: ChecksConfig.River is not set"), "the check scheduler is not configured")

// Schedule implements Scheduler: it makes sure the ACTIVE check has a
// job that wakes up no later than its NextRunAt — inserting one, or waking
// the existing one when it sleeps past it (the delay was shortened). It is
// idempotent and does nothing for a check that is not ACTIVE. It returns
// EINTERNAL when River cannot be reached (the sweep catches up later).
func (c *Checks) Schedule(ctx context.Context, check *algoitny.Check) error {
	if check.Status != algoitny.CheckActive || check.NextRunAt == nil {
		return nil
	}
	if c.cfg.River == nil {
		return errNoRiver
	}
	return c.ensure(ctx, c.cfg.River, check.ID, *check.NextRunAt)
}

// ensure inserts the check's job to run now (it goes back to sleep if the
// check is not due yet), unless it exists; an existing job that sleeps
// past due is woken.
func (c *Checks) ensure(ctx context.Context, client *river.Client[pgx.Tx], id string, due time.Time) error {
	res, err := client.Insert(ctx, CheckArgs{CheckID: id}, &river.InsertOpts{Queue: c.cfg.Queue})
	if err != nil {
		return algoitny.Internal(err, "schedule check")
	}
	j := res.Job
	if res.UniqueSkippedAsDuplicate && j != nil && j.State != rivertype.JobStateRunning && j.ScheduledAt.After(due.Add(time.Second)) {
		if _, err := client.JobRetry(ctx, j.ID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return algoitny.Internal(err, "wake check job")
		}
	}
	return nil
}

// Sweep schedules every ACTIVE check whose planned run is more than
// OverdueAfter late, and returns how many it found. It reads seed 002's
// Type-Status index, one type at a time; a check whose job is alive is left
// as it is (inserting is idempotent). It first revives checks that older
// versions stopped for good (FAILED): they become ACTIVE and DOWN and run
// now (Revive), counted with the overdue ones.
func (c *Checks) Sweep(ctx context.Context) (int, error) {
	client := c.cfg.River
	if client == nil {
		return 0, errNoRiver
	}
	found := 0
	for _, t := range algoitny.CheckTypes {
		n, err := c.reviveFailed(ctx, client, t)
		found += n
		if err != nil {
			return found, err
		}
	}
	cutoff := time.Now().Add(-c.cfg.OverdueAfter)
	for _, t := range algoitny.CheckTypes {
		for after := ""; ; {
			page, err := c.cfg.Store.ListOverdueChecks(ctx, t, cutoff, algoitny.PageRequest{First: algoitny.MaxPageSize, After: after})
			if err != nil {
				return found, err
			}
			for _, check := range page.Items {
				found++
				if err := c.ensure(ctx, client, check.ID, *check.NextRunAt); err != nil {
					return found, err
				}
			}
			if !page.HasNextPage {
				break
			}
			after = page.EndCursor
		}
	}
	return found, nil
}

// reviveFailed makes the legacy FAILED checks of type t ACTIVE and DOWN and
// schedules them. A check changed meanwhile (ECONFLICT) is left for the
// next sweep.
func (c *Checks) reviveFailed(ctx context.Context, client *river.Client[pgx.Tx], t algoitny.CheckType) (int, error) {
	failed := algoitny.CheckFailed
	n := 0
	for {
		// Always the first page: revived checks leave the FAILED range.
		page, err := c.cfg.Store.ListChecks(ctx, algoitny.CheckFilter{Type: t, Status: &failed}, algoitny.PageRequest{First: algoitny.MaxPageSize})
		if err != nil {
			return n, err
		}
		revived := 0
		for _, check := range page.Items {
			if !Revive(check, time.Now()) {
				continue
			}
			updated, err := c.cfg.Store.UpdateCheck(ctx, check)
			if algoitny.IsCode(err, algoitny.ECONFLICT) || algoitny.IsCode(err, algoitny.ENOTFOUND) {
				continue
			}
			if err != nil {
				return n, err
			}
			revived++
			c.cfg.Events.Publish(ctx, &algoitny.CheckEvent{Check: updated})
			if err := c.ensure(ctx, client, updated.ID, *updated.NextRunAt); err != nil {
				return n + revived, err
			}
		}
		n += revived
		if !page.HasNextPage || revived == 0 {
			return n, nil
		}
	}
}

// checkWorker runs one check when due and snoozes until its next run.
type checkWorker struct {
	river.WorkerDefaults[CheckArgs]
	checks *Checks
}

// Work implements river.Worker. Returning nil ends the check's schedule
// (deleted or paused); a snooze keeps it.
func (w *checkWorker) Work(ctx context.Context, job *river.Job[CheckArgs]) error {
	out, err := w.checks.exec.RunDue(ctx, job.Args.CheckID)
	if err != nil {
		return err
	}
	if out.Next == nil {
		return nil
	}
	return river.JobSnooze(sleepFor(time.Until(*out.Next)))
}

// Timeout bounds one wake-up: the fetch with its retries plus the storage
// calls around it.
func (w *checkWorker) Timeout(*river.Job[CheckArgs]) time.Duration {
	return w.checks.exec.Prober.MaxDuration() + 30*time.Second
}

// sleepFor is how long to snooze to wake up d from now: a short sleep as it
// is (River fetches it on time), a long one ending riverSchedulerInterval
// early (River's scheduler may be that late), to sleep the rest then.
func sleepFor(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d > riverSchedulerInterval:
		return d - riverSchedulerInterval
	}
	return d
}

// checkSweepWorker runs Sweep.
type checkSweepWorker struct {
	river.WorkerDefaults[CheckSweepArgs]
	checks *Checks
}

// Work implements river.Worker.
func (w *checkSweepWorker) Work(ctx context.Context, _ *river.Job[CheckSweepArgs]) error {
	_, err := w.checks.Sweep(ctx)
	return err
}
