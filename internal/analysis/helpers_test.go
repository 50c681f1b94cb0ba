package analysis_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
)

// requireCode fails the test unless err is an *algoitny.Error with code.
func requireCode(t *testing.T, err error, code string) *algoitny.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want code %s", code)
	}
	var e *algoitny.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *algoitny.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%v), want %s", e.Code, err, code)
	}
	return e
}

// requireNoError stops the test on err.
func requireNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

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
