package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestPrefetchProblem: one Query gives the problem (GetProblem in the
// returned context costs no request) and the same page ListTestCases gives,
// parts of large cases included.
func TestPrefetchProblem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
	algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
	var cases []*algoitny.TestCase
	for i := range 5 {
		cases = append(cases, &algoitny.TestCase{Input: fmt.Sprintf("%d %d\n", i, i), Output: fmt.Sprintf("%d\n", 2*i)})
	}
	cases[1].Input = incompressible(1 << 20) // split into parts
	algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))

	for _, first := range []int{0, 1, 2, 5, 10} {
		t.Run(fmt.Sprintf("First%d", first), func(t *testing.T) {
			want, err := db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: first})
			algoitnytest.OK(t, err)
			before := db.Requests()
			pctx, got, err := db.PrefetchProblem(ctx, p.Ref(), algoitny.PageRequest{First: first})
			algoitnytest.OK(t, err)
			if n := db.Requests() - before; n != 1 {
				t.Fatalf("PrefetchProblem made %d requests", n)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("page differs from ListTestCases:\n got %+v\nwant %+v", got, want)
			}
			before = db.Requests()
			gp, err := db.GetProblem(pctx, p.Ref())
			algoitnytest.OK(t, err)
			if n := db.Requests() - before; n != 0 || gp.Title != p.Title || gp.TestCaseCount != 5 {
				t.Fatalf("GetProblem in the prefetched context: %d requests, %+v", n, gp)
			}
			// Other problems are read as usual.
			if _, err := db.GetProblem(pctx, algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "9"}); err == nil || db.Requests()-before != 1 {
				t.Fatalf("another problem: %v", err)
			}
		})
	}

	t.Run("ErrAfterCursor", func(t *testing.T) {
		page, err := db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 1})
		algoitnytest.OK(t, err)
		_, _, err = db.PrefetchProblem(ctx, p.Ref(), algoitny.PageRequest{First: 1, After: page.EndCursor})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("Missing", func(t *testing.T) {
		ref := algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "none"}
		pctx, page, err := db.PrefetchProblem(ctx, ref, algoitny.PageRequest{First: 3})
		algoitnytest.OK(t, err)
		if len(page.Items) != 0 || pctx != ctx {
			t.Fatalf("missing problem: %+v", page)
		}
		_, err = db.GetProblem(pctx, ref)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})
}
