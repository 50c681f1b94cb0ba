package atcoder

import (
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// jstOffset is UTC+9 in seconds: AtCoder's day, and AtCoder Problems'.
const jstOffset = 9 * 60 * 60

// jstDay numbers the JST day an epoch second falls in (day 0 begins at
// 1970-01-01 00:00 JST).
func jstDay(epochSecond int64) int64 {
	s := epochSecond + jstOffset
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

// Streak computes l's streak days as of now: the JST days of the problems'
// first-AC times (unknown times count for nothing), the longest run of
// consecutive days, and the run ending today or yesterday (JST).
func Streak(l *algoitny.ACList, now time.Time) algoitny.AtCoderStreak {
	var st algoitny.AtCoderStreak
	days := make([]int64, 0, len(l.ProblemIDs))
	for i := range l.ProblemIDs {
		var sec int64
		if l.TimesRecorded && i < len(l.FirstAC) {
			sec = l.FirstAC[i]
		}
		if sec <= 0 {
			st.Uncounted++
			continue
		}
		days = append(days, jstDay(sec))
	}
	if len(days) == 0 {
		return st
	}
	slices.Sort(days)
	days = slices.Compact(days)
	st.Days = len(days)
	run := 0
	for i, d := range days {
		if i > 0 && d == days[i-1]+1 {
			run++
		} else {
			run = 1
		}
		st.Longest = max(st.Longest, run)
	}
	last := days[len(days)-1]
	if today := jstDay(now.Unix()); last >= today-1 {
		st.Current = run
	}
	st.LastDay = time.Unix(last*86400, 0).UTC().Format(time.DateOnly)
	return st
}

// solvedProblems lists l's problems with their first-AC times.
func solvedProblems(l *algoitny.ACList) []algoitny.AtCoderSolvedProblem {
	out := make([]algoitny.AtCoderSolvedProblem, len(l.ProblemIDs))
	for i, id := range l.ProblemIDs {
		out[i].ProblemID = id
		if l.TimesRecorded && i < len(l.FirstAC) && l.FirstAC[i] > 0 {
			t := time.Unix(l.FirstAC[i], 0).UTC()
			out[i].FirstACAt = &t
		}
	}
	return out
}
