package problempkg_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/algoitny/api/internal/problempkg"
)

// writePackage writes files into a new directory and opens it.
func writePackage(t *testing.T, files map[string]string) *problempkg.Package {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	for name, data := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := problempkg.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// tests adds n tests under data/<dir>/ to files.
func tests(files map[string]string, dir string, names ...string) map[string]string {
	for _, n := range names {
		files["data/"+dir+"/"+n+".in"] = "1\n"
		files["data/"+dir+"/"+n+".ans"] = "1\n"
	}
	return files
}

// outcomes makes per-test outcomes from verdict names.
func outcomes(os ...problempkg.Outcome) []problempkg.TestOutcome {
	out := make([]problempkg.TestOutcome, len(os))
	for i, o := range os {
		out[i] = problempkg.TestOutcome{Outcome: o}
	}
	return out
}

const (
	AC  = problempkg.AC
	WA  = problempkg.WA
	TLE = problempkg.TLE
	RTE = problempkg.RTE
)

func TestEvaluateLegacy(t *testing.T) {
	t.Parallel()
	t.Run("FirstFailureDecides", func(t *testing.T) {
		t.Parallel()
		p := writePackage(t, tests(map[string]string{"problem.yaml": "name: x\n"}, "secret", "1", "2", "3"))
		if r := p.Evaluate(outcomes(AC, WA, TLE)); r.Outcome != WA || r.Score != 0 {
			t.Fatalf("%+v, want WA (the first failure)", r)
		}
		if r := p.Evaluate(outcomes(AC, AC, AC)); r.Outcome != AC || r.Score != 100 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("ContinueWorstError", func(t *testing.T) {
		t.Parallel()
		files := tests(map[string]string{"problem.yaml": "name: x\n", "data/secret/testdata.yaml": "on_reject: continue\n"}, "secret", "1", "2", "3")
		p := writePackage(t, files)
		if p.StopsAtFirstFailure() {
			t.Fatal("on_reject: continue judges every test")
		}
		if r := p.Evaluate(outcomes(AC, WA, TLE)); r.Outcome != TLE {
			t.Fatalf("%+v, want TLE: worse than WA in the default grader's order", r)
		}
	})
	// The layout of a legacy scoring problem with subtasks: samples
	// ignored, each subtask all or nothing (min of accept_score), a
	// verdict of AC if any subtask is accepted.
	files := map[string]string{
		"problem.yaml":                 "type: scoring\nname: x\n",
		"data/testdata.yaml":           "on_reject: continue\ngrader_flags: ignore_sample\n",
		"data/sample/testdata.yaml":    "accept_score: 0\ngrader_flags: first_error\n",
		"data/secret/testdata.yaml":    "on_reject: continue\ngrader_flags: first_error accept_if_any_accepted\n",
		"data/secret/g1/testdata.yaml": "on_reject: break\naccept_score: 40\ngrader_flags: min\n",
		"data/secret/g2/testdata.yaml": "on_reject: break\naccept_score: 60\ngrader_flags: min\n",
	}
	tests(files, "sample", "1")
	tests(files, "secret/g1", "1", "2")
	tests(files, "secret/g2", "1", "2")
	t.Run("Subtasks", func(t *testing.T) {
		t.Parallel()
		p := writePackage(t, files)
		if p.MaxScore != 100 || len(p.Groups) != 2 || p.Groups[0].Mode != problempkg.ScoreMin || p.Groups[1].Points != 60 {
			t.Fatalf("max %v groups %+v", p.MaxScore, p.Groups)
		}
		cases := []struct {
			name    string
			in      []problempkg.TestOutcome
			outcome problempkg.Outcome
			score   float64
		}{
			{"All", outcomes(AC, AC, AC, AC, AC), AC, 100},
			{"SampleFailsDoesNotCount", outcomes(WA, AC, AC, AC, AC), AC, 100},
			{"SecondGroupFails", outcomes(AC, AC, AC, AC, WA), AC, 40},
			{"FirstGroupFails", outcomes(AC, TLE, AC, AC, AC), AC, 60},
			{"NoneAccepted", outcomes(AC, WA, AC, RTE, AC), WA, 0},
		}
		for _, c := range cases {
			r := p.Evaluate(c.in)
			if r.Outcome != c.outcome || r.Score != c.score {
				t.Errorf("%s: %+v, want %s %v", c.name, r, c.outcome, c.score)
			}
		}
	})
}

func TestEvaluate2025(t *testing.T) {
	t.Parallel()
	p := open(t, "sumlist")
	// sample/1, group1/01..03, group2/01..04
	cases := []struct {
		name  string
		in    []problempkg.TestOutcome
		score float64
	}{
		{"All", outcomes(AC, AC, AC, AC, AC, AC, AC, AC), 100},
		{"SampleDoesNotScore", outcomes(WA, AC, AC, AC, AC, AC, AC, AC), 100},
		{"Group1AllOrNothing", outcomes(AC, AC, WA, AC, AC, AC, AC, AC), 0}, // group2 requires group1
		{"Group2SumsItsTests", outcomes(AC, AC, AC, AC, AC, WA, AC, WA), 30 + 35},
	}
	for _, c := range cases {
		if r := p.Evaluate(c.in); r.Score != c.score {
			t.Errorf("%s: score %v, want %v", c.name, r.Score, c.score)
		}
	}
	frac := 0.5
	in := outcomes(AC, AC, AC, AC, AC, AC, AC, AC)
	in[4].Fraction = &frac // a validator's score_multiplier.txt
	if r := p.Evaluate(in); r.Score != 100-70.0/4/2 {
		t.Errorf("a half-scored test: %v", r.Score)
	}
}

func TestEvaluatePolygon(t *testing.T) {
	t.Parallel()
	xml := `<problem short-name="g"><judging><testset name="tests"><time-limit>1000</time-limit><test-count>4</test-count>
<tests><test method="manual" group="0" points="0" sample="true"/><test method="manual" group="1" points="20"/><test method="manual" group="1" points="20"/><test method="manual" group="2" points="30"/></tests>
<groups><group name="0" points-policy="complete-group"/><group name="1" points="40" points-policy="complete-group"><dependencies><dependency group="0"/></dependencies></group>
<group name="2" points-policy="each-test"/></groups></testset></judging>
<assets><checker type="testlib"><source path="c.cpp" type="cpp.g++17"/></checker></assets></problem>`
	files := map[string]string{"problem.xml": xml, "c.cpp": "int main(){}"}
	for i := 1; i <= 4; i++ {
		files[filepathName(i)] = "1\n"
	}
	p := writePackage(t, files)
	if !p.Scoring || p.MaxScore != 70 {
		t.Fatalf("scoring %v max %v", p.Scoring, p.MaxScore)
	}
	cases := []struct {
		name  string
		in    []problempkg.TestOutcome
		score float64
	}{
		{"All", outcomes(AC, AC, AC, AC), 70},
		{"CompleteGroupFails", outcomes(AC, AC, WA, AC), 30},
		{"DependencyFails", outcomes(WA, AC, AC, AC), 30},
		{"EachTest", outcomes(AC, AC, AC, TLE), 40},
	}
	for _, c := range cases {
		if r := p.Evaluate(c.in); r.Score != c.score {
			t.Errorf("%s: score %v, want %v", c.name, r.Score, c.score)
		}
	}
}

func filepathName(i int) string { return "tests/0" + string(rune('0'+i)) }
