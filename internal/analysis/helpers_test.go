package analysis_test

import (
	"strings"
	"testing"
)

// requireContains fails unless s contains every one of subs
// (case-insensitively).
func requireContains(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(strings.ToLower(s), strings.ToLower(sub)) {
			t.Fatalf("%q\ndoes not contain %q", s, sub)
		}
	}
}
