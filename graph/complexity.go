package graph

import (
	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/algoitny"
)

// Complexity returns the per-field costs used by the complexity limit: every
// field costs 1 plus its children, and a connection costs its children times
// the page size it asks for (first, default 20), so `problems(first: 100) {
// testCases(first: 100) { ... } }` costs 100 × 100 × its fields. The HTTP
// layer adds them up with each fragment's cost computed once
// (httpserver's complexityLimit): spreads are not expanded again.
func Complexity() ComplexityRoot {
	var c ComplexityRoot
	c.Query.Problems = func(child int, _ *model.ProblemFilter, first *int, _ *string) int { return page(child, first) }
	c.Query.MyHistory = func(child int, _ *model.HistoryFilter, first *int, _ *string) int { return page(child, first) }
	c.Query.PublicHistory = func(child int, _ *model.HistoryFilter, first *int, _ *string) int { return page(child, first) }
	c.Query.HistoryFeed = func(child int, first *int, _ *string) int { return page(child, first) }
	c.Query.Jobs = func(child int, _ *algoitny.JobType, _ *algoitny.JobStatus, first *int, _ *string) int {
		return page(child, first)
	}
	c.Query.Users = func(child int, _ *string, first *int, _ *string) int { return page(child, first) }
	c.Problem.TestCases = func(child int, first *int, _ *string) int { return page(child, first) }
	c.Job.Progress = func(child int, first *int, _ *string) int { return page(child, first) }
	c.Query.MyChecks = func(child int, first *int, _ *string) int { return page(child, first) }
	c.NotificationChannel.Deliveries = func(child int, first *int, _ *string) int { return page(child, first) }
	// A user has at most 10 channels (watch.MaxChannels).
	c.Query.MyNotificationChannels = func(child int) int { return 1 + child*10 }
	c.Query.Leaderboard = func(child int, first *int) int { return page(child, first) }
	// A user's statistics are a Query of their own.
	c.User.Stats = func(child int) int { return 10 + child }
	// A check's statistics are a Query of their own (three windows).
	c.Check.Stats = func(child int) int { return 10 + 3*child }
	// A check's recent results are a list of up to 1440 (limit, 0 = 20).
	c.Check.RecentResults = func(child int, limit *int) int {
		n := 20
		if limit != nil && *limit > 0 {
			n = min(*limit, 1440)
		}
		return 1 + child*n
	}
	return c
}

// page is the cost of a connection field.
func page(child int, first *int) int {
	n := algoitny.DefaultPageSize
	if first != nil && *first > 0 {
		n = min(*first, algoitny.MaxPageSize)
	}
	return 1 + child*n
}
