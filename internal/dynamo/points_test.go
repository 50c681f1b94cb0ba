package dynamo_test

import (
	"context"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestCheckerPoints: how a problem's checker gives points and what each
// test is worth are stored and read back, by every read of a test case
// (whole, with its problem, or as a preview, including one kept in the
// item beside compressed data); a problem and tests without them read as
// the default, a fraction of a test without points of its own.
func TestCheckerPoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	p := newProblem(algoitny.PlatformCustom, "points", algoitny.LanguageCPP, true)
	p.CheckerPoints = algoitny.PointsOfTest
	algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
	cases := []*algoitny.TestCase{
		{Input: "1\n", Output: "1\n", Points: 10},
		{Input: incompressible(300 << 10), Output: "2\n", Points: 2.5}, // its preview is kept in the item
		{Input: "3\n", Output: "3\n"},
	}
	algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))
	want := []float64{10, 2.5, 0}
	check := func(how string, got []*algoitny.TestCase) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d tests, want %d", how, len(got), len(want))
		}
		for i, tc := range got {
			if tc.Points != want[i] {
				t.Fatalf("%s: test %d worth %v, want %v", how, i, tc.Points, want[i])
			}
		}
	}
	got, tests, err := db.GetProblemWithTestCases(ctx, p.Ref())
	algoitnytest.OK(t, err)
	if got.CheckerPoints != algoitny.PointsOfTest {
		t.Fatalf("checker points %q, want %q", got.CheckerPoints, algoitny.PointsOfTest)
	}
	check("with the problem", tests)
	page, err := db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10})
	algoitnytest.OK(t, err)
	check("listed", page.Items)
	one, err := db.GetTestCase(ctx, p.Ref(), tests[1].ID)
	algoitnytest.OK(t, err)
	check("alone", []*algoitny.TestCase{tests[0], one, tests[2]})

	plain := newProblem(algoitny.PlatformCustom, "plain", algoitny.LanguageCPP, true)
	algoitnytest.OK(t, db.CreateProblem(ctx, plain, algoitny.Unlimited))
	got, err = db.GetProblem(ctx, plain.Ref())
	algoitnytest.OK(t, err)
	if got.CheckerPoints != algoitny.PointsFraction {
		t.Fatalf("a problem without checker points reads %q, want the fraction default", got.CheckerPoints)
	}
}
