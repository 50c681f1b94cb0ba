package atcoder

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

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

// adtIDPattern matches ADT contest ids: adt_{level}_{YYYYMMDD}_{slot}. The date
// is AtCoder's (JST).
var adtIDPattern = regexp.MustCompile(`^adt_(easy|medium|hard|all)_(\d{8})_(\d+)$`)

// jst is AtCoder's time zone (fixed: Japan has no daylight saving time).
var jst = time.FixedZone("JST", 9*60*60)

// ParseADTContestID reports whether id names an ADT contest and returns its
// level and its day (midnight JST of the date in the id).
func ParseADTContestID(id string) (algoitny.ADTDifficulty, time.Time, bool) {
	m := adtIDPattern.FindStringSubmatch(id)
	if m == nil {
		return 0, time.Time{}, false
	}
	day, err := time.ParseInLocation("20060102", m[2], jst)
	if err != nil {
		return 0, time.Time{}, false
	}
	d, _ := algoitny.ParseADTDifficulty(m[1])
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

// acState is an AC list being merged: problem id → epoch second of its
// first accepted submission (0: unknown).
type acState map[string]int64

func newACState(l *algoitny.ACList) acState {
	st := make(acState, len(l.ProblemIDs))
	for i, id := range l.ProblemIDs {
		var t int64
		if l.TimesRecorded && i < len(l.FirstAC) {
			t = l.FirstAC[i]
		}
		st[id] = t
	}
	return st
}

// add records an accepted submission of problemID at second and reports
// whether the problem is new and whether its first-AC time was set or moved
// earlier (submissions may come out of order and more than once: the
// earliest wins).
func (st acState) add(problemID string, second int64) (added, timed bool) {
	cur, ok := st[problemID]
	if second <= 0 {
		second = 0
	}
	switch {
	case !ok:
		st[problemID] = second
		return true, false
	case second > 0 && (cur == 0 || second < cur):
		st[problemID] = second
		return false, true
	}
	return false, false
}

// list returns the AC list of the state: sorted ids and their times.
func (st acState) list(version int64) *algoitny.ACList {
	ids := slices.Sorted(maps.Keys(st))
	times := make([]int64, len(ids))
	for i, id := range ids {
		times[i] = st[id]
	}
	return &algoitny.ACList{ProblemIDs: ids, FirstAC: times, TimesRecorded: true, Version: version}
}

// errNotLinked is the ENOTFOUND of operations that need a linked account.
func errNotLinked() error {
	return algoitny.Errorf(algoitny.ENOTFOUND, "no AtCoder account is linked; link one first")
}

// formatSecond is for log lines.
func formatSecond(s int64) string {
	return fmt.Sprintf("%d (%s)", s, time.Unix(s, 0).UTC().Format(time.RFC3339))
}
