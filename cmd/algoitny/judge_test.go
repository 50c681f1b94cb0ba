package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJudgeCommandUIDBase: `algoitny judge` runs users' code as the uids
// JUDGE_UID_BASE gives, as the server does, and refuses a value out of
// range before judging anything. (Not parallel: it sets the environment.)
func TestJudgeCommandUIDBase(t *testing.T) {
	dir := t.TempDir()
	tests := filepath.Join(dir, "tests")
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := ownJudgeUIDBase()
	write("tests/1.in", "")
	// One worker slot: its runs are the base's first run uid, base + 1.
	write("tests/1.out", strconv.Itoa(base+1)+"\n")
	solution := write("uid.py", "import os\nprint(os.getuid())\n")
	judgeCmd := func() (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runJudge(context.Background(), []string{"--tests", tests, "--workers", "1", "--json", solution}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	t.Setenv("JUDGE_UID_BASE", "many")
	if code, _, stderr := judgeCmd(); code != 2 || !strings.Contains(stderr, "JUDGE_UID_BASE") {
		t.Fatalf("JUDGE_UID_BASE=many: exit %d, stderr %q", code, stderr)
	}
	t.Setenv("JUDGE_UID_BASE", strconv.Itoa(base))
	code, stdout, stderr := judgeCmd()
	if code != 0 || !strings.Contains(stdout, `"ACCEPTED"`) {
		t.Fatalf("exit %d: the solution did not run as uid %d\nstdout %s\nstderr %s", code, base+1, stdout, stderr)
	}
}
