package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TestDisplayCache: a serve process answers reads of display data (problem
// partitions, quota counters) from memory exactly as DynamoDB does
// (compared with a process without the cache, page by page, cursor by
// cursor); its own writes show at once, another process's once the bound
// has passed (the cache's clock is moved, not waited for); security state
// (users, plans, sessions, executions) is never kept.
func TestDisplayCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cached := newDB(t)
	var skew atomic.Int64 // the cached process's clock, ahead of the worker's
	// Both processes' clocks start early in today's UTC day, so that the
	// cached one, moved an hour by each pass, stays in the day whose quota
	// counter both write (a counter's day is its writer's clock's).
	start := time.Now()
	base := start.UTC().Truncate(24 * time.Hour).Add(time.Minute)
	clock := func() time.Time { return base.Add(time.Since(start)) }
	cached.SetClock(func() time.Time { return clock().Add(time.Duration(skew.Load())) })
	// A bound far longer than the test (a slow machine must not expire
	// entries on its own); pass moves the cached process's clock past it:
	// whatever it keeps now has expired.
	const bound = time.Hour
	cached.CacheDisplayData(bound)
	pass := func() { skew.Add(int64(bound)) }
	// Another process on the same tables: a worker that writes, no cache.
	worker, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	worker.SetClock(clock)

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

	// Reading a partition again costs nothing.
	_, err = cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 1})
	algoitnytest.OK(t, err)
	before := cached.Requests()
	_, err = cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 1})
	algoitnytest.OK(t, err)
	if n := cached.Requests() - before; n != 0 {
		t.Fatalf("a second read of a partition made %d requests", n)
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
		_, err := cached.GetProblem(ctx, other.Ref())
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, worker.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{{Input: "new\n", Output: "case\n"}}))
		_, err = worker.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Renamed")})
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, worker.DeleteProblem(ctx, other.Ref(), "test"))
		// Within the bound the copy may still be served; past it, never.
		pass()
		page, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10})
		algoitnytest.OK(t, err)
		gp, err := cached.GetProblem(ctx, p.Ref())
		algoitnytest.OK(t, err)
		if len(page.Items) != 8 || page.Items[7].Input != "new\n" || gp.Title != "Renamed" || gp.TestCaseCount != 8 {
			t.Fatalf("past the bound: %d cases, %+v", len(page.Items), gp)
		}
		if gp := algoitnytest.Must[*algoitny.Problem](t)(cached.GetProblem(ctx, other.Ref())); !gp.IsDeleted {
			t.Fatal("past the bound the deletion is not seen")
		}
	})

	t.Run("OwnWritesAtOnce", func(t *testing.T) {
		_, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10})
		algoitnytest.OK(t, err)
		_, err = cached.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Mine")})
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, cached.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{{Input: "mine\n", Output: "1\n"}}))
		gp, err := cached.GetProblem(ctx, p.Ref())
		algoitnytest.OK(t, err)
		page, err := cached.ListTestCases(ctx, p.Ref(), algoitny.PageRequest{First: 10})
		algoitnytest.OK(t, err)
		if gp.Title != "Mine" || len(page.Items) != 9 || page.Items[8].Input != "mine\n" {
			t.Fatalf("right after its own writes the process reads %q and %d cases", gp.Title, len(page.Items))
		}
	})

	t.Run("SecurityStateIsNeverKept", func(t *testing.T) {
		_, err := worker.SeedPlans(ctx, algoitny.DefaultPlans(), false)
		algoitnytest.OK(t, err)
		free := algoitnytest.Must[*algoitny.Plan](t)(cached.GetPlan(ctx, "Free"))
		pro := algoitnytest.Must[*algoitny.Plan](t)(cached.GetPlan(ctx, "Pro"))
		ada := &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}
		algoitnytest.OK(t, worker.CreateUser(ctx, ada, free))
		h := newHistory(ada.ID, algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, false)
		algoitnytest.OK(t, worker.CreateHistory(ctx, h))
		// Read everything once, then another process changes everything:
		// the next reads (no time passes) see every change.
		auth := algoitny.AuthRequest{UserID: ada.ID, Email: ada.Email, SessionID: "s-1", PlanName: "Free"}
		_, err = cached.AuthLookup(ctx, auth)
		algoitnytest.OK(t, err)
		_, err = cached.GetHistory(ctx, h.Ref())
		algoitnytest.OK(t, err)
		_, err = worker.SetUserPlan(ctx, ada.Email, pro)
		algoitnytest.OK(t, err)
		_, err = worker.SetUserActive(ctx, ada.Email, false)
		algoitnytest.OK(t, err)
		_, err = worker.UpdatePlan(ctx, "Pro", algoitny.PlanUpdate{MaxHintsPerDay: ptr(7)})
		algoitnytest.OK(t, err)
		// The marker outlives the cached process's moved clock.
		algoitnytest.OK(t, worker.RevokeSession(ctx, "s-1", time.Now().Add(24*time.Hour)))
		_, err = worker.SetHistoryVisibility(ctx, h.Ref(), true)
		algoitnytest.OK(t, err)
		snap, err := cached.AuthLookup(ctx, auth)
		algoitnytest.OK(t, err)
		if !snap.Revoked || snap.User.IsActive || snap.User.PlanName != "Pro" || snap.Plan == nil || snap.Plan.MaxHintsPerDay != 7 {
			t.Fatalf("after another process's writes: %+v, user %+v, plan %+v", snap, snap.User, snap.Plan)
		}
		if got := algoitnytest.Must[*algoitny.SearchHistory](t)(cached.GetHistory(ctx, h.Ref())); !got.IsCodePublic {
			t.Fatal("the execution's visibility was served from a copy")
		}
	})

	t.Run("QuotaCounters", func(t *testing.T) {
		day := algoitny.UsageDay(base)
		hint := func(db *dynamo.DB, limit int) (*algoitny.UsageLog, error) {
			l := &algoitny.UsageLog{UserID: "quota-user", Action: algoitny.ActionHint}
			return l, db.ConsumeQuota(ctx, l, limit)
		}
		// hints reads the counter twice on the cached process: it shows
		// want, and the second read costs no request.
		hints := func(want int) {
			t.Helper()
			counts, err := cached.UsageCounts(ctx, "quota-user", day)
			algoitnytest.OK(t, err)
			before := cached.Requests()
			again, err := cached.UsageCounts(ctx, "quota-user", day)
			algoitnytest.OK(t, err)
			if counts[algoitny.ActionHint] != want || again[algoitny.ActionHint] != want || cached.Requests() != before {
				t.Fatalf("hints used: %d then %d (%d requests), want %d from the cache", counts[algoitny.ActionHint], again[algoitny.ActionHint], cached.Requests()-before, want)
			}
		}
		hints(0) // "no counter yet" is kept too
		_, err := hint(worker, 3)
		algoitnytest.OK(t, err)
		pass()
		hints(1) // another process's use, past the bound
		l, err := hint(cached, 3)
		algoitnytest.OK(t, err)
		hints(2) // its own, at once
		algoitnytest.OK(t, cached.ReleaseQuota(ctx, l))
		hints(1)
		// A refusal reports the count DynamoDB holds, not the copy: another
		// process uses one more.
		_, err = hint(worker, 3)
		algoitnytest.OK(t, err)
		_, err = hint(cached, 2)
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		if rl := err.(*algoitny.Error).RateLimit; rl.Used != 2 || rl.Limit != 2 {
			t.Fatalf("refusal reports %+v, want 2 used of 2", rl)
		}
	})

	// Requests that miss one partition together share one load of it: a
	// popular problem just edited costs DynamoDB one read, not one per
	// request.
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
		if n := concurrently(1); n != 1 {
			t.Fatalf("the first read made %d requests, want 1", n)
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

// TestAuthLookupIsOneConsistentRead: authenticating a request reads the
// session's marker, the user, the plan the token names and the day's quota
// counter in one BatchGetItem, strongly consistent in every table; a user
// whose plan changed since the token costs one more read of their plan.
func TestAuthLookupIsOneConsistentRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	db.CacheDisplayData(dynamo.DisplayBound) // security state is never served from it
	_, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	u := &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}
	algoitnytest.OK(t, db.CreateUser(ctx, u, algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))))
	day := algoitny.UsageDay(time.Now())
	algoitnytest.OK(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: u.ID, Action: algoitny.ActionHint}, algoitny.Unlimited))
	var inputs []*dynamodb.BatchGetItemInput
	dynamo.SpyBatchGets(db, func(in *dynamodb.BatchGetItemInput) { inputs = append(inputs, in) })
	for range 2 {
		rctx, counter := dynamo.WithRequestCounter(ctx)
		snap, err := db.AuthLookup(rctx, algoitny.AuthRequest{UserID: u.ID, Email: u.Email, SessionID: "s-1", PlanName: "Free", UsageDay: day})
		algoitnytest.OK(t, err)
		if n := counter.Count(); n != 1 || snap.Plan == nil || snap.Plan.Name != "Free" || snap.Usage == nil || snap.Usage.Counts[algoitny.ActionHint] != 1 {
			t.Fatalf("%d requests, %+v", n, snap)
		}
	}
	if len(inputs) != 2 || len(inputs[0].RequestItems) != 3 {
		t.Fatalf("%d BatchGetItem calls, the first over %d tables", len(inputs), len(inputs[0].RequestItems))
	}
	for i, in := range inputs {
		for table, ka := range in.RequestItems {
			if ka.ConsistentRead == nil || !*ka.ConsistentRead {
				t.Errorf("call %d read %s eventually consistently", i, table)
			}
		}
	}
	_, err = db.SetUserPlan(ctx, u.Email, algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Pro")))
	algoitnytest.OK(t, err)
	rctx, counter := dynamo.WithRequestCounter(ctx)
	snap, err := db.AuthLookup(rctx, algoitny.AuthRequest{UserID: u.ID, Email: u.Email, SessionID: "s-1", PlanName: "Free"})
	algoitnytest.OK(t, err)
	if n := counter.Count(); n != 2 || snap.Plan == nil || snap.Plan.Name != "Pro" || snap.Usage != nil {
		t.Fatalf("after a change of plan: %d requests, %+v", n, snap)
	}
}

// TestUncachedView: the jobs' view of a caching DB reads DynamoDB every
// time (another process's change is seen at once), and its writes make the
// caching DB forget its copy.
func TestUncachedView(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cached := newDB(t)
	cached.CacheDisplayData(time.Hour) // nothing expires during the test
	work := cached.Uncached()
	other, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
	algoitnytest.OK(t, other.CreateProblem(ctx, p, algoitny.Unlimited))
	for _, db := range []*dynamo.DB{cached, work} {
		_, err := db.GetProblem(ctx, p.Ref())
		algoitnytest.OK(t, err)
	}
	_, err = other.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Other's")})
	algoitnytest.OK(t, err)
	if got := algoitnytest.Must[*algoitny.Problem](t)(work.GetProblem(ctx, p.Ref())); got.Title != "Other's" {
		t.Fatalf("the uncached view read %q", got.Title)
	}
	if got := algoitnytest.Must[*algoitny.Problem](t)(cached.GetProblem(ctx, p.Ref())); got.Title == "Other's" {
		t.Fatal("the caching DB read again within its bound: the test shows nothing")
	}
	_, err = work.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Work's")})
	algoitnytest.OK(t, err)
	if got := algoitnytest.Must[*algoitny.Problem](t)(cached.GetProblem(ctx, p.Ref())); got.Title != "Work's" {
		t.Fatalf("after the view's write the caching DB reads %q", got.Title)
	}
}

// TestDisplayCacheOfAuthors: users and plans read for display (the authors
// beside other people's items) are kept at most the bound (the cache's
// clock is moved, not waited for) and forgotten at once when this process
// writes them; every other read of a user or a plan — the ones decisions
// are made on — goes to DynamoDB each time, and sees another process's
// change at once while the display copy may still show the old value.
func TestDisplayCacheOfAuthors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cached := newDB(t)
	var skew atomic.Int64
	cached.SetClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	const bound = time.Hour // nothing expires on its own during the test
	cached.CacheDisplayData(bound)
	pass := func() { skew.Add(int64(bound)) }
	worker, err := dynamo.Open(ctx, dynamo.Config{Endpoint: dynamotest.Endpoint(), TablePrefix: strings.TrimSuffix(cached.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	_, err = worker.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	free := algoitnytest.Must[*algoitny.Plan](t)(worker.GetPlan(ctx, "Free"))
	pro := algoitnytest.Must[*algoitny.Plan](t)(worker.GetPlan(ctx, "Pro"))
	ada := &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}
	bob := &algoitny.User{Email: "bob@example.com", Name: "Bob", IsActive: true}
	algoitnytest.OK(t, worker.CreateUser(ctx, ada, free))
	algoitnytest.OK(t, worker.CreateUser(ctx, bob, free))
	emails := []string{ada.Email, bob.Email, "gone@example.com"}

	// requests runs read and returns the DynamoDB requests it made.
	requests := func(read func(context.Context) error) int64 {
		t.Helper()
		rctx, counter := dynamo.WithRequestCounter(ctx)
		algoitnytest.OK(t, read(rctx))
		return counter.Count()
	}
	var users map[string]*algoitny.User
	var plans map[string]*algoitny.Plan
	authors := func(ctx context.Context) (err error) {
		users, err = cached.GetUsersForDisplay(ctx, emails)
		return err
	}
	authorPlans := func(ctx context.Context) (err error) {
		plans, err = cached.GetPlansForDisplay(ctx, []string{"Free", "Pro"})
		return err
	}

	if n, again := requests(authors), requests(authors); n != 1 || again != 0 || len(users) != 2 || users[ada.Email].Name != "Ada" {
		t.Fatalf("authors: %d then %d requests, %d users", n, again, len(users))
	}
	if n, again := requests(authorPlans), requests(authorPlans); n != 1 || again != 0 || len(plans) != 2 {
		t.Fatalf("plans: %d then %d requests, %d plans", n, again, len(plans))
	}
	if n := requests(func(ctx context.Context) error { return authors(algoitny.WithFreshReads(ctx)) }); n != 1 {
		t.Fatalf("a fresh read of authors made %d requests, want 1", n)
	}

	t.Run("SecurityReadsNeverFromTheCopy", func(t *testing.T) {
		// Another process changes ada and Free; no time passes.
		_, err := worker.SetUserActive(ctx, ada.Email, false)
		algoitnytest.OK(t, err)
		_, err = worker.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxHintsPerDay: ptr(7)})
		algoitnytest.OK(t, err)
		if requests(authors); !users[ada.Email].IsActive {
			t.Fatal("the display copy was read again within its bound: the test shows nothing")
		}
		var u *algoitny.User
		var p *algoitny.Plan
		var us map[string]*algoitny.User
		var ps map[string]*algoitny.Plan
		for what, read := range map[string]func(context.Context) error{
			"GetUserByEmail": func(ctx context.Context) (err error) { u, err = cached.GetUserByEmail(ctx, ada.Email); return err },
			"GetUserByID":    func(ctx context.Context) (err error) { u, err = cached.GetUserByID(ctx, ada.ID); return err },
			"GetUsersByEmail": func(ctx context.Context) (err error) {
				us, err = cached.GetUsersByEmail(ctx, emails)
				u = us[ada.Email]
				return err
			},
		} {
			if n := requests(read); n == 0 || u.IsActive {
				t.Errorf("%s: %d requests, active %v", what, n, u.IsActive)
			}
		}
		for what, read := range map[string]func(context.Context) error{
			"GetPlan": func(ctx context.Context) (err error) { p, err = cached.GetPlan(ctx, "Free"); return err },
			"GetPlans": func(ctx context.Context) (err error) {
				ps, err = cached.GetPlans(ctx, []string{"Free"})
				p = ps["Free"]
				return err
			},
		} {
			if n := requests(read); n == 0 || p.MaxHintsPerDay != 7 {
				t.Errorf("%s: %d requests, %d hints", what, n, p.MaxHintsPerDay)
			}
		}
		snap, err := cached.AuthLookup(ctx, algoitny.AuthRequest{UserID: ada.ID, Email: ada.Email, SessionID: "s-1", PlanName: "Free"})
		algoitnytest.OK(t, err)
		if snap.User.IsActive || snap.Plan.MaxHintsPerDay != 7 {
			t.Fatalf("AuthLookup: user %+v, plan %+v", snap.User, snap.Plan)
		}
		// Those consistent reads kept nothing for display: the copy still
		// holds what it read, until the bound has passed.
		if requests(authors); !users[ada.Email].IsActive {
			t.Fatal("a security read replaced the display copy")
		}
		pass()
		if n := requests(authors); n != 1 || users[ada.Email].IsActive {
			t.Fatalf("past the bound: %d requests, ada active %v", n, users[ada.Email].IsActive)
		}
		if n := requests(authorPlans); n != 1 || plans["Free"].MaxHintsPerDay != 7 {
			t.Fatalf("past the bound: %d requests, Free %+v", n, plans["Free"])
		}
	})

	t.Run("OwnWritesAtOnce", func(t *testing.T) {
		requests(authors)
		requests(authorPlans)
		_, err := cached.SetUserPlan(ctx, bob.Email, pro)
		algoitnytest.OK(t, err)
		if n := requests(authors); n != 1 || users[bob.Email].PlanName != "Pro" {
			t.Fatalf("after its own setUserPlan: %d requests, plan %q", n, users[bob.Email].PlanName)
		}
		_, err = cached.SetUserActive(ctx, ada.Email, true)
		algoitnytest.OK(t, err)
		if requests(authors); !users[ada.Email].IsActive {
			t.Fatal("after its own setUserActive the copy shows the old flag")
		}
		_, err = cached.UpdatePlan(ctx, "Pro", algoitny.PlanUpdate{MaxHintsPerDay: ptr(42)})
		algoitnytest.OK(t, err)
		if n := requests(authorPlans); n != 1 || plans["Pro"].MaxHintsPerDay != 42 || plans["Free"].MaxHintsPerDay != 7 {
			t.Fatalf("after its own updatePlan: %d requests, %+v", n, plans["Pro"])
		}
		algoitnytest.OK(t, cached.DeleteUser(ctx, bob.Email))
		if requests(authors); users[bob.Email] != nil {
			t.Fatal("after its own DeleteUser the copy still shows the user")
		}
		// The jobs' view writes through the same process: it forgets too.
		_, err = cached.Uncached().SetUserActive(ctx, ada.Email, false)
		algoitnytest.OK(t, err)
		if requests(authors); users[ada.Email].IsActive {
			t.Fatal("after the uncached view's write the copy shows the old flag")
		}
	})
}
