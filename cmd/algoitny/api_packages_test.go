package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixturePackage is a problem package of internal/problempkg's fixtures.
func fixturePackage(name string) string {
	return filepath.Join("..", "..", "internal", "problempkg", "testdata", name)
}

// TestPackageCommands imports the fixture packages with `algoitny package
// import` into a running stack and judges submissions to them through the
// API: the ICPC default validator with its flags, an ICPC output
// validator of several files, an ICPC interactive validator, and test
// groups as subtasks.
func TestPackageCommands(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	bin := binary(t)
	// The command's judge runs programs as uids of its own, away from the
	// test server's.
	run := func(t *testing.T, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env(s.Config, "JUDGE_UID_BASE=1460000")
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	alice := s.login(t, "alice@example.com")
	judgeOn := func(t *testing.T, id, lang, code string) (verdict string, score *float64) {
		t.Helper()
		var out struct{ ExecuteCode struct{ ID string } }
		s.query(t, alice, executeMutation, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "language": lang, "code": code}}).decode(t, &out)
		if j := s.waitJob(t, alice, out.ExecuteCode.ID, 120*time.Second); j.Status != "COMPLETED" {
			t.Fatalf("job %+v", j)
		}
		var got struct {
			Job struct {
				History struct {
					Verdict string
					Score   *float64
				}
			}
		}
		s.query(t, alice, `query($id: ID!) { job(id: $id) { history { verdict score } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &got)
		return got.Job.History.Verdict, got.Job.History.Score
	}

	t.Run("VerifyJSON", func(t *testing.T) {
		t.Parallel()
		code, out := run(t, "package", "verify", "--json", fixturePackage("anysum"))
		var report struct {
			Problem     string
			Submissions []struct{ Path, Language, Verdict, Expected string }
			Skipped     []struct{ Path, Reason string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &report) != nil || report.Problem != "anysum" || len(report.Submissions) != 5 {
			t.Fatalf("exit %d: %s", code, out)
		}
		for _, s := range report.Submissions {
			if s.Path == "submissions/wrong_answer/zero.cc" && (s.Verdict != "WRONG_ANSWER" || s.Language != "CPP20" && s.Language != "CPP") {
				t.Fatalf("zero.cc: %+v", s)
			}
		}
	})
	t.Run("DefaultValidator", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", "--id", "circle", fixturePackage("circlearea")); code != 0 || !strings.Contains(out, "imported CUSTOM/circle") {
			t.Fatalf("import: %d %s", code, out)
		}
		var p struct {
			Problem struct {
				Checker struct {
					Kind string
					Args []string
				}
				TestCaseCount int
				TimeLimitMs   int
			}
		}
		s.query(t, alice, `{ problem(platform: CUSTOM, problemId: "circle") { checker { kind args } testCaseCount timeLimitMs } }`, nil).decode(t, &p)
		if p.Problem.Checker.Kind != "ICPC_DEFAULT" || strings.Join(p.Problem.Checker.Args, " ") != "float_tolerance 1e-6" || p.Problem.TestCaseCount != 8 {
			t.Fatalf("problem %+v", p.Problem)
		}
		if v, _ := judgeOn(t, "circle", "PYTHON", "import math\nr = float(input())\nprint('%.3e' % (math.pi * r * r))\n"); v != "WRONG_ANSWER" {
			t.Fatalf("three digits: %s", v) // 1e-6 is not met by %.3e
		}
		if v, _ := judgeOn(t, "circle", "PYTHON", "import math\nr = float(input())\nprint('%.12e' % (math.pi * r * r))\n"); v != "ACCEPTED" {
			t.Fatalf("twelve digits: %s", v)
		}
	})
	t.Run("OutputValidatorOfSeveralFiles", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", fixturePackage("anysum")); code != 0 {
			t.Fatalf("import: %d %s", code, out)
		}
		if v, _ := judgeOn(t, "anysum", "PYTHON", "n = int(input())\nprint(n - 1, 1)\n"); v != "ACCEPTED" {
			t.Fatalf("n-1 1: %s", v)
		}
		if v, _ := judgeOn(t, "anysum", "PYTHON", "n = int(input())\nprint(n, 0)\n"); v != "WRONG_ANSWER" {
			t.Fatalf("n 0: %s", v)
		}
	})
	t.Run("Interactive", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", fixturePackage("guessnum")); code != 0 {
			t.Fatalf("import: %d %s", code, out)
		}
		binary := "lo, hi = 1, 1000\nwhile lo < hi:\n    m = (lo + hi) // 2\n    print('?', m, flush=True)\n    r = input()\n" +
			"    if r == 'correct':\n        lo = hi = m\n    elif r == 'lower':\n        hi = m - 1\n    else:\n        lo = m + 1\nprint('!', lo, flush=True)\n"
		if v, _ := judgeOn(t, "guessnum", "PYTHON", binary); v != "ACCEPTED" {
			t.Fatalf("binary search: %s", v)
		}
		if v, _ := judgeOn(t, "guessnum", "PYTHON", "print('! 1', flush=True)\n"); v != "WRONG_ANSWER" {
			t.Fatalf("a guess: %s", v)
		}
	})
	t.Run("GroupsAsSubtasks", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", "--require-verified", fixturePackage("sumlist")); code != 0 || !strings.Contains(out, "2 subtasks") {
			t.Fatalf("import: %d %s", code, out)
		}
		int32 := "n = int(input())\ns = sum(map(int, input().split()))\nprint((s + 2**31) % 2**32 - 2**31)\n"
		if v, score := judgeOn(t, "sumlist", "PYTHON", int32); v != "WRONG_ANSWER" || score == nil || *score != 47.5 {
			t.Fatalf("32-bit sums: %s %v", v, score)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", filepath.Join(t.TempDir(), "missing")); code != 1 || !strings.Contains(out, "no such file") {
			t.Fatalf("a missing package: %d %s", code, out)
		}
		if code, _ := run(t, "package", "import"); code != 2 {
			t.Fatalf("no path: %d", code)
		}
	})
}
