package submissions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/submissions"
)

// practising returns a context signed in as user id whose plan allows
// n code runs and n counterexample searches a day.
func practising(id string, n int) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{
		User: &algoitny.User{ID: id, Email: id + "@example.com", IsActive: true},
		Plan: &algoitny.Plan{ // unnamed: a named plan is checked against its stored item when charged
			MaxCodeRunsPerDay: n, MaxCounterexamplesPerDay: n},
	})
}

func TestRunCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	in := func(extra func(*submissions.RunInput)) submissions.RunInput {
		r := submissions.RunInput{Language: algoitny.LanguagePython, Code: "print(input())", Stdin: "hi\n"}
		if extra != nil {
			extra(&r)
		}
		return r
	}

	t.Run("OK", func(t *testing.T) {
		ref := algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "p1"}
		j, err := b.svc.RunCode(practising("u1", 5), in(func(r *submissions.RunInput) { r.Problem = &ref }))
		algoitnytest.OK(t, err)
		var p algoitny.CodeRunParams
		algoitnytest.OK(t, json.Unmarshal([]byte(j.Params), &p))
		if j.Type != algoitny.JobCodeRun || j.Status != algoitny.JobPending || j.ProblemID != "p1" || j.SolutionCode != "print(input())" ||
			p.Stdin != "hi\n" || j.PaidWith == nil || j.PaidWith.Action != algoitny.ActionCodeRun {
			t.Fatalf("job %+v, params %+v", j, p)
		}
		counts, err := b.db.UsageCounts(context.Background(), "u1", algoitny.UsageDay(time.Now()))
		algoitnytest.OK(t, err)
		if counts[algoitny.ActionCodeRun] != 1 || counts[algoitny.ActionExecution] != 0 {
			t.Fatalf("usage %v", counts)
		}
	})

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		_, err := b.svc.RunCode(context.Background(), in(nil))
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for field, f := range map[string]func(*submissions.RunInput){
			"code":           func(r *submissions.RunInput) { r.Code = " " },
			"stdin":          func(r *submissions.RunInput) { r.Stdin = strings.Repeat("x", 64<<10+1) },
			"language":       func(r *submissions.RunInput) { r.Language = "cobol" },
			"problemId":      func(r *submissions.RunInput) { r.Problem = &algoitny.ProblemRef{ProblemID: "p1"} },
			"idempotencyKey": func(r *submissions.RunInput) { r.IdempotencyKey = "a#b" },
		} {
			_, err := b.svc.RunCode(practising("u2", 5), in(f))
			if e := algoitnytest.ErrCode(t, err, algoitny.EINVALID); e.Field != field {
				t.Fatalf("%s: %v", field, e)
			}
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := b.svc.RunCode(practising("u2", 5), in(func(r *submissions.RunInput) {
			r.Problem = &algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "nope"}
		}))
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ErrRateLimited", func(t *testing.T) {
		_, err := b.svc.RunCode(practising("u3", 1), in(nil))
		algoitnytest.OK(t, err)
		_, err = b.svc.RunCode(practising("u3", 1), in(nil))
		if e := algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED); e.RateLimit == nil || e.RateLimit.Action != algoitny.ActionCodeRun {
			t.Fatalf("%+v", e)
		}
	})
}

func TestFindCounterexample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	searchable := true
	b.svc.Searchable = func(*algoitny.Problem) error {
		if !searchable {
			return algoitny.Invalid("historyId", "the problem keeps no test generator")
		}
		return nil
	}
	history := func(verdict algoitny.Verdict) algoitny.HistoryRef {
		t.Helper()
		id, at := b.db.NewHistoryID()
		h := &algoitny.SearchHistory{
			ID: id, CreatedAt: at, UserID: "u1", UserEmail: "u1@example.com", Platform: algoitny.PlatformBaekjoon, ProblemID: "p1",
			ProblemTitle: "A+B", Language: algoitny.LanguagePython, Code: "print(1)", Verdict: verdict, TotalCount: 1,
		}
		algoitnytest.OK(t, b.db.CreateHistory(ctx, h))
		return algoitny.HistoryRef{UserID: "u1", ID: id}
	}
	failed := history(algoitny.VerdictWrongAnswer)

	t.Run("OK", func(t *testing.T) {
		j, err := b.svc.FindCounterexample(practising("u1", 1), failed)
		algoitnytest.OK(t, err)
		if j.Type != algoitny.JobCounterexample || j.HistoryID != failed.ID || j.PaidWith == nil || j.PaidWith.Action != algoitny.ActionCounterexample {
			t.Fatalf("job %+v", j)
		}
	})

	t.Run("ErrRateLimited", func(t *testing.T) {
		_, err := b.svc.FindCounterexample(practising("u1", 1), failed)
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := b.svc.FindCounterexample(practising("u2", 5), failed) // not theirs
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		staff := algoitny.WithActor(ctx, &algoitny.Actor{User: &algoitny.User{ID: "admin", IsActive: true, IsStaff: true}, Plan: &algoitny.Plan{MaxCounterexamplesPerDay: -1}})
		_, err = b.svc.FindCounterexample(staff, failed) // staff too search only their own
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, v := range []algoitny.Verdict{algoitny.VerdictAccepted, algoitny.VerdictCompilationError} {
			_, err := b.svc.FindCounterexample(practising("u1", 5), history(v))
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		}
		searchable = false
		_, err := b.svc.FindCounterexample(practising("u1", 5), failed)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		_, err := b.svc.FindCounterexample(ctx, failed)
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})
}
