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
