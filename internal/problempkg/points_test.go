package problempkg_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problempkg"
)

// TestImportCheckerPoints: a Polygon package whose checker gives each
// test's own points (quitp) is imported with them — the problem reads its
// checker's points in the tests' points, each test keeps what it is
// worth, each test is a subtask of its points that counts part of it —,
// and judging the imported problem as an execution is (the checker's
// points as a fraction of each test, scored by the subtasks) gives the
// score Polygon would: 7 of 12 for the 32-bit solution. With
// treat-points-from-checker-as-percent the same checker's points are
// percentages: 2 + 4·2% + 6·3%.
func TestImportCheckerPoints(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		percent bool
		scale   algoitny.PointsScale
		score   float64
	}{
		{"TestPoints", false, algoitny.PointsOfTest, 7},
		{"Percent", true, algoitny.PointsPercent, 2 + 4*0.02 + 6*0.03},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := copyFixture(t, "pairsums")
			if c.percent {
				xml := filepath.Join(dir, "problem.xml")
				data, err := os.ReadFile(xml)
				if err != nil {
					t.Fatal(err)
				}
				data = []byte(strings.Replace(string(data), `run-count="1"`, `run-count="1" treat-points-from-checker-as-percent="true"`, 1))
				if err := os.WriteFile(xml, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pkg, err := problempkg.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer pkg.Close()
			e := sharedEngine(t)
			imp, err := problempkg.Import(context.Background(), pkg, e, problempkg.ImportOptions{})
			if err != nil {
				t.Fatalf("Import: %v (report %+v)", err, imp.Report)
			}
			if s := submission(t, imp.Report, "solutions/int32.cpp"); math.Abs(s.Score-c.score) > 1e-9 {
				t.Errorf("verified: int32.cpp scores %v, want %v", s.Score, c.score)
			}
			if imp.Problem.CheckerPoints != c.scale {
				t.Fatalf("checker points %q, want %q", imp.Problem.CheckerPoints, c.scale)
			}
			for i, want := range []float64{2, 4, 6} {
				if got := imp.Tests[i].Points; got != want {
					t.Fatalf("test %d worth %v, want %v", i+1, got, want)
				}
			}
			if got := executionScore(t, e, imp, "solutions/int32.cpp"); math.Abs(got-c.score) > 1e-9 {
				t.Fatalf("the imported problem scores int32.cpp %v, want %v", got, c.score)
			}
		})
	}
}

// executionScore judges the package's solution at path against the
// imported problem as an execution does (its checker's points read as the
// problem says, each test with its points) and scores the results with
// the imported subtasks.
func executionScore(t *testing.T, e *judge.Engine, imp *problempkg.Imported, path string) float64 {
	t.Helper()
	p := imp.Problem
	source, err := os.ReadFile(filepath.Join("testdata", "pairsums", path))
	if err != nil {
		t.Fatal(err)
	}
	sub := judge.Submission{Language: "cpp", Source: string(source),
		Checker: judge.Checker{Kind: judge.CheckCustom, Language: string(p.Checker.Language), Source: p.Checker.Code,
			Points: judge.PointsScale(p.CheckerPoints)}}
	ids := make([]string, len(imp.Tests))
	for i, tc := range imp.Tests {
		ids[i] = fmt.Sprint("t", i)
		sub.Tests = append(sub.Tests, judge.TestCase{ID: ids[i], Input: []byte(tc.Input), Expected: []byte(tc.Output), Points: tc.Points})
	}
	res, err := e.Judge(context.Background(), sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	var results []algoitny.TestResult
	for _, tr := range res.Tests {
		results = append(results, algoitny.TestResult{TestCaseID: tr.TestID, Verdict: algoitny.Verdict(tr.Verdict), Points: tr.Points})
	}
	subtasks := make([]algoitny.Subtask, len(imp.Subtasks))
	for i, st := range imp.Subtasks {
		subtasks[i] = st
		for _, k := range st.TestIndexes {
			subtasks[i].TestIDs = append(subtasks[i].TestIDs, ids[k])
		}
	}
	score := algoitny.ScoreSubtasks(subtasks, results)
	if score == nil || score.MaxScore != 12 {
		t.Fatalf("score %+v, want one of 12", score)
	}
	return score.Score
}
