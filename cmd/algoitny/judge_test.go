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

// TestJudgeCommandLanguages: `algoitny judge --languages` lists the
// language table with each toolchain's version, the built-in table
// changed by the file JUDGE_LANGUAGES names (a language disabled, one
// added), and refuses a malformed file. (Not parallel: it sets the
// environment.)
func TestJudgeCommandLanguages(t *testing.T) {
	list := func() (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runJudge(context.Background(), []string{"--languages"}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	table := filepath.Join(t.TempDir(), "languages.json")
	if err := os.WriteFile(table, []byte(`{"languages": [
		{"id": "kotlin", "disabled": true},
		{"id": "python_o", "name": "Python 3 (-O)", "source": "main.py", "run": ["python3", "-O", "{dir}/main.py"], "memory": "address-space", "addressSpaceSlack": "32MiB"}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JUDGE_LANGUAGES", table)
	code, stdout, stderr := list()
	if code != 0 || strings.Contains(stdout, "kotlin") || !strings.Contains(stdout, "Python 3 (-O)") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		if f := strings.Fields(line); len(f) < 4 || f[len(f)-1] == "true" {
			t.Fatalf("a language without its version: %q", line)
		}
	}
	for _, id := range []string{"cpp20", "pypy3", "csharp", "ruby", "php", "haskell"} {
		if !strings.Contains(stdout, "\n"+id+" ") {
			t.Fatalf("%s is not listed:\n%s", id, stdout)
		}
	}

	if err := os.WriteFile(table, []byte(`{"languages": [{"id": "kotlin", "disabled": true, "nmae": "typo"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := list(); code != 2 || !strings.Contains(stderr, "JUDGE_LANGUAGES") || !strings.Contains(stderr, "nmae") {
		t.Fatalf("a malformed table: exit %d, stderr %q", code, stderr)
	}
}

// TestJudgeCommandWarms: `algoitny judge` warms the submission's language
// before judging it (here a warm-up program that does not compile, so that
// the warm-up shows), and judges it all the same. (Not parallel: it sets
// the environment.)
func TestJudgeCommandWarms(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"tests/1.in": "1 2\n", "tests/1.out": "3\n", "sum.py": "a, b = map(int, input().split())\nprint(a + b)\n",
		"languages.json": `{"languages": [{"id": "python", "name": "Python 3", "source": "main.py", "compile": ["python3", "-m", "py_compile", "main.py"],
			"run": ["python3", "{dir}/main.py"], "memory": "address-space", "addressSpaceSlack": "32MiB", "extensions": [".py"], "warm": "print(("}]}`} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("JUDGE_LANGUAGES", filepath.Join(dir, "languages.json"))
	t.Setenv("JUDGE_UID_BASE", strconv.Itoa(ownJudgeUIDBase()))
	var stdout, stderr bytes.Buffer
	code := runJudge(context.Background(), []string{"--tests", filepath.Join(dir, "tests"), "--workers", "1", filepath.Join(dir, "sum.py")}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stderr.String(), "warming python") {
		t.Fatalf("exit %d, want ACCEPTED after a warm-up of python\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
}
