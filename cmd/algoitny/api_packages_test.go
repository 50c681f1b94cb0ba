package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
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
// validator of several files, an ICPC interactive validator, a Polygon
// interactive problem with a checker, a multi-pass problem, and test
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
	// More executions than the Free plan's daily 10.
	admin := s.staff(t, "admin@example.com")
	s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`,
		map[string]any{"id": globalIDOf("User", s.user(t, "alice@example.com").ID)}).decode(t, new(any))
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
	t.Run("PolygonInteractiveWithChecker", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", fixturePackage("relaydouble")); code != 0 {
			t.Fatalf("import: %d %s", code, out)
		}
		if v, _ := judgeOn(t, "relaydouble", "PYTHON", "n = int(input())\nprint(2 * n, flush=True)\n"); v != "ACCEPTED" {
			t.Fatalf("twice: %s", v)
		}
		if v, _ := judgeOn(t, "relaydouble", "PYTHON", "n = int(input())\nprint(n, flush=True)\n"); v != "WRONG_ANSWER" {
			t.Fatalf("the number itself: %s", v) // ACCEPTED if only the interactor, which relays it, judged
		}
	})
	t.Run("MultiPass", func(t *testing.T) {
		t.Parallel()
		if code, out := run(t, "package", "import", "--publish", fixturePackage("halves")); code != 0 {
			t.Fatalf("import: %d %s", code, out)
		}
		if v, _ := judgeOn(t, "halves", "PYTHON", "p, x = map(int, input().split())\nprint(x // 2 if p == 1 else x + 1)\n"); v != "ACCEPTED" {
			t.Fatalf("both passes: %s", v)
		}
		if v, _ := judgeOn(t, "halves", "PYTHON", "p, x = map(int, input().split())\nprint(x // 2)\n"); v != "WRONG_ANSWER" {
			t.Fatalf("the first pass only: %s", v) // ACCEPTED if the second pass never ran
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

// zipFixture zips a fixture package (its files under one directory of its
// name, as setters zip them).
func zipFixture(t *testing.T, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	root := fixturePackage(name)
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		w, err := zw.Create(name + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const importMutation = `mutation($f: Upload!, $in: ImportPackageInput) { importProblemPackage(file: $f, input: $in) { id status } }`

// upload sends importMutation as a GraphQL multipart request with the
// given file and headers.
func (s *apiServer) upload(t *testing.T, header http.Header, file []byte, fileName string, input map[string]any) *gqlResult {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": importMutation, "variables": map[string]any{"f": nil, "in": input}})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0": ["variables.f"]}`)
	fw, _ := mw.CreateFormFile("0", fileName)
	_, _ = fw.Write(file)
	mw.Close()
	return s.post(t, "", mw.FormDataContentType(), body.Bytes(), header)
}

// TestImportProblemPackage imports a package through the API: a
// multipart upload (GraphQL multipart request specification) starts a
// PACKAGE_IMPORT job whose worker verifies the package and registers it.
func TestImportProblemPackage(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	auth := http.Header{"Authorization": {"Bearer " + admin}}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		var out struct{ ImportProblemPackage struct{ ID, Status string } }
		s.upload(t, auth, zipFixture(t, "anysum"), "anysum.zip", map[string]any{"problemId": "any-sum", "publish": true}).decode(t, &out)
		id := out.ImportProblemPackage.ID
		if j := s.waitJob(t, admin, id, 180*time.Second); j.Status != "COMPLETED" {
			t.Fatalf("job %+v", j)
		}
		var got struct {
			Job struct {
				Type    string
				Result  string
				Problem struct {
					ProblemID     string
					IsCompleted   bool
					TestCaseCount int
					Checker       struct{ Kind string }
				}
				Progress struct {
					Edges []struct {
						Node struct{ Step, Message string }
					}
				}
			}
		}
		s.query(t, admin, `query($id: ID!) { job(id: $id) { type result problem { problemId isCompleted testCaseCount checker { kind } } progress(first: 50) { edges { node { step message } } } } }`,
			map[string]any{"id": id}).decode(t, &got)
		j := got.Job
		if j.Type != "PACKAGE_IMPORT" || j.Problem.ProblemID != "any-sum" || !j.Problem.IsCompleted || j.Problem.TestCaseCount != 7 || j.Problem.Checker.Kind != "ICPC" {
			t.Fatalf("job %+v", j)
		}
		var res struct {
			ProblemID string
			Report    struct {
				Submissions []struct {
					Path, Verdict string
					OK            bool
				}
			}
		}
		if err := json.Unmarshal([]byte(j.Result), &res); err != nil || res.ProblemID != "any-sum" || len(res.Report.Submissions) != 5 {
			t.Fatalf("result %s", j.Result)
		}
		verifying := 0
		for _, e := range j.Progress.Edges {
			if e.Node.Step == "verifying" {
				verifying++
			}
		}
		if verifying == 0 {
			t.Fatalf("no verification steps among %+v", j.Progress.Edges)
		}
	})
	t.Run("FaultyPackageFails", func(t *testing.T) {
		t.Parallel()
		// A package whose only secret test has no answer.
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, data := range map[string]string{"bad/problem.yaml": "name: Bad\n", "bad/data/secret/1.in": "1\n"} {
			w, _ := zw.Create(name)
			_, _ = w.Write([]byte(data))
		}
		zw.Close()
		var out struct{ ImportProblemPackage struct{ ID string } }
		s.upload(t, auth, buf.Bytes(), "bad.zip", nil).decode(t, &out)
		j := s.waitJobResult(t, admin, out.ImportProblemPackage.ID)
		if j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "no .ans") {
			t.Fatalf("job %+v", j)
		}
	})
	t.Run("ErrNotAZip", func(t *testing.T) {
		t.Parallel()
		if r := s.upload(t, auth, []byte("hello"), "x.zip", nil); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("%s", r.Raw)
		}
	})
	t.Run("ErrSignedOut", func(t *testing.T) {
		t.Parallel()
		if r := s.upload(t, http.Header{"GraphQL-Preflight": {"1"}}, zipFixture(t, "anysum"), "anysum.zip", nil); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("%s", r.Raw)
		}
	})
	t.Run("ErrCrossSiteForm", func(t *testing.T) {
		t.Parallel()
		// A form a page on another site could post without a preflight:
		// no Authorization, no preflight header.
		if r := s.upload(t, nil, zipFixture(t, "anysum"), "anysum.zip", nil); r.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
	})
}
