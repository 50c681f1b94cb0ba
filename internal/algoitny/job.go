package algoitny

import "time"

// Job tracks one piece of async work run by River. The River job id links
// the two (it replaces the seeds' Celery task id).
type Job struct {
	ID         string
	Type       JobType
	Status     JobStatus
	UserID     string
	RiverJobID int64
	// IdempotencyKey makes duplicate submissions return the same job.
	IdempotencyKey string
	// Problem fields, for job types about a problem.
	Platform     Platform
	ProblemID    string
	Title        string
	ProblemURL   string
	Tags         []string
	SolutionCode string
	Language     Language
	Constraints  string
	// HistoryID is the execution this job produced or the one it hints.
	HistoryID string
	// UserEmail is the owner's email when the job was queued (the key of
	// their item): the worker reads the owner by it, one cached read,
	// instead of through the user-id index. Empty on older jobs.
	UserEmail string
	// IsCodePublic is the visibility an execution asked for.
	IsCodePublic bool
	// GeneratorCode is the result of a SCRIPT_GENERATION job.
	GeneratorCode string
	// PaidWith names the usage log that paid for the job, written in the
	// same transaction (Charge); nil for a job that cost nothing. The log
	// names the job back.
	PaidWith *UsageRef
	// Params holds a job type's JSON parameters that no field above has
	// (PackageImportParams).
	Params string
	// Result holds a job type's JSON result.
	Result       string
	ErrorMessage string
	Attempt      int
	CreatedAt    time.Time
	UpdatedAt    time.Time
	StartedAt    *time.Time
	FinishedAt   *time.Time
	// History is the execution the job produced, attached to live events so
	// that subscribers need no read per event. It is never stored.
	History *SearchHistory
}

// JobProgress is one step of a job's progress, kept as history (seed 003's
// JobProgressHistory).
type JobProgress struct {
	// ID is unique within the job and orders steps in time.
	ID      string
	JobID   string
	Step    string
	Message string
	Status  JobStatus
	// Percent is 0–100, or -1 when unknown.
	Percent   int
	CreatedAt time.Time
}

// JobFilter narrows a job list. Type and Status may not both be set to
// non-nil when listing everyone's jobs (one index serves each).
type JobFilter struct {
	Type   *JobType
	Status *JobStatus
	UserID string
}

// JobTransition is a status change with the fields that change with it.
type JobTransition struct {
	Status JobStatus
	// Problem, when set, points the job to the problem it made or found
	// (an extraction learns it only from the page it reads).
	Problem       *ProblemRef
	RiverJobID    *int64
	HistoryID     *string
	GeneratorCode *string
	Result        *string
	ErrorMessage  *string
	Attempt       *int
}

// PackageImportParams are the parameters of a PACKAGE_IMPORT job (its
// Params); the package itself is the job's upload.
type PackageImportParams struct {
	// FileName is the uploaded file's name, for messages.
	FileName string `json:"fileName"`
	// Publish makes the problem completed at once.
	Publish bool `json:"publish,omitempty"`
	// RequireVerified refuses a package whose submissions do not all get
	// what their folders or tags require.
	RequireVerified bool `json:"requireVerified,omitempty"`
}

// PackageImportResult is the JSON result of a completed PACKAGE_IMPORT
// job: the problem made and the verification it ran.
type PackageImportResult struct {
	Platform  Platform `json:"platform"`
	ProblemID string   `json:"problemId"`
	Tests     int      `json:"tests"`
	Subtasks  int      `json:"subtasks"`
	// Report is the package verification's report (problempkg.Report).
	Report any      `json:"report"`
	Notes  []string `json:"notes,omitempty"`
}

// ScriptResult is the JSON result of a completed SCRIPT_GENERATION job (the
// generator code itself is Job.GeneratorCode).
type ScriptResult struct {
	GeneratorLanguage Language `json:"generatorLanguage"`
	Notes             string   `json:"notes,omitempty"`
	Provider          string   `json:"provider,omitempty"`
}
