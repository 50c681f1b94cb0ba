package watch

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
)

// Notifications of state changes (issue 20): a check that goes DOWN or
// comes back UP is announced to every notification channel of its owner.
// The Executor stores each change with its run in the notification outbox
// (algoitny.CheckAlert) and hands it to an Alerter (Notifications),
// which logs one delivery per channel and queues it as a River job, then
// empties the outbox; the job sends it with the Notifier of the channel's
// kind and retries with backoff.

// Limits of notification channels.
const (
	// MaxChannels is how many notification channels a user may have.
	MaxChannels = 10
	// SignatureHeader carries a webhook's signatures (Sign), comma-separated,
	// each "<scheme>=<hex>"; today one, of SignatureScheme.
	SignatureHeader = "X-AlgoItny-Signature"
	// SignatureScheme names how a signature is made: "v1" is the hex
	// HMAC-SHA256, under the channel's secret, of
	// "<timestamp>.<delivery>.<body>". A later scheme gets a new name and is
	// sent beside v1 for a while, so receivers that know only v1 (Verify
	// ignores schemes it does not know) keep working.
	SignatureScheme = "v1"
	// TimestampHeader carries the Unix time, in seconds, the webhook was
	// sent at. It is signed with the body, so that a receiver can refuse a
	// captured request replayed later (Verify).
	TimestampHeader = "X-AlgoItny-Timestamp"
	// DeliveryHeader names the delivery, the same on every attempt, and is
	// signed with it: a receiver that remembers the ids it took for
	// SignatureTolerance drops retries it already has and replays alike.
	DeliveryHeader = "X-AlgoItny-Delivery"
	// SignatureTolerance is how far from its receiver's clock a webhook's
	// timestamp may be for Verify to accept it.
	SignatureTolerance = 5 * time.Minute
)

// ChannelStore is what notification channels need from storage
// (internal/dynamo).
type ChannelStore interface {
	// CreateNotificationChannel stores ch (assigning its id and time) if its
	// user has fewer than maxChannels; ERATELIMITED otherwise.
	CreateNotificationChannel(ctx context.Context, ch *algoitny.NotificationChannel, maxChannels int) error
	GetNotificationChannel(ctx context.Context, userID, id string) (*algoitny.NotificationChannel, error)
	ListNotificationChannels(ctx context.Context, userID string) ([]*algoitny.NotificationChannel, error)
	DeleteNotificationChannel(ctx context.Context, userID, id string) error
	ListDeliveries(ctx context.Context, channelID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.NotificationDelivery], error)
}

// Notifier sends one delivery to one channel: a webhook today, and any
// other kind (mail, chat) behind the same method. d.Payload is the JSON of
// an algoitny.CheckNotification and d.ID names the delivery: both are the
// same on every retry, so that a receiver can drop a second copy. An error
// means "try again later"; its message goes to the delivery log, so it
// must not reveal the server's network.
type Notifier interface {
	Send(ctx context.Context, ch *algoitny.NotificationChannel, d *algoitny.NotificationDelivery) error
}

// Poster posts a webhook's body without letting it reach the server's own
// network (*safehttp.Client).
type Poster interface {
	Post(ctx context.Context, raw string, header http.Header, body []byte) (*safehttp.Response, error)
}

var _ Poster = (*safehttp.Client)(nil)

// WebhookNotifier is the Notifier of WEBHOOK channels: it POSTs the payload
// as JSON with SignatureHeader, through the SSRF-safe client. Any answer
// other than 2xx is an error (retried).
type WebhookNotifier struct {
	Client Poster
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
}

var _ Notifier = (*WebhookNotifier)(nil)

// Send implements Notifier.
func (w *WebhookNotifier) Send(ctx context.Context, ch *algoitny.NotificationChannel, d *algoitny.NotificationDelivery) error {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	sent := time.Now()
	h.Set(DeliveryHeader, d.ID)
	h.Set(TimestampHeader, strconv.FormatInt(sent.Unix(), 10))
	h.Set(SignatureHeader, Sign(ch.Secret, sent, d.ID, d.Payload))
	resp, err := w.Client.Post(ctx, ch.URL, h, d.Payload)
	if err != nil {
		return fmt.Errorf("%s", describeFetchError(ctx, err, timeout))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// Sign returns the value of SignatureHeader for body sent at sent as
// delivery: "v1=" and the hex HMAC-SHA256, under secret, of
// "<Unix seconds of sent>.<delivery>.<body>" (TimestampHeader's and
// DeliveryHeader's values). Each attempt is signed anew; the delivery and
// the body are the same on every attempt.
func Sign(secret string, sent time.Time, delivery string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.%s.", sent.Unix(), delivery)
	m.Write(body)
	return SignatureScheme + "=" + hex.EncodeToString(m.Sum(nil))
}

// maxSignatures bounds the signatures Verify compares: a sender sends one
// per scheme it signs with, a few at most.
const maxSignatures = 8

// Verify is what a receiver written in Go does with a webhook: it checks
// that header's TimestampHeader is within SignatureTolerance of now and
// that one of SignatureHeader's v1 signatures signs it, DeliveryHeader and
// body under secret (in constant time; signatures of other schemes are
// skipped). It returns the delivery's id, for the receiver to drop a
// delivery it already took; its error says which check failed.
func Verify(secret string, header http.Header, body []byte, now time.Time) (delivery string, err error) {
	unix, err := strconv.ParseInt(header.Get(TimestampHeader), 10, 64)
	if err != nil {
		return "", fmt.Errorf("webhook: no %s", TimestampHeader)
	}
	delivery = header.Get(DeliveryHeader)
	if delivery == "" || strings.ContainsRune(delivery, '.') {
		return "", fmt.Errorf("webhook: no %s", DeliveryHeader)
	}
	sent := time.Unix(unix, 0)
	if d := now.Sub(sent); d > SignatureTolerance || d < -SignatureTolerance {
		return "", fmt.Errorf("webhook: sent at %s, %s from now: too old (a replay?) or a clock far off", sent.UTC().Format(time.RFC3339), d.Round(time.Second))
	}
	want := []byte(Sign(secret, sent, delivery, body))
	sigs := strings.Split(strings.Join(header.Values(SignatureHeader), ","), ",")
	for _, sig := range sigs[:min(len(sigs), maxSignatures)] {
		if hmac.Equal([]byte(strings.TrimSpace(sig)), want) {
			return delivery, nil
		}
	}
	return "", fmt.Errorf("webhook: no %s signature in %s signs this delivery", SignatureScheme, SignatureHeader)
}

// Payload is the body notified for a change of c's state.
func Payload(c *algoitny.Check, change *algoitny.CheckStateChange) ([]byte, error) {
	b, err := json.Marshal(algoitny.CheckNotification{
		CheckID: algoitny.GlobalID("Check", c.ID), URL: c.URL, State: change.To, PreviousState: change.From, Reason: change.Reason, Time: change.At.UTC(),
	})
	if err != nil {
		return nil, algoitny.Internal(err, "encode notification")
	}
	return b, nil
}

// newSecret returns a fresh webhook secret: 32 random bytes, hex.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + hex.EncodeToString(b)
}

// CreateWebhook adds a webhook channel for the signed-in user: every change
// of state of their checks is POSTed to url. The returned channel carries
// its Secret — the only time it is shown. It returns EUNAUTHENTICATED,
// EINVALID naming "url" (not a public http(s) URL) and ERATELIMITED after
// MaxChannels.
func (s *Service) CreateWebhook(ctx context.Context, url string) (*algoitny.NotificationChannel, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	url = strings.TrimSpace(url)
	if err := algoitny.CheckText("url", url); err != nil {
		return nil, err
	}
	switch {
	case url == "":
		return nil, algoitny.Invalid("url", "url is required")
	case len(url) > MaxURLLen:
		return nil, algoitny.Invalid("url", "url must be at most %d characters", MaxURLLen)
	case s.URLs == nil:
		return nil, algoitny.Internal(nil, "URL checks are not configured")
	}
	if err := s.URLs.CheckURL(url); err != nil {
		if algoitny.IsCode(err, algoitny.EINVALID) {
			return nil, err
		}
		return nil, algoitny.Invalid("url", "only public http(s) addresses can receive webhooks")
	}
	ch := &algoitny.NotificationChannel{UserID: a.UserID(), Kind: algoitny.ChannelWebhook, URL: url, Secret: newSecret()}
	if err := s.Store.CreateNotificationChannel(ctx, ch, MaxChannels); err != nil {
		return nil, err
	}
	return ch, nil
}

// NotificationChannels returns the signed-in user's channels, oldest
// first, without their secrets. It returns EUNAUTHENTICATED.
func (s *Service) NotificationChannels(ctx context.Context) ([]*algoitny.NotificationChannel, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	chs, err := s.Store.ListNotificationChannels(ctx, a.UserID())
	for _, ch := range chs {
		ch.Secret = ""
	}
	return chs, err
}

// DeleteNotificationChannel removes one of the signed-in user's channels;
// deliveries still queued for it end FAILED. It returns EUNAUTHENTICATED
// and ENOTFOUND.
func (s *Service) DeleteNotificationChannel(ctx context.Context, id string) error {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return err
	}
	return s.Store.DeleteNotificationChannel(ctx, a.UserID(), id)
}

// Deliveries pages through the delivery log of one of the signed-in user's
// channels, newest first: each notification's status, attempts and last
// error. It returns EUNAUTHENTICATED, ENOTFOUND and EINVALID for a bad page
// request.
func (s *Service) Deliveries(ctx context.Context, channelID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.NotificationDelivery], error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return algoitny.Page[*algoitny.NotificationDelivery]{}, err
	}
	if _, err := s.Store.GetNotificationChannel(ctx, a.UserID(), channelID); err != nil {
		return algoitny.Page[*algoitny.NotificationDelivery]{}, err
	}
	return s.Store.ListDeliveries(ctx, channelID, page)
}
