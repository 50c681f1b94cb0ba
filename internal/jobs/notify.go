package jobs

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// NotifyArgs delivers one logged notification (a NotificationDelivery) to
// one channel. River keeps it in Postgres and retries it with backoff, so a
// crash or a failing receiver loses nothing; the delivery's own status makes
// it idempotent (a delivered one is not sent again).
type NotifyArgs struct {
	UserID     string `json:"user_id"`
	ChannelID  string `json:"channel_id"`
	DeliveryID string `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (NotifyArgs) Kind() string { return "check_notify" }

// NotifyStore is what notifications need from storage (internal/dynamo).
type NotifyStore interface {
	ListNotificationChannels(ctx context.Context, userID string) ([]*algoitny.NotificationChannel, error)
	GetNotificationChannel(ctx context.Context, userID, id string) (*algoitny.NotificationChannel, error)
	CreateDelivery(ctx context.Context, d *algoitny.NotificationDelivery) error
	GetDelivery(ctx context.Context, channelID, id string) (*algoitny.NotificationDelivery, error)
	RecordDeliveryAttempt(ctx context.Context, d *algoitny.NotificationDelivery) error
}

// NotificationsConfig configures check notifications.
type NotificationsConfig struct {
	Store NotifyStore
	// Notifiers sends per channel kind (default: WEBHOOK through a
	// safehttp.Client with a 10 s timeout; tests allow-list their servers
	// with Poster).
	Notifiers map[algoitny.ChannelKind]watch.Notifier
	// Poster is the client of the default webhook notifier (default a new
	// safehttp.Client).
	Poster watch.Poster
	// MaxAttempts bounds the sends of one delivery (default 8).
	MaxAttempts int
	// RetryBackoff is the wait after the first failed send, doubled after
	// each next one (default 10 s: 10 s, 20 s, … about 20 min in all).
	RetryBackoff time.Duration
	// Queue is the River queue of deliveries (default river.QueueDefault).
	Queue  string
	Logger *slog.Logger
}

// Notifications is the watch.Alerter of the check scheduler and a runner
// Plugin: Alert logs one PENDING delivery per channel of the check's owner
// and queues a NotifyArgs job for each; the job sends it with the
// channel's Notifier, records every attempt (attempts, last error) and
// retries with backoff until delivered or MaxAttempts (then FAILED).
//
// The change of state is recorded before Alert runs, and the deliveries are
// queued after: a crash in between loses that change's notifications (the
// state of record stays right). Once queued, a delivery survives crashes.
type Notifications struct {
	cfg    NotificationsConfig
	client atomic.Pointer[river.Client[pgx.Tx]]
}

var (
	_ Plugin        = (*Notifications)(nil)
	_ watch.Alerter = (*Notifications)(nil)
)

// NewNotifications returns the notifier of check state changes. Pass it in
// Config.Plugins of the runner that works jobs, as ChecksConfig.Alerts, and
// Bind it to a runner.
func NewNotifications(cfg NotificationsConfig) *Notifications {
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, 8)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, 10*time.Second)
	cfg.Queue = cmp.Or(cfg.Queue, river.QueueDefault)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poster == nil {
		cfg.Poster = safehttp.New(safehttp.Config{Timeout: 10 * time.Second, MaxBodyBytes: 64 << 10, AnyPort: true})
	}
	if cfg.Notifiers == nil {
		cfg.Notifiers = map[algoitny.ChannelKind]watch.Notifier{}
	}
	if cfg.Notifiers[algoitny.ChannelWebhook] == nil {
		cfg.Notifiers[algoitny.ChannelWebhook] = &watch.WebhookNotifier{Client: cfg.Poster}
	}
	return &Notifications{cfg: cfg}
}

// Bind sets the runner whose River client Alert inserts with.
func (n *Notifications) Bind(r *Runner) { n.client.Store(r.Client()) }

// Register implements Plugin.
func (n *Notifications) Register(workers *river.Workers) error {
	return river.AddWorkerSafely(workers, &notifyWorker{n: n})
}

// PeriodicJobs implements Plugin: none.
func (n *Notifications) PeriodicJobs() []*river.PeriodicJob { return nil }

// Alert implements watch.Alerter: one delivery per channel of c's owner,
// each logged PENDING and queued. It returns EINTERNAL when storage or
// River fails (deliveries queued before the failure stay queued).
func (n *Notifications) Alert(ctx context.Context, c *algoitny.Check, change *algoitny.CheckStateChange) error {
	channels, err := n.cfg.Store.ListNotificationChannels(ctx, c.UserID)
	if err != nil || len(channels) == 0 {
		return err
	}
	client := n.client.Load()
	if client == nil {
		return algoitny.Internal(errors.New("jobs: Notifications.Bind was not called"), "notifications are not configured")
	}
	payload, err := watch.Payload(c, change)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		d := &algoitny.NotificationDelivery{ChannelID: ch.ID, UserID: c.UserID, CheckID: c.ID, State: change.To, Payload: payload}
		if err := n.cfg.Store.CreateDelivery(ctx, d); err != nil {
			return err
		}
		args := NotifyArgs{UserID: c.UserID, ChannelID: ch.ID, DeliveryID: d.ID}
		if _, err := client.Insert(ctx, args, &river.InsertOpts{Queue: n.cfg.Queue, MaxAttempts: n.cfg.MaxAttempts}); err != nil {
			return algoitny.Internal(err, "queue notification")
		}
	}
	return nil
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
