package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/llm"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// Store is what the runner, its workers and its reaper need from storage
// (internal/dynamo): the narrow interfaces below, one per part, so that
// each part names what it reads and writes.
type Store interface {
	LifecycleStore
	ExecutionStore
	AIStore
	PracticeStore
}

// LifecycleStore is what every worker's frame (run, progress,
// finish), the batcher, the queue and the reaper need: the job record, its
// steps and its owner.
type LifecycleStore interface {
	GetJob(ctx context.Context, id string) (*algoitny.Job, error)
	ListStaleJobsPage(ctx context.Context, status algoitny.JobStatus, cutoff time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error)
	SetRiverJobID(ctx context.Context, id string, riverJobID int64) (*algoitny.Job, error)
	TransitionJob(ctx context.Context, id string, t algoitny.JobTransition) (*algoitny.Job, error)
	TransitionJobFrom(ctx context.Context, cur *algoitny.Job, t algoitny.JobTransition) (*algoitny.Job, error)
	AddJobProgress(ctx context.Context, p *algoitny.JobProgress) error
	NewHistoryID() (string, time.Time)
	GetUserByID(ctx context.Context, id string) (*algoitny.User, error)
	GetUserByEmail(ctx context.Context, email string) (*algoitny.User, error)
	// PutExecutionTests and ListExecutionTests keep the finished tests of a
	// running execution (for subscribers who join late, and for a retried
	// job to resume from).
	PutExecutionTests(ctx context.Context, evs []algoitny.ExecutionEvent) error
	ListExecutionTests(ctx context.Context, jobID string) ([]algoitny.ExecutionEvent, error)
}

// ExecutionStore is what the CODE_EXECUTION worker reads and writes
// besides the job's frame.
type ExecutionStore interface {
	GetProblemWithTestCases(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, []*algoitny.TestCase, error)
	CreateHistory(ctx context.Context, h *algoitny.SearchHistory) error
	// CompleteExecution stores an execution and completes its job in one
	// transaction; CountExecution then counts it in the global statistics.
	CompleteExecution(ctx context.Context, h *algoitny.SearchHistory, cur *algoitny.Job, t algoitny.JobTransition, p *algoitny.JobProgress) (*algoitny.Job, error)
	CountExecution(ctx context.Context, h *algoitny.SearchHistory) error
	ListExecutionTests(ctx context.Context, jobID string) ([]algoitny.ExecutionEvent, error)
}

// AIStore is what the hint, script-generation and extraction workers read
// and write besides the job's frame.
type AIStore interface {
	GetProblemWithTestCases(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, []*algoitny.TestCase, error)
	GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
	SetHints(ctx context.Context, ref algoitny.HistoryRef, hints []string) (*algoitny.SearchHistory, error)
	GetPlan(ctx context.Context, name string) (*algoitny.Plan, error)
	CreateProblem(ctx context.Context, p *algoitny.Problem, maxProblems int) error
	AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) error
	DiscardProblem(ctx context.Context, ref algoitny.ProblemRef, createdBy string) error
}

// Judge runs a submission against test cases (*judge.Engine). The
// CODE_EXECUTION worker depends on this method alone, so that it is tested
// with a stand-in judge, without a sandbox.
type Judge interface {
	// Judge reports each test through onTest as it finishes and returns
	// the whole result; its errors are judge.ErrUnknownLanguage,
	// judge.ErrLanguageUnavailable, judge.ErrInvalidInput or the
	// infrastructure's.
	Judge(ctx context.Context, sub judge.Submission, onTest func(judge.TestResult)) (judge.Result, error)
}

var _ Judge = (*judge.Engine)(nil)

// Migrate applies River's migrations to the database of pool, in schema
// ("" = the connection's search path). It is idempotent and returns the
// versions it applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string) ([]int, error) {
	if schema != "" {
		if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
			return nil, fmt.Errorf("create schema %s: %w", schema, err)
		}
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	var versions []int
	for _, v := range res.Versions {
		versions = append(versions, v.Version)
	}
	return versions, nil
}

// Config configures a Runner.
type Config struct {
	Pool   *pgxpool.Pool
	Schema string // River's schema; "" = search path
	Store  Store
	Events *Events
	// Judge runs CODE_EXECUTION jobs (required when Work is set; leave it
	// nil, not a nil *judge.Engine, when there is none).
	Judge Judge
	// JudgeReady, when set, is closed once the judge has warmed its
	// toolchains (judge.Engine.Warm): the runner works the judge's queue
	// (QueueJudge) only from then on, so that a worker starting on a cold
	// machine leaves executions to warm workers, or to itself once warm.
	// Nil: at once.
	JudgeReady <-chan struct{}
	// LLM writes hints and generators and reads problem pages (default: the
	// offline provider).
	LLM llm.Provider
	// Fetch fetches problem pages for extraction (default: a safehttp.Client
	// with default settings).
	Fetch *safehttp.Client
	// StandInHosts serve copies of the judges\' pages (tests): their paths are
	// read as the real site\'s, which the page\'s layout names.
	StandInHosts []string
	Logger       *slog.Logger
	// Work runs workers in this process; false makes an insert-only client
	// (API-only replicas, `serve --no-workers`).
	Work bool
	// MaxWorkers bounds concurrent jobs in this process (default 4).
	MaxWorkers int
	// ReapInterval is how often the stale-job reaper runs (default 1 min).
	ReapInterval time.Duration
	// StaleAfter is how long a job may sit in PENDING or PROCESSING without an
	// update before the reaper looks at it (default 10 min).
	StaleAfter time.Duration
	// FetchCooldown is the least time between two fetches of jobs (default
	// 20 ms; River's is 100 ms). A job inserted within it of the last fetch
	// (the poll's, or another job's) waits for its end: with River's default
	// a user's execution waited 0–100 ms before it started. A shorter one
	// costs at most one more fetch query per cooldown while jobs arrive.
	// FetchPollInterval is the fallback poll (default 250 ms).
	FetchCooldown, FetchPollInterval time.Duration
	// ExecutionProgressInterval is how often a running execution stores
	// and announces its finished tests: in batches at most this often, a
	// batch holding every test finished since the last, the first an
	// interval after the attempt began (default 250 ms; negative: each
	// test at once).
	ExecutionProgressInterval time.Duration
	// JobTimeout bounds one attempt of a job (default 10 min); River cancels
	// its context after it.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay "running" in River before River
	// considers its worker dead (killed, crashed) and retries it (default
	// JobTimeout + 5 min).
	RescueAfter time.Duration
	// RetryBase is the first retry's delay; each further retry waits four
	// times longer, up to 10 minutes (default 1 s: 1 s, 4 s, 16 s, …).
	RetryBase time.Duration
	// Plugins add the workers and periodic jobs of other features (AtCoder
	// sync, URL watches) to this runner: it hosts them without knowing
	// them. They queue their jobs with a client of their own
	// (NewInsertClient).
	Plugins []Plugin
	// Packages imports problem packages (PACKAGE_IMPORT jobs) and
	// PackageStore keeps their uploads; without them such jobs fail.
	Packages     PackageImporter
	PackageStore PackageStore
	// Practice runs CODE_RUN and COUNTEREXAMPLE jobs (*practice.Runner);
	// without it such jobs fail. CounterexampleBudget and
	// CounterexampleMaxInputs bound one search (defaults:
	// practice.DefaultBudget, practice.DefaultMaxInputs).
	Practice                Practice
	CounterexampleBudget    time.Duration
	CounterexampleMaxInputs int
}

// Plugin contributes River workers and periodic jobs to the runner. A
// feature's jobs live beside its worker; the runner only hosts them.
type Plugin interface {
	// Register adds the plugin's workers.
	Register(workers *river.Workers) error
	// PeriodicJobs returns the plugin's periodic jobs (may be nil).
	PeriodicJobs() []*river.PeriodicJob
}

// QueuePlugin is a Plugin whose jobs run in queues of their own, so that
// they do not compete with executions for the default queue's workers.
type QueuePlugin interface {
	Plugin
	Queues() map[string]river.QueueConfig
}

// retryPolicy backs off exponentially from a base (River's default grows as
// attempt⁴ seconds, too slow for tests and for users watching a job).
type retryPolicy struct{ base time.Duration }

// NextRetry implements river.ClientRetryPolicy.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := p.base
	for i := 1; i < job.Attempt && d < 10*time.Minute; i++ {
		d *= 4
	}
	return time.Now().Add(min(d, 10*time.Minute))
}

// defaultFetchCooldown is Config.FetchCooldown's default.
const defaultFetchCooldown = 20 * time.Millisecond

// Runner owns the River client.
type Runner struct {
	cfg    Config
	client *river.Client[pgx.Tx]

	// The judge's queue, added once the judge is ready (openJudgeQueue).
	judgeQueue sync.Mutex
	stopping   bool
	judgeWait  chan struct{} // closed when openJudgeQueue has returned; nil: not started
	stopWait   chan struct{} // closed by Stop

	// halting is set when Stop's grace is over and River cancels the
	// running jobs: their attempts are handed back to the queue
	// (Runner.failed), not counted as failures.
	halting atomic.Bool
}

// errMissingJudge is New's error for workers without a judge or events.
var errMissingJudge = errors.New("jobs: workers need a judge and events (Config.Judge, Config.Events), or set Work to false for an insert-only runner")

// New builds the River client with every job kind registered: the
// defaults of cfg, then its checks, then the client.
func New(cfg Config) (*Runner, error) {
	cfg = cfg.withDefaults()
	if cfg.Work && (cfg.Judge == nil || cfg.Events == nil) {
		return nil, errMissingJudge
	}
	r := &Runner{cfg: cfg}
	rc := &river.Config{
		Schema:               cfg.Schema,
		Logger:               cfg.Logger,
		FetchCooldown:        cfg.FetchCooldown,
		FetchPollInterval:    cfg.FetchPollInterval,
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
		RetryPolicy:          retryPolicy{base: cfg.RetryBase},
	}
	if cfg.Work {
		if err := r.addWorkers(rc); err != nil {
			return nil, err
		}
	}
	client, err := river.NewClient(riverpgxv5.New(cfg.Pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	r.client = client
	return r, nil
}

// withDefaults returns cfg with every unset field at its default.
func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxWorkers == 0 {
		cfg.MaxWorkers = 4
	}
	if cfg.ReapInterval == 0 {
		cfg.ReapInterval = time.Minute
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = 10 * time.Minute
	}
	if cfg.JobTimeout == 0 {
		cfg.JobTimeout = 10 * time.Minute
	}
	if cfg.RescueAfter == 0 {
		cfg.RescueAfter = cfg.JobTimeout + 5*time.Minute
	}
	if cfg.FetchPollInterval == 0 {
		// River notifies a queue at most once per FetchCooldown, so a job
		// inserted right after another waits for the next poll: keep it short.
		cfg.FetchPollInterval = 250 * time.Millisecond
	}
	if cfg.ExecutionProgressInterval == 0 {
		cfg.ExecutionProgressInterval = 250 * time.Millisecond
	}
	if cfg.FetchCooldown == 0 {
		cfg.FetchCooldown = min(defaultFetchCooldown, cfg.FetchPollInterval)
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = time.Second
	}
	if cfg.LLM == nil {
		cfg.LLM = llm.NewOffline()
	}
	if cfg.Fetch == nil {
		cfg.Fetch = safehttp.New(safehttp.Config{})
	}
	return cfg
}

// addWorkers registers the workers, queues and periodic jobs of every job
// kind and of the plugins in rc.
func (r *Runner) addWorkers(rc *river.Config) error {
	workers := river.NewWorkers()
	for _, add := range []func() error{
		func() error { return river.AddWorkerSafely(workers, &reapWorker{runner: r}) },
		func() error {
			return river.AddWorkerSafely(workers, &executeWorker{runner: r, store: r.cfg.Store, judge: r.cfg.Judge})
		},
		func() error { return river.AddWorkerSafely(workers, &hintWorker{runner: r}) },
		func() error { return river.AddWorkerSafely(workers, &scriptWorker{runner: r}) },
		func() error { return river.AddWorkerSafely(workers, &extractWorker{runner: r}) },
		func() error { return river.AddWorkerSafely(workers, &packageWorker{runner: r}) },
		func() error { return river.AddWorkerSafely(workers, &codeRunWorker{runner: r}) },
		func() error { return river.AddWorkerSafely(workers, &counterexampleWorker{runner: r}) },
	} {
		if err := add(); err != nil {
			return err
		}
	}
	rc.Workers = workers
	rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: r.cfg.MaxWorkers}}
	if r.cfg.JudgeReady == nil {
		rc.Queues[QueueJudge] = river.QueueConfig{MaxWorkers: r.cfg.MaxWorkers}
	}
	rc.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(r.cfg.ReapInterval),
		func() (river.JobArgs, *river.InsertOpts) { return ReapArgs{}, nil },
		&river.PeriodicJobOpts{ID: "reap_stale_jobs", RunOnStart: true},
	)}
	for _, p := range r.cfg.Plugins {
		if err := p.Register(workers); err != nil {
			return err
		}
		rc.PeriodicJobs = append(rc.PeriodicJobs, p.PeriodicJobs()...)
		if qp, ok := p.(QueuePlugin); ok {
			for name, q := range qp.Queues() {
				rc.Queues[name] = q
			}
		}
	}
	return nil
}

// Start starts working jobs (a no-op for an insert-only runner): every
// queue at once, the judge's once Config.JudgeReady is closed.
func (r *Runner) Start(ctx context.Context) error {
	if !r.cfg.Work {
		return nil
	}
	if err := r.client.Start(ctx); err != nil {
		return err
	}
	if r.cfg.JudgeReady != nil {
		r.judgeWait, r.stopWait = make(chan struct{}), make(chan struct{})
		go r.openJudgeQueue(ctx)
	}
	return nil
}

// openJudgeQueue starts working the judge's queue once the judge is ready,
// unless the runner stops first.
func (r *Runner) openJudgeQueue(ctx context.Context) {
	defer close(r.judgeWait)
	select {
	case <-r.cfg.JudgeReady:
	case <-r.stopWait:
		return
	case <-ctx.Done():
		return
	}
	r.judgeQueue.Lock()
	defer r.judgeQueue.Unlock()
	if r.stopping {
		return
	}
	if err := r.client.Queues().Add(QueueJudge, river.QueueConfig{MaxWorkers: r.cfg.MaxWorkers}); err != nil {
		r.cfg.Logger.Error("cannot work the judge's queue", "queue", QueueJudge, "err", err)
		return
	}
	r.cfg.Logger.Info("the judge is warm: working its queue", "queue", QueueJudge)
}

// Stop stops fetching new jobs and waits for running ones to finish until ctx
// is done; then it cancels them, and River retries them later.
func (r *Runner) Stop(ctx context.Context) error {
	if !r.cfg.Work {
		return nil
	}
	if r.judgeWait != nil {
		r.judgeQueue.Lock()
		if !r.stopping {
			r.stopping = true
			close(r.stopWait)
		}
		r.judgeQueue.Unlock()
		<-r.judgeWait
	}
	err := r.client.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		hard, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.halting.Store(true)
		return r.client.StopAndCancel(hard)
	}
	return err
}

// NewInsertClient returns a River client of the runner's database and
// schema that inserts, reads and wakes jobs but works none. The features
// whose River jobs the runner hosts (URL checks, AtCoder sync) queue them
// with it, so that they are built before the runner that works them and
// need no reference to it.
func NewInsertClient(pool *pgxpool.Pool, schema string, logger *slog.Logger) (*river.Client[pgx.Tx], error) {
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("river insert client: %w", err)
	}
	return client, nil
}

// Client exposes the River client (for tests and the reaper).
func (r *Runner) Client() *river.Client[pgx.Tx] { return r.client }
