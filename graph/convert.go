package graph

import (
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/submissions"
)

// pageRequest reads a list's first and after (algoitny.NewPageRequest,
// which the transport's prefetching uses too: the rule lives there), and
// its last and before.
func pageRequest(first *int, after *string, last *int, before *string) algoitny.PageRequest {
	return algoitny.NewPageRequest(first, after).Backward(last, before)
}

// connection converts a page into a Relay connection's edges and page info.
func connection[T, E any](p algoitny.Page[T], edge func(cursor string, node T) E) ([]E, *model.PageInfo) {
	edges := make([]E, len(p.Items))
	for i, item := range p.Items {
		edges[i] = edge(p.Cursors[i], item)
	}
	info := &model.PageInfo{HasNextPage: p.HasNextPage, HasPreviousPage: p.HasPreviousPage}
	if p.EndCursor != "" {
		info.EndCursor = &p.EndCursor
	}
	if p.StartCursor != "" {
		info.StartCursor = &p.StartCursor
	}
	return edges, info
}

func problemConnection(p algoitny.Page[*algoitny.Problem]) *model.ProblemConnection {
	edges, info := connection(p, func(c string, n *algoitny.Problem) *model.ProblemEdge { return &model.ProblemEdge{Cursor: c, Node: n} })
	return &model.ProblemConnection{Edges: edges, PageInfo: info}
}

func historyConnection(p algoitny.Page[*algoitny.SearchHistory]) *model.SearchHistoryConnection {
	edges, info := connection(p, func(c string, n *algoitny.SearchHistory) *model.SearchHistoryEdge {
		return &model.SearchHistoryEdge{Cursor: c, Node: n}
	})
	return &model.SearchHistoryConnection{Edges: edges, PageInfo: info}
}

func jobConnection(p algoitny.Page[*algoitny.Job]) *model.JobConnection {
	edges, info := connection(p, func(c string, n *algoitny.Job) *model.JobEdge { return &model.JobEdge{Cursor: c, Node: n} })
	return &model.JobConnection{Edges: edges, PageInfo: info}
}

func userConnection(p algoitny.Page[*algoitny.User]) *model.UserConnection {
	edges, info := connection(p, func(c string, n *algoitny.User) *model.UserEdge { return &model.UserEdge{Cursor: c, Node: n} })
	return &model.UserConnection{Edges: edges, PageInfo: info}
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func historyFilter(f *model.HistoryFilter) algoitny.HistoryFilter {
	if f == nil {
		return algoitny.HistoryFilter{}
	}
	return algoitny.HistoryFilter{Platform: f.Platform, Language: f.Language, ProblemID: orEmpty(f.ProblemID)}
}

func checker(in *model.CheckerInput) *algoitny.Checker {
	if in == nil {
		return nil
	}
	c := &algoitny.Checker{Kind: in.Kind, Code: orEmpty(in.Code), Args: in.Args}
	if in.Epsilon != nil {
		c.Epsilon = *in.Epsilon
	}
	if in.Language != nil {
		c.Language = *in.Language
	}
	return c
}

// interactor is an InteractorInput as a program; nil when not given.
func interactor(in *model.InteractorInput) *algoitny.Program {
	if in == nil {
		return nil
	}
	return &algoitny.Program{Language: in.Language, Code: in.Code}
}

func toTestCases(in []*model.TestCaseInput) []*algoitny.TestCase {
	out := make([]*algoitny.TestCase, len(in))
	for i, tc := range in {
		out[i] = &algoitny.TestCase{Input: tc.Input, Output: tc.Output}
	}
	return out
}

func problemUpdate(in model.UpdateProblemInput) algoitny.ProblemUpdate {
	u := algoitny.ProblemUpdate{
		Title: in.Title, ProblemURL: in.ProblemURL, Language: in.Language, SolutionCode: in.SolutionCode,
		Constraints: in.Constraints, Checker: checker(in.Checker), Interactor: interactor(in.Interactor), TimeLimitMs: in.TimeLimitMs,
		MemoryLimitMB: in.MemoryLimitMb, IsCompleted: in.IsCompleted,
	}
	if in.Tags != nil {
		u.Tags = &in.Tags
	}
	if in.Subtasks != nil {
		subtasks := make([]algoitny.Subtask, len(in.Subtasks))
		for i, st := range in.Subtasks {
			subtasks[i] = algoitny.Subtask{Name: st.Name, Points: st.Points, Mode: st.Mode, TestIDs: st.TestIds, DependsOn: st.DependsOn}
		}
		u.Subtasks = &subtasks
	}
	return u
}

// newSubtasks converts the subtasks of a new problem, which name their
// tests by position (nil entries cannot occur: the list's items are
// non-null).
func newSubtasks(in []*model.NewSubtaskInput) []algoitny.Subtask {
	if in == nil {
		return nil
	}
	out := make([]algoitny.Subtask, len(in))
	for i, st := range in {
		out[i] = algoitny.Subtask{Name: st.Name, Points: st.Points, Mode: st.Mode, TestIndexes: st.TestIndexes, DependsOn: st.DependsOn}
	}
	return out
}

// windows converts maintenance windows of an input (nil entries cannot
// occur: the list's items are non-null).
func windows(in []*algoitny.MaintenanceWindow) []algoitny.MaintenanceWindow {
	out := make([]algoitny.MaintenanceWindow, 0, len(in))
	for _, w := range in {
		out = append(out, *w)
	}
	return out
}

// importPackageInput reads an uploaded package (at most one byte past
// MaxPackageBytes, which the service refuses) with its options.
func importPackageInput(file graphql.Upload, in *model.ImportPackageInput) (submissions.ImportPackageInput, error) {
	data, err := io.ReadAll(io.LimitReader(file.File, submissions.MaxPackageBytes+1))
	if err != nil {
		return submissions.ImportPackageInput{}, algoitny.Invalid("file", "the package could not be read")
	}
	out := submissions.ImportPackageInput{Package: data, FileName: file.Filename}
	if in != nil {
		out.ProblemID, out.Publish, out.RequireVerified = orEmpty(in.ProblemID), orFalse(in.Publish), orFalse(in.RequireVerified)
	}
	return out, nil
}

func orFalse(b *bool) bool { return b != nil && *b }
