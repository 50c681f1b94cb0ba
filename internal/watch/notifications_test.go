package watch_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/watch"
)

// receiver is a webhook endpoint of the test: it verifies each body's
// signature with the secret it is given, answers the statuses it is told
// (then 204), and keeps the notifications it accepted.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	answers  []int // statuses of the next requests; 204 once used up
	got      []algoitny.CheckNotification
	requests int
	badSigs  int
	// deliveries counts the requests of each delivery id (every attempt).
	deliveries map[string]int
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	t.Helper()
	rc := &receiver{answers: answers, deliveries: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.requests++
		delivery, err := watch.Verify(rc.secret, r.Header, body, time.Now())
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || err != nil {
			rc.badSigs++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.deliveries[delivery]++
		if len(rc.answers) > 0 {
			status := rc.answers[0]
			rc.answers = rc.answers[1:]
			w.WriteHeader(status)
			return
		}
		var n algoitny.CheckNotification
		if err := json.Unmarshal(body, &n); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.got = append(rc.got, n)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) setSecret(s string) { rc.mu.Lock(); rc.secret = s; rc.mu.Unlock() }

func (rc *receiver) notifications() []algoitny.CheckNotification {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]algoitny.CheckNotification(nil), rc.got...)
}

// subscribe creates a webhook to rc for the test user and gives rc its secret.
func (b *watchBundle) subscribe(t *testing.T, rc *receiver) *algoitny.NotificationChannel {
	t.Helper()
	ch, err := b.svc.CreateWebhook(watchUser(), rc.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Secret) < 32 {
		t.Fatalf("secret %q", ch.Secret)
	}
	rc.setSecret(ch.Secret)
	return ch
}

// flaky is a check target that fails its first n requests with HTTP 500.
func flaky(t *testing.T, n int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		fail := hits <= n
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCheckNotifications(t *testing.T) {
	t.Parallel()

	// The "done when": a URL check that fails 6 times and recovers
	// produces DOWN then UP notifications to a webhook receiver, signed.
	t.Run("DownThenUpToWebhook", func(t *testing.T) {
		t.Parallel()
		b := setupWatchTuned(t, func(c *watch.ChecksConfig) { c.FailureThreshold, c.Retries = watch.DefaultFailureThreshold, -1 })
		rc := newReceiver(t)
		ch := b.subscribe(t, rc)
		target := flaky(t, 6)
		c := b.create(t, target.URL, 100)
		algoitnytest.Eventually(t, 60*time.Second, "DOWN and UP notifications", func() bool { return len(rc.notifications()) >= 2 })
		got := rc.notifications()
		if len(got) != 2 || got[0].State != algoitny.CheckStateDown || got[1].State != algoitny.CheckStateUp {
			t.Fatalf("notifications %+v", got)
		}
		if got[0].CheckID != algoitny.GlobalID("Check", c.ID) || got[0].URL != target.URL || got[0].PreviousState != algoitny.CheckStateUnknown ||
			got[0].Reason != "5 failed runs in a row; last error: HTTP 500" || got[0].Time.IsZero() {
			t.Fatalf("DOWN notification %+v", got[0])
		}
		if got[1].PreviousState != algoitny.CheckStateDown || got[1].Reason != "the page answered HTTP 200" || !got[1].Time.After(got[0].Time) {
			t.Fatalf("UP notification %+v", got[1])
		}
		if rc.badSigs != 0 {
			t.Fatalf("%d requests with a bad signature", rc.badSigs)
		}
		cur := b.get(t, c.ID)
		if cur.State != algoitny.CheckStateUp || cur.Runs < 7 {
			t.Fatalf("check %s after %d runs", cur.State, cur.Runs)
		}
		log, err := b.svc.Deliveries(watchUser(), ch.ID, algoitny.PageRequest{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(log.Items) != 2 || log.Items[0].State != algoitny.CheckStateUp || log.Items[1].State != algoitny.CheckStateDown {
			t.Fatalf("delivery log %+v", log.Items)
		}
		for _, d := range log.Items {
			if d.Status != algoitny.DeliveryDelivered || d.Attempts != 1 {
				t.Fatalf("delivery %+v", d)
			}
		}
	})

	t.Run("FailingWebhookRetriedAndLogged", func(t *testing.T) {
		t.Parallel()
		b := setupWatchTuned(t, func(c *watch.ChecksConfig) { c.Retries = -1 })
		good := newReceiver(t, http.StatusInternalServerError, http.StatusBadGateway) // fails twice, then accepts
		bad := newReceiver(t, 500, 500, 500, 500, 500, 500, 500)                      // fails every attempt
		goodCh, badCh := b.subscribe(t, good), b.subscribe(t, bad)
		b.create(t, flaky(t, 3).URL, 100) // DOWN after 3, then UP: two notifications each
		algoitnytest.Eventually(t, 60*time.Second, "both notifications after retries", func() bool { return len(good.notifications()) == 2 })
		deliveries := func(ch *algoitny.NotificationChannel) []*algoitny.NotificationDelivery {
			log, err := b.svc.Deliveries(watchUser(), ch.ID, algoitny.PageRequest{First: 10})
			if err != nil {
				t.Fatal(err)
			}
			return log.Items
		}
		algoitnytest.Eventually(t, 60*time.Second, "the failing channel's deliveries to settle", func() bool {
			ds := deliveries(badCh)
			return len(ds) == 2 && ds[0].Status != algoitny.DeliveryPending && ds[1].Status != algoitny.DeliveryPending
		})
		// Two sends failed (500, then 502) before the receiver accepted:
		// four sends in all, the log keeping each retried one's last error.
		ds := deliveries(goodCh)
		attempts, retried := 0, 0
		for _, d := range ds {
			if d.Status != algoitny.DeliveryDelivered {
				t.Fatalf("good channel delivery %+v", d)
			}
			attempts += d.Attempts
			if d.Attempts > 1 {
				retried++
				if d.LastError != "HTTP 502" && d.LastError != "HTTP 500" {
					t.Fatalf("retried delivery's last error %q", d.LastError)
				}
			}
		}
		if len(ds) != 2 || attempts != 4 || retried == 0 {
			t.Fatalf("good channel: %d deliveries, %d attempts", len(ds), attempts)
		}
		// Every attempt of a delivery carried its id, for the receiver to
		// drop a copy it already has.
		good.mu.Lock()
		for _, d := range ds {
			if good.deliveries[d.ID] != d.Attempts {
				t.Errorf("delivery %s: %d attempts logged, %d requests with its id (%v)", d.ID, d.Attempts, good.deliveries[d.ID], good.deliveries)
			}
		}
		good.mu.Unlock()
		for _, d := range deliveries(badCh) {
			if d.Status != algoitny.DeliveryFailed || d.Attempts != 3 || d.LastError != "HTTP 500" {
				t.Fatalf("bad channel delivery %+v", d)
			}
		}
		if good.badSigs+bad.badSigs != 0 {
			t.Fatal("bad signatures")
		}
	})

	// A process that dies between the run's transaction and the queueing of
	// its deliveries leaves the alert in the outbox; the sweep sends it, once,
	// however many times it is dispatched.
	t.Run("AlertLeftByACrashIsSwept", func(t *testing.T) {
		t.Parallel()
		b := setupWatchTuned(t, func(c *watch.ChecksConfig) { c.Retries, c.Alerts = -1, crashedAlerter{} })
		ctx := context.Background()
		rcs := []*receiver{newReceiver(t), newReceiver(t)}
		chs := []*algoitny.NotificationChannel{b.subscribe(t, rcs[0]), b.subscribe(t, rcs[1])}
		c := b.create(t, flaky(t, 1_000_000).URL, 100)
		algoitnytest.Eventually(t, 60*time.Second, "the check DOWN", func() bool { return b.get(t, c.ID).State == algoitny.CheckStateDown })
		alerts, err := b.db.ListCheckAlerts(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(alerts) != 1 || alerts[0].CheckID != c.ID || alerts[0].State != algoitny.CheckStateDown || alerts[0].ID == "" {
			t.Fatalf("outbox %+v: want the DOWN alert the crash left", alerts)
		}
		if n, err := b.notify.SweepOlderThan(ctx, 0); err != nil || n != 1 {
			t.Fatalf("sweep: %d alerts, %v", n, err)
		}
		// A second dispatch of the same alert (another replica's sweep that
		// read it before the first removed it) logs and queues nothing more.
		if err := b.notify.Alert(ctx, alerts[0]); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for i, rc := range rcs {
			algoitnytest.Eventually(t, 60*time.Second, "the DOWN notification", func() bool { return len(rc.notifications()) == 1 })
			if got := rc.notifications()[0]; got.CheckID != algoitny.GlobalID("Check", c.ID) || got.State != algoitny.CheckStateDown {
				t.Fatalf("notification %+v", got)
			}
			log, err := b.svc.Deliveries(watchUser(), chs[i].ID, algoitny.PageRequest{First: 10})
			if err != nil {
				t.Fatal(err)
			}
			// Each channel's delivery has an id of its own, with the alert's time.
			if len(log.Items) != 1 || log.Items[0].Status != algoitny.DeliveryDelivered || log.Items[0].Attempts != 1 ||
				log.Items[0].ID[:18] != alerts[0].ID[:18] || !log.Items[0].CreatedAt.Equal(alerts[0].CreatedAt) {
				t.Fatalf("channel %d's delivery log %+v (alert %s)", i, log.Items, alerts[0].ID)
			}
			ids[log.Items[0].ID] = true
			rc.mu.Lock()
			requests, byID := rc.requests, rc.deliveries[log.Items[0].ID]
			rc.mu.Unlock()
			if requests != 1 || byID != 1 {
				t.Fatalf("channel %d: %d webhook requests, %d with its delivery's id", i, requests, byID)
			}
		}
		if len(ids) != 2 {
			t.Fatalf("the two channels' deliveries share an id: %v", ids)
		}
		var jobsQueued int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+b.schema+".river_job WHERE kind = 'check_notify'").Scan(&jobsQueued); err != nil {
			t.Fatal(err)
		}
		if jobsQueued != 2 {
			t.Fatalf("%d notify jobs for one alert to two channels, dispatched twice", jobsQueued)
		}
		if left, err := b.db.ListCheckAlerts(ctx, "", 10); err != nil || len(left) != 0 {
			t.Fatalf("outbox after the sweep: %+v, %v", left, err)
		}
		if n, err := b.notify.SweepOlderThan(ctx, 0); err != nil || n != 0 {
			t.Fatalf("second sweep: %d alerts, %v", n, err)
		}
	})

	// The sweep reads the outbox a page at a time, past alerts it cannot
	// dispatch: with pages of one alert and the oldest of three failing
	// every time, one sweep dispatches the two others (a sweep that read
	// one page only would dispatch none, and alerts that kept failing would
	// hold up every younger one).
	t.Run("SweepGoesPastFailures", func(t *testing.T) {
		t.Parallel()
		var failing atomic.Value // the check whose deliveries cannot be logged
		failing.Store("")
		b := setupWatchWith(t, func(c *watch.ChecksConfig) { c.Retries, c.Alerts = -1, crashedAlerter{} }, func(c *watch.NotificationsConfig) {
			c.SweepPage = 1
			c.Store = failingDeliveries{NotifyStore: c.Store, check: &failing}
		})
		ctx := context.Background()
		rc := newReceiver(t)
		b.subscribe(t, rc)
		var checks []string
		for range 3 {
			c := b.create(t, flaky(t, 1_000_000).URL, 100)
			algoitnytest.Eventually(t, 60*time.Second, "the check DOWN", func() bool { return b.get(t, c.ID).State == algoitny.CheckStateDown })
			checks = append(checks, c.ID)
		}
		alerts, err := b.db.ListCheckAlerts(ctx, "", 10)
		if err != nil || len(alerts) != 3 || alerts[0].CheckID != checks[0] {
			t.Fatalf("outbox %+v, %v: want the three alerts the crash left, the first check's first", alerts, err)
		}
		failing.Store(checks[0])
		n, err := b.notify.SweepOlderThan(ctx, 0)
		if n != 2 || err == nil || !strings.Contains(err.Error(), alerts[0].ID) {
			t.Fatalf("sweep: %d alerts, %v; want 2 and the first alert's failure", n, err)
		}
		algoitnytest.Eventually(t, 60*time.Second, "two notifications", func() bool { return len(rc.notifications()) == 2 })
		if left, err := b.db.ListCheckAlerts(ctx, "", 10); err != nil || len(left) != 1 || left[0].ID != alerts[0].ID {
			t.Fatalf("outbox after the sweep: %+v, %v; want the failing alert only", left, err)
		}
	})

	t.Run("MaintenanceSilences", func(t *testing.T) {
		t.Parallel()
		b := setupWatchTuned(t, func(c *watch.ChecksConfig) { c.Retries = -1 })
		rc := newReceiver(t)
		ch := b.subscribe(t, rc)
		now := time.Now()
		c, err := b.svc.Create(watchUser(), algoitny.CheckInput{URL: flaky(t, 3).URL, Type: algoitny.CheckAvailability, DelayMs: 100,
			Maintenance: []algoitny.MaintenanceWindow{{Start: now.Add(-time.Hour), End: now.Add(time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(watchUser())
		defer cancel()
		events, err := b.svc.Subscribe(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		// DOWN and UP happen and are published, flagged as in maintenance.
		var changes []*algoitny.CheckStateChange
		timeout := time.After(60 * time.Second)
		for len(changes) < 2 {
			select {
			case ev := <-events:
				if ev.StateChange != nil {
					changes = append(changes, ev.StateChange)
				}
			case <-timeout:
				t.Fatalf("%d changes in 60 s", len(changes))
			}
		}
		if changes[0].To != algoitny.CheckStateDown || changes[1].To != algoitny.CheckStateUp || !changes[0].InMaintenance || !changes[1].InMaintenance {
			t.Fatalf("changes %+v %+v", changes[0], changes[1])
		}
		// Nothing was notified or logged.
		time.Sleep(300 * time.Millisecond)
		log, err := b.svc.Deliveries(watchUser(), ch.ID, algoitny.PageRequest{First: 10})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rc.notifications()); n != 0 || len(log.Items) != 0 {
			t.Fatalf("%d notifications, %d deliveries during maintenance", n, len(log.Items))
		}
	})

	t.Run("Channels", func(t *testing.T) {
		t.Parallel()
		b := setupWatch(t)
		rc := newReceiver(t)
		ch := b.subscribe(t, rc)
		list, err := b.svc.NotificationChannels(watchUser())
		if err != nil || len(list) != 1 || list[0].ID != ch.ID || list[0].Secret != "" || list[0].Kind != algoitny.ChannelWebhook {
			t.Fatalf("channels %+v %v", list, err)
		}
		if _, err := b.svc.CreateWebhook(watchUser(), "http://10.0.0.1/hook"); !algoitny.IsCode(err, algoitny.EINVALID) {
			t.Fatalf("private webhook: %v", err)
		}
		other := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "other", Email: "o@example.com"}})
		if _, err := b.svc.Deliveries(other, ch.ID, algoitny.PageRequest{First: 10}); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Fatalf("another user's log: %v", err)
		}
		if err := b.svc.DeleteNotificationChannel(other, ch.ID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			t.Fatalf("another user's delete: %v", err)
		}
		if err := b.svc.DeleteNotificationChannel(watchUser(), ch.ID); err != nil {
			t.Fatal(err)
		}
		if list, _ := b.svc.NotificationChannels(watchUser()); len(list) != 0 {
			t.Fatalf("after delete: %+v", list)
		}
	})
}

// failingDeliveries is the outbox's store, with the deliveries of one
// check (check's value) failing to be logged, as if DynamoDB refused them.
type failingDeliveries struct {
	watch.NotifyStore
	check *atomic.Value
}

func (f failingDeliveries) CreateDelivery(ctx context.Context, d *algoitny.NotificationDelivery) error {
	if d.CheckID == f.check.Load().(string) {
		return algoitny.Errorf(algoitny.EINTERNAL, "delivery refused by the test")
	}
	return f.NotifyStore.CreateDelivery(ctx, d)
}

// crashedAlerter stands for a process that died right after a run's
// transaction: it dispatches nothing.
type crashedAlerter struct{}

func (crashedAlerter) Alert(context.Context, *algoitny.CheckAlert) error {
	return errors.New("the process died")
}
