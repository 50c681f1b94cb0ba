package main

import (
	"testing"
	"time"
)

// TestLegacyDuplicateID (issue 17, item 9): the legacy graphql-ws protocol
// refuses an operation id in use with 4409, like graphql-transport-ws;
// an id is free again once its operation ended, and — with either
// protocol — the end of an operation the client stopped does not free the
// id a newer operation reuses.
func TestLegacyDuplicateID(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	s.createProblem(t, s.staff(t, "admin@example.com"), "BAEKJOON", "1000", 1, true)
	alice := s.login(t, "alice@example.com")
	job := s.pendingJob(t, alice)
	// executionProgress runs in gqlgen on both protocols (not shared).
	payload := map[string]any{"query": executionProgress, "variables": map[string]any{"id": job}}
	start := map[string]string{"graphql-ws": "start", "graphql-transport-ws": "subscribe"}
	stop := map[string]string{"graphql-ws": "stop", "graphql-transport-ws": "complete"}
	for _, protocol := range []string{"graphql-ws", "graphql-transport-ws"} {
		t.Run(protocol+"/Duplicate", func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, protocol, nil)
			c.init(alice)
			c.send(map[string]any{"type": start[protocol], "id": "same", "payload": payload})
			c.send(map[string]any{"type": start[protocol], "id": "same", "payload": payload})
			if code := c.closeCode(5 * time.Second); code != 4409 {
				t.Fatalf("close code %d, want 4409", code)
			}
		})
		t.Run(protocol+"/ReuseAfterStop", func(t *testing.T) {
			t.Parallel()
			c := s.dialWS(t, protocol, nil)
			c.init(alice)
			c.send(map[string]any{"type": start[protocol], "id": "a", "payload": payload})
			c.send(map[string]any{"type": stop[protocol], "id": "a"})
			c.send(map[string]any{"type": start[protocol], "id": "a", "payload": payload})
			// Whenever the first operation's end is written, "a" is the
			// second's: starting it again is a duplicate.
			time.Sleep(300 * time.Millisecond)
			c.send(map[string]any{"type": start[protocol], "id": "a", "payload": payload})
			if code := c.closeCode(5 * time.Second); code != 4409 {
				t.Fatalf("close code %d, want 4409", code)
			}
		})
	}
}
