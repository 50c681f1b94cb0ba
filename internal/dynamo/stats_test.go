package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

func accepted(user, problem string, lang algoitny.Language, ranked bool) *algoitny.SearchHistory {
	h := newHistory(user, algoitny.PlatformBaekjoon, problem, lang, false)
	h.Verdict, h.PassedCount, h.FailedCount, h.Ranked = algoitny.VerdictAccepted, 2, 0, ranked
	return h
}

// A user's statistics and the leaderboard are counted as executions are
// stored, exactly (distinct problems, also under concurrent stores), and
// each is read with one DynamoDB request.
func TestUserStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)

	for _, h := range []*algoitny.SearchHistory{
		accepted("ann", "1000", algoitny.LanguagePython, true),
		accepted("ann", "1000", algoitny.LanguageCPP, true), // the same problem again
		newHistory("ann", algoitny.PlatformBaekjoon, "1001", algoitny.LanguagePython, false),
		accepted("ann", "1002", algoitny.LanguagePython, false), // a draft's: not ranked
		accepted("ann", "1003", algoitny.LanguagePython, true),
	} {
		algoitnytest.OK(t, db.CreateHistory(ctx, h))
	}
	cctx, counter := dynamo.WithRequestCounter(ctx)
	s, err := db.GetUserStats(cctx, "ann")
	algoitnytest.OK(t, err)
	if counter.Count() != 1 {
		t.Errorf("stats read with %d requests", counter.Count())
	}
	if s.Executions != 5 || s.Accepted != 4 || s.SolvedProblems != 2 || s.LastSolvedAt.IsZero() {
		t.Fatalf("stats %+v", s)
	}
	want := []algoitny.UserExecutionStat{
		{Platform: algoitny.PlatformBaekjoon, Language: algoitny.LanguageCPP, Executions: 1, Accepted: 1},
		{Platform: algoitny.PlatformBaekjoon, Language: algoitny.LanguagePython, Executions: 4, Accepted: 3},
	}
	if fmt.Sprint(s.ByPlatformAndLanguage) != fmt.Sprint(want) {
		t.Fatalf("by platform and language %v, want %v", s.ByPlatformAndLanguage, want)
	}
	if s, err := db.GetUserStats(ctx, "nobody"); err != nil || s.Executions != 0 || s.SolvedProblems != 0 {
		t.Fatalf("a user without executions: %+v %v", s, err)
	}

	// Concurrent first accepted runs of one user: every distinct problem
	// counts once, the same problem twice counts once.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			algoitnytest.OK(t, db.CreateHistory(ctx, accepted("bob", fmt.Sprint(2000+i), algoitny.LanguageGo, true)))
		}()
		go func() {
			defer wg.Done()
			algoitnytest.OK(t, db.CreateHistory(ctx, accepted("bob", fmt.Sprint(2000+i), algoitny.LanguageGo, true)))
		}()
	}
	wg.Wait()
	s, err = db.GetUserStats(ctx, "bob")
	algoitnytest.OK(t, err)
	if s.Executions != 16 || s.SolvedProblems != 8 {
		t.Fatalf("bob after concurrent stores: %+v", s)
	}

	// cid reaches 2 solved after ann did: ann is listed first.
	for _, p := range []string{"3000", "3001"} {
		algoitnytest.OK(t, db.CreateHistory(ctx, accepted("cid", p, algoitny.LanguageC, true)))
	}
	cctx, counter = dynamo.WithRequestCounter(ctx)
	board, err := db.Leaderboard(cctx, 10)
	algoitnytest.OK(t, err)
	if counter.Count() != 1 {
		t.Errorf("leaderboard read with %d requests", counter.Count())
	}
	got := fmt.Sprint(board)
	if len(board) != 3 || board[0].UserID != "bob" || board[0].Rank != 1 || board[0].SolvedProblems != 8 ||
		board[1].UserID != "ann" || board[1].Rank != 2 || board[2].UserID != "cid" || board[2].Rank != 2 ||
		board[1].UserEmail != "ann@example.com" {
		t.Fatalf("leaderboard %s", got)
	}
	if top, err := db.Leaderboard(ctx, 1); err != nil || len(top) != 1 || top[0].UserID != "bob" {
		t.Fatalf("top 1: %v %v", top, err)
	}
	if _, err := db.Leaderboard(ctx, 101); !algoitny.IsCode(err, algoitny.EINVALID) {
		t.Fatalf("first 101: %v", err)
	}

	// A deleted account leaves the leaderboard with everything else.
	algoitnytest.OK(t, db.DeleteAccount(ctx, &algoitny.User{ID: "bob", Email: "bob@example.com"}))
	board, err = db.Leaderboard(ctx, 10)
	algoitnytest.OK(t, err)
	if len(board) != 2 || board[0].UserID != "ann" || board[0].Rank != 1 {
		t.Fatalf("after bob's deletion: %v", board)
	}
}

// An execution whose store's reply was lost is retried by the SDK: it is
// stored, and counted, once.
func TestUserStatsAfterALostReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tables := newDB(t)
	db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: lostReply(t, "TransactWriteItems"), TablePrefix: strings.TrimSuffix(tables.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	h := accepted("dee", "4000", algoitny.LanguagePython, true)
	if err := db.CreateHistory(ctx, h); err != nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
		t.Fatal(err)
	}
	algoitnytest.Must[*algoitny.SearchHistory](t)(tables.GetHistory(ctx, h.Ref()))
	s := algoitnytest.Must[*algoitny.UserStats](t)(tables.GetUserStats(ctx, "dee"))
	if s.Executions != 1 || s.SolvedProblems != 1 {
		t.Fatalf("after a lost reply: %+v", s)
	}
}

// A solved marker once seen costs no read again: an accepted run of a
// problem its user solved before goes straight to its write, on the
// replica that wrote the marker and, after one read, on any other.
func TestSolvedMarkerRemembered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	other, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(db.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	store := func(d *dynamo.DB, lang algoitny.Language) int64 {
		t.Helper()
		cctx, counter := dynamo.WithRequestCounter(ctx)
		algoitnytest.OK(t, d.CreateHistory(cctx, accepted("eve", "5000", lang, true)))
		return counter.Count()
	}
	store(db, algoitny.LanguagePython) // the first solve writes the marker
	again := store(db, algoitny.LanguageCPP)
	firstOnOther := store(other, algoitny.LanguageJava)
	secondOnOther := store(other, algoitny.LanguageGo)
	if firstOnOther != again+1 || secondOnOther != again {
		t.Fatalf("requests of a re-solve: %d on the writer, %d then %d on another replica; want n, n+1, n (one read of the marker, once)",
			again, firstOnOther, secondOnOther)
	}
	s := algoitnytest.Must[*algoitny.UserStats](t)(db.GetUserStats(ctx, "eve"))
	if s.Executions != 4 || s.Accepted != 4 || s.SolvedProblems != 1 {
		t.Fatalf("stats %+v: the problem counts once", s)
	}
}
