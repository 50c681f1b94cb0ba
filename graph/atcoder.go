package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
)

// asksSolvedByMe reports whether the selection of adtContests in ctx needs
// the signed-in user's progress: the problems' solvedByMe or myFirstAcAt, or
// a filter other than ALL. Then the resolver reads the user's AC list once
// for all the contests; otherwise it reads nothing more than the month.
func asksSolvedByMe(ctx context.Context) bool {
	if !algoitny.ActorFrom(ctx).SignedIn() {
		return false
	}
	oc := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"AdtContest"}) {
		if f.Name != "problems" {
			continue
		}
		if v, ok := f.ArgumentMap(oc.Variables)["filter"]; ok && v != nil && v != string(algoitny.AtCoderProblemsAll) {
			return true
		}
		for _, sub := range graphql.CollectFields(oc, f.Selections, []string{"AdtContestProblem"}) {
			if sub.Name == "solvedByMe" || sub.Name == "myFirstAcAt" {
				return true
			}
		}
	}
	return false
}
