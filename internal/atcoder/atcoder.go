package atcoder

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Link is a user's linked AtCoder account together with the progress of its
// sync. It is stored beside the user's AC list (internal/dynamo).
type Link struct {
	UserID string
	// Handle is the AtCoder user name as the user typed it.
	Handle string
	// LinkID is new whenever the account is linked to a different handle; a
	// sync commits only against the LinkID it started with, so a sync of the
	// old handle can never write into the new handle's list.
	LinkID   string
	LinkedAt time.Time
	// Cursor is where the next sync continues.
	Cursor Cursor
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

// Cursor is the sync progress of one handle: the next call asks for
// submissions from Second on and skips those in SeenIDs, which were processed
// already at that second.
type Cursor struct {
	Second  int64
	SeenIDs []int64
}

// ACList is a user's accepted problems: sorted, without duplicates.
type ACList struct {
	ProblemIDs []string
	// Version counts the writes of the list; a write requires the version it
	// read. 0 means the list was never stored.
	Version   int64
	UpdatedAt time.Time
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
}

// ProblemSet is a set of AtCoder problem ids.
type ProblemSet map[string]struct{}

// NewProblemSet returns the set of ids.
func NewProblemSet(ids ...string) ProblemSet {
	s := make(ProblemSet, len(ids))
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

// Has reports whether id is in the set.
func (s ProblemSet) Has(id string) bool {
	_, ok := s[id]
	return ok
}

// Sorted returns the ids in ascending order.
func (s ProblemSet) Sorted() []string { return slices.Sorted(maps.Keys(s)) }

// Difficulty is an ADT level. The values are seed 004's difficulty_order,
// which is part of the contest record's sort key.
type Difficulty int

// The ADT levels.
const (
	DifficultyEasy   Difficulty = 1
	DifficultyMedium Difficulty = 2
	DifficultyHard   Difficulty = 3
	DifficultyAll    Difficulty = 4
)

var difficultyNames = map[Difficulty]string{
	DifficultyEasy: "EASY", DifficultyMedium: "MEDIUM", DifficultyHard: "HARD", DifficultyAll: "ALL",
}

// String returns the level's name in upper case (EASY, MEDIUM, HARD, ALL),
// suitable for a GraphQL enum.
func (d Difficulty) String() string {
	if s, ok := difficultyNames[d]; ok {
		return s
	}
	return "Difficulty(" + strconv.Itoa(int(d)) + ")"
}

// ParseDifficulty is the inverse of Difficulty.String (case-insensitive). It
// returns EINVALID for anything else.
func ParseDifficulty(s string) (Difficulty, error) {
	for d, name := range difficultyNames {
		if strings.EqualFold(s, name) {
			return d, nil
		}
	}
	return 0, algoitny.Invalid("difficulty", "unknown ADT difficulty %q", s)
}

// ADTContest is one AtCoder Daily Training contest (seed 004's
// AdtContestRecord, with the contest's metadata).
type ADTContest struct {
	// ID is AtCoder's contest id, e.g. "adt_all_20250522_3".
	ID         string
	Difficulty Difficulty
	Start      time.Time
	Duration   time.Duration
	Title      string
	// LastFetchedSubmissionID is the highest submission id of this contest
	// that a sync has processed (0: none yet).
	LastFetchedSubmissionID int64
}

// Month is the record's partition: the UTC year and month of the start, YYYYMM.
func (c ADTContest) Month() string { return c.Start.UTC().Format("200601") }

// adtIDPattern matches ADT contest ids: adt_{level}_{YYYYMMDD}_{slot}. The date
// is AtCoder's (JST).
var adtIDPattern = regexp.MustCompile(`^adt_(easy|medium|hard|all)_(\d{8})_(\d+)$`)

// jst is AtCoder's time zone (fixed: Japan has no daylight saving time).
var jst = time.FixedZone("JST", 9*60*60)

// ParseADTContestID reports whether id names an ADT contest and returns its
// level and its day (midnight JST of the date in the id).
func ParseADTContestID(id string) (Difficulty, time.Time, bool) {
	m := adtIDPattern.FindStringSubmatch(id)
	if m == nil {
		return 0, time.Time{}, false
	}
	day, err := time.ParseInLocation("20060102", m[2], jst)
	if err != nil {
		return 0, time.Time{}, false
	}
	d, _ := ParseDifficulty(m[1])
	return d, day, true
}

// adtMonthsOf returns the UTC months (YYYYMM) in which an ADT contest with
// the given id can start: those of the JST day named in the id, which begins
// at 15:00 UTC of the day before.
func adtMonthsOf(id string) []string {
	_, day, ok := ParseADTContestID(id)
	if !ok {
		return nil
	}
	first, last := day.UTC().Format("200601"), day.Add(24*time.Hour-time.Second).UTC().Format("200601")
	if first == last {
		return []string{first}
	}
	return []string{first, last}
}

// ParseMonth checks a YYYYMM month (e.g. "202505") and returns its first
// instant in UTC. It returns EINVALID naming the field "month" otherwise.
func ParseMonth(month string) (time.Time, error) {
	if len(month) != 6 {
		return time.Time{}, algoitny.Invalid("month", "month must be YYYYMM, e.g. 202505")
	}
	t, err := time.Parse("200601", month)
	if err != nil {
		return time.Time{}, algoitny.Invalid("month", "month must be YYYYMM, e.g. 202505")
	}
	return t, nil
}

// Handle limits: AtCoder user names are 3 to 16 letters, digits and underscores.
const (
	MinHandleLen = 3
	MaxHandleLen = 16
)

var handlePattern = regexp.MustCompile(`^[A-Za-z0-9_]{3,16}$`)

// ValidateHandle checks an AtCoder user name. It returns EINVALID naming the
// field "handle". Handles go into a URL query, so nothing else may pass.
func ValidateHandle(handle string) error {
	if !handlePattern.MatchString(handle) {
		return algoitny.Invalid("handle", "an AtCoder user name is %d to %d letters, digits or underscores", MinHandleLen, MaxHandleLen)
	}
	return nil
}

// MaxProblemIDLen bounds the problem ids kept in an AC list; longer ids (none
// exist on AtCoder) are ignored rather than let one submission bloat the item.
const MaxProblemIDLen = 100

// validProblemID reports whether id can be stored in an AC list: not empty,
// not too long, printable ASCII without separators of the compact encoding.
func validProblemID(id string) bool {
	if id == "" || len(id) > MaxProblemIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// mergeIDs returns the sorted union of a sorted, duplicate-free list and
// more ids, and how many ids were new.
func mergeIDs(sorted []string, more []string) ([]string, int) {
	set := NewProblemSet(sorted...)
	added := 0
	for _, id := range more {
		if !set.Has(id) {
			set[id] = struct{}{}
			added++
		}
	}
	if added == 0 {
		return sorted, 0
	}
	return set.Sorted(), added
}

// errNotLinked is the ENOTFOUND of operations that need a linked account.
func errNotLinked() error {
	return algoitny.Errorf(algoitny.ENOTFOUND, "no AtCoder account is linked; link one first")
}

// formatSecond is for log lines.
func formatSecond(s int64) string {
	return fmt.Sprintf("%d (%s)", s, time.Unix(s, 0).UTC().Format(time.RFC3339))
}
