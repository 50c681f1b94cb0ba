package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func TestNotificationChannels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	newChannel := func() *algoitny.NotificationChannel {
		return &algoitny.NotificationChannel{UserID: "u1", Kind: algoitny.ChannelWebhook, URL: "https://example.com/hook", Secret: "whsec_x"}
	}
	a, b := newChannel(), newChannel()
	algoitnytest.OK(t, db.CreateNotificationChannel(ctx, a, 2))
	algoitnytest.OK(t, db.CreateNotificationChannel(ctx, b, 2))
	if err := db.CreateNotificationChannel(ctx, newChannel(), 2); !algoitny.IsCode(err, algoitny.ERATELIMITED) {
		t.Fatalf("third channel of 2: %v", err)
	}
	list := algoitnytest.Must[[]*algoitny.NotificationChannel](t)(db.ListNotificationChannels(ctx, "u1"))
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Secret != "whsec_x" {
		t.Fatalf("channels %+v", list)
	}
	if _, err := db.GetNotificationChannel(ctx, "u2", a.ID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
		t.Fatalf("another user's channel: %v", err)
	}

	// The delivery log: newest first, attempts recorded.
	var ids []string
	for _, st := range []algoitny.CheckState{algoitny.CheckStateDown, algoitny.CheckStateUp} {
		d := &algoitny.NotificationDelivery{ChannelID: a.ID, UserID: "u1", CheckID: "c1", State: st, Payload: []byte(`{"state":"` + string(st) + `"}`)}
		algoitnytest.OK(t, db.CreateDelivery(ctx, d))
		ids = append(ids, d.ID)
	}
	d := algoitnytest.Must[*algoitny.NotificationDelivery](t)(db.GetDelivery(ctx, a.ID, ids[0]))
	if d.Status != algoitny.DeliveryPending || string(d.Payload) != `{"state":"DOWN"}` {
		t.Fatalf("new delivery %+v", d)
	}
	d.Attempts, d.Status, d.LastError = 3, algoitny.DeliveryFailed, "HTTP 500"
	algoitnytest.OK(t, db.RecordDeliveryAttempt(ctx, d))
	page := algoitnytest.Must[algoitny.Page[*algoitny.NotificationDelivery]](t)(db.ListDeliveries(ctx, a.ID, algoitny.PageRequest{First: 1}))
	if len(page.Items) != 1 || page.Items[0].ID != ids[1] || !page.HasNextPage {
		t.Fatalf("first page %+v", page)
	}
	page = algoitnytest.Must[algoitny.Page[*algoitny.NotificationDelivery]](t)(db.ListDeliveries(ctx, a.ID, algoitny.PageRequest{First: 1, After: page.EndCursor}))
	if got := page.Items[0]; got.ID != ids[0] || got.Attempts != 3 || got.Status != algoitny.DeliveryFailed || got.LastError != "HTTP 500" {
		t.Fatalf("logged delivery %+v", got)
	}

	// Deleting frees a place.
	algoitnytest.OK(t, db.DeleteNotificationChannel(ctx, "u1", a.ID))
	if err := db.DeleteNotificationChannel(ctx, "u1", a.ID); !algoitny.IsCode(err, algoitny.ENOTFOUND) {
		t.Fatalf("deleted twice: %v", err)
	}
	algoitnytest.OK(t, db.CreateNotificationChannel(ctx, newChannel(), 2))
}

// TestCheckStats: every recorded run is added to its hour's statistics in
// the run's transaction; deleting the check deletes them.
func TestCheckStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	c := newCheck("u1")
	algoitnytest.OK(t, db.CreateCheck(ctx, c, algoitny.Unlimited))
	for _, st := range []algoitny.CheckResultStatus{algoitny.CheckUp, algoitny.CheckDown, algoitny.CheckUp} {
		recordRun(t, db, c.ID, st, 10)
	}
	now := time.Now()
	hours := algoitnytest.Must[[]*algoitny.CheckHourStats](t)(db.ListCheckStats(ctx, c.ID, now.Add(-time.Hour), now))
	runs, up, answered := 0, 0, 0
	for _, h := range hours {
		runs, up = runs+h.Runs, up+h.Up
		answered += h.Latency[algoitny.LatencyBin(12)] // recordRun's 12 ms, HTTP 200
	}
	if runs != 3 || up != 2 || answered != 3 {
		t.Fatalf("stats %d runs, %d up, %d answered", runs, up, answered)
	}
	algoitnytest.Must[*algoitny.Check](t)(db.DeleteCheck(ctx, c.ID))
	if hours := algoitnytest.Must[[]*algoitny.CheckHourStats](t)(db.ListCheckStats(ctx, c.ID, now.Add(-time.Hour), now)); len(hours) != 0 {
		t.Fatalf("stats left after deletion: %d", len(hours))
	}
}
