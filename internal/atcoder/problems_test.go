package atcoder_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
)

func TestDifficultyClipping(t *testing.T) {
	t.Parallel()
	// AtCoder Problems: difficulty >= 400 ? difficulty : 400 / exp(1 - difficulty/400),
	// then Math.round (half up).
	for _, tc := range []struct {
		raw  float64
		want int
	}{
		{400, 400}, {1200.4, 1200}, {1200.5, 1201}, {3999.5, 4000},
		{399.9, 400}, {200, 243}, {0, 147}, {-400, 54}, {-848, 18}, {-1012.5, 12}, {-10_000, 0},
	} {
		if got := (algoitny.AtCoderDifficulty{Raw: tc.raw}).Clipped(); got != tc.want {
			t.Errorf("Clipped(%v) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

// adtFixture is a fake AtCoder Problems with two recorded ADT contests of May
// 2025, one ADT contest not recorded and an ABC.
func adtFixture(t *testing.T, b bundle) (easy, all algoitny.ADTContest) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2025, 5, 22, 9, 0, 0, 0, time.UTC)
	b.srv.SetContests(
		atcoder.Contest{ID: "adt_easy_20250522_1", StartEpochSecond: start.Unix(), DurationSecond: 3600, Title: "ADT Easy"},
		atcoder.Contest{ID: "adt_all_20250522_1", StartEpochSecond: start.Unix(), DurationSecond: 3600, Title: "ADT All"},
		atcoder.Contest{ID: "abc300", StartEpochSecond: start.Unix() - 86400*400, DurationSecond: 6000, Title: "ABC 300"},
	)
	algoitnytest.Must[atcoder.DiscoverReport](t)(b.syncer.DiscoverContests(ctx))
	b.srv.SetContestProblems(
		atcoder.ContestProblem{ContestID: "adt_easy_20250522_1", ProblemID: "abc305_c", ProblemIndex: "B"},
		atcoder.ContestProblem{ContestID: "adt_easy_20250522_1", ProblemID: "abc300_a", ProblemIndex: "A"},
		atcoder.ContestProblem{ContestID: "adt_easy_20250522_1", ProblemID: "abc300_a", ProblemIndex: "A"}, // listed twice
		atcoder.ContestProblem{ContestID: "adt_all_20250522_1", ProblemID: "abc310_g", ProblemIndex: "C"},
		atcoder.ContestProblem{ContestID: "adt_all_20250522_1", ProblemID: "abc300_a", ProblemIndex: "A"},
		atcoder.ContestProblem{ContestID: "adt_all_20250522_1", ProblemID: "abc305_c", ProblemIndex: "B"},
		atcoder.ContestProblem{ContestID: "adt_hard_20250523_1", ProblemID: "abc311_g", ProblemIndex: "A"}, // not recorded
		atcoder.ContestProblem{ContestID: "abc300", ProblemID: "abc300_a", ProblemIndex: "A"},
	)
	b.srv.SetProblems(
		atcoder.Problem{ID: "abc300_a", ContestID: "abc300", ProblemIndex: "A", Name: "N-choice question", Title: "A. N-choice question"},
		atcoder.Problem{ID: "abc305_c", ContestID: "adt_medium_20231130_1", ProblemIndex: "C", Name: "Snuke the Cookie Picker", Title: "C. Snuke the Cookie Picker"},
		atcoder.Problem{ID: "abc310_g", ContestID: "abc310", ProblemIndex: "G", Title: "G. Only a title"},
	)
	b.srv.SetProblemModels(map[string]atcoder.ProblemModel{
		"abc300_a": atcodertest.Model(-1012.5, false),
		"abc305_c": atcodertest.Model(812, true),
		// abc310_g: a time model only, no difficulty.
		"abc310_g": {IsExperimental: false},
	})
	for _, c := range algoitnytest.Must[[]algoitny.ADTContest](t)(b.db.ListADTContests(ctx, "202505")) {
		switch c.ID {
		case "adt_easy_20250522_1":
			easy = c
		case "adt_all_20250522_1":
			all = c
		}
	}
	return easy, all
}

func TestSyncADTProblems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, atcoder.ClientConfig{})
	adtFixture(t, b)

	rep := algoitnytest.Must[atcoder.ProblemsReport](t)(b.syncer.SyncADTProblems(ctx))
	if rep != (atcoder.ProblemsReport{Listed: 3, Recorded: 2, Updated: 2, Problems: 3, WithDifficulty: 2}) {
		t.Fatalf("report %+v", rep)
	}
	a := algoitny.ADTContestProblem{ProblemID: "abc300_a", Index: "A", Title: "N-choice question", Difficulty: &algoitny.AtCoderDifficulty{Raw: -1012.5}}
	c := algoitny.ADTContestProblem{ProblemID: "abc305_c", Index: "B", Title: "Snuke the Cookie Picker", Difficulty: &algoitny.AtCoderDifficulty{Raw: 812, IsExperimental: true}}
	g := algoitny.ADTContestProblem{ProblemID: "abc310_g", Index: "C", Title: "G. Only a title"}
	want := map[string][]algoitny.ADTContestProblem{"adt_easy_20250522_1": {a, c}, "adt_all_20250522_1": {a, c, g}}
	check := func() {
		t.Helper()
		got := algoitnytest.Must[[]algoitny.ADTContest](t)(b.db.ListADTContests(ctx, "202505"))
		if len(got) != 2 {
			t.Fatalf("%d contests", len(got))
		}
		for _, cst := range got {
			if !reflect.DeepEqual(cst.Problems, want[cst.ID]) {
				t.Fatalf("%s: %+v, want %+v", cst.ID, cst.Problems, want[cst.ID])
			}
		}
	}
	check()
	if got := a.Difficulty.Clipped(); got != 12 {
		t.Fatalf("clipped %d", got)
	}

	// Nothing changed: nothing written.
	if rep := algoitnytest.Must[atcoder.ProblemsReport](t)(b.syncer.SyncADTProblems(ctx)); rep.Updated != 0 {
		t.Fatalf("idle run %+v", rep)
	}
	// A new estimate reaches every contest that sets the problem.
	b.srv.SetProblemModels(map[string]atcoder.ProblemModel{
		"abc300_a": atcodertest.Model(-1012.5, false),
		"abc305_c": atcodertest.Model(845.25, false),
		"abc310_g": atcodertest.Model(2410, false),
	})
	if rep := algoitnytest.Must[atcoder.ProblemsReport](t)(b.syncer.SyncADTProblems(ctx)); rep.Updated != 2 || rep.WithDifficulty != 3 {
		t.Fatalf("after new models %+v", rep)
	}
	c.Difficulty = &algoitny.AtCoderDifficulty{Raw: 845.25}
	g.Difficulty = &algoitny.AtCoderDifficulty{Raw: 2410}
	want = map[string][]algoitny.ADTContestProblem{"adt_easy_20250522_1": {a, c}, "adt_all_20250522_1": {a, c, g}}
	check()

	// Failures of the API leave the records as they were.
	b.srv.FailNext(10, 500, "")
	failing := &atcoder.Syncer{Store: b.db, API: newClient(t, b.srv, atcoder.ClientConfig{MaxRetries: -1})}
	_, err := failing.SyncADTProblems(ctx)
	algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	b.srv.Heal()
	check()
}
