package dynamo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"slices"
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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TestEveryWriteIsAnnounced calls every method of DB that writes and
// compares the tables before and after: every cached item it changed
// (added, modified or deleted) must have been announced on the feed under
// its cache key, as strict when it is security state. Nothing is expected
// by hand: the tables say what was written. A method of DB that is in
// neither list below fails the test, so a new write cannot go untested.
func TestEveryWriteIsAnnounced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	db := newDB(t)
	runFeed(t, db, broker, true)
	type announcement struct {
		keys   []string
		strict bool
	}
	var announced []announcement
	dynamo.OnChange(db, func(keys []string, strict bool) {
		announced = append(announced, announcement{slices.Clone(keys), strict})
	})
	time.Sleep(testBound) // strict changes then know every member (only this one)

	// What the writes below work on.
	_, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	free := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
	pro := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Pro"))
	u := &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}
	algoitnytest.OK(t, db.CreateUser(ctx, u, free))
	p := newProblem(algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
	algoitnytest.OK(t, db.CreateProblem(ctx, p, algoitny.Unlimited))
	draft := newProblem(algoitny.PlatformCodeforces, "1A", algoitny.LanguagePython, false)
	draft.CreatedBy = u.ID
	gone := newProblem(algoitny.PlatformBaekjoon, "2000", algoitny.LanguagePython, true)
	h := newHistory(u.ID, algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, false)
	usage := &algoitny.UsageLog{UserID: u.ID, Action: algoitny.ActionExecution}
	added := []*algoitny.TestCase{{Input: "1 2\n", Output: "3\n"}, {Input: incompressible(1 << 20), Output: "x\n"}} // the second in parts
	grouped := []*algoitny.TestCase{{Input: "2 2\n", Output: "4\n"}}                                                // with subtasks, then in added[0]'s place
	var job, keyed *algoitny.Job
	var check *algoitny.Check
	var claimed *algoitny.Check
	var lease string
	var alert *algoitny.CheckAlert
	var channel *algoitny.NotificationChannel
	var delivery *algoitny.NotificationDelivery
	var link *algoitny.AtCoderLink
	adt := algoitny.ADTContest{ID: "adt_all_20250522_3", Difficulty: algoitny.ADTAll, Start: time.Date(2025, 5, 22, 10, 0, 0, 0, time.UTC), Duration: time.Hour, Title: "ADT"}

	writes := []struct {
		method string
		write  func() error
	}{
		{"SeedPlans", func() error { _, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), true); return err }},
		{"CreatePlan", func() error {
			return db.CreatePlan(ctx, &algoitny.Plan{Name: "Team", MaxHintsPerDay: 5, MaxExecutionsPerDay: 5, IsActive: true})
		}},
		{"UpdatePlan", func() error { return err2(db.UpdatePlan(ctx, "Team", algoitny.PlanUpdate{MaxHintsPerDay: ptr(7)})) }},
		{"CreateUser", func() error {
			return db.CreateUser(ctx, &algoitny.User{Email: "bob@example.com", Name: "Bob", IsActive: true}, free)
		}},
		{"SignInWithGoogle", func() error {
			_, _, err := db.SignInWithGoogle(ctx, algoitny.GoogleProfile{GoogleID: "g-cy", Email: "cy@example.com", Name: "Cy"}, free)
			return err
		}},
		{"SetUserPlan", func() error { return err2(db.SetUserPlan(ctx, u.Email, pro)) }},
		{"SetUserActive", func() error { return err2(db.SetUserActive(ctx, u.Email, false)) }},
		{"SetUserStaff", func() error { return err2(db.SetUserStaff(ctx, u.Email, true)) }},
		{"RevokeSession", func() error { return db.RevokeSession(ctx, "session-1", time.Now().Add(time.Hour)) }},
		{"ConsumeQuota", func() error { return db.ConsumeQuota(ctx, usage, algoitny.Unlimited) }},
		{"ReleaseQuota", func() error { return db.ReleaseQuota(ctx, usage) }},
		{"CreateProblem", func() error {
			if err := db.CreateProblem(ctx, draft, algoitny.Unlimited); err != nil {
				return err
			}
			return db.CreateProblem(ctx, gone, algoitny.Unlimited)
		}},
		{"UpdateProblem", func() error {
			return err2(db.UpdateProblem(ctx, p.Ref(), algoitny.ProblemUpdate{Title: ptr("Renamed")}))
		}},
		{"AddTestCases", func() error {
			return db.AddTestCases(ctx, p.Ref(), added)
		}},
		{"StartProduction", func() error { return err2(db.StartProduction(ctx, p.Ref())) }},
		{"AddTestCasesWithSubtasks", func() error {
			return err2(db.AddTestCasesWithSubtasks(ctx, p.Ref(), grouped, []algoitny.Subtask{{Name: "a", Points: 1, Mode: algoitny.ScoreSum, TestIndexes: []int{0}}}))
		}},
		{"DeleteTestCases", func() error { return err2(db.DeleteTestCases(ctx, p.Ref(), []string{added[1].ID})) }},
		{"ReplaceTestCases", func() error {
			return err2(db.ReplaceTestCases(ctx, p.Ref(), map[string]string{grouped[0].ID: added[0].ID}))
		}},
		{"ReviewProblem", func() error { return err2(db.ReviewProblem(ctx, p.Ref(), algoitny.ProblemReview{Verified: true})) }},
		{"DeleteProblem", func() error { return db.DeleteProblem(ctx, gone.Ref(), "duplicate") }},
		{"DiscardProblem", func() error { return db.DiscardProblem(ctx, draft.Ref(), u.ID) }},
		{"CreateHistory", func() error { return db.CreateHistory(ctx, h) }},
		{"SetHints", func() error { return err2(db.SetHints(ctx, h.Ref(), []string{"look at n = 0"})) }},
		{"SetCounterexample", func() error {
			return err2(db.SetCounterexample(ctx, h.Ref(), &algoitny.Counterexample{Input: "1\n", Verdict: algoitny.VerdictWrongAnswer}))
		}},
		{"SetHistoryVisibility", func() error { return err2(db.SetHistoryVisibility(ctx, h.Ref(), true)) }},
		{"CreateJob", func() error {
			var err error
			if job, _, err = db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: u.ID, HistoryID: h.ID}); err != nil {
				return err
			}
			keyed, _, err = db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: u.ID, IdempotencyKey: "k1"})
			return err
		}},
		{"CreateChargedJob", func() error {
			charge := &algoitny.Charge{Log: &algoitny.UsageLog{UserID: u.ID, Action: algoitny.ActionHint}, Limit: algoitny.Unlimited}
			_, _, err := db.CreateChargedJob(ctx, &algoitny.Job{Type: algoitny.JobHintGeneration, UserID: u.ID, HistoryID: h.ID}, charge)
			return err
		}},
		{"SetRiverJobID", func() error { return err2(db.SetRiverJobID(ctx, job.ID, 42)) }},
		{"AddJobProgress", func() error {
			return db.AddJobProgress(ctx, &algoitny.JobProgress{JobID: job.ID, Step: "compiling", Status: algoitny.JobProcessing, Percent: 10})
		}},
		{"TransitionJob", func() error {
			var err error
			job, err = db.TransitionJob(ctx, job.ID, algoitny.JobTransition{Status: algoitny.JobProcessing})
			return err
		}},
		{"TransitionJobFrom", func() error {
			return err2(db.TransitionJobFrom(ctx, job, algoitny.JobTransition{Status: algoitny.JobCompleted}))
		}},
		{"CompleteExecution", func() error {
			running, _, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: u.ID})
			if err != nil {
				return err
			}
			if running, err = db.TransitionJobFrom(ctx, running, algoitny.JobTransition{Status: algoitny.JobProcessing}); err != nil {
				return err
			}
			done := newHistory(u.ID, algoitny.PlatformBaekjoon, "1000", algoitny.LanguagePython, true)
			done.ID, _ = db.NewHistoryID()
			done.JobID = running.ID
			return err2(db.CompleteExecution(ctx, done, running, algoitny.JobTransition{Status: algoitny.JobCompleted, HistoryID: &done.ID},
				&algoitny.JobProgress{Step: "ACCEPTED", Percent: 100}))
		}},
		{"CountExecution", func() error { return db.CountExecution(ctx, h) }},
		{"ReleaseIdempotencyKey", func() error { return db.ReleaseIdempotencyKey(ctx, u.ID, "k1", keyed.ID) }},
		{"PutExecutionTest", func() error {
			return db.PutExecutionTest(ctx, algoitny.ExecutionEvent{JobID: job.ID, Index: 0, Total: 2,
				Result: algoitny.TestResult{TestCaseID: "t1", Verdict: algoitny.VerdictAccepted}})
		}},
		{"PutExecutionTests", func() error {
			return db.PutExecutionTests(ctx, []algoitny.ExecutionEvent{
				{JobID: job.ID, Index: 0, Total: 2, Result: algoitny.TestResult{TestCaseID: "t1", Verdict: algoitny.VerdictAccepted}},
				{JobID: job.ID, Index: 1, Total: 2, Result: algoitny.TestResult{TestCaseID: "t2", Verdict: algoitny.VerdictWrongAnswer}},
			})
		}},
		{"CreateCheck", func() error {
			check = newCheck(u.ID)
			if err := db.CreateCheck(ctx, check, algoitny.Unlimited); err != nil {
				return err
			}
			return db.CreateCheck(ctx, newCheck("someone"), algoitny.Unlimited)
		}},
		{"UpdateCheck", func() error {
			c := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, check.ID))
			c.DelayMs = 120_000
			var err error
			check, err = db.UpdateCheck(ctx, c)
			return err
		}},
		{"ClaimCheckRun", func() error {
			var err error
			claimed, lease, err = db.ClaimCheckRun(ctx, check.ID, *check.NextRunAt, time.Minute)
			return err
		}},
		{"RecordCheckRun", func() error {
			next := *claimed
			next.Runs++
			next.Version++
			r := &algoitny.CheckResult{CheckID: check.ID, Seq: next.Runs, Status: algoitny.CheckUp, HTTPStatus: 200, CheckedAt: time.Now().UTC()}
			next.LastResult, next.LastExecutedAt = r, &r.CheckedAt
			alert = &algoitny.CheckAlert{UserID: u.ID, CheckID: check.ID, State: algoitny.CheckStateUp, Payload: []byte("{}")}
			return db.RecordCheckRun(ctx, &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: r, Next: &next, Keep: 5, Alert: alert})
		}},
		{"DeleteCheckAlert", func() error { return db.DeleteCheckAlert(ctx, alert.ID) }},
		{"ClaimCheckRun", func() error { // again, for the release
			c := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, check.ID))
			var err error
			claimed, lease, err = db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
			return err
		}},
		{"ReleaseCheckLease", func() error { return db.ReleaseCheckLease(ctx, check.ID, lease) }},
		{"DeleteCheck", func() error { return err2(db.DeleteCheck(ctx, check.ID)) }},
		{"DeleteUserChecks", func() error { return err2(db.DeleteUserChecks(ctx, "someone")) }},
		{"CreateNotificationChannel", func() error {
			channel = &algoitny.NotificationChannel{UserID: u.ID, Kind: algoitny.ChannelWebhook, URL: "https://example.com/hook", Secret: "s"}
			return db.CreateNotificationChannel(ctx, channel, 10)
		}},
		{"CreateDelivery", func() error {
			delivery = &algoitny.NotificationDelivery{ChannelID: channel.ID, UserID: u.ID, CheckID: "c", State: algoitny.CheckStateDown, Payload: []byte("{}")}
			return db.CreateDelivery(ctx, delivery)
		}},
		{"RecordDeliveryAttempt", func() error {
			delivery.Attempts, delivery.Status = 1, algoitny.DeliveryDelivered
			return db.RecordDeliveryAttempt(ctx, delivery)
		}},
		{"DeleteNotificationChannel", func() error { return db.DeleteNotificationChannel(ctx, u.ID, channel.ID) }},
		{"LinkAtCoder", func() error {
			var err error
			link, _, err = db.LinkAtCoder(ctx, u.ID, "tourist")
			return err
		}},
		{"CommitAtCoderSync", func() error {
			return db.CommitAtCoderSync(ctx, algoitny.AtCoderSyncCommit{UserID: u.ID, LinkID: link.LinkID, LinkVersion: link.Version,
				Cursor: algoitny.AtCoderCursor{Second: 1}, AC: &algoitny.ACList{ProblemIDs: []string{"abc001_a"}}, Finished: true, At: time.Now()})
		}},
		{"RecordAtCoderSyncFailure", func() error {
			return db.RecordAtCoderSyncFailure(ctx, algoitny.AtCoderSyncFailure{UserID: u.ID, LinkID: link.LinkID, At: time.Now(), Message: "HTTP 503"})
		}},
		{"PutADTContests", func() error { return db.PutADTContests(ctx, []algoitny.ADTContest{adt}) }},
		{"AdvanceADTContest", func() error { return err2(db.AdvanceADTContest(ctx, adt, 66203973)) }},
		{"SetADTContestProblems", func() error {
			ok, err := db.SetADTContestProblems(ctx, adt, []algoitny.ADTContestProblem{{ProblemID: "abc001_a", Index: "A", Title: "Sequence Sum"}})
			if err == nil && !ok {
				err = errors.New("the contest was not found")
			}
			return err
		}},
		{"UnlinkAtCoder", func() error { return db.UnlinkAtCoder(ctx, u.ID) }},
		{"DeleteUser", func() error { return db.DeleteUser(ctx, "bob@example.com") }},
		{"DeleteAccount", func() error {
			return db.DeleteAccount(ctx, algoitnytest.Must[*algoitny.User](t)(db.GetUserByEmail(ctx, u.Email)))
		}},
	}

	for _, w := range writes {
		before := algoitnytest.Must[map[string]dynamo.StoredItem](t)(dynamo.Snapshot(ctx, db))
		announced = nil
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.method, err)
		}
		after := algoitnytest.Must[map[string]dynamo.StoredItem](t)(dynamo.Snapshot(ctx, db))
		changed := 0
		for id := range union(before, after) {
			b, inBefore := before[id]
			a, inAfter := after[id]
			if inBefore && inAfter && reflect.DeepEqual(a.Item, b.Item) {
				continue
			}
			changed++
			it := cmpOr(a, b)
			key, strict, cached := dynamo.CacheKeyOf(db, it.Table, it.PK, it.SK)
			if !cached {
				continue
			}
			found := slices.ContainsFunc(announced, func(an announcement) bool {
				return slices.Contains(an.keys, key) && (an.strict || !strict)
			})
			if !found {
				t.Errorf("%s changed the cached item %s (strict: %t) without announcing it; announced %+v", w.method, id, strict, announced)
			}
		}
		if changed == 0 {
			t.Errorf("%s wrote nothing: the case does not test it", w.method)
		}
	}

	// Every method of DB is either a write above or known not to write.
	reads := []string{
		"ACItemInfo", "AuthLookup", "CountUserChecks", "CountUserItems", "CountUserProblems", "Describe", "ExecutionStats", "GetUserStats", "Leaderboard",
		"GetACList", "GetACLists", "GetAtCoderLink", "GetAtCoderState", "GetCheck", "GetHistories", "GetHistoriesAndProblems", "GetHistory", "GetJob",
		"GetJobByIdempotencyKey", "GetJobByRiverID", "GetJobProgress", "GetJobs", "GetPlan", "GetProblem",
		"GetProblemWithTestCases", "GetProblems", "GetTestCase", "ReadTestCase", "GetUsageLog", "GetUserByEmail", "GetUserByGoogleID",
		"GetUserByID", "GetUsersByEmail", "GetDelivery", "ListCheckAlerts", "GetNotificationChannel", "ListDeliveries", "ListNotificationChannels", "LatestJobProgress", "ListADTContests", "ListAtCoderLinksDue", "ListCheckResults", "ListCheckStats",
		"ListChecks", "ListExecutionTests", "ListHistoryByLanguage", "ListHistoryByPlatform", "ListJobProgress", "ListJobs", "ListOverdueChecks",
		"ListPlans", "ListProblems", "ListPublicHistory", "ListStaleJobs", "ListStaleJobsPage", "ListTestCases", "ListUsageLogs",
		"ListUserChecks", "ListUserHistory", "ListUsers", "ListUsersByPlan", "NewHistoryID", "NewJobProgressID", "Ping",
		"PrefetchProblem", "Requests", "Tables", "UsageCounts", "ListWorkers", "GetJobUpload",
	}
	// Tables, configuration, and writes of test helpers (export_test.go).
	// PutWorker writes a worker's announcement, which no cache holds.
	// PutJobUpload and DeleteJobUpload keep a package upload beside its job
	// until the job has read it; no cache holds uploads.
	other := []string{"Migrate", "DropTables", "SetFeed", "SetClock", "PutOrphanPart", "RemovePlanAttribute", "RemovalRace", "PutWorker", "PutJobUpload", "DeleteJobUpload"}
	typ := reflect.TypeOf(db)
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if !slices.Contains(reads, name) && !slices.Contains(other, name) &&
			!slices.ContainsFunc(writes, func(w struct {
				method string
				write  func() error
			}) bool {
				return w.method == name
			}) {
			t.Errorf("DB.%s is neither a write tested here nor listed as a read: add it to one", name)
		}
	}
}

// TestWhatIsStrict: security state (sessions, users, plans, executions)
// is strict, display data (problems, quota counters) is not, and items no
// read keeps are not cached at all.
func TestWhatIsStrict(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	tb := db.Tables()
	for _, c := range []struct {
		table, pk, sk  string
		cached, strict bool
	}{
		{tb.Users, "USER#ada@example.com", "METADATA", true, true},
		{tb.Users, "SESSION#s1", "REVOKED", true, true},
		{tb.Users, "GOOGLEID#g1", "UNIQUE", false, false},
		{tb.Plans, "PLAN#Free", "METADATA", true, true},
		{tb.Main, "USER#u1", "HISTORY#2025-01-01T00:00:00.000Z#x", true, true},
		{tb.Main, "USER#u1", "QUOTA#2025-01-01", true, false},
		{tb.Main, "USER#u1", "USAGE#2025-01-01#HINT#x", false, false},
		{tb.Main, "PROBLEM#BAEKJOON#1000", "METADATA", true, false},
		{tb.Main, "PROBLEM#BAEKJOON#1000", "TESTCASE#x", true, false},
		{tb.Main, "JOB#j1", "METADATA", false, false},
	} {
		key, strict, cached := dynamo.CacheKeyOf(db, c.table, c.pk, c.sk)
		if cached != c.cached || strict != c.strict || (cached && !strings.HasSuffix(key, c.pk)) {
			t.Errorf("%s %s %s: key %q, cached %t, strict %t; want cached %t, strict %t", c.table, c.pk, c.sk, key, cached, strict, c.cached, c.strict)
		}
	}
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// cmpOr returns a if it is set (the item after the write), else b.
func cmpOr(a, b dynamo.StoredItem) dynamo.StoredItem {
	if a.Table != "" {
		return a
	}
	return b
}

// TestCachedKindsAreReadConsistently: whenever a read of a cached kind
// goes to DynamoDB — the cache off (a warm-up, a gap in the feed) or the
// item not cached — it is strongly consistent: an eventually consistent
// read could miss a logout or a deactivation that other replicas' caches
// have already applied.
func TestCachedKindsAreReadConsistently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t) // no feed: the cache is off
	_, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	u := &algoitny.User{Email: "ada@example.com", Name: "Ada", IsActive: true}
	algoitnytest.OK(t, db.CreateUser(ctx, u, algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))))
	var inputs []*dynamodb.BatchGetItemInput
	dynamo.SpyBatchGets(db, func(in *dynamodb.BatchGetItemInput) { inputs = append(inputs, in) })
	_, err = db.AuthLookup(ctx, u.Email, "session-1")
	algoitnytest.OK(t, err)
	_, _, err = db.GetHistoriesAndProblems(ctx, nil, []algoitny.ProblemRef{{Platform: algoitny.PlatformBaekjoon, ProblemID: "1000"}})
	algoitnytest.OK(t, err)
	_, err = db.GetUsersByEmail(ctx, []string{u.Email})
	algoitnytest.OK(t, err)
	if len(inputs) != 3 {
		t.Fatalf("%d BatchGetItem calls, want 3", len(inputs))
	}
	for i, in := range inputs {
		for table, ka := range in.RequestItems {
			if ka.ConsistentRead == nil || !*ka.ConsistentRead {
				t.Errorf("call %d read %s eventually consistently", i, table)
			}
		}
	}
}

// lostReply is a reverse proxy to DynamoDB Local that, for the first request
// of one operation (X-Amz-Target), passes it on — DynamoDB makes the write —
// and answers the client with a server error, as when a reply is lost.
func lostReply(t *testing.T, op string) string {
	t.Helper()
	target, err := url.Parse(dynamotest.Endpoint())
	algoitnytest.OK(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var lost atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) && lost.CompareAndSwap(false, true) {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // DynamoDB makes the write
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"the reply was lost"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOutcomeAfterARetry: a write whose first attempt landed but whose
// reply was lost is retried by the SDK, and the retry's refusal (the item
// exists: its condition fails) does not mean the write was not made — its
// outcome is unknown, so the others keep holding the key. (A plan's
// creation is such a single conditional PutItem of strict state;
// executions are stored in transactions, which the SDK retries with their
// idempotency token.)
func TestOutcomeAfterARetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tables := newDB(t)
	db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: lostReply(t, "PutItem"), TablePrefix: strings.TrimSuffix(tables.Tables().Main, "Main")})
	algoitnytest.OK(t, err)
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	runFeed(t, db, broker, false)
	type seen struct {
		o        cache.Outcome
		attempts int32
	}
	var outcomes []seen
	dynamo.OnOutcome(db, func(_ []string, o cache.Outcome, attempts int32) { outcomes = append(outcomes, seen{o, attempts}) })
	p := &algoitny.Plan{Name: "Team", Description: "lost reply", MaxHintsPerDay: 3, MaxExecutionsPerDay: 7, IsActive: true}
	algoitnytest.ErrCode(t, db.CreatePlan(ctx, p), algoitny.ECONFLICT) // the retry finds the item the lost attempt wrote
	if got := algoitnytest.Must[*algoitny.Plan](t)(tables.GetPlan(ctx, "Team")); got.MaxExecutionsPerDay != 7 {
		t.Fatalf("the first attempt's write is not there: %+v", got)
	}
	if len(outcomes) != 1 || outcomes[0].attempts != 2 || outcomes[0].o != cache.Unknown {
		t.Fatalf("outcomes %+v; want one write of 2 attempts whose outcome is unknown", outcomes)
	}
	// One attempt refused by DynamoDB: certainly not written.
	outcomes = nil
	algoitnytest.ErrCode(t, db.CreatePlan(ctx, &algoitny.Plan{Name: "Team", IsActive: true}), algoitny.ECONFLICT)
	if len(outcomes) != 1 || outcomes[0].attempts != 1 || outcomes[0].o != cache.NotApplied {
		t.Fatalf("outcomes %+v; want one refused attempt, not applied", outcomes)
	}
}
