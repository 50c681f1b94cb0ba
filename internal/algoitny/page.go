package algoitny

// Page limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// PageRequest asks for one page of a list: at most First items after the
// opaque cursor After ("" = from the start), or, paging backward (Relay's
// last/before), the Last items before the cursor Before ("" = the end of
// the list), returned in the list's own order.
type PageRequest struct {
	First int
	After string
	// Last and Before page backward: see Backward.
	Last   int
	Before string
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

// Backward is r with a list's `last` and `before` arguments read as
// NewPageRequest reads `first` and `after` (an explicit last of 0 is out
// of range, Last -1).
func (r PageRequest) Backward(last *int, before *string) PageRequest {
	if last != nil {
		r.Last = *last
		if r.Last == 0 {
			r.Last = -1
		}
	}
	if before != nil {
		r.Before = *before
	}
	return r
}

// IsBackward says whether r pages backward (last or before given).
func (r PageRequest) IsBackward() bool { return r.Last != 0 || r.Before != "" }

// Cursor is the cursor r starts from: After, or Before paging backward.
func (r PageRequest) Cursor() string {
	if r.IsBackward() {
		return r.Before
	}
	return r.After
}

// CursorField names the argument Cursor comes from: "after", or "before"
// paging backward.
func (r PageRequest) CursorField() string {
	if r.IsBackward() {
		return "before"
	}
	return "after"
}

// Validate checks First (or Last, paging backward) is within
// 1–MaxPageSize (0 means the default) and returns the effective size. It
// returns EINVALID naming the field "first" or "last"; "last" as well when
// the request mixes first/after with last/before.
func (r PageRequest) Validate() (int, error) {
	if r.IsBackward() {
		switch {
		case r.First != 0 || r.After != "":
			return 0, Invalid("last", "page forward (first, after) or backward (last, before), not both")
		case r.Last == 0:
			return DefaultPageSize, nil
		case r.Last < 1 || r.Last > MaxPageSize:
			return 0, Invalid("last", "last must be between 1 and %d", MaxPageSize)
		}
		return r.Last, nil
	}
	switch {
	case r.First == 0:
		return DefaultPageSize, nil
	case r.First < 1 || r.First > MaxPageSize:
		return 0, Invalid("first", "first must be between 1 and %d", MaxPageSize)
	}
	return r.First, nil
}

// Page is one page of a list. EndCursor continues the list; HasNextPage is
// false on the last page. StartCursor is where the page starts (the cursor
// to page backward from) and HasPreviousPage whether items precede it.
type Page[T any] struct {
	Items       []T
	Cursors     []string // one cursor per item, for Relay edges
	EndCursor   string
	HasNextPage bool

	StartCursor     string
	HasPreviousPage bool
}

// ErrForwardOnly refuses last/before on a list that pages forward only.
func ErrForwardOnly() error {
	return Invalid("last", "this list pages forward only (first, after)")
}
