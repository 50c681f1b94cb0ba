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
	e := &Engine{sandboxed: true}
	l := Language{ID: "x", Compile: []string{tool}, Run: []string{"{dir}/main"}}
	k1, ok := e.toolchainKey(l)
	if !ok {
		t.Fatal("no key for an existing tool")
	}
	if k, _ := e.toolchainKey(l); k != k1 {
		t.Fatalf("the key changed with nothing else: %q, %q", k1, k)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(tool, later, later); err != nil {
		t.Fatal(err)
	}
	if k, _ := e.toolchainKey(l); k == k1 {
		t.Fatal("the key did not change with the tool's file")
	}
	k1, _ = e.toolchainKey(l)
	if k, _ := (&Engine{sandboxed: false}).toolchainKey(l); k == k1 {
		t.Fatal("the key does not tell the sandbox mode")
	}
	if k, _ := (&Engine{sandboxed: true, cfg: Config{ReadOnlyPaths: []string{"/opt"}}}).toolchainKey(l); k == k1 {
		t.Fatal("the key does not tell the sandbox's extra paths")
	}
	if k, _ := (&Engine{sandboxed: true, cfg: Config{CompileLimits: Limits{MemoryBytes: 1 << 20}}}).toolchainKey(l); k == k1 {
		t.Fatal("the key does not tell the compile limits")
	}
	// Commands that join to the same words are different commands.
	a, _ := e.toolchainKey(Language{Compile: []string{tool}, VersionArgs: []string{"a b"}})
	b, _ := e.toolchainKey(Language{Compile: []string{tool}, VersionArgs: []string{"a", "b"}})
	if a == b {
		t.Fatal(`["a b"] and ["a", "b"] have one key`)
	}
	if _, ok := e.toolchainKey(Language{Compile: []string{filepath.Join(t.TempDir(), "missing")}}); ok {
		t.Fatal("a key for a missing tool")
	}
}
