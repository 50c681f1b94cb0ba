package algoitny

import (
	"slices"
	"strings"
)

// Platform is the online judge a problem comes from. Values are lower-case and
// appear inside DynamoDB keys, so the set is closed: ParsePlatform refuses
// anything else.
type Platform string

// The supported platforms.
const (
	PlatformBaekjoon    Platform = "baekjoon"
	PlatformCodeforces  Platform = "codeforces"
	PlatformAtCoder     Platform = "atcoder"
	PlatformLeetCode    Platform = "leetcode"
	PlatformProgrammers Platform = "programmers"
	PlatformCustom      Platform = "custom"
)

// Platforms lists every supported platform.
var Platforms = []Platform{PlatformBaekjoon, PlatformCodeforces, PlatformAtCoder, PlatformLeetCode, PlatformProgrammers, PlatformCustom}

// ParsePlatform returns the platform named s (case-insensitive) or an EINVALID error.
func ParsePlatform(s string) (Platform, error) {
	p := Platform(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Platforms, p) {
		return p, nil
	}
	return "", Invalid("platform", "unknown platform %q", s)
}

// Language is a programming language the judge runs. Values appear in keys.
type Language string

// The supported languages.
const (
	LanguagePython     Language = "python"
	LanguageC          Language = "c"
	LanguageCPP        Language = "cpp"
	LanguageJava       Language = "java"
	LanguageGo         Language = "go"
	LanguageJavaScript Language = "javascript"
	LanguageRust       Language = "rust"
	LanguageKotlin     Language = "kotlin"
	LanguageCPP20      Language = "cpp20"
	LanguagePyPy3      Language = "pypy3"
	LanguageCSharp     Language = "csharp"
	LanguageRuby       Language = "ruby"
	LanguagePHP        Language = "php"
	LanguageHaskell    Language = "haskell"
)

// Languages lists every supported language, in the order of the API's
// enum (the judge's built-in table; internal/judge/languages.json).
var Languages = []Language{LanguagePython, LanguageC, LanguageCPP, LanguageJava, LanguageGo, LanguageJavaScript,
	LanguageRust, LanguageKotlin, LanguageCPP20, LanguagePyPy3, LanguageCSharp, LanguageRuby, LanguagePHP, LanguageHaskell}

// ParseLanguage returns the language named s (case-insensitive) or an EINVALID error.
func ParseLanguage(s string) (Language, error) {
	l := Language(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Languages, l) {
		return l, nil
	}
	return "", Invalid("language", "unknown language %q", s)
}

// UsageAction is a metered action; plans limit each per day.
type UsageAction string

// The metered actions.
const (
	ActionHint      UsageAction = "hint"
	ActionExecution UsageAction = "execution"
	// ActionCodeRun is one runCode: code run once on the user's own input.
	ActionCodeRun UsageAction = "code_run"
	// ActionCounterexample is one findCounterexample search.
	ActionCounterexample UsageAction = "counterexample"
)

// UsageActions lists every metered action.
var UsageActions = []UsageAction{ActionExecution, ActionHint, ActionCodeRun, ActionCounterexample}

// JobType is the kind of async work a Job tracks.
type JobType string

// The job types.
const (
	JobCodeExecution     JobType = "CODE_EXECUTION"
	JobHintGeneration    JobType = "HINT_GENERATION"
	JobScriptGeneration  JobType = "SCRIPT_GENERATION"
	JobProblemExtraction JobType = "PROBLEM_EXTRACTION"
	// JobPackageImport imports a problem package (ICPC or Polygon) as a
	// problem (importProblemPackage).
	JobPackageImport JobType = "PACKAGE_IMPORT"
	// JobCodeRun runs code once on the user's own input (runCode).
	JobCodeRun JobType = "CODE_RUN"
	// JobCounterexample searches a generated input on which a failed
	// execution's code and the reference solution disagree
	// (findCounterexample).
	JobCounterexample JobType = "COUNTEREXAMPLE"
)

// JobTypes lists every job type.
var JobTypes = []JobType{JobCodeExecution, JobHintGeneration, JobScriptGeneration, JobProblemExtraction, JobPackageImport, JobCodeRun, JobCounterexample}

// ParseJobType returns the job type named s or an EINVALID error.
func ParseJobType(s string) (JobType, error) {
	t := JobType(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(JobTypes, t) {
		return t, nil
	}
	return "", Invalid("type", "unknown job type %q", s)
}

// JobStatus is where a job is in its life: PENDING → PROCESSING → COMPLETED |
// FAILED | CANCELLED. PENDING may also go straight to CANCELLED or FAILED.
type JobStatus string

// The job statuses.
const (
	JobPending    JobStatus = "PENDING"
	JobProcessing JobStatus = "PROCESSING"
	JobCompleted  JobStatus = "COMPLETED"
	JobFailed     JobStatus = "FAILED"
	JobCancelled  JobStatus = "CANCELLED"
)

// JobStatuses lists every job status.
var JobStatuses = []JobStatus{JobPending, JobProcessing, JobCompleted, JobFailed, JobCancelled}

// ParseJobStatus returns the status named s or an EINVALID error.
func ParseJobStatus(s string) (JobStatus, error) {
	st := JobStatus(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(JobStatuses, st) {
		return st, nil
	}
	return "", Invalid("status", "unknown job status %q", s)
}

// Final reports whether no further transition is allowed from s.
func (s JobStatus) Final() bool {
	return s == JobCompleted || s == JobFailed || s == JobCancelled
}

// CanTransition reports whether a job may move from s to next. It is the one
// place the job state machine is written down; the repository enforces it
// with a conditional write so that concurrent workers cannot break it.
func (s JobStatus) CanTransition(next JobStatus) bool {
	switch s {
	case JobPending:
		return next == JobProcessing || next == JobCancelled || next == JobFailed
	case JobProcessing:
		// PROCESSING → PENDING is a re-queue after a crashed worker.
		return next == JobCompleted || next == JobFailed || next == JobCancelled || next == JobPending
	}
	return false
}

// PreviousStatuses returns the statuses from which a job may move to next.
func PreviousStatuses(next JobStatus) []JobStatus {
	var prev []JobStatus
	for _, s := range JobStatuses {
		if s.CanTransition(next) {
			prev = append(prev, s)
		}
	}
	return prev
}

// Verdict is the judge's classification of one test run. The values are the
// judge's own and are stored as they are.
type Verdict string

// The verdicts.
const (
	VerdictAccepted            Verdict = "ACCEPTED"
	VerdictWrongAnswer         Verdict = "WRONG_ANSWER"
	VerdictTimeLimitExceeded   Verdict = "TIME_LIMIT_EXCEEDED"
	VerdictMemoryLimitExceeded Verdict = "MEMORY_LIMIT_EXCEEDED"
	VerdictRuntimeError        Verdict = "RUNTIME_ERROR"
	VerdictOutputLimitExceeded Verdict = "OUTPUT_LIMIT_EXCEEDED"
	VerdictCompilationError    Verdict = "COMPILATION_ERROR"
	VerdictInternalError       Verdict = "INTERNAL_ERROR"
)
