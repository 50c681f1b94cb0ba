package algoitny

import "time"

// Notifications of URL checks (issue 20): when a check's state changes
// between UP and DOWN, its owner's notification channels are told. The
// sending lives in internal/watch (Notifier, one per channel kind) and the
// queue of deliveries in internal/jobs; the types are here so that storage
// and the API share them.

// ChannelKind is how a notification channel is reached. Values are stored,
// so the set is closed; a new kind needs a Notifier for it.
type ChannelKind string

// The channel kinds.
const (
	// ChannelWebhook POSTs a JSON CheckNotification to a URL, signed with
	// the channel's secret together with the delivery's id and the time it
	// is sent (headers X-AlgoItny-Signature, X-AlgoItny-Delivery and
	// X-AlgoItny-Timestamp; watch.Verify).
	ChannelWebhook ChannelKind = "WEBHOOK"
)

// NotificationChannel is where a user's check notifications go. Secret is
// the key of the webhook's HMAC signature: stored, shown once at creation.
type NotificationChannel struct {
	ID     string
	UserID string
	Kind   ChannelKind
	URL    string
	// Secret signs the bodies; the API returns it only from the creation.
	Secret    string
	CreatedAt time.Time
}

// CheckNotification is what a channel receives on a change of a check's
// state: the body of a webhook, as JSON.
type CheckNotification struct {
	// CheckID is the check's global id, as the API and the delivery log show it.
	CheckID string `json:"checkId"`
	URL     string `json:"url"`
	// State is the new state, UP or DOWN; PreviousState the one before.
	State         CheckState `json:"state"`
	PreviousState CheckState `json:"previousState"`
	Reason        string     `json:"reason"`
	// Time is when the run that changed the state started.
	Time time.Time `json:"time"`
}

// DeliveryStatus is where a notification's delivery to one channel stands.
type DeliveryStatus string

// The delivery statuses.
const (
	// DeliveryPending is queued or waiting for a retry.
	DeliveryPending DeliveryStatus = "PENDING"
	// DeliveryDelivered was accepted by the channel (a webhook answered 2xx).
	DeliveryDelivered DeliveryStatus = "DELIVERED"
	// DeliveryFailed gave up after its attempts (LastError says why), or its
	// channel was deleted.
	DeliveryFailed DeliveryStatus = "FAILED"
)

// NotificationDelivery is one notification to one channel, with its log:
// how many attempts it took and the last error. Payload is the exact body
// sent, so that every retry sends (and signs) the same bytes.
type NotificationDelivery struct {
	ID        string
	ChannelID string
	UserID    string
	CheckID   string
	State     CheckState
	Status    DeliveryStatus
	Attempts  int
	LastError string
	Payload   []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DeliveryRetention is how long the delivery log is kept (DynamoDB TTL).
const DeliveryRetention = 30 * 24 * time.Hour

// CheckAlert is a change of a check's state that is still to be announced:
// the notification outbox. It is stored in the same transaction as the run
// that made the change (CheckRunRecord.Alert), so a crash after that run
// cannot lose the announcement. The alerter turns it into one
// NotificationDelivery per channel of the owner, each with the alert's ID,
// then removes it; a periodic sweep dispatches the alerts a crash left
// behind again, which is harmless because a delivery with that ID is
// written at most once.
type CheckAlert struct {
	// ID is a UUIDv7 assigned when the alert is stored (time-ordered); it
	// is also the ID of each of its deliveries.
	ID      string
	UserID  string
	CheckID string
	// State is the state announced (UP or DOWN).
	State CheckState
	// Payload is the JSON of the CheckNotification every channel receives.
	Payload   []byte
	CreatedAt time.Time
}

// AlertRetention bounds how long an alert nobody could dispatch stays in
// the outbox (DynamoDB TTL); dispatched alerts are deleted at once.
const AlertRetention = 7 * 24 * time.Hour
