package algoitny

import (
	"context"
	"time"
)

// SearchHistory is one execution of a user's code against a problem's test
// cases, with its per-test results and, later, LLM hints. It is private to its
// owner unless IsCodePublic is set, in which case it appears in the public feed.
type SearchHistory struct {
	ID     string
	UserID string
	// UserEmail is denormalized so that the owner can be loaded by key.
	UserEmail string
	// Denormalized problem fields so that lists need no join.
	Platform          Platform
	ProblemID         string
	ProblemTitle      string
	ProblemInternalID string
	Language          Language
	Code              string
	PassedCount       int
	FailedCount       int
	TotalCount        int
	IsCodePublic      bool
	// Verdict is the overall verdict: ACCEPTED when every test passed, else the
	// first failing test's verdict (COMPILATION_ERROR when nothing ran).
	Verdict        Verdict
	CompileMessage string
	TestResults    []TestResult
	Hints          []string
	// Counterexample is the last findCounterexample's find, for its owner
	// only; nil when none was found (or none searched).
	Counterexample *Counterexample
	JobID          string
	MaxTimeMs      int
	MaxMemoryKB    int
	// Score is the partial score by the problem's subtasks (ScoreSubtasks),
	// nil when the problem had none when the code was executed.
	Score     *Score
	CreatedAt time.Time
	// Ranked says whether the execution counts towards its user's solved
	// problems and the leaderboard: its problem was published when it was
	// judged (a user's accepted runs on their own drafts do not rank them).
	Ranked bool
	// Summary marks an item read for a list whose caller reads none of its
	// details (WithHistorySummaries): Code, CompileMessage, TestResults and
	// Hints were left out of the read and are empty.
	Summary bool
}

type historySummariesKey struct{}

// WithHistorySummaries says whether the lists of executions read under ctx
// may be summaries: on means their caller reads no item's Code,
// CompileMessage, TestResults or Hints (a page that shows verdicts,
// problems and authors), and the store may leave them out of the read —
// less to transfer and decode (a page of 50 executions with 20 test results
// each is mostly results), the same read capacity — and mark the items
// Summary. Every page of executions the API serves sets it, on or off, for
// its own selection, so that a list nested in another sees its own.
func WithHistorySummaries(ctx context.Context, on bool) context.Context {
	return context.WithValue(ctx, historySummariesKey{}, on)
}

// HistorySummaries reports whether ctx allows summary reads of lists of
// executions (WithHistorySummaries; off when unset).
func HistorySummaries(ctx context.Context) bool {
	on, _ := ctx.Value(historySummariesKey{}).(bool)
	return on
}

// HistoryRef identifies a history item: it lives under its owner's partition.
type HistoryRef struct {
	UserID string
	ID     string
}

// Ref returns the item's identity.
func (h *SearchHistory) Ref() HistoryRef { return HistoryRef{UserID: h.UserID, ID: h.ID} }

// TestResult is the outcome of one test case in an execution.
type TestResult struct {
	TestCaseID string
	Verdict    Verdict
	// Output is a truncated preview of what the program printed.
	Output string
	// Stderr is a truncated preview of the program's standard error
	// (tracebacks, exceptions).
	Stderr   string
	TimeMs   int
	MemoryKB int
	Message  string
	// Points is the partial credit a testlib checker gave the test (quitp),
	// a fraction in [0, 1]; nil when it gave none.
	Points *float64
}

// HistoryFilter narrows a history list.
type HistoryFilter struct {
	Platform  *Platform
	Language  *Language
	ProblemID string
}

// ExecutionStat is the number of executions on one platform in one language.
type ExecutionStat struct {
	Platform Platform
	Language Language
	Count    int
}

// UserStats are a user's executions (seed 001 #31), counted as each is
// stored, so reading them is one Query.
type UserStats struct {
	// Executions and Accepted count every stored execution and the
	// accepted ones.
	Executions, Accepted int
	// SolvedProblems counts the distinct problems the user has an accepted
	// execution of, judged while the problem was published (Ranked); the
	// leaderboard orders users by it.
	SolvedProblems int
	// LastSolvedAt is when SolvedProblems last grew (zero before).
	LastSolvedAt time.Time
	// ByPlatformAndLanguage splits the counts, in platform then language
	// order.
	ByPlatformAndLanguage []UserExecutionStat
}

// UserExecutionStat is a user's executions on one platform in one language.
type UserExecutionStat struct {
	Platform             Platform
	Language             Language
	Executions, Accepted int
}

// LeaderboardEntry is one user's place among those who solved the most
// problems (seed 001 #33).
type LeaderboardEntry struct {
	// Rank is 1 for the most solved problems; users with as many share a
	// rank (the one who got there first is listed first).
	Rank           int
	UserID         string
	UserEmail      string // to load the user by key
	SolvedProblems int
	LastSolvedAt   time.Time
}
