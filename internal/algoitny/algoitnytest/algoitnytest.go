// Package algoitnytest holds the assertions that tests of every layer
// share: a failed step stops the test (OK, Must), an error is checked by
// its code in the domain's vocabulary (ErrCode), and a test waits for
// something to happen by polling the condition with a deadline (Eventually)
// instead of sleeping for a guessed time. It imports only the standard
// library and internal/algoitny, so any test may use it.
package algoitnytest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// OK stops the test when err is not nil.
func OK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Must returns a function that passes a call's value on and stops the test
// when its error is not nil: Must[*algoitny.User](t)(db.GetUserByID(ctx, id)).
func Must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// ErrCode stops the test unless err carries code — an *algoitny.Error with
// it in err's chain; code "" wants no error — and returns that error, so
// that a test can check its Field, Message or RateLimit. A plain error
// (which algoitny.ErrorCode reports as EINTERNAL) does not pass for
// EINTERNAL: the code a caller sees must have been given on purpose.
func ErrCode(t testing.TB, err error, code string) *algoitny.Error {
	t.Helper()
	if code == "" {
		OK(t, err)
		return nil
	}
	var e *algoitny.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want an *algoitny.Error with code %q", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("error code = %q (%v), want %q", e.Code, err, code)
	}
	return e
}

// PollInterval is how often Eventually asks its condition.
const PollInterval = 5 * time.Millisecond

// Eventually waits until cond reports true, asking it every PollInterval,
// and stops the test with what it waited for when within does not suffice.
// A test waits on the condition it needs rather than sleeping: it goes on as
// soon as the thing happened and fails clearly (not flakily later) when it
// does not.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(context.Background(), within, cond) {
		t.Fatalf("waited %v for %s", within, what)
	}
}

// Poll asks cond every PollInterval until it reports true (Poll returns
// true), within passes or ctx is done (false). It is Eventually for code
// that must not stop the test itself, such as a goroutine or a check that
// a thing does not happen.
func Poll(ctx context.Context, within time.Duration, cond func() bool) bool {
	return PollEvery(ctx, within, PollInterval, cond)
}

// EventuallyEvery is Eventually for a condition that costs the system under
// test a request (a GraphQL query, a process listing): it asks every
// interval instead of every PollInterval.
func EventuallyEvery(t testing.TB, within, every time.Duration, what string, cond func() bool) {
	t.Helper()
	if !PollEvery(context.Background(), within, every, cond) {
		t.Fatalf("waited %v for %s", within, what)
	}
}

// PollEvery is Poll asking every interval; a test that has more to say
// than what it waited for when the wait fails (the last state it saw)
// calls it and fails itself.
func PollEvery(ctx context.Context, within, every time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
}
