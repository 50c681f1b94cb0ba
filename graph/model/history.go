package model

import "github.com/algoitny/api/internal/algoitny"

// HistoryNodes returns the executions of the page, without nils (none for
// a nil page). The transport's prefetcher (httpserver.HistoryPage) loads
// their problems and authors with it, one request each.
func (c *SearchHistoryConnection) HistoryNodes() []*algoitny.SearchHistory {
	if c == nil {
		return nil
	}
	items := make([]*algoitny.SearchHistory, 0, len(c.Edges))
	for _, e := range c.Edges {
		if e != nil && e.Node != nil {
			items = append(items, e.Node)
		}
	}
	return items
}
