package problempkg_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/problempkg"
)

// open opens a fixture package of testdata/.
func open(t *testing.T, name string) *problempkg.Package {
	t.Helper()
	p, err := problempkg.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// groupScoring describes how a data group and its subgroups score.
func groupScoring(g *problempkg.DataGroup) string {
	if g == nil {
		return "nil"
	}
	s := fmt.Sprintf("%s(max %v, %s, requires %v", g.Name, g.MaxScore, g.Aggregation, g.RequirePass)
	for _, it := range g.Items {
		if it.Group != nil {
			s += " " + groupScoring(it.Group)
		}
	}
	return s + ")"
}

func expectation(t *testing.T, p *problempkg.Package, path string) problempkg.Expectation {
	t.Helper()
	for _, s := range p.Submissions {
		if s.Path == path {
			return s.Expect
		}
	}
	t.Fatalf("no submission %s among %d", path, len(p.Submissions))
	return problempkg.Expectation{}
}

func TestOpenICPC(t *testing.T) {
	t.Parallel()
	t.Run("DefaultValidatorWithTolerance", func(t *testing.T) {
		t.Parallel()
		p := open(t, "circlearea")
		if p.Format != problempkg.FormatICPC || p.Version != "legacy" || p.Title != "Circle Area" || p.Name != "circlearea" {
			t.Fatalf("package %s %s %q %q", p.Format, p.Version, p.Title, p.Name)
		}
		if p.Checker.Kind != problempkg.CheckDefault || p.Interactive || p.Scoring {
			t.Fatalf("checker %s interactive %v scoring %v", p.Checker.Kind, p.Interactive, p.Scoring)
		}
		if len(p.Tests) != 8 || p.Tests[0].Name != "sample/1" || !p.Tests[0].Sample || p.Tests[2].Name != "secret/01" {
			t.Fatalf("tests %+v", p.Tests)
		}
		if got := strings.Join(p.Tests[3].OutputValidatorArgs, " "); got != "float_tolerance 1e-6" {
			t.Fatalf("validator flags %q", got)
		}
		if p.Limits.TimeLimit != 0 || p.Limits.ACToTimeLimit != 5 || p.Limits.TimeLimitToTLE != 2 {
			t.Fatalf("limits %+v", p.Limits)
		}
		if e := expectation(t, p, "submissions/time_limit_exceeded/spin.cc"); e.Verdict != problempkg.TLE {
			t.Fatalf("spin.cc must get %s", e.Verdict)
		}
		if e := expectation(t, p, "submissions/accepted/area.py"); e.Verdict != problempkg.AC || !e.LowerBoundsTime {
			t.Fatalf("area.py: %+v", e)
		}
		if len(p.InputValidators) != 1 || p.InputValidators[0].Language != "python" {
			t.Fatalf("validators %+v", p.InputValidators)
		}
		if !p.StopsAtFirstFailure() {
			t.Fatal("a legacy pass-fail package is decided by its first failure")
		}
	})
	t.Run("CustomOutputValidator", func(t *testing.T) {
		t.Parallel()
		p := open(t, "anysum")
		if p.Version != "2025-09" || p.Checker.Kind != problempkg.CheckICPC || p.Limits.TimeLimit != 2*time.Second {
			t.Fatalf("package %s %s %v", p.Version, p.Checker.Kind, p.Limits.TimeLimit)
		}
		v := p.Checker.Program
		if v.Main != "validator.cpp" || v.Language != "cpp20" || v.Files["validate.h"] == nil {
			t.Fatalf("validator %s %s %v", v.Main, v.Language, v.Files)
		}
		e := expectation(t, p, "submissions/rejected/overflow.cc")
		if len(e.Rules) != 2 || e.Rules[1].Tests != "sample" || !slices.Equal(e.Rules[1].Permitted, []problempkg.Outcome{problempkg.AC}) {
			t.Fatalf("overflow.cc rules %+v", e.Rules)
		}
		if e.Verdict != "" {
			t.Fatal("2025-09 submissions are judged by rules, not a verdict")
		}
	})
	t.Run("Interactive", func(t *testing.T) {
		t.Parallel()
		p := open(t, "guessnum")
		if !p.Interactive || p.Interactor == nil || p.Interactor.Main != "interactor.cpp" {
			t.Fatalf("interactive %v %+v", p.Interactive, p.Interactor)
		}
		if p.Tests[0].Answer == "" {
			t.Fatal("the sample's .ans is there (empty)")
		}
	})
	// 2023-07's output_validator/ is the program itself; problemtools also
	// takes it from a directory of its own inside (its guess example).
	for _, nested := range []bool{false, true} {
		t.Run(fmt.Sprintf("Interactive2023/Nested=%v", nested), func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t, "guessnum")
			yaml := "problem_format_version: 2023-07-draft\ntype: interactive\nname: Guess the Number\n"
			if err := os.WriteFile(filepath.Join(dir, "problem.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(dir, "output_validator")
			if nested {
				to = filepath.Join(to, "guess_validator")
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "output_validators", "interactor"), to); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "output_validators")); err != nil {
				t.Fatal(err)
			}
			p, err := problempkg.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if !strings.HasPrefix(p.Version, "2023-07") || !p.Interactive || p.Interactor == nil || p.Interactor.Main != "interactor.cpp" {
				t.Fatalf("%s interactive %v %+v", p.Version, p.Interactive, p.Interactor)
			}
		})
	}
	// The 2025-09 drafts kept a group's scoring in a map (score,
	// aggregation, require_pass) of testdata.yaml; packages written so,
	// the format's own scoring example among them, score the same.
	t.Run("ScoringMapOfTheDrafts", func(t *testing.T) {
		t.Parallel()
		dir := copyFixture(t, "sumlist")
		for group, yaml := range map[string]string{
			"group1": "scoring:\n  score: 30\n  aggregation: pass-fail\n",
			"group2": "scoring:\n  score: 70\n  aggregation: sum\n  require_pass: secret/group1\n",
		} {
			gdir := filepath.Join(dir, "data", "secret", group)
			if err := os.Remove(filepath.Join(gdir, "test_group.yaml")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(gdir, "testdata.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		drafts, err := problempkg.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer drafts.Close()
		want := open(t, "sumlist")
		if got, want := groupScoring(drafts.Data), groupScoring(want.Data); got != want {
			t.Fatalf("groups %s, want %s", got, want)
		}
	})
	t.Run("ScoringWithGroups", func(t *testing.T) {
		t.Parallel()
		p := open(t, "sumlist")
		if !p.Scoring || !p.Scoring2025 || p.MaxScore != 100 {
			t.Fatalf("scoring %v %v max %v", p.Scoring, p.Scoring2025, p.MaxScore)
		}
		want := []problempkg.Group{
			{Name: "group1", Points: 30, Mode: problempkg.ScoreAll},
			{Name: "group2", Points: 70, Mode: problempkg.ScoreSum, DependsOn: []string{"group1"}},
		}
		if len(p.Groups) != 2 || p.Groups[0].Name != want[0].Name || p.Groups[0].Mode != want[0].Mode || p.Groups[0].Points != 30 ||
			p.Groups[1].Mode != want[1].Mode || !slices.Equal(p.Groups[1].DependsOn, want[1].DependsOn) {
			t.Fatalf("groups %+v", p.Groups)
		}
		e := expectation(t, p, "submissions/partial/int32.cc")
		if e.Score == nil || e.Score[0] != 47.5 || e.Score[1] != 47.5 {
			t.Fatalf("partial's score %+v", e.Score)
		}
	})
}

func TestOpenPolygon(t *testing.T) {
	t.Parallel()
	p := open(t, "pairsum")
	if p.Format != problempkg.FormatPolygon || p.Name != "pairsum" || p.Title != "Pair Sum" {
		t.Fatalf("package %s %q %q", p.Format, p.Name, p.Title)
	}
	if p.Limits.TimeLimit != time.Second || p.Limits.MemoryMB != 256 {
		t.Fatalf("limits %+v", p.Limits)
	}
	if len(p.Tests) != 8 || !p.Tests[0].Sample || p.Tests[0].Generation != nil {
		t.Fatalf("tests %+v", p.Tests)
	}
	g := p.Tests[3].Generation
	if g == nil || g.Generator != "gen" || !slices.Equal(g.Args, []string{"1000", "same"}) {
		t.Fatalf("test 04 is generated by gen 1000 same: %+v", g)
	}
	if p.Checker.Kind != problempkg.CheckTestlib || p.Checker.Program.Main != "check.cpp" || p.Checker.Program.Language != "cpp" {
		t.Fatalf("checker %+v", p.Checker)
	}
	if len(p.InputValidators) != 1 || p.Generators["gen"] == nil {
		t.Fatalf("validators %d generators %v", len(p.InputValidators), p.Generators)
	}
	var main []string
	for _, s := range p.Submissions {
		if s.Main {
			main = append(main, s.Path)
		}
	}
	if !slices.Equal(main, []string{"solutions/sol.cpp"}) {
		t.Fatalf("main solutions %v", main)
	}
	if e := expectation(t, p, "solutions/sol.py"); e.Rules[0].Permitted[0] != problempkg.AC || p.Submissions[1].Program.Language != "python" {
		t.Fatalf("sol.py %+v", e)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, data := range files {
			full := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	minimal := map[string]string{"problem.yaml": "name: x\n", "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range minimal {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"NoMetadata", map[string]string{"data/secret/1.in": "1\n"}, "neither problem.yaml"},
		{"MissingAnswer", with("data/secret/1.ans", ""), "no .ans"},
		{"NoTests", map[string]string{"problem.yaml": "name: x\n"}, "no test cases"},
		{"UnsupportedType", with("problem.yaml", "problem_format_version: 2025-09\ntype: submit-answer\n"), "not supported"},
		{"ValidatorWithScripts", map[string]string{"problem.yaml": "problem_format_version: 2025-09\nname: x\n", "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n",
			"output_validator/build": "#!/bin/sh\n", "output_validator/run": "#!/bin/sh\n", "output_validator/v.c": "int main(void) { return 42; }\n"}, "build and run scripts"},
		{"PassesNotANumber", with("problem.yaml", "problem_format_version: 2025-09\ntype: multi-pass\nlimits:\n  validation_passes: many\n"), "validation_passes"},
		{"OnePass", with("problem.yaml", "problem_format_version: 2025-09\ntype: multi-pass\nlimits:\n  validation_passes: 1\n"), "validation_passes"},
		{"YAMLAlias", with("problem.yaml", "a: &x [1, 2]\nname: *x\n"), "aliases"},
		{"BadFlag", with("problem.yaml", "validator_flags: float_tolerance\n"), ""},
		{"PolygonWithoutTests", map[string]string{"problem.xml": `<problem short-name="p"><judging><testset name="tests"><time-limit>1000</time-limit><test-count>1</test-count><tests><test method="manual"/></tests></testset></judging><assets><checker type="testlib"><source path="c.cpp" type="cpp.g++17"/></checker></assets></problem>`, "c.cpp": "int main(){}"}, "full package"},
		{"PolygonFileIO", map[string]string{"problem.xml": `<problem><judging input-file="input.txt" output-file="output.txt"><testset name="tests"><time-limit>1000</time-limit></testset></judging></problem>`}, "read or write files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := problempkg.Open(write(t, c.files))
			if c.want == "" { // read, but the flag fails when the test is judged
				if err != nil {
					t.Fatal(err)
				}
				p.Close()
				return
			}
			var pe *problempkg.Error
			if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a package error with %q", err, c.want)
			}
		})
	}
}

// TestOpenLegacyMultiPass: the legacy format's validation key says
// multi-pass as DOMjudge's packages write it (custom multi-pass), with
// limits.validation_passes or its default of 2.
func TestOpenLegacyMultiPass(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		yaml   string
		passes int
	}{
		{"validation: custom multi-pass\n", 2},
		{"validation: custom multi-pass\nlimits:\n  validation_passes: 5\n", 5},
		{"validation: custom\n", 0},
	} {
		p := writePackage(t, map[string]string{"problem.yaml": c.yaml, "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n",
			"output_validators/v/v.py": "import sys\nsys.exit(42)\n"})
		if p.MultiPass != (c.passes > 0) || p.Limits.ValidationPasses != c.passes {
			t.Errorf("%q: multi-pass %v with %d passes, want %d", c.yaml, p.MultiPass, p.Limits.ValidationPasses, c.passes)
		}
	}
}

// TestOpenEntryPoint: submissions.yaml's entrypoint chooses the main
// source of a directory submission, over the main.py a guess would take.
func TestOpenEntryPoint(t *testing.T) {
	t.Parallel()
	p := writePackage(t, map[string]string{
		"problem.yaml": "problem_format_version: 2025-09\nname: x\n", "data/secret/1.in": "1\n", "data/secret/1.ans": "1\n",
		"submissions/accepted/two/main.py": "print('wrong entry point')\n", "submissions/accepted/two/ac.py": "print(1)\n",
		"submissions/submissions.yaml": "accepted/two:\n  language: python3\n  entrypoint: ac.py\n",
	})
	if len(p.Submissions) != 1 || p.Submissions[0].Program.Main != "ac.py" {
		t.Fatalf("submissions %+v, want accepted/two starting from ac.py", p.Submissions)
	}
}

func TestOpenZip(t *testing.T) {
	t.Parallel()
	zipOf := func(t *testing.T, files map[string]string) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, data := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "pkg.zip")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("OneTopDirectory", func(t *testing.T) {
		t.Parallel()
		p, err := problempkg.Open(zipOf(t, map[string]string{"hello/problem.yaml": "name: Hello\n",
			"hello/data/secret/1.in": "\n", "hello/data/secret/1.ans": "Hello World!\n"}))
		if err != nil {
			t.Fatal(err)
		}
		root := p.Root
		if p.Name != "hello" || p.Title != "Hello" || len(p.Tests) != 1 {
			t.Fatalf("%q %q %d", p.Name, p.Title, len(p.Tests))
		}
		p.Close()
		if _, err := os.Stat(root); !os.IsNotExist(err) {
			t.Fatalf("Close leaves the unpacked package: %v", err)
		}
	})
	t.Run("AtTheRoot", func(t *testing.T) {
		t.Parallel()
		p, err := problempkg.Open(zipOf(t, map[string]string{"problem.yaml": "name: Hello\n",
			"data/secret/1.in": "\n", "data/secret/1.ans": "x\n"}))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if p.Name != "pkg" {
			t.Fatalf("name %q, want the zip's", p.Name)
		}
	})
	t.Run("ErrOutside", func(t *testing.T) {
		t.Parallel()
		_, err := problempkg.Open(zipOf(t, map[string]string{"../evil": "x", "problem.yaml": "name: x\n"}))
		if err == nil || !strings.Contains(err.Error(), "outside the package") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrNotAZip", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(t.TempDir(), "x.zip")
		if err := os.WriteFile(p, []byte("not a zip"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := problempkg.Open(p); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, content, want string }{
		{"a.cc", "", "cpp20"}, {"a.cpp", "", "cpp20"}, {"a.C", "", "cpp20"}, {"a.c", "", "c"},
		{"Main.java", "", "java"}, {"a.kt", "", "kotlin"}, {"a.py", "print(1)", "python"},
		{"a.py", "#!/usr/bin/env python2\nprint 1", "python2"}, {"a.py", "#!/usr/bin/python3\n", "python"},
		{"a.py2", "", "python2"}, {"a.js", "", "javascript"}, {"a.go", "", "go"}, {"a.rs", "", "rust"},
		{"a.cs", "", "csharp"}, {"a.rb", "", "ruby"}, {"a.php", "", "php"}, {"a.hs", "", "haskell"},
		{"a.scala", "", ""}, {"a.pas", "", ""}, {"README", "", ""},
	}
	for _, c := range cases {
		if got := problempkg.Detect(c.name, []byte(c.content)); got != c.want {
			t.Errorf("Detect(%s, %q) = %q, want %q", c.name, c.content, got, c.want)
		}
	}
}
