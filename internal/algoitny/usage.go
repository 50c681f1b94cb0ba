package algoitny

import "time"

// UsageLog records one metered action (an execution or a hint request). Logs
// expire 90 days after they are written. A log written with its job
// (Charge) names the job in JobID, and the job names the log back
// (Job.PaidWith).
type UsageLog struct {
	ID        string
	UserID    string
	Action    UsageAction
	Platform  Platform
	ProblemID string
	HistoryID string
	JobID     string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// UsageRef names one usage log: whose it is, its action and its id.
type UsageRef struct {
	UserID string
	Action UsageAction
	ID     string
}

// Charge is one use of a metered action paid with the job that needs it:
// the job, its usage log and the day's counter are written in one
// transaction (dynamo.DB.CreateChargedJob), so that whatever fails, no use is
// charged without its job and no job exists without its use.
type Charge struct {
	// Log is the use: UserID (the payer: the job's owner, or staff acting
	// for them), Action and what it is about. Its ID, JobID, CreatedAt and
	// ExpiresAt are set when it is written.
	Log *UsageLog
	// Limit is the payer's daily limit of Log.Action (Unlimited: none) as
	// their plan says when the charge is made.
	Limit int
	// Plan names the plan Limit was read from ("": none). The charge is
	// written only if the plan still says Limit: a charge made after a
	// change of the plan returned is judged by the new limit.
	Plan string
}

// Usage is how much of one action's daily quota a user has used.
type Usage struct {
	Action UsageAction
	Used   int
	// Limit is the plan's daily limit; -1 means unlimited.
	Limit   int
	ResetAt time.Time
}

// Remaining returns how many more actions are allowed today (-1 = unlimited).
func (u Usage) Remaining() int {
	if u.Limit < 0 {
		return -1
	}
	return max(0, u.Limit-u.Used)
}

// UsageDayRetention is how long usage logs are kept.
const UsageDayRetention = 90 * 24 * time.Hour

// UsageDay returns the quota day of t. Quota days are UTC calendar days: every
// user's counters reset at 00:00 UTC, whatever their time zone.
func UsageDay(t time.Time) string { return t.UTC().Format("2006-01-02") }

// NextReset returns when the quota day containing t ends.
func NextReset(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}
