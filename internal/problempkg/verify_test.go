package problempkg_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problempkg"
)

var engine struct {
	once sync.Once
	e    *judge.Engine
	err  error
}

// sharedEngine is one sandboxed judge for the package's tests, on uids of
// its own (by the test process's pid, away from other packages' tests).
func sharedEngine(t *testing.T) *judge.Engine {
	t.Helper()
	engine.once.Do(func() {
		base := 1_000_000 + (os.Getpid()%40)*10_000
		engine.e, engine.err = judge.New(judge.Config{UIDBase: base})
	})
	if engine.err != nil {
		t.Fatalf("judge.New: %v", engine.err)
	}
	return engine.e
}

func TestMain(m *testing.M) {
	code := m.Run()
	if engine.e != nil {
		engine.e.Close()
	}
	os.Exit(code)
}

// copyFixture copies a fixture package into a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(filepath.Join("testdata", name), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", name), p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// verify opens and verifies the package in dir.
func verify(t *testing.T, dir string) *problempkg.Report {
	t.Helper()
	p, err := problempkg.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := problempkg.Verify(context.Background(), p, sharedEngine(t), problempkg.Options{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return r
}

func submission(t *testing.T, r *problempkg.Report, path string) problempkg.SubmissionReport {
	t.Helper()
	for _, s := range r.Submissions {
		if s.Path == path {
			return s
		}
	}
	t.Fatalf("no %s in the report: %+v (skipped %+v)", path, r.Submissions, r.Skipped)
	return problempkg.SubmissionReport{}
}

// Every fixture package verifies: each submission gets what its folder
// or tag requires.
func TestVerifyFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// want are verdicts some submissions must get, by path.
		want map[string]string
	}{
		{"circlearea", map[string]string{
			"submissions/accepted/scientific.c":       "ACCEPTED",
			"submissions/wrong_answer/trailing.py":    "WRONG_ANSWER",
			"submissions/time_limit_exceeded/spin.cc": "TIME_LIMIT_EXCEEDED",
			"submissions/run_time_error/abort.c":      "RUNTIME_ERROR",
		}},
		{"anysum", map[string]string{"submissions/accepted/half.py": "ACCEPTED", "submissions/wrong_answer/zero.cc": "WRONG_ANSWER"}},
		{"guessnum", map[string]string{
			"submissions/accepted/binary.py":             "ACCEPTED",
			"submissions/time_limit_exceeded/no_flush.c": "TIME_LIMIT_EXCEEDED",
			"submissions/wrong_answer/linear.cc":         "WRONG_ANSWER",
		}},
		{"sumlist", map[string]string{"submissions/partial/int32.cc": "WRONG_ANSWER"}},
		{"addk", map[string]string{
			"submissions/accepted/add.py":            "ACCEPTED", // include/python3/k.py
			"submissions/accepted/add.cpp":           "ACCEPTED", // include/default/k.h
			"submissions/accepted/inline.py":         "ACCEPTED", // {{k}} in the submission
			"submissions/wrong_answer/off_by_one.py": "WRONG_ANSWER",
		}},
		{"pairsum", map[string]string{
			"solutions/sol.py":    "ACCEPTED",
			"solutions/int32.cpp": "WRONG_ANSWER",
			"solutions/extra.cpp": "WRONG_ANSWER",
			"solutions/slow.cpp":  "TIME_LIMIT_EXCEEDED",
		}},
		{"pairsums", map[string]string{"solutions/sol.cpp": "ACCEPTED", "solutions/int32.cpp": "WRONG_ANSWER"}},
		{"relaydouble", map[string]string{ // Polygon interactive: its checker judges what the interactor relays
			"solutions/double.py": "ACCEPTED",
			"solutions/echo.py":   "WRONG_ANSWER",
		}},
		{"halves", map[string]string{ // multi-pass: right on the first pass only is wrong
			"submissions/accepted/half.py":                "ACCEPTED",
			"submissions/accepted/zero.c":                 "ACCEPTED",
			"submissions/wrong_answer/first_pass_only.py": "WRONG_ANSWER",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t, c.name)
			if c.name == "pairsum" { // the package's own testlib.h, as Polygon ships it
				if err := os.WriteFile(filepath.Join(dir, "files", "testlib.h"), judge.TestlibHeader(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := verify(t, dir)
			if !r.OK() {
				t.Fatalf("the package does not verify: errors %v\nsubmissions %+v", r.Errors, r.Submissions)
			}
			for path, verdict := range c.want {
				if s := submission(t, r, path); s.Verdict != verdict {
					t.Errorf("%s: %s, want %s", path, s.Verdict, verdict)
				}
			}
			if c.name == "pairsums" { // the checker's points are each test's own: 2 of 2, 2 of 4, 3 of 6
				if s := submission(t, r, "solutions/int32.cpp"); s.Score != 7 {
					t.Errorf("int32.cpp scores %v, want 7 of 12", s.Score)
				}
				if s := submission(t, r, "solutions/sol.cpp"); s.Score != 12 {
					t.Errorf("sol.cpp scores %v, want 12", s.Score)
				}
			}
			if c.name == "sumlist" {
				if s := submission(t, r, "submissions/partial/int32.cc"); s.Score != 47.5 {
					t.Errorf("int32.cc scores %v, want 47.5", s.Score)
				}
			}
		})
	}
}

// TestVerifyPolygonWindowsLineEnds: Polygon's standard package is written
// for Windows, CR LF in every test; its tests are read with LF ends, as
// Polygon's Linux package has them, so its strict validator accepts them,
// its generator regenerates them byte for byte and its solutions get their
// tags' verdicts.
func TestVerifyPolygonWindowsLineEnds(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "pairsum")
	if err := os.WriteFile(filepath.Join(dir, "files", "testlib.h"), judge.TestlibHeader(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("tests: %v %v", tests, err)
	}
	for _, f := range tests {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := verify(t, dir)
	if !r.OK() {
		t.Fatalf("the package does not verify: errors %v\nsubmissions %+v", r.Errors, r.Submissions)
	}
	for path, verdict := range map[string]string{"solutions/sol.py": "ACCEPTED", "solutions/int32.cpp": "WRONG_ANSWER"} {
		if s := submission(t, r, path); s.Verdict != verdict {
			t.Errorf("%s: %s, want %s", path, s.Verdict, verdict)
		}
	}
}

// A package that does not verify says what is wrong.
func TestVerifyFaults(t *testing.T) {
	t.Parallel()
	t.Run("WrongFolder", func(t *testing.T) {
		t.Parallel()
		dir := copyFixture(t, "anysum")
		if err := os.Rename(filepath.Join(dir, "submissions/wrong_answer/zero.cc"), filepath.Join(dir, "submissions/accepted/zero.cc")); err != nil {
			t.Fatal(err)
		}
		r := verify(t, dir)
		s := submission(t, r, "submissions/accepted/zero.cc")
		// The report says why, with the judge's message for the test.
		if r.OK() || s.OK || s.Verdict != "WRONG_ANSWER" || !strings.Contains(s.Message, "not permitted") || strings.HasSuffix(s.Message, "(AC)") {
			t.Fatalf("a wrong answer in accepted/ verifies: %+v", s)
		}
	})
	t.Run("InvalidInput", func(t *testing.T) {
		t.Parallel()
		dir := copyFixture(t, "anysum")
		if err := os.WriteFile(filepath.Join(dir, "data/secret/02.in"), []byte("03\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := verify(t, dir)
		if r.OK() || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "secret/02") || !strings.Contains(r.Errors[0], "refuses") {
			t.Fatalf("errors %v", r.Errors)
		}
	})
	t.Run("GeneratedTestDiffers", func(t *testing.T) {
		t.Parallel()
		dir := copyFixture(t, "pairsum")
		if err := os.WriteFile(filepath.Join(dir, "files", "testlib.h"), judge.TestlibHeader(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tests/03"), []byte("1 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := verify(t, dir)
		if r.OK() || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "byte for byte") {
			t.Fatalf("errors %v", r.Errors)
		}
	})
}
