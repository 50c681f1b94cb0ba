// Package submissions holds the use cases of async work: submitting code
// (Execute), asking for hints, test-case generation and problem extraction,
// reading and cancelling jobs. It owns their rules — input limits, the
// quota charged in the same write as the job, idempotency keys — and hands
// stored jobs to an Enqueuer (internal/jobs.Runner, on River) to run. It
// imports neither River nor internal/jobs, so that the rules are tested
// with DynamoDB Local alone.
package submissions

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// Input limits of the job-starting operations.
const (
	MaxCodeBytes         = 64 << 10
	MaxIdempotencyKeyLen = 100
	MaxConstraintsLen    = 4000
	MaxTitleLen          = 200
	maxURLLen            = 2000
	maxTags              = 20
	maxProblemIDLen      = 64
)

// Store is the storage the service needs (internal/dynamo).
type Store interface {
	// CreateChargedJob stores a PENDING job with the use that pays for it
	// in one transaction; created is false for a repeated idempotency key.
	CreateChargedJob(ctx context.Context, j *algoitny.Job, charge *algoitny.Charge) (job *algoitny.Job, created bool, err error)
	GetJob(ctx context.Context, id string) (*algoitny.Job, error)
	GetJobByIdempotencyKey(ctx context.Context, userID, key string) (*algoitny.Job, error)
	ListJobs(ctx context.Context, f algoitny.JobFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error)
	ListJobProgress(ctx context.Context, jobID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.JobProgress], error)
	GetJobProgress(ctx context.Context, jobID, id string) (*algoitny.JobProgress, error)
	TransitionJobFrom(ctx context.Context, cur *algoitny.Job, t algoitny.JobTransition) (*algoitny.Job, error)
	NewJobProgressID() (string, time.Time)
	AddJobProgress(ctx context.Context, p *algoitny.JobProgress) error
	GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
}

// Problems reads problems with the caller's visibility rules (problems.Service).
type Problems interface {
	Get(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
}

// Quota meters actions against the caller's plan (accounts.Service).
type Quota interface {
	// Charge prepares one use of log.Action by the caller, spent when the
	// job is stored with it (EUNAUTHENTICATED).
	Charge(ctx context.Context, log *algoitny.UsageLog) (*algoitny.Charge, error)
}

// Enqueuer runs stored jobs (internal/jobs.Runner, on River). It exists so
// that the service depends on what it asks of the queue, not on River.
type Enqueuer interface {
	// Enqueue queues a stored PENDING job and links its record to the
	// queued work, returning the record as stored (linked when it could
	// be). Queueing a job twice queues it once. An error means the job is
	// not linked; the reaper queues (or links) it later.
	Enqueue(ctx context.Context, job *algoitny.Job) (*algoitny.Job, error)
	// Cancel stops the queued work of a job whose record is CANCELLED: a
	// queued one never starts, a running one's context is cancelled. A job
	// never queued, or whose work is gone, is no error.
	Cancel(ctx context.Context, job *algoitny.Job) error
}

// Workers reads the records of the live judge workers (internal/dynamo),
// each with the languages its judge runs.
type Workers interface {
	ListWorkers(ctx context.Context) ([]*algoitny.Worker, error)
}

// Publisher announces job changes to subscribers (jobs.Events).
type Publisher interface {
	PublishJob(ctx context.Context, job *algoitny.Job, progress *algoitny.JobProgress)
}

// Service starts, reads and cancels jobs on behalf of users.
//
// Enqueueing writes the DynamoDB record (PENDING) together with the use of
// the quota that pays for it, in one transaction; then it hands the job to
// the Enqueuer, which queues it and links the two. DynamoDB and the queue
// (PostgreSQL) cannot share a transaction, so nothing after the first write
// is undone: a job whose queueing failed (PostgreSQL unreachable, the
// process killed) stays PENDING and unlinked, paid for, and the reaper
// queues it (jobs.Runner.Reap); one whose link failed is linked by its
// worker when it starts, or by the reaper. Queueing twice is harmless.
type Service struct {
	Store    Store
	Problems Problems
	Quota    Quota
	// CanRegister says whether the caller may register problems (test-case
	// generation and extraction need it).
	CanRegister func(ctx context.Context) error
	// Queue runs the stored jobs.
	Queue Enqueuer
	// Uploads keeps the packages of PACKAGE_IMPORT jobs (ImportPackage).
	Uploads Uploads
	// Events announces cancellations to subscribers (optional).
	Events Publisher
	// Workers are the judge workers' records, read so that Execute refuses
	// a language no live worker runs before it charges anything (optional:
	// without it every language is accepted).
	Workers Workers
	// offerCache keeps the workers' offers for offersFresh.
	offerCache offerCache
	// Searchable says whether a problem supports counterexample searches
	// (practice.Supports; optional: without it every problem is taken,
	// and the job fails on one that does not).
	Searchable SearchCheck
	// ExtraExtractHosts may be extracted from besides the supported judges
	// (tests point it at local servers).
	ExtraExtractHosts []string
	// Logger receives what cannot be returned (default slog.Default()).
	Logger *slog.Logger
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ExtractHosts are the judges whose problem pages extraction reads.
var ExtractHosts = []string{"www.acmicpc.net", "acmicpc.net", "codeforces.com", "www.codeforces.com", "atcoder.jp"}

// ExecuteInput is a code submission.
type ExecuteInput struct {
	Problem        algoitny.ProblemRef
	Language       algoitny.Language
	Code           string
	IsCodePublic   bool
	IdempotencyKey string
}

// Execute submits code against a problem's test cases. It charges one
// execution from the caller's daily quota (exactly, under concurrency) and
// returns the PENDING job; a repeated IdempotencyKey returns the first job
// without charging again. Returns EUNAUTHENTICATED, EINVALID (field
// "language" for a language no live judge worker runs: see Languages),
// ENOTFOUND (no such visible problem), ERATELIMITED.
func (s *Service) Execute(ctx context.Context, in ExecuteInput) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	if err := validateCode(in.Language, in.Code); err != nil {
		return nil, err
	}
	if err := validateIdempotencyKey(in.IdempotencyKey); err != nil {
		return nil, err
	}
	if existing, err := s.existing(ctx, in.IdempotencyKey); existing != nil || err != nil {
		return existing, err
	}
	if err := s.requireOffered(ctx, in.Language); err != nil {
		return nil, err
	}
	p, err := s.Problems.Get(ctx, in.Problem)
	if err != nil {
		return nil, err
	}
	if p.IsDeleted || p.TestCaseCount == 0 {
		return nil, algoitny.Invalid("problemId", "the problem has no test cases yet")
	}
	if in.IsCodePublic && !p.IsPublished() {
		return nil, algoitny.Invalid("isCodePublic", "executions of a draft problem cannot be public")
	}
	job := &algoitny.Job{
		Type: algoitny.JobCodeExecution, UserID: a.UserID(), IdempotencyKey: in.IdempotencyKey,
		Platform: p.Platform, ProblemID: p.ProblemID, Title: p.Title, Language: in.Language,
		SolutionCode: in.Code, IsCodePublic: in.IsCodePublic,
	}
	log := &algoitny.UsageLog{Action: algoitny.ActionExecution, Platform: p.Platform, ProblemID: p.ProblemID}
	return s.enqueue(ctx, job, log)
}

// GenerateHints asks for hints on one of the caller's executions. It charges
// one hint unless the execution already has hints (the job then completes at
// once with them). Returns EUNAUTHENTICATED, ENOTFOUND, EINVALID (every
// test passed: nothing to hint), ERATELIMITED.
func (s *Service) GenerateHints(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	// Fresh: whether it has hints already decides whether this one is charged.
	h, err := s.Store.GetHistory(algoitny.WithFreshReads(ctx), ref)
	if err != nil {
		return nil, err
	}
	if !a.OwnsOrStaff(h.UserID) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	if h.Verdict == algoitny.VerdictAccepted {
		return nil, algoitny.Invalid("historyId", "every test passed; there is nothing to hint")
	}
	job := &algoitny.Job{
		Type: algoitny.JobHintGeneration, UserID: h.UserID, HistoryID: h.ID,
		Platform: h.Platform, ProblemID: h.ProblemID, Title: h.ProblemTitle, Language: h.Language,
	}
	var log *algoitny.UsageLog
	if len(h.Hints) == 0 {
		log = &algoitny.UsageLog{Action: algoitny.ActionHint, Platform: h.Platform, ProblemID: h.ProblemID, HistoryID: h.ID}
	}
	return s.enqueue(ctx, job, log)
}

// ScriptInput describes a problem whose test-case generator an LLM should write.
type ScriptInput struct {
	Problem      algoitny.ProblemRef
	Title        string
	ProblemURL   string
	Tags         []string
	SolutionCode string
	Language     algoitny.Language
	Constraints  string
}

// GenerateTestCases starts a SCRIPT_GENERATION job. The caller must be able
// to register problems. Returns EUNAUTHENTICATED, EFORBIDDEN, EINVALID.
func (s *Service) GenerateTestCases(ctx context.Context, in ScriptInput) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := s.CanRegister(ctx); err != nil {
		return nil, err
	}
	if err := validateScript(&in); err != nil {
		return nil, err
	}
	job := &algoitny.Job{
		Type: algoitny.JobScriptGeneration, UserID: a.UserID(),
		Platform: in.Problem.Platform, ProblemID: in.Problem.ProblemID, Title: in.Title, ProblemURL: in.ProblemURL,
		Tags: in.Tags, SolutionCode: in.SolutionCode, Language: in.Language, Constraints: in.Constraints,
	}
	return s.enqueue(ctx, job, nil)
}

func validateScript(in *ScriptInput) error {
	if _, err := algoitny.ParsePlatform(string(in.Problem.Platform)); err != nil {
		return err
	}
	if _, err := algoitny.ParseLanguage(string(in.Language)); err != nil {
		return err
	}
	in.Problem.ProblemID = strings.TrimSpace(in.Problem.ProblemID)
	if in.Problem.ProblemID == "" || len(in.Problem.ProblemID) > maxProblemIDLen {
		return algoitny.Invalid("problemId", "problemId must be 1–%d characters", maxProblemIDLen)
	}
	if t := strings.TrimSpace(in.Title); t == "" || utf8.RuneCountInString(t) > MaxTitleLen {
		return algoitny.Invalid("title", "title must be 1–%d characters", MaxTitleLen)
	}
	if strings.TrimSpace(in.SolutionCode) == "" || len(in.SolutionCode) > MaxCodeBytes {
		return algoitny.Invalid("solutionCode", "solutionCode is required (at most %d KB)", MaxCodeBytes>>10)
	}
	if utf8.RuneCountInString(in.Constraints) > MaxConstraintsLen {
		return algoitny.Invalid("constraints", "constraints must be at most %d characters", MaxConstraintsLen)
	}
	if len(in.Tags) > maxTags {
		return algoitny.Invalid("tags", "at most %d tags", maxTags)
	}
	if in.ProblemURL != "" {
		if _, err := parseHTTPURL(in.ProblemURL); err != nil {
			return algoitny.Invalid("problemUrl", "problemUrl must be an http(s) URL")
		}
	}
	return nil
}

// ExtractProblem starts a PROBLEM_EXTRACTION job for a judge's problem page.
// The caller must be able to register problems. Returns EUNAUTHENTICATED,
// EFORBIDDEN, EINVALID.
func (s *Service) ExtractProblem(ctx context.Context, rawURL string) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := s.CanRegister(ctx); err != nil {
		return nil, err
	}
	u, err := parseHTTPURL(rawURL)
	if err != nil {
		return nil, algoitny.Invalid("url", "url must be an http(s) URL")
	}
	if !slices.Contains(ExtractHosts, strings.ToLower(u.Hostname())) && !slices.Contains(s.ExtraExtractHosts, u.Host) {
		return nil, algoitny.Invalid("url", "only Baekjoon (acmicpc.net), Codeforces and AtCoder problem pages can be extracted")
	}
	job := &algoitny.Job{Type: algoitny.JobProblemExtraction, UserID: a.UserID(), ProblemURL: u.String()}
	return s.enqueue(ctx, job, nil)
}

func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > maxURLLen {
		return nil, errors.New("not an http(s) URL")
	}
	return u, nil
}

func validateIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKeyLen || strings.ContainsAny(k, "#\x00") {
		return algoitny.Invalid("idempotencyKey", "idempotencyKey must be at most %d characters without '#'", MaxIdempotencyKeyLen)
	}
	return nil
}

// existing returns the caller's job for an idempotency key, if any.
func (s *Service) existing(ctx context.Context, key string) (*algoitny.Job, error) {
	if key == "" {
		return nil, nil
	}
	j, err := s.Store.GetJobByIdempotencyKey(ctx, algoitny.ActorFrom(ctx).UserID(), key)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil, nil
	}
	return j, err
}

// enqueue stores the job with its charge (if log is set) in one
// transaction, then queues it. A failure after the job is stored is not
// undone — there is no charge without its job, nor a job without its
// charge, to repair: the job is returned PENDING, and if it could not be
// queued the reaper queues it.
func (s *Service) enqueue(ctx context.Context, job *algoitny.Job, log *algoitny.UsageLog) (*algoitny.Job, error) {
	if u := algoitny.ActorFrom(ctx).User; u != nil && job.UserID == u.ID {
		job.UserEmail = u.Email // the worker's key to its owner
	}
	var charge *algoitny.Charge
	if log != nil {
		var err error
		if charge, err = s.Quota.Charge(ctx, log); err != nil {
			return nil, err
		}
	}
	created, isNew, err := s.Store.CreateChargedJob(ctx, job, charge)
	if err != nil || !isNew { // !isNew: an idempotent repeat that raced past the first check
		return created, err
	}
	queued, err := s.Queue.Enqueue(ctx, created)
	if err != nil {
		s.logger().WarnContext(ctx, "job stored but not queued; the reaper queues it", "job", created.ID, "err", err)
	}
	return queued, nil
}

// Get returns a job of the caller (staff: any job). ENOTFOUND otherwise.
func (s *Service) Get(ctx context.Context, id string) (*algoitny.Job, error) {
	j, err := s.Store.GetJob(ctx, id)
	if err != nil {
		return nil, err
	}
	if !algoitny.ActorFrom(ctx).OwnsOrStaff(j.UserID) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	return j, nil
}

// List pages through the caller's jobs, or for staff through everyone's jobs
// of a type or status. EUNAUTHENTICATED when anonymous.
func (s *Service) List(ctx context.Context, typ *algoitny.JobType, status *algoitny.JobStatus, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return algoitny.Page[*algoitny.Job]{}, err
	}
	f := algoitny.JobFilter{Type: typ, Status: status, UserID: a.UserID()}
	if a.IsStaff() && (typ != nil || status != nil) {
		f.UserID = ""
	}
	return s.Store.ListJobs(ctx, f, page)
}

// Progress pages through a job's progress steps (the job must be the
// caller's, or the caller staff). ENOTFOUND otherwise.
func (s *Service) Progress(ctx context.Context, j *algoitny.Job, page algoitny.PageRequest) (algoitny.Page[*algoitny.JobProgress], error) {
	if !algoitny.ActorFrom(ctx).OwnsOrStaff(j.UserID) {
		return algoitny.Page[*algoitny.JobProgress]{}, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	return s.Store.ListJobProgress(ctx, j.ID, page)
}

// ProgressStep returns one progress step of a job of the caller. ENOTFOUND otherwise.
func (s *Service) ProgressStep(ctx context.Context, jobID, id string) (*algoitny.JobProgress, error) {
	if _, err := s.Get(ctx, jobID); err != nil {
		return nil, err
	}
	return s.Store.GetJobProgress(ctx, jobID, id)
}

// Cancel stops a job of the caller: a pending job never runs, a running one
// is stopped at once (its processes are killed). Returns ENOTFOUND, or
// ECONFLICT for a job that already finished.
func (s *Service) Cancel(ctx context.Context, id string) (*algoitny.Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.Status.Final() {
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "the job already finished (%s)", j.Status)
	}
	cancelled, err := s.Store.TransitionJobFrom(ctx, j, algoitny.JobTransition{Status: algoitny.JobCancelled})
	if err != nil {
		return nil, err
	}
	// The record is CANCELLED: the rest is done even if the client goes away.
	ctx = context.WithoutCancel(ctx)
	p := &algoitny.JobProgress{JobID: id, Step: "cancelled", Message: "cancelled by the user", Status: algoitny.JobCancelled, Percent: -1}
	// Followers learn first; the step is logged after (the job's status,
	// which is what they act on, is stored already).
	p.ID, p.CreatedAt = s.Store.NewJobProgressID()
	if s.Events != nil {
		s.Events.PublishJob(ctx, cancelled, p)
	}
	if err := s.Store.AddJobProgress(ctx, p); err != nil {
		// Not the caller's either: the record is CANCELLED; only the step's
		// log line is missing.
		s.logger().WarnContext(ctx, "job cancelled but its progress step not stored", "job", id, "err", err)
	}
	// The queue cancels a running job's context (the worker kills its
	// processes) and makes sure a queued one never starts. Its failure is
	// not the caller's: the record is CANCELLED, and the worker checks it
	// before storing results.
	if err := s.Queue.Cancel(ctx, j); err != nil {
		s.logger().WarnContext(ctx, "job cancelled but its queued work not stopped", "job", id, "err", err)
	}
	return cancelled, nil
}
