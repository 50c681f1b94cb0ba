package atcoder

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/algoitny/api/internal/algoitny"
)

// ProblemsReport says what SyncADTProblems did.
type ProblemsReport struct {
	// Listed is the number of ADT contests AtCoder Problems lists problems
	// of; Recorded those of them recorded here (the others are not
	// discovered yet, or were never announced in contests.json).
	Listed, Recorded int
	// Updated counts the records whose problems or difficulties changed.
	Updated int
	// Problems counts the distinct problems of the recorded contests,
	// WithDifficulty those with an estimate.
	Problems, WithDifficulty int
}

// SyncADTProblems stores the problems of the recorded ADT contests with
// their names and difficulties: three calls (contest-problem.json,
// problems.json, problem-models.json), then one Query per month that has ADT
// contests and one UpdateItem per contest record whose problems differ from
// what is stored, so that a run with nothing new writes nothing. Only ADT
// contests are kept, and only the records discovered by DiscoverContests
// (run it first). It returns EINTERNAL when the API or storage fails.
func (s *Syncer) SyncADTProblems(ctx context.Context) (ProblemsReport, error) {
	var rep ProblemsReport
	pairs, err := s.API.ContestProblems(ctx)
	if err != nil {
		return rep, err
	}
	byContest := map[string][]ContestProblem{}
	for _, p := range pairs {
		if _, _, ok := ParseADTContestID(p.ContestID); ok && validProblemID(p.ProblemID) {
			byContest[p.ContestID] = append(byContest[p.ContestID], p)
		}
	}
	rep.Listed = len(byContest)
	if len(byContest) == 0 {
		return rep, nil
	}
	problems, err := s.API.Problems(ctx)
	if err != nil {
		return rep, err
	}
	names := make(map[string]string, len(problems))
	for _, p := range problems {
		names[p.ID] = cmp.Or(p.Name, p.Title)
	}
	models, err := s.API.ProblemModels(ctx)
	if err != nil {
		return rep, err
	}

	months := map[string]bool{}
	for id := range byContest {
		for _, m := range adtMonthsOf(id) {
			months[m] = true
		}
	}
	seen := map[string]bool{}
	for _, month := range slices.Sorted(maps.Keys(months)) {
		recorded, err := s.Store.ListADTContests(ctx, month)
		if err != nil {
			return rep, err
		}
		for _, c := range recorded {
			ps, ok := byContest[c.ID]
			if !ok {
				continue
			}
			rep.Recorded++
			want := contestProblems(ps, names, models)
			for _, p := range want {
				if !seen[p.ProblemID] {
					seen[p.ProblemID] = true
					rep.Problems++
					if p.Difficulty != nil {
						rep.WithDifficulty++
					}
				}
			}
			if c.Problems != nil && slices.EqualFunc(c.Problems, want, sameProblem) {
				continue
			}
			changed, err := s.Store.SetADTContestProblems(ctx, c, want)
			if err != nil {
				return rep, err
			}
			if changed {
				rep.Updated++
			}
		}
	}
	return rep, nil
}

// contestProblems builds a contest's problem list from its pairs: one entry
// a problem, in index order (shorter indexes first, so that ABC's "Ex" comes
// after "G"), with the problem's name and its difficulty, if modelled.
func contestProblems(pairs []ContestProblem, names map[string]string, models map[string]ProblemModel) []algoitny.ADTContestProblem {
	out := make([]algoitny.ADTContestProblem, 0, len(pairs))
	for _, p := range pairs {
		if slices.ContainsFunc(out, func(q algoitny.ADTContestProblem) bool { return q.ProblemID == p.ProblemID }) {
			continue
		}
		cp := algoitny.ADTContestProblem{ProblemID: p.ProblemID, Index: p.ProblemIndex, Title: names[p.ProblemID]}
		if m, ok := models[p.ProblemID]; ok && m.Difficulty != nil {
			cp.Difficulty = &algoitny.AtCoderDifficulty{Raw: *m.Difficulty, IsExperimental: m.IsExperimental}
		}
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b algoitny.ADTContestProblem) int {
		return cmp.Or(cmp.Compare(len(a.Index), len(b.Index)), cmp.Compare(a.Index, b.Index), cmp.Compare(a.ProblemID, b.ProblemID))
	})
	return out
}

// sameProblem compares the stored fields of two contest problems.
func sameProblem(a, b algoitny.ADTContestProblem) bool {
	if a.ProblemID != b.ProblemID || a.Index != b.Index || a.Title != b.Title || (a.Difficulty == nil) != (b.Difficulty == nil) {
		return false
	}
	return a.Difficulty == nil || *a.Difficulty == *b.Difficulty
}
