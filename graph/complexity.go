package graph

import (
	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/algoitny"
)

// Complexity returns the per-field costs used by the complexity limit: every
// field costs 1 plus its children, and a connection costs its children times
// the page size it asks for (first or last, default 20), so `problems(first: 100) {
// testCases(first: 100) { ... } }` costs 100 × 100 × its fields. The HTTP
// layer adds them up with each fragment's cost computed once
// (httpserver's complexityLimit): spreads are not expanded again.
func Complexity() ComplexityRoot {
	var c ComplexityRoot
	c.Query.Problems = func(child int, _ *model.ProblemFilter, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.MyHistory = func(child int, _ *model.HistoryFilter, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.PublicHistory = func(child int, _ *model.HistoryFilter, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.HistoryFeed = connectionCost
	c.Query.Jobs = func(child int, _ *algoitny.JobType, _ *algoitny.JobStatus, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Query.Users = func(child int, _ *string, first *int, _ *string, last *int, _ *string) int {
		return page(child, first, last)
	}
	c.Problem.TestCases = connectionCost
	c.Job.Progress = connectionCost
	c.Query.MyChecks = connectionCost
	c.NotificationChannel.Deliveries = connectionCost
	// A user has at most 10 channels (watch.MaxChannels).
	c.Query.MyNotificationChannels = func(child int) int { return 1 + child*10 }
	c.Query.Leaderboard = func(child int, first *int) int { return page(child, first, nil) }
	// nodes: each id a node(id:).
	c.Query.Nodes = func(child int, ids []string) int { return 1 + child*max(len(ids), 1) }
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

// page is the cost of a connection field: its children times the page
// size it asks for, `first` or `last` (the default when neither is given).
func page(child int, first, last *int) int {
	n := algoitny.DefaultPageSize
	switch {
	case first != nil && *first > 0:
		n = min(*first, algoitny.MaxPageSize)
	case last != nil && *last > 0:
		n = min(*last, algoitny.MaxPageSize)
	}
	return 1 + child*n
}

// connectionCost is page for a connection with no arguments but its
// page's.
func connectionCost(child int, first *int, _ *string, last *int, _ *string) int {
	return page(child, first, last)
}
