package judge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// TestWarm: warming compiles and runs a program in every available
// language (the engine's languages: every built-in one here) and says how long each
// took.
func TestWarm(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := e.Warm(ctx)
	got := map[string]judge.WarmResult{}
	for _, r := range res {
		got[r.Language] = r
	}
	for _, l := range e.Languages() {
		requireLanguage(t, e, l.ID)
		r, ok := got[l.ID]
		if !ok || r.Err != nil || r.Duration <= 0 {
			t.Errorf("%s: warmed %v: %+v", l.ID, ok, r)
		}
		t.Logf("%s warmed in %v", l.ID, r.Duration.Round(time.Millisecond))
	}
	if len(res) != len(e.Languages()) {
		t.Fatalf("%d results for %d languages: %+v", len(res), len(e.Languages()), res)
	}
	// Warming some languages warms those alone.
	if some := e.WarmLanguages(ctx, "c", "python", "cobol"); len(some) != 2 || some[0].Err != nil || some[1].Err != nil {
		t.Fatalf("warming c and python: %+v", some)
	}
	// A cancelled warm-up stops: what is left reports the context's error.
	done, stop := context.WithCancel(context.Background())
	stop()
	for _, r := range e.Warm(done) {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "canceled") {
			t.Fatalf("%s warmed with a cancelled context: %+v", r.Language, r)
		}
	}
}
