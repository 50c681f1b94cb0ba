package pubsub

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// DefaultBufferSize is the number of undelivered events a subscription holds
// before it counts as slow and is dropped, unless configured otherwise.
const DefaultBufferSize = 64

// MaxTopicLen is the longest topic, in bytes, Publish and Subscribe accept.
// Topics are short keys such as "job:<id>"; the bound keeps a topic from
// crowding the payload out of a PostgreSQL notification.
const MaxTopicLen = 256

var (
	// ErrSlowSubscriber ends a subscription whose buffer was full when an
	// event arrived: the subscriber fell behind and has missed events, so it
	// should resubscribe and reread the state. Code EINTERNAL.
	ErrSlowSubscriber = &algoitny.Error{Code: algoitny.EINTERNAL, Message: "the subscription fell behind and was ended; subscribe again"}

	// ErrClosed is returned by Publish and Subscribe after the broker's Close,
	// and ends the subscriptions that were open then. Code EINTERNAL.
	ErrClosed = &algoitny.Error{Code: algoitny.EINTERNAL, Message: "the event broker is shut down"}
)

// Event is one published message. Payload is opaque to the brokers (the
// publishers send JSON); it is shared by every subscriber of the event, so
// subscribers must not modify it.
type Event struct {
	Topic   string
	Payload []byte

	// decoded is shared by the copies of the event its subscribers receive,
	// so that Decode parses the payload once however many subscribe.
	decoded *decoded
}

type decoded struct {
	once sync.Once
	v    any
	err  error
}

// Decode returns the event's JSON payload decoded as an M. The payload is
// parsed once per event and type, not once per subscriber: a job event
// fanned out to a thousand websockets is decoded once. The result is shared
// by every subscriber of the event, so it must not be modified.
func Decode[M any](e Event) (M, error) {
	var zero M
	if e.decoded == nil {
		err := json.Unmarshal(e.Payload, &zero)
		return zero, err
	}
	d := e.decoded
	d.once.Do(func() {
		v := new(M)
		d.v, d.err = v, json.Unmarshal(e.Payload, v)
	})
	if d.err != nil {
		return zero, d.err
	}
	if v, ok := d.v.(*M); ok {
		return *v, nil
	}
	// Subscribers of one topic decode it as different types: rare, so parse.
	err := json.Unmarshal(e.Payload, &zero)
	return zero, err
}

// Broker publishes events to topics and subscribes to them. It is what the
// GraphQL subscription resolvers and the job workers use; Memory and
// Postgres implement it (consumers may declare a smaller interface).
type Broker interface {
	// Publish delivers payload to every current subscriber of topic without
	// waiting for any of them. It returns EINVALID for a bad topic,
	// ErrClosed after the broker's Close and EINTERNAL when the transport
	// fails.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe returns a subscription to topic that receives the events
	// published after it returns, until ctx is done or it is closed. It
	// returns EINVALID for a bad topic, ctx's error when ctx is done already
	// and ErrClosed after the broker's Close.
	Subscribe(ctx context.Context, topic string) (*Subscription, error)
}

var (
	_ Broker = (*Memory)(nil)
	_ Broker = (*Postgres)(nil)
)

// Message is one event of PublishAll.
type Message struct {
	Topic   string
	Payload []byte
}

// BatchPublisher is a Broker that publishes several events at once, in
// order, in one round trip to its transport where it can (Postgres: one
// statement for the events that fit a notification).
type BatchPublisher interface {
	PublishAll(ctx context.Context, msgs []Message) error
}

// Memory has no round trip to save: PublishAll publishes its events one by
// one.
var _ BatchPublisher = (*Postgres)(nil)

// PublishAll publishes msgs in order through b: at once where b is a
// BatchPublisher, one by one otherwise. It stops at the first error.
func PublishAll(ctx context.Context, b Broker, msgs []Message) error {
	if bp, ok := b.(BatchPublisher); ok {
		return bp.PublishAll(ctx, msgs)
	}
	for _, m := range msgs {
		if err := b.Publish(ctx, m.Topic, m.Payload); err != nil {
			return err
		}
	}
	return nil
}

// Subscription receives the events of one topic on a buffered channel. It
// exists so the consumer can read events, stop them (Close) and learn why
// they stopped (Err). All methods are safe for concurrent use.
type Subscription struct {
	topic  string
	ch     chan Event
	broker *Memory

	mu     sync.Mutex
	closed bool        // ch is closed; guarded by mu so sends and the close never race
	err    error       // why it ended; set before ch is closed
	stop   func() bool // unregisters the context.AfterFunc watching the subscriber's ctx
}

// Events returns the channel the events arrive on. It is closed when the
// subscription ends; Err then says why.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Close ends the subscription and closes its channel; events still buffered
// can be drained. Calling it again, or after the subscription ended
// otherwise, does nothing.
func (s *Subscription) Close() { s.end(nil) }

// Err reports why the subscription ended: nil while it is open or when the
// subscriber closed it, ErrSlowSubscriber when it was dropped for falling
// behind, ErrClosed when the broker was closed, and the context's cause
// (context.Canceled, context.DeadlineExceeded) when its context ended. Read
// it after Events is closed.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// trySend hands e to the subscriber without blocking. If the buffer is full
// it closes the subscription with ErrSlowSubscriber and returns false; the
// caller then detaches it. The caller holds the broker's read lock, so
// detaching here would deadlock.
func (s *Subscription) trySend(e Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return true // ending already; someone else detaches it
	}
	select {
	case s.ch <- e:
		return true
	default:
		s.finishLocked(ErrSlowSubscriber)
		return false
	}
}

// finish closes the channel with reason err unless it is closed already.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finishLocked(err)
}

func (s *Subscription) finishLocked(err error) {
	if s.closed {
		return
	}
	s.closed, s.err = true, err
	close(s.ch)
}

// detach forgets the subscription in the broker and stops watching its
// context. It may run more than once.
func (s *Subscription) detach() {
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.broker.remove(s)
}

// end ends the subscription with reason err (once) and detaches it.
func (s *Subscription) end(err error) {
	s.finish(err)
	s.detach()
}

// validateTopic returns an EINVALID error unless topic is a non-empty,
// NUL-free UTF-8 string of at most MaxTopicLen bytes; anything else would not
// survive the trip through PostgreSQL text unchanged.
func validateTopic(topic string) error {
	switch {
	case topic == "":
		return algoitny.Invalid("topic", "the topic is empty")
	case len(topic) > MaxTopicLen:
		return algoitny.Invalid("topic", "the topic is longer than %d bytes", MaxTopicLen)
	case !utf8.ValidString(topic) || strings.IndexByte(topic, 0) >= 0:
		return algoitny.Invalid("topic", "the topic is not NUL-free UTF-8")
	}
	return nil
}
