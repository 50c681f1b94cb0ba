package watch

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// NotifyArgs delivers one logged notification (a NotificationDelivery) to
// one channel. River keeps it in Postgres and retries it with backoff, so a
// crash or a failing receiver loses nothing; the delivery's own status makes
// it idempotent (a delivered one is not sent again), and inserting it twice
// (an alert dispatched again by the sweep) queues one job.
type NotifyArgs struct {
	UserID     string `json:"user_id"`
	ChannelID  string `json:"channel_id"`
	DeliveryID string `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (NotifyArgs) Kind() string { return "check_notify" }

// AlertSweepArgs is the periodic sweep of the notification outbox: it
// dispatches the alerts a crash (or a failed dispatch) left behind.
type AlertSweepArgs struct{}

// Kind implements river.JobArgs.
func (AlertSweepArgs) Kind() string { return "check_alert_sweep" }

// InsertOpts makes concurrent sweeps (several replicas) collapse into one.
func (AlertSweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// NotifyStore is what notifications need from storage (internal/dynamo).
type NotifyStore interface {
	ListNotificationChannels(ctx context.Context, userID string) ([]*algoitny.NotificationChannel, error)
	GetNotificationChannel(ctx context.Context, userID, id string) (*algoitny.NotificationChannel, error)
	// CreateDelivery stores d, PENDING; ECONFLICT when a delivery with
	// d.ID exists on the channel.
	CreateDelivery(ctx context.Context, d *algoitny.NotificationDelivery) error
	GetDelivery(ctx context.Context, channelID, id string) (*algoitny.NotificationDelivery, error)
	RecordDeliveryAttempt(ctx context.Context, d *algoitny.NotificationDelivery) error
	// ListCheckAlerts (a page, oldest first, after the alert id after) and
	// DeleteCheckAlert read and empty the outbox.
	ListCheckAlerts(ctx context.Context, after string, limit int) ([]*algoitny.CheckAlert, error)
	DeleteCheckAlert(ctx context.Context, id string) error
}

// NotificationsConfig configures check notifications.
type NotificationsConfig struct {
	Store NotifyStore
	// River queues the deliveries (any client of the runner's schema: an
	// insert-only one works). Without it Alert returns EINTERNAL.
	River *river.Client[pgx.Tx]
	// Notifiers sends per channel kind (default: WEBHOOK through a
	// safehttp.Client with a 10 s timeout; tests allow-list their servers
	// with Poster).
	Notifiers map[algoitny.ChannelKind]Notifier
	// Poster is the client of the default webhook notifier (default a new
	// safehttp.Client).
	Poster Poster
	// MaxAttempts bounds the sends of one delivery (default 8).
	MaxAttempts int
	// RetryBackoff is the wait after the first failed send, doubled after
	// each next one (default 10 s: 10 s, 20 s, … about 20 min in all).
	RetryBackoff time.Duration
	// Queue is the River queue of deliveries (default river.QueueDefault).
	Queue string
	// SweepInterval is how often the outbox is swept for alerts left
	// behind (default 1 minute; the sweep also runs at start).
	SweepInterval time.Duration
	// SweepAge is how old an alert must be for the sweep to take it
	// (default 30 s): younger ones are still being dispatched by the run
	// that stored them.
	SweepAge time.Duration
	// SweepPage is how many alerts the sweep reads at a time (default 100).
	SweepPage int
	Logger    *slog.Logger
}

// Notifications is the Alerter of the check scheduler and a plugin of the
// job runner (jobs.Config.Plugins): Alert logs one PENDING delivery per
// channel of the check's owner and queues a NotifyArgs job for each; the
// job sends it with the channel's Notifier, records every attempt (attempts, last error) and
// retries with backoff until delivered or MaxAttempts (then FAILED).
//
// Nothing is lost on a crash. The alert is stored with the run that changed
// the state (the outbox, algoitny.CheckAlert) and removed only once every
// delivery is logged and queued; a periodic sweep dispatches the alerts
// still there after SweepAge. Dispatching twice is harmless: a delivery
// takes the alert's id, is created at most once, and its job is unique.
type Notifications struct {
	cfg NotificationsConfig
}

var _ Alerter = (*Notifications)(nil)

// NewNotifications returns the notifier of check state changes. Pass it in
// jobs.Config.Plugins of the runner that works jobs and as
// ChecksConfig.Alerts.
func NewNotifications(cfg NotificationsConfig) *Notifications {
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 8)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, 10*time.Second)
	cfg.Queue = cmp.Or(cfg.Queue, river.QueueDefault)
	cfg.SweepInterval = cmp.Or(cfg.SweepInterval, time.Minute)
	cfg.SweepAge = cmp.Or(cfg.SweepAge, 30*time.Second)
	cfg.SweepPage = cmp.Or(cfg.SweepPage, 100)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poster == nil {
		cfg.Poster = safehttp.New(safehttp.Config{Timeout: 10 * time.Second, MaxBodyBytes: 64 << 10, AnyPort: true})
	}
	if cfg.Notifiers == nil {
		cfg.Notifiers = map[algoitny.ChannelKind]Notifier{}
	}
	if cfg.Notifiers[algoitny.ChannelWebhook] == nil {
		cfg.Notifiers[algoitny.ChannelWebhook] = &WebhookNotifier{Client: cfg.Poster}
	}
	return &Notifications{cfg: cfg}
}

// Register adds the delivery worker and the outbox sweep's worker.
func (n *Notifications) Register(workers *river.Workers) error {
	if err := river.AddWorkerSafely(workers, &notifyWorker{n: n}); err != nil {
		return err
	}
	return river.AddWorkerSafely(workers, &alertSweepWorker{n: n})
}

// PeriodicJobs returns the outbox sweep, every SweepInterval and
// once at start.
func (n *Notifications) PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(
		river.PeriodicInterval(n.cfg.SweepInterval),
		func() (river.JobArgs, *river.InsertOpts) { return AlertSweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: "check_alert_sweep", RunOnStart: true},
	)}
}

// Alert implements Alerter: one delivery per channel of a's owner,
// each logged PENDING (with deliveryID's id) and queued, then a removed from the
// outbox. It returns EINTERNAL when storage or River fails; a then stays in
// the outbox for the sweep, and what was logged or queued before the
// failure is not done twice.
func (n *Notifications) Alert(ctx context.Context, a *algoitny.CheckAlert) error {
	client := n.cfg.River
	if client == nil {
		return algoitny.Internal(errors.New("watch: NotificationsConfig.River is not set"), "notifications are not configured")
	}
	channels, err := n.cfg.Store.ListNotificationChannels(ctx, a.UserID)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		d := &algoitny.NotificationDelivery{ID: deliveryID(a.ID, ch.ID), ChannelID: ch.ID, UserID: a.UserID, CheckID: a.CheckID, State: a.State, Payload: a.Payload, CreatedAt: a.CreatedAt}
		if err := n.cfg.Store.CreateDelivery(ctx, d); err != nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
			return err
		}
		args := NotifyArgs{UserID: a.UserID, ChannelID: ch.ID, DeliveryID: d.ID}
		opts := &river.InsertOpts{Queue: n.cfg.Queue, MaxAttempts: n.cfg.MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
		if _, err := client.Insert(ctx, args, opts); err != nil {
			return algoitny.Internal(err, "queue notification")
		}
	}
	return n.cfg.Store.DeleteCheckAlert(ctx, a.ID)
}

// Sweep dispatches the outbox's alerts older than SweepAge: see
// SweepOlderThan.
func (n *Notifications) Sweep(ctx context.Context) (int, error) {
	return n.SweepOlderThan(ctx, n.cfg.SweepAge)
}

// SweepOlderThan dispatches the outbox's alerts older than age (younger
// ones are still being dispatched by the run that stored them), oldest
// first, and says how many it dispatched. It reads the outbox a page
// (SweepPage) at a time until it meets a younger alert or the end, so
// alerts that keep failing — each is logged and left for the next sweep —
// hold up no younger one, however many they are. The error joins the
// failures (and ctx's, if it ends first).
func (n *Notifications) SweepOlderThan(ctx context.Context, age time.Duration) (int, error) {
	now := time.Now()
	done := 0
	var errs []error
	for after := ""; ctx.Err() == nil; {
		alerts, err := n.cfg.Store.ListCheckAlerts(ctx, after, n.cfg.SweepPage)
		if err != nil {
			return done, errors.Join(append(errs, err)...)
		}
		for _, a := range alerts {
			if now.Sub(a.CreatedAt) < age {
				return done, errors.Join(errs...) // oldest first: the rest are younger still
			}
			if ctx.Err() != nil {
				break
			}
			if err := n.Alert(ctx, a); err != nil {
				n.cfg.Logger.ErrorContext(ctx, "dispatch a check alert from the outbox", "alert", a.ID, "check", a.CheckID, "err", err)
				errs = append(errs, fmt.Errorf("alert %s: %w", a.ID, err))
				continue
			}
			n.cfg.Logger.InfoContext(ctx, "dispatched a check alert from the outbox", "alert", a.ID, "check", a.CheckID, "state", a.State, "age", now.Sub(a.CreatedAt).Round(time.Millisecond))
			done++
		}
		if len(alerts) == 0 { // (a short page need not be the last)
			return done, errors.Join(errs...)
		}
		after = alerts[len(alerts)-1].ID
	}
	return done, errors.Join(append(errs, ctx.Err())...)
}

// alertSweepWorker runs the outbox sweep.
type alertSweepWorker struct {
	river.WorkerDefaults[AlertSweepArgs]
	n *Notifications
}

// Work implements river.Worker.
func (w *alertSweepWorker) Work(ctx context.Context, _ *river.Job[AlertSweepArgs]) error {
	_, err := w.n.Sweep(ctx)
	return err
}

// notifyWorker sends one delivery.
type notifyWorker struct {
	river.WorkerDefaults[NotifyArgs]
	n *Notifications
}

// Work implements river.Worker: a delivery already settled, expired or
// whose channel is gone ends the job; a failed send is recorded and
// returned for River to retry (FAILED on the last attempt).
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[NotifyArgs]) error {
	store := w.n.cfg.Store
	d, err := store.GetDelivery(ctx, job.Args.ChannelID, job.Args.DeliveryID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != algoitny.DeliveryPending {
		return nil
	}
	ch, err := store.GetNotificationChannel(ctx, job.Args.UserID, job.Args.ChannelID)
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		d.Status, d.LastError = algoitny.DeliveryFailed, "the channel was deleted"
		return store.RecordDeliveryAttempt(ctx, d)
	}
	if err != nil {
		return err
	}
	notifier := w.n.cfg.Notifiers[ch.Kind]
	if notifier == nil {
		d.Status, d.LastError = algoitny.DeliveryFailed, "no notifier for channel kind "+string(ch.Kind)
		return store.RecordDeliveryAttempt(ctx, d)
	}
	sendErr := notifier.Send(ctx, ch, d)
	d.Attempts++
	switch {
	case sendErr == nil:
		d.Status = algoitny.DeliveryDelivered // LastError keeps the failed attempts' last
	case job.Attempt >= job.MaxAttempts:
		d.Status, d.LastError = algoitny.DeliveryFailed, sendErr.Error()
	default:
		d.LastError = sendErr.Error()
	}
	if err := store.RecordDeliveryAttempt(context.WithoutCancel(ctx), d); err != nil {
		return err
	}
	return sendErr
}

// NextRetry backs off from RetryBackoff, doubling per attempt.
func (w *notifyWorker) NextRetry(job *river.Job[NotifyArgs]) time.Time {
	d := w.n.cfg.RetryBackoff
	for i := 1; i < job.Attempt && d < time.Hour; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, time.Hour))
}

// Timeout bounds one send with the storage calls around it.
func (w *notifyWorker) Timeout(*river.Job[NotifyArgs]) time.Duration { return time.Minute }

// deliveryID is the id of alert's delivery to channel: the alert's UUIDv7
// with its last 62 random bits replaced by a hash of both ids. It is the
// same however often the alert is dispatched (so the delivery is written
// once), differs per channel (each channel's log and X-AlgoItny-Delivery
// name their own delivery), and keeps the alert's time, so that a
// channel's log stays ordered by it.
func deliveryID(alertID, channelID string) string {
	if len(alertID) != 36 {
		return alertID // not a UUID: storage refuses it as it would have
	}
	h := sha256.Sum256([]byte(alertID + "/" + channelID))
	tail := hex.EncodeToString(h[:8])
	variant := "89ab"[h[8]&3]
	return alertID[:19] + string(variant) + tail[:3] + "-" + tail[3:15]
}
