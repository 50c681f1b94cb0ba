package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

// TestChargedJobs: a job and the use of the quota that pays for it are
// written together, so the day's counter, the usage logs and the jobs paid
// with them always agree — under concurrency, for idempotent repeats, and
// when DynamoDB's answer to the write is lost.
func TestChargedJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ExactUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		const limit, callers = 10, 50
		var mu sync.Mutex
		admitted, limited := 0, 0
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, created, err := db.CreateChargedJob(ctx, execution("u1"), charge("u1", algoitny.ActionExecution, limit))
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					if !created {
						t.Error("not created")
					}
					admitted++
				case algoitny.ERATELIMITED:
					limited++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if admitted != limit || limited != callers-limit {
			t.Fatalf("admitted %d, limited %d; want %d and %d", admitted, limited, limit, callers-limit)
		}
		checkPaid(t, db, "u1", algoitny.ActionExecution, limit)
		// A refused charge left no job either.
		if jobs := algoitnytest.Must[algoitny.Page[*algoitny.Job]](t)(db.ListJobs(ctx, algoitny.JobFilter{UserID: "u1"}, algoitny.PageRequest{First: 100})); len(jobs.Items) != limit {
			t.Fatalf("%d jobs, want %d", len(jobs.Items), limit)
		}
	})

	t.Run("RateLimitDetails", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		now := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		for range 2 {
			algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, hints("u"), charge("u", algoitny.ActionHint, 2))))
		}
		_, _, err := db.CreateChargedJob(ctx, hints("u"), charge("u", algoitny.ActionHint, 2))
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		rl := err.(*algoitny.Error).RateLimit
		if rl.Action != algoitny.ActionHint || rl.Limit != 2 || rl.Used != 2 || !rl.ResetAt.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("rate limit %+v", rl)
		}
		_, _, err = db.CreateChargedJob(ctx, hints("z"), charge("z", algoitny.ActionHint, 0))
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		checkPaidOn(t, db, "2026-11-22", "u", algoitny.ActionHint, 2)
		checkPaidOn(t, db, "2026-11-22", "z", algoitny.ActionHint, 0)
	})

	t.Run("IdempotentRepeatIsNotCharged", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		keyed := func() *algoitny.Job { j := execution("u"); j.IdempotencyKey = "k1"; return j }
		first := algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, keyed(), charge("u", algoitny.ActionExecution, 1))))
		// At the limit, a repeat still gets its job back rather than RATE_LIMITED.
		again, isNew, err := db.CreateChargedJob(ctx, keyed(), charge("u", algoitny.ActionExecution, 1))
		if err != nil || isNew || again.ID != first.ID {
			t.Fatalf("repeat: %+v new=%t %v", again, isNew, err)
		}
		checkPaid(t, db, "u", algoitny.ActionExecution, 1)
	})

	t.Run("PaidByStaffForAnOwner", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		j := algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, hints("owner"), charge("staff", algoitny.ActionHint, 5))))
		if j.UserID != "owner" || j.PaidWith == nil || j.PaidWith.UserID != "staff" {
			t.Fatalf("job %+v paid with %+v", j, j.PaidWith)
		}
		checkPaid(t, db, "staff", algoitny.ActionHint, 1)
		checkPaid(t, db, "owner", algoitny.ActionHint, 0)
	})

	// The answer to the transaction is lost after DynamoDB applied it (a
	// connection cut): the SDK retries it, and when every answer is lost
	// the job is read back. The proxy strips the SDK's idempotency token,
	// so a retry is a second, separate transaction whose own conditions
	// must settle it (the job's id exists: it was this call's).
	t.Run("LostAnswer", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name      string
			forward   func(n int) bool // whether the nth transaction reaches DynamoDB
			wantErr   bool
			wantPaid  int
			wantAfter int // the next charge, made after the fault
		}{
			{"RetriedAfterTheWrite", func(n int) bool { return true }, false, 1, 2},
			{"EveryAnswerLost", func(n int) bool { return n == 1 }, false, 1, 2},
			{"LostBeforeTheWrite", func(n int) bool { return false }, true, 0, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				direct := newDB(t)
				lossy := &lossyProxy{target: dynamotest.Endpoint(), forward: tc.forward}
				srv := httptest.NewServer(lossy)
				t.Cleanup(srv.Close)
				db, err := dynamo.Open(ctx, dynamo.Config{Endpoint: srv.URL, TablePrefix: strings.TrimSuffix(direct.Tables().Main, "Main"), MaxAttempts: 3})
				algoitnytest.OK(t, err)
				j, isNew, err := db.CreateChargedJob(ctx, execution("u"), charge("u", algoitny.ActionExecution, 10))
				if tc.wantErr {
					algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
				} else if err != nil || !isNew || j.PaidWith == nil {
					t.Fatalf("%+v new=%t %v", j, isNew, err)
				}
				if lossy.transactions() < 2 {
					t.Fatalf("%d transactions: the fault was not hit", lossy.transactions())
				}
				checkPaid(t, direct, "u", algoitny.ActionExecution, tc.wantPaid)
				lossy.heal()
				algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, execution("u"), charge("u", algoitny.ActionExecution, 10))))
				checkPaid(t, direct, "u", algoitny.ActionExecution, tc.wantAfter)
			})
		}
	})
}

func execution(user string) *algoitny.Job {
	return &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: user, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000",
		Language: algoitny.LanguagePython, SolutionCode: "print(1)"}
}

func hints(user string) *algoitny.Job {
	return &algoitny.Job{Type: algoitny.JobHintGeneration, UserID: user, HistoryID: "h1"}
}

func charge(payer string, action algoitny.UsageAction, limit int) *algoitny.Charge {
	return &algoitny.Charge{Log: &algoitny.UsageLog{UserID: payer, Action: action, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000"}, Limit: limit}
}

// created passes on a job that CreateChargedJob reports as new.
func created(j *algoitny.Job, isNew bool, err error) (*algoitny.Job, error) {
	if err == nil && !isNew {
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "job %s was not created", j.ID)
	}
	return j, err
}

// checkPaid fails the test unless payer's counter of action for today,
// their usage logs of it and the jobs paid with those logs are n each, and
// each log names a job that names the log back.
func checkPaid(t *testing.T, db *dynamo.DB, payer string, action algoitny.UsageAction, n int) {
	t.Helper()
	checkPaidOn(t, db, algoitny.UsageDay(time.Now()), payer, action, n)
}

// checkPaidOn is checkPaid for the quota day day.
func checkPaidOn(t *testing.T, db *dynamo.DB, day, payer string, action algoitny.UsageAction, n int) {
	t.Helper()
	ctx := algoitny.WithFreshReads(context.Background())
	if c := algoitnytest.Must[map[algoitny.UsageAction]int](t)(db.UsageCounts(ctx, payer, day)); c[action] != n {
		t.Fatalf("%s's %s counter is %d, want %d", payer, action, c[action], n)
	}
	logs, _ := listAll(t, 100, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.UsageLog], error) {
		return db.ListUsageLogs(ctx, payer, day, day, r)
	})
	if len(logs) != n {
		t.Fatalf("%s has %d usage logs, want %d", payer, len(logs), n)
	}
	jobs := map[string]bool{}
	for _, l := range logs {
		j, err := db.GetJob(ctx, l.JobID)
		if err != nil {
			t.Fatalf("usage log %s names job %q: %v", l.ID, l.JobID, err)
		}
		if want := (algoitny.UsageRef{UserID: payer, Action: action, ID: l.ID}); j.PaidWith == nil || *j.PaidWith != want {
			t.Fatalf("job %s is paid with %+v, want %+v", j.ID, j.PaidWith, want)
		}
		jobs[j.ID] = true
	}
	if len(jobs) != n {
		t.Fatalf("%d usage logs pay for %d jobs", n, len(jobs))
	}
}

// lossyProxy forwards DynamoDB requests to target, but loses the answer to
// the first TransactWriteItems (a 500 instead), and forwards later ones only
// as forward says, answering 500 to the others — until heal. It removes the
// SDK's ClientRequestToken, so DynamoDB does not recognise a retry.
type lossyProxy struct {
	target  string
	forward func(n int) bool

	mu     sync.Mutex
	n      int
	healed bool
}

func (p *lossyProxy) transactions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *lossyProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.healed = true
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	lose, forward := false, true
	if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
		p.mu.Lock()
		if !p.healed {
			p.n++
			lose, forward = true, p.forward(p.n)
			if p.n > 1 && forward {
				lose = false // a retry that reaches DynamoDB is answered
			}
		}
		p.mu.Unlock()
		var in map[string]any
		if json.Unmarshal(body, &in) == nil {
			delete(in, "ClientRequestToken")
			body, _ = json.Marshal(in)
		}
	}
	if forward {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
		for k, v := range r.Header {
			if k != "Content-Length" {
				req.Header[k] = v
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if !lose {
			for k, v := range resp.Header {
				if k != "Content-Length" {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(resp.StatusCode)
			w.Write(answer)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"the answer was lost"}`)
}

// TestChargeJudgedByThePlanNow: a charge prepared with a plan's limit
// before the plan changed, and written after UpdatePlan returned (as an
// executeCode on another replica that read the plan just before), is
// judged by the plan's new limit: a lowered limit refuses it, a raised
// one admits it. Without the plan's check in the charge's transaction the
// old limit would decide.
func TestChargeJudgedByThePlanNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	_, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	planned := func(payer string, limit int) *algoitny.Charge {
		c := charge(payer, algoitny.ActionExecution, limit)
		c.Plan = "Free"
		return c
	}
	algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, execution("u1"), planned("u1", 10))))

	// Lowered: 10 → 1 with one use made; a charge read with 10 is refused.
	_, err = db.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxExecutionsPerDay: ptr(1)})
	algoitnytest.OK(t, err)
	_, _, err = db.CreateChargedJob(ctx, execution("u1"), planned("u1", 10))
	algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
	if rl := err.(*algoitny.Error).RateLimit; rl.Limit != 1 || rl.Used != 1 {
		t.Fatalf("refused with %+v, want 1 used of the new limit 1", rl)
	}
	checkPaid(t, db, "u1", algoitny.ActionExecution, 1)

	// Raised: 1 → 3; a charge read with 1 is admitted (twice more).
	_, err = db.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxExecutionsPerDay: ptr(3)})
	algoitnytest.OK(t, err)
	for range 2 {
		algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, execution("u1"), planned("u1", 1))))
	}
	_, _, err = db.CreateChargedJob(ctx, execution("u1"), planned("u1", 1))
	algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
	checkPaid(t, db, "u1", algoitny.ActionExecution, 3)
}

// TestChargeOfEveryActionByItsPlanLimit: a code run and a counterexample
// search are checked against their own limits in the plan (a charge with
// the current limit is admitted, not refused as if the plan had changed),
// and a plan stored before those limits existed against the executions
// limit it falls back to.
func TestChargeOfEveryActionByItsPlanLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	_, err := db.SeedPlans(ctx, algoitny.DefaultPlans(), false)
	algoitnytest.OK(t, err)
	free := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
	for _, action := range []algoitny.UsageAction{algoitny.ActionCodeRun, algoitny.ActionCounterexample, algoitny.ActionHint, algoitny.ActionExecution} {
		c := charge("u-"+string(action), action, free.DailyLimit(action))
		c.Plan = "Free"
		algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, execution("u-"+string(action)), c)))
	}
	// A plan without MaxCodeRunsPerDay: its executions limit applies.
	algoitnytest.OK(t, db.RemovePlanAttribute(ctx, "Free", "MaxCodeRunsPerDay"))
	c := charge("u-old", algoitny.ActionCodeRun, free.MaxExecutionsPerDay)
	c.Plan = "Free"
	algoitnytest.Must[*algoitny.Job](t)(created(db.CreateChargedJob(ctx, execution("u-old"), c)))
}
