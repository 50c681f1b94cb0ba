package algoitny

// Page limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// PageRequest asks for one page of a list: at most First items after the
// opaque cursor After ("" = from the start).
type PageRequest struct {
	First int
	After string
}

// NewPageRequest is the one reading of a list's `first` and `after`
// arguments: an omitted first (nil) asks for the default page size
// (First 0), an explicit 0 is out of range (First -1, which Validate
// refuses with EINVALID) rather than silently the default, and an omitted
// after starts at the beginning. graph's resolvers and the transport's
// prefetching both build their loader keys with it, so that a prefetched
// page is the one the resolver asks for.
func NewPageRequest(first *int, after *string) PageRequest {
	var r PageRequest
	if first != nil {
		r.First = *first
		if r.First == 0 {
			r.First = -1
		}
	}
	if after != nil {
		r.After = *after
	}
	return r
}

// Validate checks First is within 1–MaxPageSize (0 means the default) and
// returns the effective size. It returns EINVALID naming the field "first".
func (r PageRequest) Validate() (int, error) {
	switch {
	case r.First == 0:
		return DefaultPageSize, nil
	case r.First < 1 || r.First > MaxPageSize:
		return 0, Invalid("first", "first must be between 1 and %d", MaxPageSize)
	}
	return r.First, nil
}

// Page is one page of a list. EndCursor continues the list; HasNextPage is
// false on the last page.
type Page[T any] struct {
	Items       []T
	Cursors     []string // one cursor per item, for Relay edges
	EndCursor   string
	HasNextPage bool
}
