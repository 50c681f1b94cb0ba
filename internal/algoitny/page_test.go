package algoitny_test

import (
	"testing"

	"github.com/algoitny/api/internal/algoitny"
)

// TestNewPageRequest: an omitted first is the default size, an explicit 0
// is refused (EINVALID on "first"), not taken for the default.
func TestNewPageRequest(t *testing.T) {
	t.Parallel()
	n := func(i int) *int { return &i }
	cursor := "c1"
	for _, c := range []struct {
		name    string
		first   *int
		after   *string
		want    algoitny.PageRequest
		size    int
		invalid bool
	}{
		{"Omitted", nil, nil, algoitny.PageRequest{}, algoitny.DefaultPageSize, false},
		{"OK", n(5), &cursor, algoitny.PageRequest{First: 5, After: "c1"}, 5, false},
		{"ErrZero", n(0), nil, algoitny.PageRequest{First: -1}, 0, true},
		{"ErrTooLarge", n(algoitny.MaxPageSize + 1), nil, algoitny.PageRequest{First: algoitny.MaxPageSize + 1}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := algoitny.NewPageRequest(c.first, c.after)
			if got != c.want {
				t.Fatalf("NewPageRequest = %+v, want %+v", got, c.want)
			}
			size, err := got.Validate()
			if c.invalid != algoitny.IsCode(err, algoitny.EINVALID) || size != c.size {
				t.Fatalf("Validate = %d, %v", size, err)
			}
		})
	}
}
