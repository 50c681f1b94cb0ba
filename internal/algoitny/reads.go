package algoitny

import "context"

type freshReadsKey struct{}

// WithFreshReads marks reads made under ctx as ones a write will be decided
// on (charge a use or not, delete what a record points to): the store
// serves them from the database itself, never from a replica's cache.
func WithFreshReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshReadsKey{}, true)
}

// FreshReads reports whether ctx asks for fresh reads (WithFreshReads).
func FreshReads(ctx context.Context) bool { return ctx.Value(freshReadsKey{}) != nil }
