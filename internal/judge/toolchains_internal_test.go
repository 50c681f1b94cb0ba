package judge

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestToolchainKeyFollowsFiles: a toolchain whose file changes (an upgrade)
// gets a new key, so its remembered check no longer applies; a missing
// tool has none.
func TestToolchainKeyFollowsFiles(t *testing.T) {
	tool := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sandboxed := []any{true, "/usr/bin/bwrap", true, []string(nil), []string{"alternatives"}}
	key := func(sb []any, compile Limits, l Language) (string, bool) { return toolchainKeyOf(sb, compile, l) }
	l := Language{ID: "x", Compile: []string{tool}, Run: []string{"{dir}/main"}}
	k1, ok := key(sandboxed, Limits{}, l)
	if !ok {
		t.Fatal("no key for an existing tool")
	}
	if k, _ := key(sandboxed, Limits{}, l); k != k1 {
		t.Fatalf("the key changed with nothing else: %q, %q", k1, k)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(tool, later, later); err != nil {
		t.Fatal(err)
	}
	if k, _ := key(sandboxed, Limits{}, l); k == k1 {
		t.Fatal("the key did not change with the tool's file")
	}
	k1, _ = key(sandboxed, Limits{}, l)
	if k, _ := key([]any{false, "", true, []string(nil), []string{"alternatives"}}, Limits{}, l); k == k1 {
		t.Fatal("the key does not tell the sandbox mode")
	}
	if k, _ := key([]any{true, "/usr/bin/bwrap", true, []string{"/opt"}, []string{"alternatives"}}, Limits{}, l); k == k1 {
		t.Fatal("the key does not tell the sandbox's extra paths")
	}
	if k, _ := key(sandboxed, Limits{MemoryBytes: 1 << 20}, l); k == k1 {
		t.Fatal("the key does not tell the compile limits")
	}
	// Commands that join to the same words are different commands.
	a, _ := key(sandboxed, Limits{}, Language{Compile: []string{tool}, VersionArgs: []string{"a b"}})
	b, _ := key(sandboxed, Limits{}, Language{Compile: []string{tool}, VersionArgs: []string{"a", "b"}})
	if a == b {
		t.Fatal(`["a b"] and ["a", "b"] have one key`)
	}
	if _, ok := key(sandboxed, Limits{}, Language{Compile: []string{filepath.Join(t.TempDir(), "missing")}}); ok {
		t.Fatal("a key for a missing tool")
	}
}
