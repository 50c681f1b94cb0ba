package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

// incompressible returns n bytes of base64 text that gzip cannot shrink much.
func incompressible(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func TestTestCases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SizesRoundTrip", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		cases := []*algoitny.TestCase{
			{Input: "1 2\n", Output: "3\n", Generator: "gen.py", Seed: 7},
			{Input: strings.Repeat("1 2 3 4 5\n", 50_000), Output: "ok\n"}, // 500 KB, compresses into the item
			{Input: incompressible(3 << 20), Output: incompressible(1000)}, // 3 MB, split into parts
			{Input: "", Output: ""},
		}
		algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))
		got, tests := func() (*algoitny.Problem, []*algoitny.TestCase) {
			p, tc, err := db.GetProblemWithTestCases(ctx, p.Ref())
			algoitnytest.OK(t, err)
			return p, tc
		}()
		if got.TestCaseCount != 4 || len(tests) != 4 {
			t.Fatalf("count %d, read %d", got.TestCaseCount, len(tests))
		}
		for i, tc := range tests {
			if tc.Input != cases[i].Input || tc.Output != cases[i].Output {
				t.Fatalf("case %d: input %d bytes (want %d), output %d bytes (want %d)", i, len(tc.Input), len(cases[i].Input), len(tc.Output), len(cases[i].Output))
			}
			if tc.ID != cases[i].ID || tc.ID == "" {
				t.Fatalf("case %d id %q, want %q", i, tc.ID, cases[i].ID)
			}
		}
		if tests[0].Generator != "gen.py" || tests[0].Seed != 7 {
			t.Fatalf("provenance lost: %+v", tests[0])
		}
		if n := algoitnytest.Must[int](t)(dynamo.ItemCount(ctx, db, dynamo.ProblemPK(p.Ref()))); n < 1+4+7 {
			t.Fatalf("only %d items: the 3 MB case was not split", n)
		}
		algoitnytest.ErrCode(t, db.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{{Input: strings.Repeat("x", dynamo.MaxTestCaseBytes+1)}}), algoitny.EINVALID)
	})

	t.Run("ListPagesOverParts", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		p := newProblem(algoitny.PlatformBaekjoon, "2000", algoitny.LanguageCPP, true)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		var cases []*algoitny.TestCase
		for i := range 7 {
			in := fmt.Sprintf("case %d\n", i)
			if i == 2 || i == 3 { // two large ones, each followed by parts
				in += incompressible(700 << 10)
			}
			cases = append(cases, &algoitny.TestCase{Input: in, Output: fmt.Sprint(i)})
		}
		algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))
		// An orphan part (a crashed write) between the cases is never read.
		algoitnytest.OK(t, db.PutOrphanPart(ctx, p.Ref(), cases[4].CreatedAt))
		got, pages := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error) {
			return db.ListTestCases(ctx, p.Ref(), r)
		})
		if len(got) != 7 || pages != 4 {
			t.Fatalf("listed %d cases in %d pages", len(got), pages)
		}
		// Lists hold previews; the large cases are whole when read alone.
		for i, tc := range got {
			if !strings.HasPrefix(cases[i].Input, tc.Input) || len(tc.Input) != min(len(cases[i].Input), dynamo.PreviewBytes) ||
				tc.InputSize != len(cases[i].Input) || tc.Truncated != (i == 2 || i == 3) || tc.Output != fmt.Sprint(i) {
				t.Fatalf("case %d mismatch (input %d of %d bytes, truncated %t)", i, len(tc.Input), tc.InputSize, tc.Truncated)
			}
			whole, err := db.GetTestCase(ctx, p.Ref(), tc.ID)
			algoitnytest.OK(t, err)
			if whole.Input != cases[i].Input || whole.Truncated || whole.InputSize != len(cases[i].Input) {
				t.Fatalf("case %d read alone: input %d bytes, truncated %t", i, len(whole.Input), whole.Truncated)
			}
		}
		_, all, err := db.GetProblemWithTestCases(ctx, p.Ref())
		algoitnytest.OK(t, err)
		if len(all) != 7 {
			t.Fatalf("GetProblemWithTestCases read %d", len(all))
		}
	})

	// A page of test cases holds a bounded number of bytes: previews of
	// large cases, whole pages of them; following the cursors still lists
	// every case once, in order.
	t.Run("PagesAreBoundedInBytes", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		dynamo.BoundCasePages(db, 1<<20)
		p := newProblem(algoitny.PlatformBaekjoon, "3000", algoitny.LanguageCPP, true)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		var cases []*algoitny.TestCase
		for i, size := range []int{400 << 10, 400 << 10, 400 << 10, 1500 << 10, 10, 10} {
			cases = append(cases, &algoitny.TestCase{Input: fmt.Sprintf("%d ", i) + incompressible(size), Output: fmt.Sprint(i)})
		}
		algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))
		var sizes []int
		var got []*algoitny.TestCase
		for after, pages := "", 0; ; pages++ {
			if pages > 10 {
				t.Fatal("the pages never end")
			}
			page, err := db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 100, After: after})
			algoitnytest.OK(t, err)
			sizes = append(sizes, len(page.Items))
			got = append(got, page.Items...)
			if !page.HasNextPage {
				break
			}
			after = page.EndCursor
		}
		// Previews of 4 KB: all six fit in the 1 MB a page may hold.
		if fmt.Sprint(sizes) != "[6]" || len(got) != len(cases) {
			t.Fatalf("pages of %v cases, %d in all", sizes, len(got))
		}
		for i, tc := range got {
			if !strings.HasPrefix(cases[i].Input, tc.Input) || len(tc.Input) > dynamo.PreviewBytes || tc.InputSize != len(cases[i].Input) {
				t.Fatalf("case %d differs", i)
			}
		}
	})

	// DeleteTestCases lowers the count with the cases it deletes, so the
	// count stays the number of visible cases; parts go with their case;
	// unknown, repeated and already deleted ids count nothing, also when
	// two calls race over the same cases.
	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		p := newProblem(algoitny.PlatformBaekjoon, "4000", algoitny.LanguagePython, true)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		var cases []*algoitny.TestCase
		for i := range 130 { // more than one transaction's worth
			in := fmt.Sprintf("%d\n", i)
			if i == 1 {
				in += incompressible(1 << 20) // split into parts
			}
			cases = append(cases, &algoitny.TestCase{Input: in, Output: "x\n", Generator: "generator:python@0123456789ab", Seed: int64(i + 1),
				Args: []string{fmt.Sprint(i + 1), fmt.Sprint(i + 1)}, Production: 1})
		}
		algoitnytest.OK(t, db.AddTestCases(ctx, p.Ref(), cases))
		visible := func() int {
			t.Helper()
			got, err := db.GetProblem(algoitny.WithFreshReads(ctx), p.Ref())
			algoitnytest.OK(t, err)
			_, all, err := db.GetProblemWithTestCases(algoitny.WithFreshReads(ctx), p.Ref())
			algoitnytest.OK(t, err)
			if got.TestCaseCount != len(all) {
				t.Fatalf("count %d, %d visible test cases", got.TestCaseCount, len(all))
			}
			return len(all)
		}
		if n := visible(); n != 130 {
			t.Fatalf("%d cases", n)
		}
		// Provenance round-trips, in lists too.
		page := algoitnytest.Must[algoitny.Page[*algoitny.TestCase]](t)(db.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 2}))
		if tc := page.Items[1]; fmt.Sprint(tc.Args) != "[2 2]" || tc.Production != 1 || tc.Seed != 2 || !tc.IsGenerated() {
			t.Fatalf("listed %+v", tc)
		}
		before := algoitnytest.Must[int](t)(dynamo.ItemCount(ctx, db, dynamo.ProblemPK(p.Ref())))

		var ids []string
		for _, tc := range cases[:120] {
			ids = append(ids, tc.ID)
		}
		ids = append(ids, ids[0], "not-an-id", "0190e4b2-7a3c-7def-8000-000000000000")
		// Two calls delete the first 120 at once: 120 are deleted in all.
		var n1, n2 int
		var err1, err2 error
		done := make(chan struct{})
		go func() { n2, err2 = db.DeleteTestCases(ctx, p.Ref(), ids[60:]); close(done) }()
		n1, err1 = db.DeleteTestCases(ctx, p.Ref(), ids)
		<-done
		algoitnytest.OK(t, err1)
		algoitnytest.OK(t, err2)
		if n1+n2 != 120 {
			t.Fatalf("deleted %d + %d, want 120 in all", n1, n2)
		}
		if n := visible(); n != 10 {
			t.Fatalf("%d cases left, want 10", n)
		}
		// The 120 items and the large case's parts are gone.
		after := algoitnytest.Must[int](t)(dynamo.ItemCount(ctx, db, dynamo.ProblemPK(p.Ref())))
		if before-after <= 120 || after != 1+10 {
			t.Fatalf("%d items before, %d after: parts left behind", before, after)
		}
		_, err := db.GetTestCase(ctx, p.Ref(), cases[1].ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		// Again: nothing left to delete, nothing counted.
		if n := algoitnytest.Must[int](t)(db.DeleteTestCases(ctx, p.Ref(), ids)); n != 0 || visible() != 10 {
			t.Fatalf("deleted %d again", n)
		}
		// A deleted problem's cases are not deleted.
		algoitnytest.OK(t, db.DeleteProblem(ctx, p.Ref(), "gone"))
		_, err = db.DeleteTestCases(ctx, p.Ref(), []string{cases[125].ID})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("MissingProblem", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		ref := algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "none"}
		algoitnytest.ErrCode(t, db.AddTestCases(ctx, ref, []*algoitny.TestCase{{Input: "1", Output: "1"}}), algoitny.ENOTFOUND)
		_, _, err := db.GetProblemWithTestCases(ctx, ref)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})
}
