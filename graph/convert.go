package graph

import (
	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/algoitny"
)

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func toPlan(p *algoitny.Plan) *model.Plan {
	return &model.Plan{
		Name: p.Name, Description: p.Description,
		MaxHintsPerDay: p.MaxHintsPerDay, MaxExecutionsPerDay: p.MaxExecutionsPerDay, MaxProblems: p.MaxProblems,
		CanViewAllProblems: p.CanViewAllProblems, CanRegisterProblems: p.CanRegisterProblems, IsActive: p.IsActive,
	}
}
