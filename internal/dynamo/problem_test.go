package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func newProblem(platform algoitny.Platform, id string, lang algoitny.Language, completed bool) *algoitny.Problem {
	return &algoitny.Problem{Platform: platform, ProblemID: id, Title: "Problem " + id, Language: lang, IsCompleted: completed, Tags: []string{"math"}, TimeLimitMs: 1000, MemoryLimitMB: 256}
}

// listAll pages through a list with page size `first` and returns every item
// and the number of pages.
func listAll[T any](t *testing.T, first int, list func(algoitny.PageRequest) (algoitny.Page[T], error)) ([]T, int) {
	t.Helper()
	var all []T
	pages := 0
	for after := ""; ; {
		p, err := list(algoitny.PageRequest{First: first, After: after})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(p.Items) > first || len(p.Cursors) != len(p.Items) {
			t.Fatalf("page of %d items with %d cursors (first=%d)", len(p.Items), len(p.Cursors), first)
		}
		all = append(all, p.Items...)
		if !p.HasNextPage {
			return all, pages
		}
		after = p.EndCursor
	}
}

func problemIDs(ps []*algoitny.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ProblemID)
	}
	return out
}

// tick returns a clock that advances 1 ms per call, so items get distinct times.
func tick() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetConflict", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
		p.Checker = algoitny.Checker{Kind: algoitny.CheckerFloat, Epsilon: 1e-6}
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if got.InternalID == "" || got.Title != "Problem 1000" || got.Checker.Epsilon != 1e-6 || got.Tags[0] != "math" {
			t.Fatalf("got %+v", got)
		}
		algoitnytest.ErrCode(t, db.CreateProblem(ctx, newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguageC, false), algoitny.Unlimited), algoitny.ECONFLICT)
		_, err := db.GetProblem(ctx, algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "404"})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ListByIndexes", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		db.SetClock(tick())
		for i := range 9 {
			platform := algoitny.PlatformBaekjoon
			if i%3 == 0 {
				platform = algoitny.PlatformCodeforces
			}
			lang := algoitny.LanguagePython
			if i%2 == 0 {
				lang = algoitny.LanguageCPP
			}
			p := newProblem(platform, fmt.Sprint(100+i), lang, i != 8)
			if i == 4 {
				p.Title = "Shortest Path Queries"
			}
			algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		}
		// A history item in Python must not show up among Python problems (GSI3 fix).
		algoitnytest.OK(t, db.CreateHistory(ctx, &algoitny.SearchHistory{UserID: "u1", Platform: algoitny.PlatformBaekjoon, ProblemID: "101", Language: algoitny.LanguagePython, IsCodePublic: true}))

		list := func(f algoitny.ProblemFilter) func(algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error) {
			return func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error) {
				return db.ListProblems(ctx, f, r)
			}
		}
		// #4 completed, newest first, across 3 pages.
		completed, pages := listAll(t, 3, list(algoitny.ProblemFilter{}))
		if got := strings.Join(problemIDs(completed), ","); got != "107,106,105,104,103,102,101,100" || pages != 3 {
			t.Fatalf("completed = %s in %d pages", got, pages)
		}
		// #5 drafts.
		no := false
		drafts, _ := listAll(t, 10, list(algoitny.ProblemFilter{Completed: &no}))
		if got := strings.Join(problemIDs(drafts), ","); got != "108" {
			t.Fatalf("drafts = %s", got)
		}
		// #3 by platform.
		cf := algoitny.PlatformCodeforces
		byPlatform, _ := listAll(t, 2, list(algoitny.ProblemFilter{Platform: &cf}))
		if got := strings.Join(problemIDs(byPlatform), ","); got != "106,103,100" {
			t.Fatalf("codeforces = %s", got)
		}
		// By language: problems only.
		py := algoitny.LanguagePython
		byLang, _ := listAll(t, 2, list(algoitny.ProblemFilter{Language: &py}))
		if got := strings.Join(problemIDs(byLang), ","); got != "107,105,103,101" {
			t.Fatalf("python problems = %s", got)
		}
		// Platform and language together, and title search (filters, pages still full).
		bj, cpp := algoitny.PlatformBaekjoon, algoitny.LanguageCPP
		both, _ := listAll(t, 1, list(algoitny.ProblemFilter{Platform: &bj, Language: &cpp}))
		if got := strings.Join(problemIDs(both), ","); got != "104,102" {
			t.Fatalf("baekjoon cpp = %s", got)
		}
		byTitle, _ := listAll(t, 5, list(algoitny.ProblemFilter{TitleContains: "shortest PATH"}))
		if got := strings.Join(problemIDs(byTitle), ","); got != "104" {
			t.Fatalf("title search = %s", got)
		}
	})

	t.Run("UpdateMovesIndexes", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformAtCoder, "abc100_a", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		yes, java, title := true, algoitny.LanguageJava, "Renamed"
		up := algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{IsCompleted: &yes, Language: &java, Title: &title}))
		if !up.IsCompleted || up.Language != java || up.Title != "Renamed" || up.TimeLimitMs != 1000 {
			t.Fatalf("updated %+v", up)
		}
		got := algoitnytest.Must[algoitny.Page[*algoitny.Problem]](t)(db.ListProblems(ctx, algoitny.ProblemFilter{Language: &java}, algoitny.PageRequest{}))
		if len(got.Items) != 1 {
			t.Fatalf("not listed under java: %d", len(got.Items))
		}
		py := algoitny.LanguagePython
		if got := algoitnytest.Must[algoitny.Page[*algoitny.Problem]](t)(db.ListProblems(ctx, algoitny.ProblemFilter{Language: &py}, algoitny.PageRequest{})); len(got.Items) != 0 {
			t.Fatal("still listed under python")
		}
		_, err := db.UpdateProblem(ctx, algoitny.ProblemRef{Platform: algoitny.PlatformAtCoder, ProblemID: "none"}, algoitny.ProblemUpdate{Title: &title})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	// An interactive problem's interactor is stored with it, and an
	// update without code makes it a batch problem again.
	t.Run("Interactor", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformCustom, "interactive", algoitny.LanguagePython, false)
		// An ICPC interactor of several files, with arguments: kept whole.
		p.Interactor = algoitny.Program{Language: algoitny.LanguageC, Code: "#include \"io.h\"\nint main(void) { return 0; }\n",
			Files: map[string]string{"io.h": "#pragma once\n"}, Args: []string{"float_tolerance", "1e-6"}, Protocol: algoitny.ProtocolICPC}
		p.Checker = algoitny.Checker{Kind: algoitny.CheckerICPC, Language: algoitny.LanguageC, Code: "int main(void) { return 42; }\n",
			Files: map[string]string{"validate.h": "#pragma once\n"}, Args: []string{"case_sensitive"}}
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(algoitny.WithFreshReads(ctx), p.Ref()))
		if !reflect.DeepEqual(got.Interactor, p.Interactor) || !reflect.DeepEqual(got.Checker, p.Checker) {
			t.Fatalf("stored interactor %+v, want %+v", got.Interactor, p.Interactor)
		}
		none := algoitny.Program{}
		up := algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Interactor: &none}))
		if !up.Interactor.IsZero() || up.Interactor.Language != "" || up.Interactor.Files != nil || up.Interactor.Protocol != "" {
			t.Fatalf("after removal: %+v", up.Interactor)
		}
	})

	// Production runs are numbered by the problem's counter, and a run
	// becomes current only if it is newer than the current one; the
	// programs are stored with it.
	t.Run("ProductionRuns", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformCustom, "prod", algoitny.LanguagePython, false)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		first := algoitnytest.Must[int](t)(db.StartProduction(ctx, p.Ref()))
		second := algoitnytest.Must[int](t)(db.StartProduction(ctx, p.Ref()))
		if first != 1 || second != 2 {
			t.Fatalf("runs numbered %d, %d", first, second)
		}
		gen := algoitny.Program{Language: algoitny.LanguagePython, Code: "print(1)\n"}
		val := algoitny.Program{Language: algoitny.LanguageCPP, Code: "#include \"v.h\"\nint main(){}\n", Files: map[string]string{"v.h": "\n"}}
		up := algoitnytest.Must[*algoitny.Problem](t)(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Generator: &gen, Validator: &val, Production: &second}))
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(algoitny.WithFreshReads(ctx), p.Ref()))
		for _, q := range []*algoitny.Problem{up, got} {
			if q.Production != 2 || !reflect.DeepEqual(q.Generator, gen) || !reflect.DeepEqual(q.Validator, val) {
				t.Fatalf("stored %+v", q)
			}
		}
		// The older run finishing later does not become current.
		none := algoitny.Program{}
		_, err := db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Generator: &none, Validator: &none, Production: &first})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		_, err = db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Production: &second})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		if got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(algoitny.WithFreshReads(ctx), p.Ref())); got.Production != 2 || !reflect.DeepEqual(got.Generator, gen) || !reflect.DeepEqual(got.Validator, val) {
			t.Fatalf("changed by a refused run: %+v", got)
		}
		// A rebuild of run 1 does not replace run 2; one of run 2 does.
		fourth, fifth := 4, 5
		_, err = db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Production: &fourth, ReplacesProduction: &first})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		algoitnytest.OK(t, err2(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Production: &fifth, ReplacesProduction: &second})))
		if got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(algoitny.WithFreshReads(ctx), p.Ref())); got.Production != 5 {
			t.Fatalf("run %d current, want 5", got.Production)
		}
		_, err = db.StartProduction(ctx, algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "none"})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.OK(t, db.DeleteProblem(ctx, p.Ref(), "gone"))
		sixth := 6
		_, err = db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Production: &sixth})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("SoftDelete", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformBaekjoon, "1", algoitny.LanguagePython, true)
		algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
		algoitnytest.OK(t, db.CreateProblem(ctx, newProblem(algoitny.PlatformBaekjoon, "2", algoitny.LanguagePython, true), algoitny.Unlimited))
		algoitnytest.OK(t, db.DeleteProblem(ctx, p.Ref(), "duplicate"))
		bj, py := algoitny.PlatformBaekjoon, algoitny.LanguagePython
		for _, f := range []algoitny.ProblemFilter{{}, {Platform: &bj}, {Language: &py}} {
			got := algoitnytest.Must[algoitny.Page[*algoitny.Problem]](t)(db.ListProblems(ctx, f, algoitny.PageRequest{}))
			if ids := problemIDs(got.Items); len(ids) != 1 || ids[0] != "2" {
				t.Fatalf("filter %+v lists %v after delete", f, ids)
			}
		}
		got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, p.Ref()))
		if !got.IsDeleted || got.DeletedReason != "duplicate" || got.DeletedAt == nil {
			t.Fatalf("deleted problem reads as %+v", got)
		}
		algoitnytest.ErrCode(t, db.DeleteProblem(ctx, p.Ref(), "again"), algoitny.ENOTFOUND)
		title := "x"
		_, err := db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: &title})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.ErrCode(t, db.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{{Input: "1", Output: "1"}}), algoitny.ENOTFOUND)
	})

	t.Run("MaxProblemsIsExact", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		const limit = 3
		var wg sync.WaitGroup
		var mu sync.Mutex
		admitted, limited := 0, 0
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := newProblem(algoitny.PlatformCustom, fmt.Sprint(i), algoitny.LanguageC, false)
				p.CreatedBy = "author"
				err := db.CreateProblem(ctx, p, limit)
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					admitted++
				case algoitny.ERATELIMITED:
					limited++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if admitted != limit || limited != 12-limit {
			t.Fatalf("admitted %d, limited %d", admitted, limited)
		}
		if n := algoitnytest.Must[int](t)(db.CountUserProblems(ctx, "author")); n != limit {
			t.Fatalf("counter = %d", n)
		}
		// Deleting one frees a slot.
		no := false
		drafts := algoitnytest.Must[algoitny.Page[*algoitny.Problem]](t)(db.ListProblems(ctx, algoitny.ProblemFilter{Completed: &no}, algoitny.PageRequest{}))
		algoitnytest.OK(t, db.DeleteProblem(ctx, drafts.Items[0].Ref(), "make room"))
		p := newProblem(algoitny.PlatformCustom, "later", algoitny.LanguageC, false)
		p.CreatedBy = "author"
		algoitnytest.OK(t, db.CreateProblem(ctx, p, limit))
		p0 := newProblem(algoitny.PlatformCustom, "zero", algoitny.LanguageC, false)
		p0.CreatedBy = "nobody"
		algoitnytest.ErrCode(t, db.CreateProblem(ctx, p0, 0), algoitny.ERATELIMITED)
	})

	// A create whose test cases failed is undone: the empty draft goes and
	// its slot in the creator's limit comes back; nothing else is discarded.
	t.Run("DiscardAnEmptyDraft", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := newProblem(algoitny.PlatformCustom, "d1", algoitny.LanguageC, false)
		p.CreatedBy = "author"
		algoitnytest.OK(t, db.CreateProblem(ctx, p, 1))
		algoitnytest.ErrCode(t, db.DiscardProblem(ctx, p.Ref(), "someone-else"), algoitny.ECONFLICT)
		algoitnytest.OK(t, db.DiscardProblem(ctx, p.Ref(), "author"))
		algoitnytest.ErrCode(t, err2(db.GetProblem(ctx, p.Ref())), algoitny.ENOTFOUND)
		if n := algoitnytest.Must[int](t)(db.CountUserProblems(ctx, "author")); n != 0 {
			t.Fatalf("counter after the discard = %d", n)
		}
		algoitnytest.ErrCode(t, db.DiscardProblem(ctx, p.Ref(), "author"), algoitny.ENOTFOUND)
		again := newProblem(algoitny.PlatformCustom, "d1", algoitny.LanguageC, false)
		again.CreatedBy = "author"
		algoitnytest.OK(t, db.CreateProblem(ctx, again, 1)) // within the limit of 1 again
		algoitnytest.OK(t, db.AddTestCases(ctx, again.Ref(), []*algoitny.TestCase{{Input: "1\n", Output: "1\n"}}))
		algoitnytest.ErrCode(t, db.DiscardProblem(ctx, again.Ref(), "author"), algoitny.ECONFLICT) // it has test cases
		if got := algoitnytest.Must[*algoitny.Problem](t)(db.GetProblem(ctx, again.Ref())); got.TestCaseCount != 1 {
			t.Fatalf("a problem with test cases was touched: %+v", got)
		}
		// A draft deleted meanwhile gave its slot back already: not twice.
		gone := newProblem(algoitny.PlatformCustom, "d2", algoitny.LanguageC, false)
		gone.CreatedBy = "author2"
		algoitnytest.OK(t, db.CreateProblem(ctx, gone, 1))
		algoitnytest.OK(t, db.DeleteProblem(ctx, gone.Ref(), "changed my mind"))
		algoitnytest.ErrCode(t, db.DiscardProblem(ctx, gone.Ref(), "author2"), algoitny.ECONFLICT)
		if n := algoitnytest.Must[int](t)(db.CountUserProblems(ctx, "author2")); n != 0 {
			t.Fatalf("counter after a delete and a discard = %d, want 0", n)
		}
	})

	t.Run("BatchGet250", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		var refs []algoitny.ProblemRef
		for i := range 250 {
			p := newProblem(algoitny.PlatformCodeforces, fmt.Sprintf("%04d", i), algoitny.LanguageGo, true)
			algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
			refs = append(refs, p.Ref())
		}
		refs = append(refs, algoitny.ProblemRef{Platform: algoitny.PlatformCodeforces, ProblemID: "missing"}, refs[0])
		before := db.Requests()
		got := algoitnytest.Must[map[algoitny.ProblemRef]*algoitny.Problem](t)(db.GetProblems(ctx, refs))
		if len(got) != 250 {
			t.Fatalf("got %d of 250", len(got))
		}
		for _, r := range refs[:250] {
			if got[r] == nil || got[r].ProblemID != r.ProblemID {
				t.Fatalf("missing %v", r)
			}
		}
		if calls := db.Requests() - before; calls < 3 {
			t.Fatalf("%d BatchGetItem calls for 250 keys; the 100-key limit needs at least 3", calls)
		}
	})
}
