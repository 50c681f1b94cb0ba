package dynamo_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/cache"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/pubsub"
)

// TestPartitionCache: a serve process (cached) answers reads of problem
// partitions from memory exactly as DynamoDB does (compared with a process
// without the cache, page by page, cursor by cursor), and a write made by
// another process sharing the broker is seen at once after its notification.
func TestPartitionCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	log := slog.New(slog.DiscardHandler)

	cached := newDB(t)
	runFeed(t, cached, broker, true)
	// Another process on the same tables: a worker that writes, no cache.
	worker, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	worker.SetFeed(cache.NewFeed(cache.FeedConfig{Broker: broker, Bound: testBound, WriteWindow: testWindow, Logger: log}), log)

	p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
	algoitnytest.OK(t, worker.CreateProblem(ctx, p, algoitny.Unlimited))
	var cases []*algoitny.TestCase
	for i := range 7 {
		cases = append(cases, &algoitny.TestCase{Input: fmt.Sprintf("%d %d\n", i, i), Output: fmt.Sprintf("%d\n", 2*i)})
	}
	cases[2].Input = incompressible(100 << 10) // stored in parts
	algoitnytest.OK(t, worker.AddTestCases(ctx, p.Ref(), cases))
	other := newProblem(algoitny.PlatformBaekjoon, "2000", algoitny.LanguagePython, true)
	algoitnytest.OK(t, worker.CreateProblem(ctx, other, algoitny.Unlimited))

	// The cache goes live once the feed has warmed up and the writes'
	// announcements are applied: then reading a partition again costs nothing
	// (three times in a row, 20 ms apart).
	deadline := time.Now().Add(10 * time.Second)
	for free := 0; free < 3; {
		_, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 1})
		algoitnytest.OK(t, err)
		before := cached.Requests()
		_, err = cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 1})
		algoitnytest.OK(t, err)
		if cached.Requests() == before {
			free++
		} else {
			free = 0
		}
		if time.Now().After(deadline) {
			t.Fatal("the partition cache never went live")
		}
		time.Sleep(20 * time.Millisecond)
	}

	t.Run("SameAnswersAsDynamoDB", func(t *testing.T) {
		before := cached.Requests()
		for _, first := range []int{1, 2, 3, 7, 10} {
			after := ""
			for page := 0; ; page++ {
				want, err := worker.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: first, After: after})
				algoitnytest.OK(t, err)
				got, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: first, After: after})
				algoitnytest.OK(t, err)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("first %d, page %d:\n cached %+v\ndynamodb %+v", first, page, got, want)
				}
				if !want.HasNextPage {
					break
				}
				after = want.EndCursor
			}
			_, wantPage, err := worker.PrefetchProblem(ctx, p.Ref(), algoitny.PageRequest{First: first})
			algoitnytest.OK(t, err)
			pctx, gotPage, err := cached.PrefetchProblem(ctx, p.Ref(), algoitny.PageRequest{First: first})
			algoitnytest.OK(t, err)
			if !reflect.DeepEqual(gotPage, wantPage) {
				t.Fatalf("PrefetchProblem first %d:\n cached %+v\ndynamodb %+v", first, gotPage, wantPage)
			}
			if gp, err := cached.GetProblem(pctx, p.Ref()); err != nil || gp.TestCaseCount != 7 {
				t.Fatalf("GetProblem: %+v, %v", gp, err)
			}
		}
		wp, wc, err := worker.GetProblemWithTestCases(ctx, p.Ref())
		algoitnytest.OK(t, err)
		gp, gc, err := cached.GetProblemWithTestCases(ctx, p.Ref())
		algoitnytest.OK(t, err)
		if !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(gc, wc) {
			t.Fatal("GetProblemWithTestCases differs from DynamoDB's")
		}
		tc, err := cached.GetTestCase(ctx, p.Ref(), wc[2].ID)
		if err != nil || tc.Input != cases[2].Input {
			t.Fatalf("GetTestCase of the case in parts: %v", err)
		}
		if n := cached.Requests() - before; n != 0 {
			t.Fatalf("%d DynamoDB requests for reads of a cached partition", n)
		}
	})

	t.Run("BatchGetReadsOnlyWhatIsNotCached", func(t *testing.T) {
		missing := algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "404"}
		before := cached.Requests()
		got, err := cached.GetProblems(ctx, []algoitny.ProblemRef{p.Ref(), other.Ref(), missing})
		algoitnytest.OK(t, err)
		if n := cached.Requests() - before; n != 1 || len(got) != 2 || got[p.Ref()].Title != p.Title || got[other.Ref()] == nil {
			t.Fatalf("%d requests, %d problems", n, len(got))
		}
		before = cached.Requests()
		if _, err := cached.GetProblem(ctx, p.Ref()); err != nil || cached.Requests() != before {
			t.Fatalf("GetProblem of a cached partition: %v, %d requests", err, cached.Requests()-before)
		}
		// What the BatchGetItem read is kept (the problems' heads, and that
		// 404 does not exist); a Query of such a partition still loads it.
		before = cached.Requests()
		again, err := cached.GetProblems(ctx, []algoitny.ProblemRef{p.Ref(), other.Ref(), missing})
		algoitnytest.OK(t, err)
		if n := cached.Requests() - before; n != 0 || !reflect.DeepEqual(again, got) {
			t.Fatalf("second BatchGet: %d requests, %d problems", n, len(again))
		}
		if _, err := cached.GetProblem(ctx, missing); !algoitny.IsCode(err, algoitny.ENOTFOUND) || cached.Requests() != before {
			t.Fatalf("a problem known not to exist: %v, %d requests", err, cached.Requests()-before)
		}
		want, err := worker.ListTestCases(ctx, other.Ref(), algoitny.PageRequest{First: 5})
		algoitnytest.OK(t, err)
		page, err := cached.ListTestCases(ctx, other.Ref(), algoitny.PageRequest{First: 5})
		algoitnytest.OK(t, err)
		if !reflect.DeepEqual(page, want) || cached.Requests() == before {
			t.Fatalf("a Query of a partition whose head is cached: %+v (%d requests)", page, cached.Requests()-before)
		}
	})

	t.Run("AnotherProcessWrites", func(t *testing.T) {
		algoitnytest.OK(t, worker.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{{Input: "new\n", Output: "case\n"}}))
		_, err := worker.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Renamed")})
		algoitnytest.OK(t, err)
		// Memory delivers at once; with PostgreSQL it takes milliseconds.
		deadline := time.Now().Add(10 * time.Second)
		for {
			page, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10})
			algoitnytest.OK(t, err)
			gp, err := cached.GetProblem(ctx, p.Ref())
			algoitnytest.OK(t, err)
			if len(page.Items) == 8 && page.Items[7].Input == "new\n" && gp.Title == "Renamed" && gp.TestCaseCount == 8 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after another process's writes: %d cases, %+v", len(page.Items), gp)
			}
			time.Sleep(10 * time.Millisecond)
		}
		algoitnytest.OK(t, worker.DeleteProblem(ctx, other.Ref(), "test"))
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			gp, err := cached.GetProblem(ctx, other.Ref())
			algoitnytest.OK(t, err)
			if gp.IsDeleted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the deletion never reached the cache")
			}
		}
	})

	t.Run("Users", func(t *testing.T) {
		_, err := cached.SeedPlans(ctx, algoitny.DefaultPlans(), false)
		algoitnytest.OK(t, err)
		free, err := cached.GetPlan(ctx, "Free")
		algoitnytest.OK(t, err)
		pro, err := cached.GetPlan(ctx, "Pro")
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, worker.CreateUser(ctx, &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}, free))
		emails := []string{"ada@example.com", "bob@example.com"} // bob does not exist yet
		// The creation's event may arrive after a read began (which is then
		// not kept): read until a read is free.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			got, err := cached.GetUsersByEmail(ctx, emails)
			algoitnytest.OK(t, err)
			before := cached.Requests()
			again, err := cached.GetUsersByEmail(ctx, emails)
			algoitnytest.OK(t, err)
			if !reflect.DeepEqual(again, got) || len(got) != 1 || got["ada@example.com"].Name != "Ada" {
				t.Fatalf("users: %+v, then %+v", got, again)
			}
			if cached.Requests() == before {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("users were never served from the cache")
			}
		}
		// Another process moves ada to Pro and creates bob.
		_, err = worker.SetUserPlan(ctx, "ada@example.com", pro)
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, worker.CreateUser(ctx, &algoitny.User{Email: "bob@example.com", Name: "Bob", IsActive: true}, free))
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			users, err := cached.GetUsersByEmail(ctx, emails)
			algoitnytest.OK(t, err)
			bob, err := cached.GetUserByEmail(ctx, "bob@example.com")
			if len(users) == 2 && users["ada@example.com"].PlanName == "Pro" && err == nil && bob.Name == "Bob" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after another process's writes: %d users, bob %v", len(users), err)
			}
		}
		// A write that decides on what it reads reads DynamoDB itself: a
		// process that tells nobody (no SetChanges) links bob's Google id;
		// deleting bob here must still delete the id's marker.
		_, err = cached.GetUserByEmail(ctx, "bob@example.com") // cached, without a Google id
		algoitnytest.OK(t, err)
		silent, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
		algoitnytest.OK(t, err)
		_, _, err = silent.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-bob", Email: "bob@example.com", Name: "Bob"}, free)
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, cached.DeleteUser(ctx, "bob@example.com"))
		if exists, err := dynamo.GoogleIDMarkerExists(ctx, silent, "g-bob"); err != nil || exists {
			t.Fatalf("the Google id marker outlived its user (%v)", err)
		}
	})

	t.Run("QuotaCounters", func(t *testing.T) {
		day := algoitny.UsageDay(time.Now())
		hint := func(db *dynamo.DB, limit int) (*algoitny.UsageLog, error) {
			l := &algoitny.UsageLog{UserID: "quota-user", Action: algoitny.ActionHint}
			return l, db.ConsumeQuota(ctx, l, limit)
		}
		// hints reads the counter on the cached process until it shows want
		// and a second read costs no request.
		hints := func(want int) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				counts, err := cached.UsageCounts(ctx, "quota-user", day)
				algoitnytest.OK(t, err)
				before := cached.Requests()
				again, err := cached.UsageCounts(ctx, "quota-user", day)
				algoitnytest.OK(t, err)
				if counts[algoitny.ActionHint] == want && again[algoitny.ActionHint] == want && cached.Requests() == before {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("hints used: %d then %d, want %d from the cache", counts[algoitny.ActionHint], again[algoitny.ActionHint], want)
				}
			}
		}
		hints(0) // "no counter yet" is kept too
		_, err := hint(worker, 3)
		algoitnytest.OK(t, err)
		hints(1) // another process's use, told through the broker
		l, err := hint(cached, 3)
		algoitnytest.OK(t, err)
		if counts, err := cached.UsageCounts(ctx, "quota-user", day); err != nil || counts[algoitny.ActionHint] != 2 {
			t.Fatalf("right after its own use the process reads %v (%v), want 2", counts, err)
		}
		algoitnytest.OK(t, worker.ReleaseQuota(ctx, l))
		hints(1)
		// A refused use writes nothing, but it was announced (a write is
		// announced before DynamoDB decides): the counter is read again once.
		_, err = hint(worker, 1)
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		hints(1)
		// A refusal reports the count DynamoDB holds, not a stale copy: a
		// process that tells nobody (no SetChanges) uses one more.
		silent, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
		algoitnytest.OK(t, err)
		_, err = hint(silent, 3)
		algoitnytest.OK(t, err)
		_, err = hint(cached, 2)
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		if rl := err.(*algoitny.Error).RateLimit; rl.Used != 2 || rl.Limit != 2 {
			t.Fatalf("refusal reports %+v, want 2 used of 2", rl)
		}
	})

	t.Run("Executions", func(t *testing.T) {
		// An execution read by id, and the user's quota counter beside it in
		// the same partition, are both kept; another process's changes to
		// either reach this one.
		h := newHistory("exec-user", algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, false)
		algoitnytest.OK(t, worker.CreateHistory(ctx, h))
		day := algoitny.UsageDay(time.Now())
		// reads reads both until a second read costs no request.
		reads := func(check func(*algoitny.SearchHistory, map[algoitny.UsageAction]int) bool) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				_, err1 := cached.GetHistory(ctx, h.Ref())
				_, err2 := cached.UsageCounts(ctx, "exec-user", day)
				before := cached.Requests()
				got, err3 := cached.GetHistory(ctx, h.Ref())
				counts, err4 := cached.UsageCounts(ctx, "exec-user", day)
				batch, err5 := cached.GetHistories(ctx, []algoitny.HistoryRef{h.Ref()})
				for _, err := range []error{err1, err2, err3, err4, err5} {
					algoitnytest.OK(t, err)
				}
				if check(got, counts) && reflect.DeepEqual(batch[h.Ref()], got) && cached.Requests() == before {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("execution %+v, usage %v, %d requests", got, counts, cached.Requests()-before)
				}
			}
		}
		reads(func(got *algoitny.SearchHistory, _ map[algoitny.UsageAction]int) bool {
			return got.Code == "print(1)" && !got.IsCodePublic && len(got.TestResults) == 2
		})
		_, err := worker.SetHints(ctx, h.Ref(), []string{"look at the limits"})
		algoitnytest.OK(t, err)
		_, err = worker.SetHistoryVisibility(ctx, h.Ref(), true)
		algoitnytest.OK(t, err)
		reads(func(got *algoitny.SearchHistory, _ map[algoitny.UsageAction]int) bool {
			return got.IsCodePublic && len(got.Hints) == 1
		})
		algoitnytest.OK(t, worker.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "exec-user", Action: algoitny.ActionExecution}, algoitny.Unlimited))
		reads(func(got *algoitny.SearchHistory, counts map[algoitny.UsageAction]int) bool {
			return got.IsCodePublic && counts[algoitny.ActionExecution] == 1
		})
		// A read a write will be decided on goes to DynamoDB: a process that
		// tells nobody (no SetChanges) gives the execution hints; the cached
		// copy does not know, a fresh read does.
		silent, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
		algoitnytest.OK(t, err)
		_, err = silent.SetHints(ctx, h.Ref(), []string{"one", "two"})
		algoitnytest.OK(t, err)
		if got := algoitnytest.Must[*algoitny.SearchHistory](t)(cached.GetHistory(ctx, h.Ref())); len(got.Hints) != 1 {
			t.Fatalf("the cached copy changed without a notification: %v", got.Hints)
		}
		if got := algoitnytest.Must[*algoitny.SearchHistory](t)(cached.GetHistory(algoitny.WithFreshReads(ctx), h.Ref())); len(got.Hints) != 2 {
			t.Fatalf("a fresh read: %v", got.Hints)
		}
		// An execution that does not exist yet is not kept as absent (the
		// workers write them); a huge one is not kept at all.
		later := newHistory("exec-user", algoitny.PlatformBaekjoon, "1001", algoitny.LanguagePython, false)
		later.ID, _ = worker.NewHistoryID()
		huge := newHistory("exec-user", algoitny.PlatformBaekjoon, "1002", algoitny.LanguagePython, false)
		huge.Code = incompressible(300 << 10)
		algoitnytest.OK(t, worker.CreateHistory(ctx, huge))
		for range 2 {
			before := cached.Requests()
			_, err = cached.GetHistory(ctx, later.Ref())
			algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
			got, err := cached.GetHistory(ctx, huge.Ref())
			algoitnytest.OK(t, err)
			if len(got.Code) != 300<<10 || cached.Requests()-before != 2 {
				t.Fatalf("absent and huge executions: %d requests", cached.Requests()-before)
			}
		}
		algoitnytest.OK(t, silent.CreateHistory(ctx, later)) // tells nobody
		algoitnytest.OK(t, err2(cached.GetHistory(ctx, later.Ref())))
	})

	// Requests that miss one partition together share one load of it: a
	// popular problem just edited costs DynamoDB one read, not one per
	// request. (That a read begun before a change is not shared after it is
	// internal/cache's TestLoad.)
	t.Run("ConcurrentMissesShareOneLoad", func(t *testing.T) {
		hot := newProblem(algoitny.PlatformBaekjoon, "4000", algoitny.LanguagePython, true)
		algoitnytest.OK(t, cached.CreateProblem(ctx, hot, algoitny.Unlimited))
		algoitnytest.OK(t, cached.AddTestCases(ctx, hot.Ref(), []*algoitny.TestCase{{Input: "1 2\n", Output: "3\n"}}))
		// concurrently reads the first page from n goroutines let go at
		// once and returns the DynamoDB requests they made in all.
		concurrently := func(n int) int64 {
			go1 := make(chan struct{})
			errs := make(chan error, n)
			var total atomic.Int64
			for range n {
				go func() {
					rctx, counter := dynamo.WithRequestCounter(ctx)
					<-go1
					page, err := cached.ListTestCases(rctx, hot.Ref(), algoitny.PageRequest{First: 10})
					if err == nil && len(page.Items) != 1 {
						err = fmt.Errorf("%d cases, want 1", len(page.Items))
					}
					total.Add(counter.Count())
					errs <- err
				}()
			}
			close(go1)
			for range n {
				algoitnytest.OK(t, <-errs)
			}
			return total.Load()
		}
		// The writes' own notifications come back through the broker (and
		// make the partition be read again): wait until they have.
		for free, deadline := 0, time.Now().Add(10*time.Second); free < 3; time.Sleep(20 * time.Millisecond) {
			if concurrently(1) == 0 {
				free++
			} else {
				free = 0
			}
			if time.Now().After(deadline) {
				t.Fatal("the partition never stayed cached")
			}
		}
		dynamo.ForgetProblemPartition(cached, hot.Ref())
		if n := concurrently(16); n != 1 {
			t.Fatalf("16 concurrent reads of a partition just forgotten made %d DynamoDB requests, want 1", n)
		}
		if n := concurrently(4); n != 0 {
			t.Fatalf("reads of a cached partition made %d requests", n)
		}
	})

	t.Run("BigPartitionsAreNotCached", func(t *testing.T) {
		big := newProblem(algoitny.PlatformBaekjoon, "3000", algoitny.LanguagePython, true)
		algoitnytest.OK(t, cached.CreateProblem(ctx, big, algoitny.Unlimited))
		algoitnytest.OK(t, cached.AddTestCases(ctx, big.Ref(), []*algoitny.TestCase{{Input: incompressible(400 << 10), Output: "1\n"}}))
		for range 2 {
			before := cached.Requests()
			page, err := cached.ListTestCases(ctx, big.Ref(), algoitny.PageRequest{First: 1})
			algoitnytest.OK(t, err)
			if len(page.Items) != 1 || page.Items[0].InputSize != 400<<10 || cached.Requests() == before {
				t.Fatalf("a big partition: %d cases, %d requests", len(page.Items), cached.Requests()-before)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// err2 keeps the error of a call's two results.
func err2[T any](_ T, err error) error { return err }
