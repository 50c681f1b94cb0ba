package jobs

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The River job kinds. Each carries only the id of its DynamoDB Job record;
// everything else is read from the record, so a retried River job works on
// the current state. Each is unique by its args (uniqueByJob): a record has
// at most one River job however often it is queued (Runner.Enqueue).

// uniqueByJob makes a second insert of a record's River job return the
// first one, in whatever state it is until River's cleaner deletes it (a
// cancelled or discarded one too: the reaper then settles the record from
// that state instead of running the job again).
var uniqueByJob = river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded,
	rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled,
}}

// ExecuteArgs runs a CODE_EXECUTION job.
type ExecuteArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (ExecuteArgs) Kind() string { return "code_execution" }

// InsertOpts: a few retries; the judge is deterministic, so retries only
// cover crashes and infrastructure errors (a compiler that timed out on a
// busy machine among them). Executions go to the judge's queue
// (QueueJudge), which a worker works only once its judge is warm.
func (ExecuteArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: uniqueByJob, Queue: QueueJudge}
}

// QueueJudge is the River queue of the jobs that run the judge
// (executions): a worker starts working it once its judge has warmed its
// toolchains (Config.JudgeReady), so that no submission pays for — or is
// failed by — a cold toolchain. Executions queued before it existed, in
// the default queue, are still worked there.
const QueueJudge = "judge"

// HintArgs runs a HINT_GENERATION job.
type HintArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (HintArgs) Kind() string { return "hint_generation" }

// InsertOpts: LLM providers fail transiently; retry more.
func (HintArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueByJob}
}

// ScriptArgs runs a SCRIPT_GENERATION job (a test-case generator from an LLM).
type ScriptArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (ScriptArgs) Kind() string { return "script_generation" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ScriptArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueByJob}
}

// ExtractArgs runs a PROBLEM_EXTRACTION job.
type ExtractArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (ExtractArgs) Kind() string { return "problem_extraction" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (ExtractArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: uniqueByJob}
}

// argsFor returns the River args of a job type.
func argsFor(t string, jobID string) river.JobArgs {
	switch t {
	case "CODE_EXECUTION":
		return ExecuteArgs{JobID: jobID}
	case "HINT_GENERATION":
		return HintArgs{JobID: jobID}
	case "SCRIPT_GENERATION":
		return ScriptArgs{JobID: jobID}
	case "PACKAGE_IMPORT":
		return PackageImportArgs{JobID: jobID}
	case "CODE_RUN":
		return CodeRunArgs{JobID: jobID}
	case "COUNTEREXAMPLE":
		return CounterexampleArgs{JobID: jobID}
	default:
		return ExtractArgs{JobID: jobID}
	}
}
