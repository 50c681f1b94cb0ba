package watch_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
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
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// watchTarget is a local HTTP server that records when it was hit and how
// many requests it served at once.
type watchTarget struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	delay   time.Duration
	hits    []time.Time
	running int
	maxRun  int
}

func newWatchTarget(t *testing.T) *watchTarget {
	t.Helper()
	tg := &watchTarget{status: http.StatusOK}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		tg.hits = append(tg.hits, time.Now())
		tg.running++
		tg.maxRun = max(tg.maxRun, tg.running)
		status, delay := tg.status, tg.delay
		tg.mu.Unlock()
		defer func() { tg.mu.Lock(); tg.running--; tg.mu.Unlock() }()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(status)
		fmt.Fprint(w, "contest page")
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *watchTarget) set(status int, delay time.Duration) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.status, tg.delay = status, delay
}

func (tg *watchTarget) count() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return len(tg.hits)
}

func (tg *watchTarget) times() []time.Time {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]time.Time(nil), tg.hits...)
}

func (tg *watchTarget) maxConcurrent() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.maxRun
}

// watchBundle is a test's tables, River schema, a working runner with the
// check scheduler, and the watch service on top.
type watchBundle struct {
	// tune, when set, changes the scheduler's configuration before a runner
	// starts.
	tune func(*watch.ChecksConfig)
	// tuneNotify adjusts the notifications of every runner started.
	tuneNotify func(*watch.NotificationsConfig)
	notify     *watch.Notifications
	db         *dynamo.DB
	schema     string
	svc        *watch.Service
	checks     *watch.Checks
	runner     *jobs.Runner
	events     *watch.Events
	fetch      *safehttp.Client
}

// setupWatch starts a runner that works check jobs: failures make a check
// DOWN after 3 (retries 10 ms apart), the sweep is left to the test, River polls every 20 ms.
func setupWatch(t *testing.T) *watchBundle { return setupWatchTuned(t, nil) }

// setupWatchTuned is setupWatch with the scheduler's configuration changed
// by tune. Notifications go out with retries 50 ms apart, at most 3 sends.
func setupWatchTuned(t *testing.T, tune func(*watch.ChecksConfig)) *watchBundle {
	t.Helper()
	return setupWatchWith(t, tune, nil)
}

// setupWatchWith is setupWatchTuned with the notifications' configuration
// changed by tuneNotify too.
func setupWatchWith(t *testing.T, tune func(*watch.ChecksConfig), tuneNotify func(*watch.NotificationsConfig)) *watchBundle {
	t.Helper()
	b := &watchBundle{schema: riverSchema(t, "watch"), db: dynamotest.NewDB(t), tune: tune, tuneNotify: tuneNotify}
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	b.events = &watch.Events{Broker: broker}
	b.fetch = safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, Timeout: time.Second})
	b.checks, b.runner = b.startRunner(t)
	b.svc = &watch.Service{Store: b.db, URLs: b.fetch, Scheduler: b.checks, Events: b.events, MinDelayMs: 100}
	return b
}

// startRunner starts one more worker process on the bundle's schema.
func (b *watchBundle) startRunner(t *testing.T) (*watch.Checks, *jobs.Runner) {
	t.Helper()
	ctx := context.Background()
	insert, err := jobs.NewInsertClient(pool, b.schema, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// The outbox sweep runs at start (it takes alerts older than the
	// default 30 s: none of a test's), then when a test calls it.
	ncfg := watch.NotificationsConfig{
		Store: b.db, River: insert, Poster: b.fetch, MaxAttempts: 3, RetryBackoff: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
		SweepInterval: time.Hour,
	}
	if b.tuneNotify != nil {
		b.tuneNotify(&ncfg)
	}
	notify := watch.NewNotifications(ncfg)
	cfg := watch.ChecksConfig{
		Store: b.db, River: insert, Fetch: b.fetch, Events: b.events, FailureThreshold: 3, RunTimeout: time.Second, RetryBackoff: 10 * time.Millisecond,
		SweepInterval: time.Hour, OverdueAfter: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler), Alerts: notify,
	}
	if b.tune != nil {
		b.tune(&cfg)
	}
	checks := watch.NewChecks(cfg)
	eng, err := judge.New(judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	r, err := jobs.New(jobs.Config{
		Pool: pool, Schema: b.schema, Store: b.db, Events: &jobs.Events{Broker: pubsub.NewMemory(pubsub.MemoryConfig{}), Store: b.db},
		Judge: eng, Work: true, MaxWorkers: 8, Plugins: []jobs.Plugin{checks, notify},
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	b.notify = notify
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Stop(stop)
	})
	return checks, r
}

func (b *watchBundle) create(t *testing.T, url string, delayMs int) *algoitny.Check {
	t.Helper()
	c, err := b.svc.Create(watchUser(), algoitny.CheckInput{URL: url, Type: algoitny.CheckAvailability, DelayMs: delayMs})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (b *watchBundle) get(t *testing.T, id string) *algoitny.Check {
	t.Helper()
	c, err := b.db.GetCheck(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkJobs returns the River jobs of check id in the given states.
func (b *watchBundle) checkJobs(t *testing.T, id string, states ...rivertype.JobState) []*rivertype.JobRow {
	t.Helper()
	res, err := b.runner.Client().JobList(context.Background(), river.NewJobListParams().Kinds(watch.CheckArgs{}.Kind()).States(states...).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	var out []*rivertype.JobRow
	for _, j := range res.Jobs {
		if bytes.Contains(j.EncodedArgs, []byte(id)) {
			out = append(out, j)
		}
	}
	return out
}

var liveStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}

func watchUser() context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{
		User: &algoitny.User{ID: "watcher", Email: "watcher@example.com"},
		Plan: &algoitny.Plan{Name: "Test", MaxChecks: 10, MinCheckDelayMs: 100},
	})
}

// quiet asserts that the target gets no request for d.
func quiet(t *testing.T, tg *watchTarget, d time.Duration, what string) {
	t.Helper()
	n := tg.count()
	time.Sleep(d)
	if got := tg.count(); got != n {
		t.Fatalf("%s: %d more requests", what, got-n)
	}
}

func TestCheckScheduler(t *testing.T) {
	t.Parallel()

	t.Run("Cadence", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		c := b.create(t, tg.URL, 200)
		// Runs go on: three of them, however slow the machine.
		algoitnytest.Eventually(t, time.Minute, "three runs", func() bool { return tg.count() >= 3 })
		hits := tg.times()
		in := len(hits)
		// About every 200 ms: never more runs than periods (no pile-up). How
		// many periods run is a matter of speed (a run later than a period
		// — River's polling, DynamoDB Local on a loaded machine — skips one,
		// never adds one), so the cadence itself is the bench's to measure.
		if periods := int(hits[in-1].Sub(hits[0])/(200*time.Millisecond)) + 1; in > periods+1 {
			t.Fatalf("%d runs in %d periods of 200 ms (hits %v)", in, periods, hits)
		}
		// A run whose request the target has answered may not have stored
		// its result yet (seen: 11 requests, 10 runs stored).
		var cur *algoitny.Check
		algoitnytest.Eventually(t, 30*time.Second, "every run the target saw stored", func() bool {
			cur = b.get(t, c.ID)
			return cur.Runs >= int64(in)
		})
		if off := cur.NextRunAt.Sub(*c.NextRunAt); off%(200*time.Millisecond) != 0 {
			t.Fatalf("next run is off the 200 ms grid by %v", off%(200*time.Millisecond))
		}
		if cur.LastResult == nil || cur.LastResult.Status != algoitny.CheckUp {
			t.Fatalf("check %+v", cur)
		}
		// Many Schedule calls still make one job.
		for range 5 {
			if err := b.checks.Schedule(context.Background(), cur); err != nil {
				t.Fatal(err)
			}
		}
		if jobs := b.checkJobs(t, c.ID, liveStates...); len(jobs) != 1 {
			t.Fatalf("%d live jobs for one check", len(jobs))
		}
	})

	t.Run("NoOverlappingRuns", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		b.startRunner(t) // a second worker process on the same queue
		tg := newWatchTarget(t)
		tg.set(http.StatusOK, 250*time.Millisecond) // slower than the delay
		c := b.create(t, tg.URL, 100)
		for range 5 { // and repeated scheduling from the API
			if err := b.checks.Schedule(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
		algoitnytest.Eventually(t, 30*time.Second, "5 runs", func() bool { return tg.count() >= 5 })
		if n := tg.maxConcurrent(); n != 1 {
			t.Fatalf("%d runs of one check at once", n)
		}
		hits := tg.times()
		for i := 1; i < len(hits); i++ {
			if gap := hits[i].Sub(hits[i-1]); gap < 250*time.Millisecond {
				t.Fatalf("run %d started %v after the previous one, which takes 250 ms", i, gap)
			}
		}
		// Missed periods were skipped, not queued: the plan is on the grid, within one period.
		cur := b.get(t, c.ID)
		if off := cur.NextRunAt.Sub(*c.NextRunAt); off%(100*time.Millisecond) != 0 || time.Until(*cur.NextRunAt) > 400*time.Millisecond {
			t.Fatalf("next run %v from now, %v off the grid", time.Until(*cur.NextRunAt), off%(100*time.Millisecond))
		}
	})

	t.Run("PausedDoesNotRun", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		c := b.create(t, tg.URL, 100)
		algoitnytest.Eventually(t, 30*time.Second, "2 runs", func() bool { return tg.count() >= 2 })
		if _, err := b.svc.Pause(watchUser(), c.ID); err != nil {
			t.Fatal(err)
		}
		// The job ends at its next wake-up (a run in flight finishes first).
		algoitnytest.Eventually(t, 30*time.Second, "the job to end", func() bool { return len(b.checkJobs(t, c.ID, liveStates...)) == 0 })
		quiet(t, tg, 600*time.Millisecond, "paused")
		if _, err := b.svc.Resume(watchUser(), c.ID); err != nil {
			t.Fatal(err)
		}
		n := tg.count()
		algoitnytest.Eventually(t, 30*time.Second, "runs after resume", func() bool { return tg.count() >= n+2 })
	})

	t.Run("DeletedStops", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		c := b.create(t, tg.URL, 100)
		algoitnytest.Eventually(t, 30*time.Second, "2 runs", func() bool { return tg.count() >= 2 })
		if err := b.svc.Delete(watchUser(), c.ID); err != nil {
			t.Fatal(err)
		}
		algoitnytest.Eventually(t, 30*time.Second, "the job to end", func() bool { return len(b.checkJobs(t, c.ID, liveStates...)) == 0 })
		quiet(t, tg, 600*time.Millisecond, "deleted")
		if res, err := b.db.ListCheckResults(context.Background(), c.ID, 10); err != nil || len(res) != 0 {
			t.Fatalf("results of a deleted check: %d %v", len(res), err)
		}
	})

	t.Run("DownKeepsRunningThenUp", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		tg.set(http.StatusInternalServerError, 0)
		c := b.create(t, tg.URL, 100)
		algoitnytest.Eventually(t, 30*time.Second, "DOWN", func() bool { return b.get(t, c.ID).State == algoitny.CheckStateDown })
		cur := b.get(t, c.ID)
		if !strings.Contains(cur.FailureReason, "3 failed runs") || !strings.Contains(cur.FailureReason, "HTTP 500") ||
			cur.NextRunAt == nil || cur.Status != algoitny.CheckActive || cur.LastResult.Attempts != 3 {
			t.Fatalf("down check %+v", cur)
		}
		// Still running (each run: one fetch and two retries).
		n := tg.count()
		algoitnytest.Eventually(t, 30*time.Second, "runs while DOWN", func() bool { return tg.count() >= n+3 })
		if jobs := b.checkJobs(t, c.ID, liveStates...); len(jobs) != 1 {
			t.Fatalf("%d live jobs of a DOWN check", len(jobs))
		}
		tg.set(http.StatusOK, 0)
		algoitnytest.Eventually(t, 30*time.Second, "UP again", func() bool {
			cur := b.get(t, c.ID)
			return cur.State == algoitny.CheckStateUp && cur.LastResult.Status == algoitny.CheckUp && cur.FailureReason == ""
		})
	})

	// A page that answers 200 without the keyword fails the run: a
	// KEYWORD check goes DOWN like any other, saying why, and a DOWN check
	// does not come UP on such a page.
	t.Run("KeywordGoesDown", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t) // answers "contest page"
		keyword := func(url, word string) *algoitny.Check {
			c, err := b.svc.Create(watchUser(), algoitny.CheckInput{URL: url, Type: algoitny.CheckKeyword, Keyword: word, DelayMs: 100})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := keyword(tg.URL, "registration open")
		algoitnytest.Eventually(t, 30*time.Second, "DOWN", func() bool { return b.get(t, c.ID).State == algoitny.CheckStateDown })
		cur := b.get(t, c.ID)
		if cur.ConsecutiveFailures < 3 || cur.LastResult.Status != algoitny.CheckDown || !strings.Contains(cur.FailureReason, "registration open") ||
			!strings.Contains(cur.LastResult.Error, "does not contain the keyword") {
			t.Fatalf("keyword check %+v, last result %+v", cur, cur.LastResult)
		}

		down := newWatchTarget(t)
		down.set(http.StatusServiceUnavailable, 0)
		d := keyword(down.URL, "registration open")
		algoitnytest.Eventually(t, 30*time.Second, "DOWN on 503", func() bool { return b.get(t, d.ID).State == algoitny.CheckStateDown })
		down.set(http.StatusOK, 0) // 200, still without the keyword
		n := b.get(t, d.ID).Runs
		algoitnytest.Eventually(t, 30*time.Second, "two more runs", func() bool { return b.get(t, d.ID).Runs >= n+2 })
		if cur := b.get(t, d.ID); cur.State != algoitny.CheckStateDown || cur.LastResult.HTTPStatus != 200 {
			t.Fatalf("a DOWN keyword check after a 200 without the keyword: %+v", cur)
		}
	})

	t.Run("SweepRevivesLegacyFailed", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		// As older versions left a check after too many failures.
		c := &algoitny.Check{UserID: "watcher", URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100,
			Status: algoitny.CheckFailed, FailureReason: "stopped after 5 failed runs in a row; last error: HTTP 500"}
		if err := b.db.CreateCheck(context.Background(), c, -1); err != nil {
			t.Fatal(err)
		}
		algoitnytest.Eventually(t, 30*time.Second, "the sweep to revive it", func() bool {
			if _, err := b.checks.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			return b.get(t, c.ID).Status == algoitny.CheckActive
		})
		algoitnytest.Eventually(t, 30*time.Second, "UP after a good run", func() bool {
			cur := b.get(t, c.ID)
			return cur.State == algoitny.CheckStateUp && tg.count() >= 1
		})
	})

	t.Run("SweepReschedulesLostChecks", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		// The runner's own sweep runs once when it becomes leader; let it
		// pass (the next one is an hour away) so that the test's Sweep is
		// the one that finds the lost check.
		algoitnytest.Eventually(t, 30*time.Second, "the start-up sweep", func() bool {
			res, err := b.runner.Client().JobList(context.Background(),
				river.NewJobListParams().Kinds(watch.CheckSweepArgs{}.Kind()).States(rivertype.JobStateCompleted))
			return err == nil && len(res.Jobs) > 0
		})
		// Stored without a job, as after a crash between the write and the insert.
		c := &algoitny.Check{UserID: "watcher", URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100, Status: algoitny.CheckActive}
		if err := b.db.CreateCheck(context.Background(), c, -1); err != nil {
			t.Fatal(err)
		}
		quiet(t, tg, 400*time.Millisecond, "without a job")
		n, err := b.checks.Sweep(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("sweep found %d (%v)", n, err)
		}
		algoitnytest.Eventually(t, 30*time.Second, "runs after the sweep", func() bool { return tg.count() >= 2 })
		// A check whose job is alive is not scheduled twice.
		if _, err := b.checks.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if jobs := b.checkJobs(t, c.ID, liveStates...); len(jobs) != 1 {
			t.Fatalf("%d live jobs", len(jobs))
		}
	})

	t.Run("SurvivesRestart", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		b.create(t, tg.URL, 100)
		algoitnytest.Eventually(t, 30*time.Second, "2 runs", func() bool { return tg.count() >= 2 })
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.runner.Stop(stop); err != nil {
			t.Fatal(err)
		}
		quiet(t, tg, time.Second, "stopped") // 5 periods missed
		// The check's job is in Postgres: a new process picks it up. The
		// periods missed while stopped are skipped, not made up in a burst.
		n := tg.count()
		b.startRunner(t)
		algoitnytest.Eventually(t, 30*time.Second, "runs after the restart", func() bool { return tg.count() >= n+4 })
		after := tg.times()[n:]
		burst := 0
		for _, h := range after {
			if h.Sub(after[0]) < 150*time.Millisecond {
				burst++
			}
		}
		if burst > 2 {
			t.Fatalf("%d runs within 150 ms of the restart: missed periods were made up (%v)", burst, after)
		}
	})

	t.Run("ResultsReachSubscribers", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		tg := newWatchTarget(t)
		c := b.create(t, tg.URL, 100)
		ctx, cancel := context.WithCancel(watchUser())
		defer cancel()
		events, err := b.svc.Subscribe(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		results := 0
		var lastSeq int64
		timeout := time.After(30 * time.Second)
		for results < 3 {
			select {
			case ev := <-events:
				if ev.Result == nil {
					continue
				}
				if ev.Result.Seq <= lastSeq {
					t.Fatalf("result %d after %d", ev.Result.Seq, lastSeq)
				}
				lastSeq = ev.Result.Seq
				results++
			case <-timeout:
				t.Fatalf("%d results in 30 s", results)
			}
		}
	})
}
