package algoitny

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AtCoder sync (seed 004): a user's linked AtCoder account, the progress of
// its sync, the accepted ("AC") problems it found and the AtCoder Daily
// Training contests it recorded. The sync itself and the HTTP client live in
// internal/atcoder; storage in internal/dynamo. The types are here so that
// storage, the dataloaders and the API share them without importing the
// feature.

// AtCoderLink is a user's linked AtCoder account together with the progress
// of its sync. It is stored beside the user's AC list (internal/dynamo).
type AtCoderLink struct {
	UserID string
	// Handle is the AtCoder user name as the user typed it.
	Handle string
	// LinkID is new whenever the account is linked to a different handle; a
	// sync commits only against the LinkID it started with, so a sync of the
	// old handle can never write into the new handle's list.
	LinkID   string
	LinkedAt time.Time
	// Cursor is where the next sync continues.
	Cursor AtCoderCursor
	// Version counts the commits of syncs; each commit requires the version it
	// read (optimistic concurrency between an on-demand sync and the sweep).
	Version int64
	// LastSyncedAt is when a sync last reached the newest submission.
	LastSyncedAt *time.Time
	// LastAttemptAt is when a sync last finished, successfully or not; the
	// periodic sweep takes the least recently attempted links first.
	LastAttemptAt *time.Time
	// LastError is the error of the last attempt, "" when it succeeded.
	LastError string
}

// AtCoderCursor is the sync progress of one handle: the next call asks for
// submissions from Second on and skips those in SeenIDs, which were processed
// already at that second.
type AtCoderCursor struct {
	Second  int64
	SeenIDs []int64
}

// ACList is a user's accepted problems: sorted, without duplicates, each
// with the time of its first accepted submission.
type ACList struct {
	ProblemIDs []string
	// FirstAC[i] is the epoch second (AtCoder's epoch_second, UTC) of the
	// earliest accepted submission of ProblemIDs[i], 0 when unknown. It has
	// the length of ProblemIDs whenever TimesRecorded is true.
	FirstAC []int64
	// TimesRecorded is false for a list stored before first-AC times were
	// kept (issue 20): every time is unknown, and the next sync reads the
	// account's history again from the start to fill them in
	// (internal/atcoder, "First-AC times"). A list with TimesRecorded may
	// still hold a 0: a problem whose accepted submissions AtCoder Problems
	// no longer lists.
	TimesRecorded bool
	// Version counts the writes of the list; a write requires the version it
	// read. 0 means the list was never stored.
	Version   int64
	UpdatedAt time.Time
}

// FirstACOf returns the first-AC epoch second of problemID and whether the
// problem is in the list; the second is 0 when unknown.
func (l *ACList) FirstACOf(problemID string) (int64, bool) {
	i, found := slices.BinarySearch(l.ProblemIDs, problemID)
	if !found {
		return 0, false
	}
	if i < len(l.FirstAC) {
		return l.FirstAC[i], true
	}
	return 0, true
}

// SolvedProblems is what the API shows about a user's AtCoder progress.
type SolvedProblems struct {
	Handle string
	// ProblemIDs are AtCoder problem ids (e.g. "abc300_a"), sorted.
	ProblemIDs []string
	Count      int
	// LastSyncedAt is nil until the first sync completes.
	LastSyncedAt *time.Time
	// LastSyncError is the error of the last sync attempt, "" if it succeeded.
	LastSyncError string
	// Problems are ProblemIDs with their first-AC times, in the same order.
	Problems []AtCoderSolvedProblem
	// Streak is computed from the first-AC times when the list is read.
	Streak AtCoderStreak
}

// AtCoderSolvedProblem is one accepted problem of a user.
type AtCoderSolvedProblem struct {
	ProblemID string
	// FirstACAt is when the user's first accepted submission of the problem
	// was made (UTC); nil when unknown (see ACList.TimesRecorded).
	FirstACAt *time.Time
}

// AtCoderStreak is a user's run of consecutive "streak days", counted as
// AtCoder Problems counts them: a day of Japan Standard Time (UTC+9, from
// 00:00 to 24:00 JST, that is 15:00 to 15:00 UTC) on which the user got at
// least one new AC, the first accepted submission of a problem. Solving a
// problem again does not make a day count.
type AtCoderStreak struct {
	// Current is the number of consecutive streak days ending today or
	// yesterday (JST, relative to when it was computed); 0 when the last
	// streak day is older.
	Current int
	// Longest is the longest run of consecutive streak days ever.
	Longest int
	// Days is the number of streak days in all.
	Days int
	// LastDay is the latest streak day, "YYYY-MM-DD" (JST); "" when none.
	LastDay string
	// Uncounted is the number of accepted problems without a known first-AC
	// time, which count for no day.
	Uncounted int
}

// ADTDifficulty is an ADT level. The values are seed 004's difficulty_order,
// which is part of the contest record's sort key.
type ADTDifficulty int

// The ADT levels.
const (
	ADTEasy   ADTDifficulty = 1
	ADTMedium ADTDifficulty = 2
	ADTHard   ADTDifficulty = 3
	ADTAll    ADTDifficulty = 4
)

var adtDifficultyNames = map[ADTDifficulty]string{
	ADTEasy: "EASY", ADTMedium: "MEDIUM", ADTHard: "HARD", ADTAll: "ALL",
}

// String returns the level's name in upper case (EASY, MEDIUM, HARD, ALL),
// suitable for a GraphQL enum.
func (d ADTDifficulty) String() string {
	if s, ok := adtDifficultyNames[d]; ok {
		return s
	}
	return "Difficulty(" + strconv.Itoa(int(d)) + ")"
}

// ParseADTDifficulty is the inverse of ADTDifficulty.String
// (case-insensitive). It returns EINVALID naming the field "difficulty" for
// anything else.
func ParseADTDifficulty(s string) (ADTDifficulty, error) {
	for d, name := range adtDifficultyNames {
		if strings.EqualFold(s, name) {
			return d, nil
		}
	}
	return 0, Invalid("difficulty", "unknown ADT difficulty %q", s)
}

// ADTContest is one AtCoder Daily Training contest (seed 004's
// AdtContestRecord, with the contest's metadata).
type ADTContest struct {
	// ID is AtCoder's contest id, e.g. "adt_all_20250522_3".
	ID         string
	Difficulty ADTDifficulty
	Start      time.Time
	Duration   time.Duration
	Title      string
	// LastFetchedSubmissionID is the highest submission id of this contest
	// that a sync has processed (0: none yet).
	LastFetchedSubmissionID int64
	// Problems are the contest's problems in index order, from AtCoder
	// Problems' contest–problem pairs; nil until synced (AtCoder shows a
	// contest's problems once it starts).
	Problems []ADTContestProblem
}

// ADTContestProblem is one problem of an ADT contest. An ADT contest sets
// problems of past ABCs: ProblemID is the original's (e.g. "abc305_c"),
// Index the one in this contest.
type ADTContestProblem struct {
	ProblemID string
	// Index is the problem's index in this contest ("A", "B", …).
	Index string
	// Title is the problem's name ("Sequence Sum"), "" when AtCoder Problems
	// does not list it.
	Title string
	// Difficulty is AtCoder Problems' estimate; nil when it has none.
	Difficulty *AtCoderDifficulty

	// SolvedByMe and FirstACAt describe the reader, not the problem: they
	// are filled in for the signed-in user when read (never stored).
	SolvedByMe bool
	// FirstACAt is when the reader first got the problem accepted; nil when
	// not solved or unknown.
	FirstACAt *time.Time
}

// AtCoderDifficulty is AtCoder Problems' estimated difficulty of a problem
// (its problem-models.json), on the scale of AtCoder ratings: a user rated
// as much solves it with probability 1/2.
type AtCoderDifficulty struct {
	// Raw is the estimate as published; it is below 400, even negative, for
	// the easiest problems.
	Raw float64
	// IsExperimental marks an estimate from too little data.
	IsExperimental bool
}

// Clipped is the difficulty as AtCoder Problems displays it: Raw from 400
// up; below, 400 / exp(1 - Raw/400), which maps everything below 400 into
// (0, 400) keeping the order. Rounded half up, like JavaScript's Math.round.
func (d AtCoderDifficulty) Clipped() int {
	v := d.Raw
	if v < 400 {
		v = 400 / math.Exp(1-v/400)
	}
	return int(math.Floor(v + 0.5))
}

// AtCoderProblemFilter selects problems by whether the reader has solved
// them.
type AtCoderProblemFilter string

// The filters.
const (
	AtCoderProblemsAll      AtCoderProblemFilter = "ALL"
	AtCoderProblemsSolved   AtCoderProblemFilter = "SOLVED"
	AtCoderProblemsUnsolved AtCoderProblemFilter = "UNSOLVED"
)

// Keeps reports whether a problem solved (or not) by the reader passes f;
// the zero filter keeps everything.
func (f AtCoderProblemFilter) Keeps(solved bool) bool {
	switch f {
	case AtCoderProblemsSolved:
		return solved
	case AtCoderProblemsUnsolved:
		return !solved
	}
	return true
}

// Month is the record's partition: the UTC year and month of the start, YYYYMM.
func (c ADTContest) Month() string { return c.Start.UTC().Format("200601") }

// AtCoderSyncResult answers a sync request. The sync runs in the background
// (a first sync of a busy account takes one call a second per 500
// submissions); clients poll Solved (atcoder.Service) until LastSyncedAt
// moves past the one returned here.
type AtCoderSyncResult struct {
	// JobID is the River job that runs (or already runs) the sync.
	JobID int64
	// AlreadyQueued is true when a sync of this user was already waiting or
	// running; JobID is that job and nothing new was queued.
	AlreadyQueued bool
	// Handle is the AtCoder account being synced.
	Handle string
	// LastSyncedAt is when the previous sync completed (nil: never).
	LastSyncedAt *time.Time
}

// AtCoderSyncCommit is one page of sync progress.
type AtCoderSyncCommit struct {
	UserID string
	// LinkID and LinkVersion are those read; the commit requires them
	// unchanged and stores LinkVersion+1.
	LinkID      string
	LinkVersion int64
	// Cursor is the new progress.
	Cursor AtCoderCursor
	// AC is the new list with the Version read (the commit requires it and
	// stores Version+1); nil when the list did not change.
	AC *ACList
	// Finished marks the last page: LastSyncedAt and LastAttemptAt become At
	// and LastError is cleared.
	Finished bool
	At       time.Time
}

// AtCoderSyncFailure is a failed sync attempt.
type AtCoderSyncFailure struct {
	UserID, LinkID string
	At             time.Time
	// Message is shown to the user (no internals).
	Message string
	// Attempted moves the link behind the others in the sweep's order
	// (LastAttemptAt = At); false for failures of the API itself, so the
	// sweep's retry begins with this user again.
	Attempted bool
}
