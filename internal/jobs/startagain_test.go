package jobs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/algoitny/api/internal/jobs"
)

// TestStartAgain: a subscription dropped for falling behind reads its
// state again past a failed read or two, gives up after five, and stops
// at once when its context has ended.
func TestStartAgain(t *testing.T) {
	t.Parallel()
	failing := func(fails int, calls *int) func() ([]*int, bool, error) {
		return func() ([]*int, bool, error) {
			*calls++
			if *calls <= fails {
				return nil, false, errors.New("the store is slow")
			}
			v := 7
			return []*int{&v}, true, nil
		}
	}
	calls := 0
	got, done, err := jobs.StartAgain(context.Background(), failing(2, &calls))
	if err != nil || !done || len(got) != 1 || *got[0] != 7 || calls != 3 {
		t.Fatalf("after two failed reads: %v %v %v, %d calls", got, done, err, calls)
	}
	calls = 0
	if _, _, err := jobs.StartAgain(context.Background(), failing(100, &calls)); err == nil || calls != 5 {
		t.Fatalf("a read that keeps failing: %v after %d calls, want an error after 5", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	if _, _, err := jobs.StartAgain(ctx, failing(100, &calls)); err == nil || calls != 1 {
		t.Fatalf("an ended context: %v after %d calls, want an error after 1", err, calls)
	}
}
