package atcoder

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The River jobs of the solved-problem sync (issue 9): a periodic sweep of
// every linked user and an on-demand sync of one user, both running a
// Syncer. They are system jobs: unlike the jobs of design.md §6 they have
// no Job record in DynamoDB; their progress is the link's cursor. The
// runner of internal/jobs hosts them (its Config.Plugins) without knowing
// them.

// JobsConfig configures the sync's River jobs.
type JobsConfig struct {
	// Syncer does the work (required). Its Client carries the API's
	// base URL, the rate (one call a second by default, shared by every job
	// of this process) and the retry policy.
	Syncer *Syncer
	// Interval is how often a sweep of all linked users starts (default 1 h);
	// each sweep first reads AtCoder Problems' contest list, contest–problem
	// pairs, problems and problem models.
	Interval time.Duration
	// MinAge skips users whose last sync attempt is more recent than this
	// when a sweep starts, e.g. after an on-demand sync (default Interval/2).
	MinAge time.Duration
	// Budget is how long one run of the sweep starts new users before it
	// snoozes, letting other jobs run, and continues a second later with the
	// users still due (default 5 min).
	Budget time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Manual turns the periodic sweep (and its contest discovery) off:
	// AtCoder Problems is called only for the syncs users ask for (linking
	// a handle, syncSolvedProblems). A development server reaches external
	// sites only when configured to.
	Manual bool
}

// Jobs are the sync's River workers and periodic sweep, a plugin of the
// job runner (jobs.Config.Plugins).
type Jobs struct{ cfg JobsConfig }

// NewJobs checks cfg and fills its defaults. It returns an error when the
// Syncer is missing.
func NewJobs(cfg JobsConfig) (*Jobs, error) {
	if cfg.Syncer == nil {
		return nil, errors.New("atcoder: the sync jobs need a Syncer")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Hour
	}
	if cfg.MinAge <= 0 {
		cfg.MinAge = cfg.Interval / 2
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Jobs{cfg: cfg}, nil
}

// Register adds the sweep's and the on-demand sync's workers.
func (p *Jobs) Register(workers *river.Workers) error {
	if err := river.AddWorkerSafely(workers, &atcoderSweepWorker{p: p}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, &atcoderSyncWorker{p: p})
}

// PeriodicJobs returns the sweep, every Interval (none when Manual).
func (p *Jobs) PeriodicJobs() []*river.PeriodicJob {
	if p.cfg.Manual {
		return nil
	}
	return []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(p.cfg.Interval),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil },
		// RunOnStart: a fresh deployment discovers contests and syncs at once;
		// the sweep is unique, so replicas starting together run it once.
		&river.PeriodicJobOpts{ID: "atcoder_sweep", RunOnStart: true},
	)}
}

// uniqueWhileActive makes a second insert return the job already waiting or
// running instead of adding one.
var uniqueWhileActive = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// SweepArgs is the periodic sync of every linked user.
type SweepArgs struct{}

// Kind implements river.JobArgs.
func (SweepArgs) Kind() string { return "atcoder_sweep" }

// InsertOpts: one sweep at a time across all replicas (so the API sees one
// caller), at the lowest priority so that users' jobs go first.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, Priority: 4, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueWhileActive}}
}

// SyncArgs is an on-demand sync of one user.
type SyncArgs struct {
	UserID string `json:"user_id"`
}

// Kind implements river.JobArgs.
func (SyncArgs) Kind() string { return "atcoder_sync_user" }

// InsertOpts: one sync per user at a time; asking again while it waits or
// runs returns it.
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueWhileActive}}
}

// atcoderSweepWorker syncs the linked users due, least recently attempted
// first. Progress is in DynamoDB (each user's last attempt), so a snoozed,
// retried or crashed sweep continues with the users still due.
type atcoderSweepWorker struct {
	river.WorkerDefaults[SweepArgs]
	p *Jobs
}

// Timeout leaves room for the user being synced when the budget runs out.
func (w *atcoderSweepWorker) Timeout(*river.Job[SweepArgs]) time.Duration {
	return w.p.cfg.Budget + 15*time.Minute
}

// Work implements river.Worker. The first run of a sweep also records newly
// announced ADT contests and then brings the recorded contests' problems and
// difficulties up to date (failures there are logged, not fatal: user syncs
// do not depend on them).
func (w *atcoderSweepWorker) Work(ctx context.Context, job *river.Job[SweepArgs]) error {
	cfg := w.p.cfg
	if snoozes(job.JobRow) == 0 {
		if rep, err := cfg.Syncer.DiscoverContests(ctx); err != nil {
			cfg.Logger.Warn("atcoder: contest discovery failed", "err", err)
		} else if rep.Added > 0 {
			cfg.Logger.Info("atcoder: ADT contests discovered", "added", rep.Added, "listed", rep.ADT)
		}
		if rep, err := cfg.Syncer.SyncADTProblems(ctx); err != nil {
			cfg.Logger.Warn("atcoder: ADT problem sync failed", "err", err)
		} else if rep.Updated > 0 {
			cfg.Logger.Info("atcoder: ADT contest problems updated", "updated", rep.Updated, "contests", rep.Recorded, "problems", rep.Problems, "withDifficulty", rep.WithDifficulty)
		}
	}
	rep, err := cfg.Syncer.Sweep(ctx, SweepOptions{
		DueBefore: job.CreatedAt.Add(-cfg.MinAge),
		Deadline:  time.Now().Add(cfg.Budget),
	})
	cfg.Logger.Info("atcoder: sweep run", "synced", rep.Synced, "failed", rep.Failed, "done", rep.Done, "err", err)
	if err != nil {
		return err
	}
	if !rep.Done {
		return river.JobSnooze(time.Second)
	}
	return nil
}

// snoozes is how often River snoozed the job (its metadata's "snoozes").
func snoozes(row *rivertype.JobRow) int {
	var md struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(row.Metadata, &md)
	return md.Snoozes
}

// atcoderSyncWorker syncs one user now.
type atcoderSyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	p *Jobs
}

// Work implements river.Worker. A user who unlinked meanwhile is done.
func (w *atcoderSyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	rep, err := w.p.cfg.Syncer.SyncUser(ctx, job.Args.UserID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	w.p.cfg.Logger.Info("atcoder: synced", "user", rep.UserID, "handle", rep.Handle, "new", rep.New, "added", rep.Added, "solved", rep.Solved)
	return nil
}

// Queue queues on-demand syncs; it is the Service's SyncQueue.
type Queue struct {
	client *river.Client[pgx.Tx]
}

var _ SyncQueue = (*Queue)(nil)

// NewQueue returns a queue inserting with client (an insert-only client
// works: the job runs on any worker process).
func NewQueue(client *river.Client[pgx.Tx]) *Queue {
	return &Queue{client: client}
}

// EnqueueSync implements SyncQueue. It returns EINTERNAL when the
// insert fails.
func (q *Queue) EnqueueSync(ctx context.Context, userID string) (algoitny.AtCoderSyncResult, error) {
	res, err := q.client.Insert(ctx, SyncArgs{UserID: userID}, nil)
	if err != nil {
		return algoitny.AtCoderSyncResult{}, algoitny.Internal(err, "could not queue the AtCoder sync")
	}
	return algoitny.AtCoderSyncResult{JobID: res.Job.ID, AlreadyQueued: res.UniqueSkippedAsDuplicate}, nil
}
