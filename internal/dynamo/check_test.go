package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
)

func newCheck(userID string) *algoitny.Check {
	return &algoitny.Check{UserID: userID, URL: "https://example.com/", Type: algoitny.CheckAvailability, DelayMs: 60_000, Status: algoitny.CheckActive}
}

// recordRun claims a due check and records a result with the given status,
// keeping keep results.
func recordRun(t *testing.T, db *dynamo.DB, id string, status algoitny.CheckResultStatus, keep int) *algoitny.Check {
	t.Helper()
	ctx := context.Background()
	c := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, id))
	claimed, lease, err := db.ClaimCheckRun(ctx, id, *c.NextRunAt, time.Minute)
	algoitnytest.OK(t, err)
	next := *claimed
	next.Runs++
	next.Version++
	r := &algoitny.CheckResult{CheckID: id, Seq: next.Runs, Status: status, ResponseTimeMs: 12, HTTPStatus: 200, CheckedAt: time.Now().UTC()}
	next.LastResult, next.LastExecutedAt = r, &r.CheckedAt
	planned := claimed.NextRunAt.Add(-time.Hour) // due again at once
	next.NextRunAt = &planned
	algoitnytest.OK(t, db.RecordCheckRun(ctx, &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: r, Next: &next, Keep: keep}))
	return &next
}

func TestChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetUpdate", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := newCheck("u1")
		c.Type, c.Keyword, c.Invert = algoitny.CheckKeyword, "Register", true
		algoitnytest.OK(t, db.CreateCheck(ctx, c, 5))
		if c.ID == "" || c.Version != 1 || c.NextRunAt == nil || !c.NextRunAt.Equal(c.CreatedAt) || c.CreatedAt.IsZero() {
			t.Fatalf("created %+v", c)
		}
		got := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, c.ID))
		if got.URL != c.URL || got.Type != algoitny.CheckKeyword || got.Keyword != "Register" || !got.Invert || got.DelayMs != 60_000 ||
			got.Status != algoitny.CheckActive || !got.NextRunAt.Equal(*c.NextRunAt) || got.UserID != "u1" {
			t.Fatalf("read back %+v", got)
		}
		got.Status, got.NextRunAt, got.Keyword = algoitny.CheckPaused, nil, "Sign up"
		upd := algoitnytest.Must[*algoitny.Check](t)(db.UpdateCheck(ctx, got))
		if upd.Version != 2 || upd.Status != algoitny.CheckPaused || upd.NextRunAt != nil || upd.Keyword != "Sign up" {
			t.Fatalf("updated %+v", upd)
		}
		// got still has version 1: a stale write is refused.
		_, err := db.UpdateCheck(ctx, got)
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		_, err = db.GetCheck(ctx, "not-an-id")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := newCheck("u1")
		algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
		algoitnytest.Must[*algoitny.Check](t)(db.DeleteCheck(ctx, c.ID))
		_, err := db.GetCheck(ctx, c.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.DeleteCheck(ctx, c.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.UpdateCheck(ctx, c)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, _, err = db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
	})

	t.Run("LimitExactUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		const limit, callers = 5, 20
		var mu sync.Mutex
		created, limited := 0, 0
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				err := db.CreateCheck(ctx, newCheck("u1"), limit)
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					created++
				case algoitny.ERATELIMITED:
					limited++
					if rl := err.(*algoitny.Error).RateLimit; rl == nil || rl.Limit != limit {
						t.Errorf("rate limit %+v", rl)
					}
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if created != limit || limited != callers-limit {
			t.Fatalf("created %d, limited %d; want %d and %d", created, limited, limit, callers-limit)
		}
		if n := algoitnytest.Must[int](t)(db.CountUserChecks(ctx, "u1")); n != limit {
			t.Fatalf("counter %d", n)
		}
		list := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(db.ListUserChecks(ctx, "u1", algoitny.PageRequest{}))
		if len(list.Items) != limit {
			t.Fatalf("%d checks stored", len(list.Items))
		}
		// Deleting one frees a slot, once.
		algoitnytest.Must[*algoitny.Check](t)(db.DeleteCheck(ctx, list.Items[0].ID))
		algoitnytest.OK(t, db.CreateCheck(ctx, newCheck("u1"), limit))
		algoitnytest.ErrCode(t, db.CreateCheck(ctx, newCheck("u1"), limit), algoitny.ERATELIMITED)
		// Another user has their own count; zero allows none.
		algoitnytest.OK(t, db.CreateCheck(ctx, newCheck("u2"), limit))
		algoitnytest.ErrCode(t, db.CreateCheck(ctx, newCheck("u3"), 0), algoitny.ERATELIMITED)
	})

	t.Run("Indexes", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		var mine []*algoitny.Check
		for i := range 5 {
			c := newCheck("u1")
			if i%2 == 1 {
				c.Type, c.Keyword = algoitny.CheckKeyword, "k"
			}
			algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
			mine = append(mine, c)
		}
		algoitnytest.OK(t, db.CreateCheck(ctx, newCheck("u2"), -1))
		all, pages := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
			return db.ListUserChecks(ctx, "u1", r)
		})
		if len(all) != 5 || pages != 3 || all[0].ID != mine[4].ID || all[4].ID != mine[0].ID {
			t.Fatalf("user list: %d checks in %d pages, newest first?", len(all), pages)
		}
		// Pause one availability check: it moves within the Type-Status index.
		paused := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, mine[0].ID))
		paused.Status, paused.NextRunAt = algoitny.CheckPaused, nil
		algoitnytest.Must[*algoitny.Check](t)(db.UpdateCheck(ctx, paused))
		count := func(typ algoitny.CheckType, st *algoitny.CheckStatus) int {
			items, _ := listAll(t, 100, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
				return db.ListChecks(ctx, algoitny.CheckFilter{Type: typ, Status: st}, r)
			})
			return len(items)
		}
		active, pausedSt := algoitny.CheckActive, algoitny.CheckPaused
		if a, p, k, all := count(algoitny.CheckAvailability, &active), count(algoitny.CheckAvailability, &pausedSt), count(algoitny.CheckKeyword, &active), count(algoitny.CheckAvailability, nil); a != 3 || p != 1 || k != 2 || all != 4 {
			t.Fatalf("by type and status: active %d paused %d keyword %d all %d", a, p, k, all)
		}
		// Overdue: every active availability check was due at creation.
		overdue := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(db.ListOverdueChecks(ctx, algoitny.CheckAvailability, time.Now().Add(time.Second), algoitny.PageRequest{First: 100}))
		if len(overdue.Items) != 3 {
			t.Fatalf("%d overdue", len(overdue.Items))
		}
		if none := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(db.ListOverdueChecks(ctx, algoitny.CheckAvailability, time.Now().Add(-time.Hour), algoitny.PageRequest{})); len(none.Items) != 0 {
			t.Fatalf("%d overdue an hour ago", len(none.Items))
		}
		n := algoitnytest.Must[int](t)(db.DeleteUserChecks(ctx, "u1"))
		if n != 5 || algoitnytest.Must[int](t)(db.CountUserChecks(ctx, "u1")) != 0 {
			t.Fatalf("deleted %d", n)
		}
		if rest := algoitnytest.Must[algoitny.Page[*algoitny.Check]](t)(db.ListUserChecks(ctx, "u2", algoitny.PageRequest{})); len(rest.Items) != 1 {
			t.Fatalf("other user's checks: %d", len(rest.Items))
		}
	})

	t.Run("ClaimIsExclusive", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		now := time.Now()
		db.SetClock(func() time.Time { return now })
		c := newCheck("u1")
		algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
		var mu sync.Mutex
		won, lost := 0, 0
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, _, err := db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					won++
				case algoitny.ECONFLICT:
					lost++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if won != 1 || lost != 9 {
			t.Fatalf("won %d lost %d", won, lost)
		}
		// A planned time the check no longer has claims nothing.
		_, _, err := db.ClaimCheckRun(ctx, c.ID, c.NextRunAt.Add(time.Millisecond), time.Minute)
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		// Once the lease has expired (its run died), the run can be claimed again.
		now = now.Add(2 * time.Minute)
		_, lease, err := db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
		algoitnytest.OK(t, err)
		algoitnytest.OK(t, db.ReleaseCheckLease(ctx, c.ID, "someone-else")) // not theirs: no-op
		_, _, err = db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		algoitnytest.OK(t, db.ReleaseCheckLease(ctx, c.ID, lease))
		_, _, err = db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
		algoitnytest.OK(t, err)
	})

	t.Run("RecordConflicts", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := newCheck("u1")
		algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
		claimed, lease, err := db.ClaimCheckRun(ctx, c.ID, *c.NextRunAt, time.Minute)
		algoitnytest.OK(t, err)
		// The owner edits the check during the run: the run's result is dropped.
		edited := *claimed
		edited.DelayMs = 120_000
		algoitnytest.Must[*algoitny.Check](t)(db.UpdateCheck(ctx, &edited))
		next := *claimed
		next.Runs, next.Version = 1, claimed.Version+1
		r := &algoitny.CheckResult{CheckID: c.ID, Seq: 1, Status: algoitny.CheckUp, CheckedAt: time.Now()}
		alert := func() *algoitny.CheckAlert {
			return &algoitny.CheckAlert{UserID: "u1", CheckID: c.ID, State: algoitny.CheckStateDown, Payload: []byte("{}")}
		}
		err = db.RecordCheckRun(ctx, &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: r, Next: &next, Keep: 5, Alert: alert()})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		// A wrong lease is refused too.
		cur := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, c.ID))
		err = db.RecordCheckRun(ctx, &algoitny.CheckRunRecord{Claimed: cur, LeaseID: "forged", Result: r, Next: &next, Keep: 5, Alert: alert()})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		if res := algoitnytest.Must[[]*algoitny.CheckResult](t)(db.ListCheckResults(ctx, c.ID, 10)); len(res) != 0 {
			t.Fatalf("%d results stored by refused runs", len(res))
		}
		if alerts := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, "", 10)); len(alerts) != 0 {
			t.Fatalf("%d alerts stored by refused runs", len(alerts))
		}
	})

	// A change of state is stored with its run in the notification outbox,
	// and each channel's delivery of it is written once.
	t.Run("AlertOutbox", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := newCheck("u1")
		algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
		var alerts []*algoitny.CheckAlert
		for _, st := range []algoitny.CheckState{algoitny.CheckStateDown, algoitny.CheckStateUp} {
			claimed, lease, err := db.ClaimCheckRun(ctx, c.ID, *algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, c.ID)).NextRunAt, time.Minute)
			algoitnytest.OK(t, err)
			next := *claimed
			next.Runs++
			next.Version++
			planned := claimed.NextRunAt.Add(-time.Hour)
			next.NextRunAt = &planned
			r := &algoitny.CheckResult{CheckID: c.ID, Seq: next.Runs, Status: algoitny.CheckDown, CheckedAt: time.Now().UTC()}
			a := &algoitny.CheckAlert{UserID: "u1", CheckID: c.ID, State: st, Payload: []byte(`{"state":"` + string(st) + `"}`)}
			algoitnytest.OK(t, db.RecordCheckRun(ctx, &algoitny.CheckRunRecord{Claimed: claimed, LeaseID: lease, Result: r, Next: &next, Keep: 5, Alert: a}))
			if a.ID == "" || a.CreatedAt.IsZero() {
				t.Fatalf("alert %+v: no id or time assigned", a)
			}
			alerts = append(alerts, a)
			time.Sleep(2 * time.Millisecond) // the ids are ordered by their millisecond
		}
		got := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, "", 10))
		if len(got) != 2 || got[0].ID != alerts[0].ID || got[1].ID != alerts[1].ID || got[0].State != algoitny.CheckStateDown ||
			string(got[1].Payload) != `{"state":"UP"}` || got[0].UserID != "u1" || got[0].CheckID != c.ID || !got[0].CreatedAt.Equal(alerts[0].CreatedAt) {
			t.Fatalf("outbox %+v, want the two alerts oldest first", got)
		}
		if one := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, "", 1)); len(one) != 1 || one[0].ID != alerts[0].ID {
			t.Fatalf("outbox limited to 1: %+v", one)
		}
		if rest := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, alerts[0].ID, 10)); len(rest) != 1 || rest[0].ID != alerts[1].ID {
			t.Fatalf("outbox after the first alert: %+v, want the second", rest)
		}
		if none := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, alerts[1].ID, 10)); len(none) != 0 {
			t.Fatalf("outbox after the last alert: %+v", none)
		}
		ch := &algoitny.NotificationChannel{UserID: "u1", Kind: algoitny.ChannelWebhook, URL: "https://example.com/hook", Secret: "s"}
		algoitnytest.OK(t, db.CreateNotificationChannel(ctx, ch, 10))
		d := &algoitny.NotificationDelivery{ID: alerts[0].ID, ChannelID: ch.ID, UserID: "u1", CheckID: c.ID, State: algoitny.CheckStateDown, Payload: alerts[0].Payload, CreatedAt: alerts[0].CreatedAt}
		algoitnytest.OK(t, db.CreateDelivery(ctx, d))
		d.Status, d.Attempts = algoitny.DeliveryDelivered, 1
		algoitnytest.OK(t, db.RecordDeliveryAttempt(ctx, d))
		again := &algoitny.NotificationDelivery{ID: alerts[0].ID, ChannelID: ch.ID, UserID: "u1", CheckID: c.ID, State: algoitny.CheckStateDown, Payload: alerts[0].Payload}
		algoitnytest.ErrCode(t, db.CreateDelivery(ctx, again), algoitny.ECONFLICT)
		if cur := algoitnytest.Must[*algoitny.NotificationDelivery](t)(db.GetDelivery(ctx, ch.ID, alerts[0].ID)); cur.Status != algoitny.DeliveryDelivered {
			t.Fatalf("a second creation reset the delivery: %+v", cur)
		}
		algoitnytest.OK(t, db.DeleteCheckAlert(ctx, alerts[0].ID))
		algoitnytest.OK(t, db.DeleteCheckAlert(ctx, alerts[0].ID)) // gone already: fine
		if left := algoitnytest.Must[[]*algoitny.CheckAlert](t)(db.ListCheckAlerts(ctx, "", 10)); len(left) != 1 || left[0].ID != alerts[1].ID {
			t.Fatalf("outbox after a deletion: %+v", left)
		}
	})

	t.Run("ResultsBoundedNewestFirst", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		c := newCheck("u1")
		algoitnytest.OK(t, db.CreateCheck(ctx, c, -1))
		const keep = 3
		for i := range 7 {
			st := algoitny.CheckUp
			if i%2 == 1 {
				st = algoitny.CheckDown
			}
			recordRun(t, db, c.ID, st, keep)
		}
		res := algoitnytest.Must[[]*algoitny.CheckResult](t)(db.ListCheckResults(ctx, c.ID, 10))
		if len(res) != keep || res[0].Seq != 7 || res[1].Seq != 6 || res[2].Seq != 5 || res[0].Status != algoitny.CheckUp || res[1].Status != algoitny.CheckDown {
			t.Fatalf("results %+v", res)
		}
		if two := algoitnytest.Must[[]*algoitny.CheckResult](t)(db.ListCheckResults(ctx, c.ID, 2)); len(two) != 2 || two[0].Seq != 7 {
			t.Fatalf("limited %+v", two)
		}
		// The check's partition holds the check, the kept results and the
		// statistics of the hour (two if the runs straddled one).
		if n := algoitnytest.Must[int](t)(dynamo.ItemCount(ctx, db, "CHECK#"+c.ID)); n != 1+keep+1 && n != 1+keep+2 {
			t.Fatalf("%d items in the check's partition", n)
		}
		got := algoitnytest.Must[*algoitny.Check](t)(db.GetCheck(ctx, c.ID))
		if got.Runs != 7 || got.LastResult == nil || got.LastResult.Seq != 7 || got.LastExecutedAt == nil || got.Version != 8 {
			t.Fatalf("check after runs %+v", got)
		}
		// Past their 24 h TTL results are not returned, even before DynamoDB deletes them.
		db.SetClock(func() time.Time { return time.Now().Add(algoitny.CheckResultRetention + time.Minute) })
		if res := algoitnytest.Must[[]*algoitny.CheckResult](t)(db.ListCheckResults(ctx, c.ID, 10)); len(res) != 0 {
			t.Fatalf("%d expired results", len(res))
		}
		db.SetClock(time.Now)
		// Deleting the check deletes its results.
		algoitnytest.Must[*algoitny.Check](t)(db.DeleteCheck(ctx, c.ID))
		if n := algoitnytest.Must[int](t)(dynamo.ItemCount(ctx, db, "CHECK#"+c.ID)); n != 0 {
			t.Fatalf("%d items left", n)
		}
	})
}
