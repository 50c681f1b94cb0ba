package algoitny

import "context"

// TestCasePreviewBytes is how much of a test case's input and of its
// output a list of test cases holds (TestCase.Truncated): a page of a
// hundred cases of megabytes each must not be read, nor held, to be shown.
// The whole of a case is read alone. The store cuts the previews at it;
// the transport lets a request read test cases up to it in full freely.
const TestCasePreviewBytes = 4 << 10

// FullReadChecker decides whether a test case is read in full: size is its
// input and output in bytes (-1 for a test case written before sizes were
// stored); nil goes on, an error is what reading the test case returns
// (the transport's RESPONSE_TOO_LARGE).
type FullReadChecker interface {
	CheckFullRead(size int) error
}

type fullReadCheckKey struct{}

// WithFullReadCheck returns a context in which the store asks check before
// it reads a test case's data in full. The HTTP layer bounds with it what
// one request may make the server hold.
func WithFullReadCheck(ctx context.Context, check FullReadChecker) context.Context {
	return context.WithValue(ctx, fullReadCheckKey{}, check)
}

// FullReadCheck returns the check of WithFullReadCheck in ctx, if any.
func FullReadCheck(ctx context.Context) (FullReadChecker, bool) {
	check, ok := ctx.Value(fullReadCheckKey{}).(FullReadChecker)
	return check, ok
}
