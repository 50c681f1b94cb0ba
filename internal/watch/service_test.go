package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
)

// scheduler records what the service asked to schedule.
type scheduler struct {
	mu  sync.Mutex
	ids []string
}

func (s *scheduler) Schedule(_ context.Context, c *algoitny.Check) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, c.ID)
	return nil
}

func (s *scheduler) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// alerter keeps the notifications of the alerts it is given.
type alerter struct {
	mu      sync.Mutex
	changes []algoitny.CheckNotification
}

func (a *alerter) Alert(_ context.Context, al *algoitny.CheckAlert) error {
	var n algoitny.CheckNotification
	if err := json.Unmarshal(al.Payload, &n); err != nil {
		return err
	}
	// The payload names the check by its global id, as the API does.
	if al.ID == "" || n.State != al.State || n.CheckID != algoitny.GlobalID("Check", al.CheckID) {
		return fmt.Errorf("alert %+v does not match its payload %+v", al, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.changes = append(a.changes, n)
	return nil
}

func (a *alerter) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.changes)
}

// fixture is a service, an executor and their store.
type fixture struct {
	db    *dynamo.DB
	svc   *watch.Service
	exec  *watch.Executor
	sched *scheduler
	clock *clock
}

// setup builds a service on fresh tables. Test servers are allow-listed
// (127.0.0.1) only when allowLocal is set.
func setup(t *testing.T, allowLocal bool) fixture {
	t.Helper()
	db := newDB(t)
	var allow []string
	if allowLocal {
		allow = []string{"127.0.0.1"}
	}
	client := safehttp.New(safehttp.Config{AllowHosts: allow, Timeout: 500 * time.Millisecond})
	broker := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(broker.Close)
	events := &watch.Events{Broker: broker}
	sched := &scheduler{}
	clk := newClock()
	return fixture{
		db: db, sched: sched, clock: clk,
		svc: &watch.Service{Store: db, URLs: client, Scheduler: sched, Events: events, MinDelayMs: 100},
		exec: &watch.Executor{Store: db, Prober: &watch.Prober{Fetch: client, Timeout: 500 * time.Millisecond}, Events: events,
			FailureThreshold: 3, ResultsKept: 5, Now: clk.Now},
	}
}

// run advances the executor's clock past the check's next run and runs it.
func (f fixture) run(t *testing.T, id string) watch.Outcome {
	t.Helper()
	c := algoitnytest.Must[*algoitny.Check](t)(f.db.GetCheck(context.Background(), id))
	if c.NextRunAt != nil && c.NextRunAt.After(f.clock.Now()) {
		f.clock.Add(c.NextRunAt.Sub(f.clock.Now()))
	}
	out, err := f.exec.RunDue(context.Background(), id)
	algoitnytest.OK(t, err)
	return out
}

func TestService(t *testing.T) {
	t.Parallel()
	anon := context.Background()

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		_, err := f.svc.Create(anon, algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability})
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = f.svc.List(anon, algoitny.PageRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = f.svc.Get(anon, "x")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
		_, err = f.svc.Subscribe(anon, "x")
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})

	t.Run("OwnChecksOnly", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		alice, bob := as("alice", testPlan()), as("bob", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(alice, algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 1000}))
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(bob, algoitny.CheckInput{URL: "https://example.org/", Type: algoitny.CheckAvailability, DelayMs: 1000}))
		if _, err := f.svc.Get(bob, c.ID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Fatalf("bob read alice's check: %v", err)
		}
		delay := 5000
		_, err := f.svc.Update(bob, c.ID, algoitny.CheckUpdate{DelayMs: &delay})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = f.svc.Pause(bob, c.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = f.svc.Resume(bob, c.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		algoitnytest.ErrCode(t, f.svc.Delete(bob, c.ID), algoitny.ENOTFOUND)
		_, err = f.svc.RecentResults(bob, c.ID, 10)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = f.svc.Subscribe(bob, c.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		if p := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(f.svc.List(bob, algoitny.PageRequest{})); len(p.Items) != 1 || p.Items[0].UserID != "bob" {
			t.Fatalf("bob's list %+v", p.Items)
		}
		// Staff see everyone's checks, and list them by type and status.
		staff := asStaff("root")
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Get(staff, c.ID))
		active := algoitny.CheckActive
		all := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(f.svc.ListAll(staff, algoitny.CheckFilter{Type: algoitny.CheckAvailability, Status: &active}, algoitny.PageRequest{}))
		if len(all.Items) != 2 {
			t.Fatalf("staff list: %d", len(all.Items))
		}
		_, err = f.svc.ListAll(alice, algoitny.CheckFilter{Type: algoitny.CheckAvailability}, algoitny.PageRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
		_, err = f.svc.ListAll(staff, algoitny.CheckFilter{Type: "HTTP2"}, algoitny.PageRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		f := setup(t, false) // allow-list off: nothing local may be watched
		u := as("u", testPlan())
		for _, tc := range []struct {
			name  string
			in    algoitny.CheckInput
			field string
		}{
			{"NoURL", algoitny.CheckInput{Type: algoitny.CheckAvailability}, "url"},
			{"NotHTTP", algoitny.CheckInput{URL: "ftp://example.com/", Type: algoitny.CheckAvailability}, "url"},
			{"Credentials", algoitny.CheckInput{URL: "https://me:pw@example.com/", Type: algoitny.CheckAvailability}, "url"},
			{"Loopback", algoitny.CheckInput{URL: "http://127.0.0.1/", Type: algoitny.CheckAvailability}, "url"},
			{"LoopbackName", algoitny.CheckInput{URL: "http://localhost/", Type: algoitny.CheckAvailability}, "url"},
			{"Private", algoitny.CheckInput{URL: "http://10.0.0.1/admin", Type: algoitny.CheckAvailability}, "url"},
			{"Metadata", algoitny.CheckInput{URL: "http://169.254.169.254/latest/meta-data/", Type: algoitny.CheckAvailability}, "url"},
			{"IPv6Loopback", algoitny.CheckInput{URL: "http://[::1]/", Type: algoitny.CheckAvailability}, "url"},
			{"OddPort", algoitny.CheckInput{URL: "http://example.com:6379/", Type: algoitny.CheckAvailability}, "url"},
			{"UnknownType", algoitny.CheckInput{URL: "https://example.com/", Type: "PING"}, "type"},
			{"KeywordMissing", algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckKeyword}, "keyword"},
			{"KeywordOnAvailability", algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, Keyword: "x"}, "keyword"},
			{"InvertOnAvailability", algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, Invert: true}, "invert"},
			{"DelayBelowPlan", algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 99}, "delayMs"},
			{"DelayAboveDay", algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: watch.MaxDelayMs + 1}, "delayMs"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				_, err := f.svc.Create(u, tc.in)
				algoitnytest.ErrCode(t, err, algoitny.EINVALID)
				if field := err.(*algoitny.Error).Field; field != tc.field {
					t.Fatalf("field %q, want %q", field, tc.field)
				}
			})
		}
	})

	t.Run("Defaults", func(t *testing.T) {
		t.Parallel()
		f := setup(t, false)
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("u", testPlan()), algoitny.CheckInput{URL: " https://example.com/contest ", Type: "keyword", Keyword: " Register "}))
		if c.URL != "https://example.com/contest" || c.Type != algoitny.CheckKeyword || c.Keyword != "Register" || c.DelayMs != watch.DefaultDelayMs ||
			c.Status != algoitny.CheckActive || c.NextRunAt == nil || f.sched.count() != 1 {
			t.Fatalf("created %+v", c)
		}
		// The plan's minimum applies when it is longer than the default.
		slow := &algoitny.Plan{MaxChecks: 1, MinCheckDelayMs: 10 * 60_000}
		c = algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("v", slow), algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability}))
		if c.DelayMs != 10*60_000 {
			t.Fatalf("delay %d", c.DelayMs)
		}
	})

	t.Run("LimitExactUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		f := setup(t, false)
		u := as("u", testPlan()) // MaxChecks 5
		const callers = 20
		var mu sync.Mutex
		created, limited := 0, 0
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				_, err := f.svc.Create(u, algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 1000})
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					created++
				case algoitny.ERATELIMITED:
					limited++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if created != 5 || limited != 15 {
			t.Fatalf("created %d, rate limited %d; want 5 and 15", created, limited)
		}
		_, err := f.svc.Create(u, algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 1000})
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		if rl := err.(*algoitny.Error).RateLimit; rl.Limit != 5 || rl.Used != 5 {
			t.Fatalf("rate limit %+v", rl)
		}
		// Deleting one frees a slot.
		list := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(f.svc.List(u, algoitny.PageRequest{}))
		algoitnytest.OK(t, f.svc.Delete(u, list.Items[0].ID))
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 1000}))
		// No plan, no checks; staff are exempt from their plan's limits but not from the floor.
		_, err = f.svc.Create(as("noplan", nil), algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability})
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		for range 3 {
			algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(asStaff("root"), algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 100}))
		}
		_, err = f.svc.Create(asStaff("root"), algoitny.CheckInput{URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 50})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("UpdatePauseResume", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		tg := newTarget(t)
		u := as("u", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "hello", Invert: true, DelayMs: 1000}))
		f.run(t, c.ID)
		// Changing the type to AVAILABILITY drops the keyword.
		avail := algoitny.CheckAvailability
		upd := algoitnytest.Must[*algoitny.Check](t)(f.svc.Update(u, c.ID, algoitny.CheckUpdate{Type: &avail}))
		if upd.Type != algoitny.CheckAvailability || upd.Keyword != "" || upd.Invert || upd.Version <= c.Version || upd.Runs != 1 {
			t.Fatalf("updated %+v", upd)
		}
		// An edit never plans a run sooner than the delay after the last one.
		if upd.NextRunAt.Before(upd.LastExecutedAt.Add(time.Second)) {
			t.Fatalf("next run %v, last run %v", upd.NextRunAt, upd.LastExecutedAt)
		}
		tooFast, private := 10, "http://192.168.0.1/"
		_, err := f.svc.Update(u, c.ID, algoitny.CheckUpdate{DelayMs: &tooFast})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		f.svc.URLs = safehttp.New(safehttp.Config{}) // allow-list off from here on
		_, err = f.svc.Update(u, c.ID, algoitny.CheckUpdate{URL: &private})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		// The URL is not checked again when it does not change.
		d := 2000
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Update(u, c.ID, algoitny.CheckUpdate{DelayMs: &d}))

		paused := algoitnytest.Must[*algoitny.Check](t)(f.svc.Pause(u, c.ID))
		if paused.Status != algoitny.CheckPaused || paused.NextRunAt != nil {
			t.Fatalf("paused %+v", paused)
		}
		again := algoitnytest.Must[*algoitny.Check](t)(f.svc.Pause(u, c.ID))
		if again.Version != paused.Version {
			t.Fatal("pausing a paused check changed it")
		}
		if out := f.run(t, c.ID); out.Ran || out.Next != nil {
			t.Fatalf("a paused check ran: %+v", out)
		}
		scheduled := f.sched.count()
		resumed := algoitnytest.Must[*algoitny.Check](t)(f.svc.Resume(u, c.ID))
		if resumed.Status != algoitny.CheckActive || resumed.NextRunAt == nil || f.sched.count() != scheduled+1 {
			t.Fatalf("resumed %+v", resumed)
		}
		if out := f.run(t, c.ID); !out.Ran {
			t.Fatalf("a resumed check did not run: %+v", out)
		}
	})

	t.Run("RecentResults", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true) // the executor keeps 5 results
		tg := newTarget(t)
		u := as("u", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		for i := range 8 {
			if i == 7 {
				tg.set(500, "", 0)
			}
			if out := f.run(t, c.ID); !out.Ran {
				t.Fatalf("run %d did not happen", i)
			}
		}
		res := algoitnytest.Must[[]*algoitny.CheckResult](t)(f.svc.RecentResults(u, c.ID, 0))
		if len(res) != 5 || res[0].Seq != 8 || res[4].Seq != 4 || res[0].Status != algoitny.CheckDown || res[1].Status != algoitny.CheckUp {
			t.Fatalf("results %+v", res)
		}
		for i := 1; i < len(res); i++ {
			if res[i].CheckedAt.After(res[i-1].CheckedAt) {
				t.Fatal("not newest first")
			}
		}
		if two := algoitnytest.Must[[]*algoitny.CheckResult](t)(f.svc.RecentResults(u, c.ID, 2)); len(two) != 2 {
			t.Fatalf("%d results for limit 2", len(two))
		}
		_, err := f.svc.RecentResults(u, c.ID, -1)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		_, err = f.svc.RecentResults(u, c.ID, watch.DefaultResultsKept+1)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("Subscribe", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		tg := newTarget(t)
		u := as("u", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		ctx, cancel := context.WithCancel(u)
		defer cancel()
		events := algoitnytest.Must[<-chan *algoitny.CheckEvent](t)(f.svc.Subscribe(ctx, c.ID))
		next := func() *algoitny.CheckEvent {
			t.Helper()
			select {
			case ev, open := <-events:
				if !open {
					t.Fatal("subscription ended")
				}
				return ev
			case <-time.After(30 * time.Second):
				t.Fatal("no event")
			}
			return nil
		}
		if first := next(); first.Check.ID != c.ID || first.Result != nil || first.Check.Version != c.Version {
			t.Fatalf("first event %+v", first)
		}
		// An event older than the current state is not delivered.
		f.svc.Events.Publish(u, &algoitny.CheckEvent{Check: c})
		f.run(t, c.ID)
		if ev := next(); ev.Result == nil || ev.Result.Status != algoitny.CheckUp || ev.Check.LastResult == nil || ev.Check.Runs != 1 {
			t.Fatalf("result event %+v", ev)
		}
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Pause(u, c.ID))
		if ev := next(); ev.Check.Status != algoitny.CheckPaused || ev.Result != nil {
			t.Fatalf("pause event %+v", ev)
		}
		algoitnytest.OK(t, f.svc.Delete(u, c.ID))
		if ev := next(); !ev.Deleted {
			t.Fatalf("delete event %+v", ev)
		}
		if _, open := <-events; open {
			t.Fatal("the subscription outlived the check")
		}
	})
}

func TestExecutor(t *testing.T) {
	t.Parallel()

	t.Run("DownAfterThresholdThenUp", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true) // threshold 3
		tg := newTarget(t)
		u := as("u", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		if c.State != algoitny.CheckStateUnknown {
			t.Fatalf("new check state %s", c.State)
		}
		tg.set(500, "", 0)
		if out := f.run(t, c.ID); out.Check.State != algoitny.CheckStateUnknown || out.StateChange != nil {
			t.Fatalf("one failure: %+v", out.Check)
		}
		tg.set(200, "", 0) // a good run resets the count and makes it UP, silently
		if out := f.run(t, c.ID); out.Check.State != algoitny.CheckStateUp || out.StateChange != nil {
			t.Fatalf("first good run: %s %+v", out.Check.State, out.StateChange)
		}
		tg.set(500, "", 0)
		for i := range 3 {
			out := f.run(t, c.ID)
			if !out.Ran || out.Check.ConsecutiveFailures != i+1 || out.Next == nil || out.Check.Status != algoitny.CheckActive {
				t.Fatalf("run %d: %+v", i, out.Check)
			}
			if (out.StateChange != nil) != (i == 2) {
				t.Fatalf("run %d: change %+v", i, out.StateChange)
			}
		}
		got := algoitnytest.Must[*algoitny.Check](t)(f.svc.Get(u, c.ID))
		if got.State != algoitny.CheckStateDown || got.Status != algoitny.CheckActive || got.FailureReason != "3 failed runs in a row; last error: HTTP 500" {
			t.Fatalf("after 3 failures: %s %s %q", got.Status, got.State, got.FailureReason)
		}
		// DOWN keeps running, each further failure doubling the delay.
		prev := *got.NextRunAt
		for i, want := range []time.Duration{400 * time.Millisecond, 800 * time.Millisecond} {
			out := f.run(t, c.ID)
			if !out.Ran || out.StateChange != nil || out.Check.State != algoitny.CheckStateDown {
				t.Fatalf("down run %d: %+v", i, out)
			}
			if gap := out.Next.Sub(prev); gap != want {
				t.Fatalf("down run %d: next run %v after the previous plan, want %v", i, gap, want)
			}
			prev = *out.Next
		}
		tg.set(200, "", 0)
		out := f.run(t, c.ID)
		if out.StateChange == nil || out.StateChange.From != algoitny.CheckStateDown || out.StateChange.To != algoitny.CheckStateUp ||
			out.Check.State != algoitny.CheckStateUp || out.Check.FailureReason != "" || out.StateChange.Reason != "the page answered HTTP 200" {
			t.Fatalf("recovery: %+v %+v", out.Check, out.StateChange)
		}
		if gap := out.Next.Sub(prev); gap != 100*time.Millisecond {
			t.Fatalf("after recovery the next run is %v after the previous plan, want the check's 100 ms", gap)
		}
	})

	t.Run("MaintenanceSilences", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true) // threshold 3
		alerts := &alerter{}
		f.exec.Alerts = alerts
		tg := newTarget(t)
		u := as("u", testPlan())
		now := f.clock.Now()
		window := algoitny.MaintenanceWindow{Start: now.Add(-time.Minute), End: now.Add(time.Minute)}
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100,
			Maintenance: []algoitny.MaintenanceWindow{window}}))
		if len(c.Maintenance) != 1 {
			t.Fatalf("windows %+v", c.Maintenance)
		}
		tg.set(500, "", 0)
		var out watch.Outcome
		for range 3 {
			out = f.run(t, c.ID)
		}
		// Recorded and published, not notified.
		if out.Check.State != algoitny.CheckStateDown || out.StateChange == nil || !out.StateChange.InMaintenance || alerts.count() != 0 {
			t.Fatalf("DOWN in maintenance: %+v, %d alerts", out.StateChange, alerts.count())
		}
		// After the window, recovery is notified.
		f.clock.Add(2 * time.Minute)
		tg.set(200, "", 0)
		out = f.run(t, c.ID)
		if out.StateChange == nil || out.StateChange.InMaintenance || alerts.count() != 1 {
			t.Fatalf("UP after maintenance: %+v, %d alerts", out.StateChange, alerts.count())
		}
		// Windows are validated, and replacing them alone leaves the check as it is.
		bad := []algoitny.MaintenanceWindow{{Start: now, End: now}}
		if _, err := f.svc.Update(u, c.ID, algoitny.CheckUpdate{Maintenance: &bad}); !algoitny.IsCode(err, algoitny.EINVALID) {
			t.Fatalf("empty window: %v", err)
		}
		none := []algoitny.MaintenanceWindow{}
		before := algoitnytest.Must[*algoitny.Check](t)(f.svc.Get(u, c.ID))
		after := algoitnytest.Must[*algoitny.Check](t)(f.svc.Update(u, c.ID, algoitny.CheckUpdate{Maintenance: &none}))
		if len(after.Maintenance) != 0 || !after.NextRunAt.Equal(*before.NextRunAt) || after.State != algoitny.CheckStateUp {
			t.Fatalf("windows removed: %+v", after)
		}
	})

	t.Run("SilencedChangeAnnouncedAfterTheWindow", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true) // threshold 3
		alerts := &alerter{}
		f.exec.Alerts = alerts
		tg := newTarget(t)
		u := as("u", testPlan())
		now := f.clock.Now()
		window := []algoitny.MaintenanceWindow{{Start: now.Add(-time.Minute), End: now.Add(time.Minute)}}
		create := func() *algoitny.Check {
			return algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100, Maintenance: window}))
		}
		stored := func(id string) *algoitny.Check {
			return algoitnytest.Must[*algoitny.Check](t)(f.db.GetCheck(context.Background(), id))
		}
		// DOWN inside the window: silenced, and remembered as such.
		down, flapping := create(), create()
		tg.set(500, "", 0)
		for range 3 {
			f.run(t, down.ID)
			f.run(t, flapping.ID)
		}
		if s := stored(down.ID).Silenced; alerts.count() != 0 || s == nil || s.To != algoitny.CheckStateDown {
			t.Fatalf("DOWN in the window: %d alerts, silenced %+v", alerts.count(), s)
		}
		// flapping comes back inside the window: nothing left to tell.
		tg.set(200, "", 0)
		if out := f.run(t, flapping.ID); out.Check.State != algoitny.CheckStateUp || stored(flapping.ID).Silenced != nil {
			t.Fatalf("UP again in the window: %+v, silenced %+v", out.Check.State, stored(flapping.ID).Silenced)
		}
		// After the window, still DOWN: announced once, by the first run.
		f.clock.Add(2 * time.Minute)
		tg.set(500, "", 0)
		out := f.run(t, down.ID)
		if out.StateChange != nil || alerts.count() != 1 {
			t.Fatalf("the first run after the window: %+v, %d alerts", out.StateChange, alerts.count())
		}
		late := alerts.changes[0]
		if late.State != algoitny.CheckStateDown || !strings.Contains(late.Reason, "maintenance window") {
			t.Fatalf("announced %+v", late)
		}
		if stored(down.ID).Silenced != nil {
			t.Fatal("still silenced after the announcement")
		}
		f.run(t, down.ID)
		tg.set(200, "", 0)
		f.run(t, flapping.ID)
		if alerts.count() != 1 {
			t.Fatalf("%d alerts: a second announcement, or flapping's cancelled change told", alerts.count())
		}
	})

	t.Run("RetriesBeforeAFailedRun", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		f.exec.Prober.Retries, f.exec.Prober.RetryBackoff = 2, 10*time.Millisecond
		tg := newTarget(t)
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("u", testPlan()), algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		tg.set(503, "", 0)
		out := f.run(t, c.ID)
		if out.Result.Attempts != 3 || tg.hits.Load() != 3 || out.Check.ConsecutiveFailures != 1 {
			t.Fatalf("failing run: %d attempts, %d hits, %d failures", out.Result.Attempts, tg.hits.Load(), out.Check.ConsecutiveFailures)
		}
		tg.set(200, "", 0)
		if out := f.run(t, c.ID); out.Result.Attempts != 1 || tg.hits.Load() != 4 {
			t.Fatalf("good run: %d attempts", out.Result.Attempts)
		}
		res := algoitnytest.Must[[]*algoitny.CheckResult](t)(f.db.ListCheckResults(context.Background(), c.ID, 2))
		if res[0].Attempts != 1 || res[1].Attempts != 3 {
			t.Fatalf("stored attempts %d %d", res[0].Attempts, res[1].Attempts)
		}
	})

	t.Run("KeywordMismatchIsAFailure", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true) // threshold 3
		alerts := &alerter{}
		f.exec.Alerts = alerts
		tg := newTarget(t)
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("u", testPlan()), algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckKeyword, Keyword: "open", DelayMs: 100}))
		// The page answers 200 without the keyword: each run fails, and the
		// third in a row makes the check DOWN, with a reason and an alert.
		var out watch.Outcome
		for i := range 3 {
			out = f.run(t, c.ID)
			if out.Result.Status != algoitny.CheckDown || out.Result.Error == "" || out.Check.ConsecutiveFailures != i+1 {
				t.Fatalf("run %d: %+v %+v", i+1, out.Result, out.Check)
			}
		}
		if out.Check.State != algoitny.CheckStateDown || !strings.Contains(out.Check.FailureReason, "keyword") || alerts.count() != 1 {
			t.Fatalf("after 3 runs: %+v, %d alerts", out.Check, alerts.count())
		}
		// The keyword back: UP again, told once more.
		tg.set(200, "registration is open", 0)
		out = f.run(t, c.ID)
		if out.Check.State != algoitny.CheckStateUp || out.Check.ConsecutiveFailures != 0 || alerts.count() != 2 {
			t.Fatalf("keyword back: %+v, %d alerts", out.Check, alerts.count())
		}
	})

	t.Run("RefusedDestinationDownAtOnce", func(t *testing.T) {
		t.Parallel()
		f := setup(t, false)
		name := loopbackName(t)
		u := as("u", testPlan())
		// The URL check cannot know what a name resolves to: it is accepted...
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: "http://" + name + "/", Type: algoitny.CheckAvailability, DelayMs: 100}))
		// ...and refused when the run connects.
		out := f.run(t, c.ID)
		if !out.Ran || out.Next == nil || out.Check.Status != algoitny.CheckActive || out.Check.State != algoitny.CheckStateDown ||
			out.Check.FailureReason != watch.ErrForbidden.Message || out.StateChange == nil {
			t.Fatalf("%+v", out.Check)
		}
		// It keeps running, at a slower pace.
		if gap := out.Next.Sub(*c.NextRunAt); gap != 200*time.Millisecond {
			t.Fatalf("next run %v after a refused one", gap)
		}
	})

	t.Run("GridWithoutDrift", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		tg := newTarget(t)
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("u", testPlan()), algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		first := *c.NextRunAt
		// Runs happen late, one of them very late: the plan stays on the
		// 100 ms grid of the first run and the missed runs are skipped.
		for _, late := range []time.Duration{30 * time.Millisecond, 5 * time.Millisecond, 350 * time.Millisecond} {
			f.clock.Add(late)
			out := f.run(t, c.ID)
			if !out.Ran {
				t.Fatal("did not run")
			}
			off := out.Next.Sub(first)
			if off%(100*time.Millisecond) != 0 || !out.Next.After(f.clock.Now()) || out.Next.Sub(f.clock.Now()) > 100*time.Millisecond {
				t.Fatalf("next run at +%v (now +%v)", off, f.clock.Now().Sub(first))
			}
		}
		// Not due yet: nothing runs.
		out, err := f.exec.RunDue(context.Background(), c.ID)
		algoitnytest.OK(t, err)
		if out.Ran || out.Next == nil {
			t.Fatalf("early wake-up: %+v", out)
		}
	})

	t.Run("EditDuringRunDropsTheResult", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		// The fetch waits as long as the test holds it: the fixture's client
		// gives up after 500 ms, and on a loaded machine the edit below came
		// later than that, after the run had recorded its timeout.
		f.exec.Prober.Timeout = time.Minute
		f.exec.Prober.Fetch = safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, Timeout: time.Minute})
		// The target answers only when the test lets it.
		var hits atomic.Int64
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hits.Add(1) == 1 {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		}))
		t.Cleanup(srv.Close)
		u := as("u", testPlan())
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(u, algoitny.CheckInput{URL: srv.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		// The check is due when the service planned it (real time): the
		// executor's clock, read at setup, is moved there, or on a loaded
		// machine the run would find it not due yet and fetch nothing.
		if next := c.NextRunAt; next != nil && next.After(f.clock.Now()) {
			f.clock.Add(next.Sub(f.clock.Now()))
		}
		done := make(chan watch.Outcome, 1)
		go func() {
			out, err := f.exec.RunDue(context.Background(), c.ID)
			if err != nil {
				t.Error(err)
			}
			done <- out
		}()
		algoitnytest.Eventually(t, 10*time.Second, "the run to reach the target", func() bool { return hits.Load() > 0 })
		// A second wake-up while the run holds the lease runs nothing.
		if out, err := f.exec.RunDue(context.Background(), c.ID); err != nil || out.Ran || out.Next == nil {
			t.Fatalf("overlapping run: %+v %v", out, err)
		}
		d := 500
		algoitnytest.Must[*algoitny.Check](t)(f.svc.Update(u, c.ID, algoitny.CheckUpdate{DelayMs: &d}))
		close(release)
		out := <-done
		if out.Ran || out.Check == nil || out.Check.DelayMs != 500 || out.Check.Runs != 0 {
			t.Fatalf("run across an edit: %+v", out)
		}
		if hits.Load() != 1 {
			t.Fatalf("%d fetches", hits.Load())
		}
		// The lease was given back: the next run need not wait for it.
		if out := f.run(t, c.ID); !out.Ran {
			t.Fatalf("%+v", out)
		}
	})
}
