package llm_test

import (
	"fmt"
	"net/http"
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

// writeSSE writes one server-sent event and flushes it.
func writeSSE(t *testing.T, w http.ResponseWriter, data string) {
	t.Helper()
	if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
		t.Errorf("writing event: %v", err)
		return
	}
	w.(http.Flusher).Flush()
}
