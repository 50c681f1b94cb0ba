package pubsub

import (
	"bytes"
	"cmp"
	"context"
	"sync"
)

// MemoryConfig configures a Memory broker.
type MemoryConfig struct {
	// BufferSize is each subscription's channel capacity (default
	// DefaultBufferSize). A subscriber with this many unread events is
	// dropped at the next event.
	BufferSize int
}

// Memory is an in-process Broker: a map from topic to subscriptions, each
// with a buffered channel. It exists for unit tests and single-process
// development, and is the local fan-out of Postgres. Publish never blocks and
// starts no goroutines; a subscription costs no goroutine either (its
// context is watched with context.AfterFunc). The zero value is not usable;
// call NewMemory.
type Memory struct {
	bufferSize int

	mu     sync.RWMutex
	topics map[string]map[*Subscription]struct{}
	closed bool
}

// NewMemory returns an empty in-process broker; it cannot fail.
func NewMemory(cfg MemoryConfig) *Memory {
	return &Memory{
		bufferSize: cmp.Or(max(cfg.BufferSize, 0), DefaultBufferSize),
		topics:     make(map[string]map[*Subscription]struct{}),
	}
}

// Publish hands a copy of payload to every subscriber of topic that has
// room in its buffer and drops (ends with ErrSlowSubscriber) those that have
// none. It never blocks, so ctx is not consulted. It returns EINVALID for a
// bad topic and ErrClosed after Close.
func (m *Memory) Publish(_ context.Context, topic string, payload []byte) error {
	if err := validateTopic(topic); err != nil {
		return err
	}
	return m.publish(topic, bytes.Clone(payload))
}

// publish delivers payload, which it owns, to the subscribers of topic.
func (m *Memory) publish(topic string, payload []byte) error {
	e := Event{Topic: topic, Payload: payload, decoded: &decoded{}}
	var slow []*Subscription
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return ErrClosed
	}
	for s := range m.topics[topic] {
		if !s.trySend(e) {
			slow = append(slow, s)
		}
	}
	m.mu.RUnlock()
	for _, s := range slow {
		s.detach()
	}
	return nil
}

// Subscribe returns a subscription to topic that receives the events
// published after it returns. It ends when ctx is done (Err reports the
// context's cause), on Close, when it falls behind or when the broker
// closes. It returns EINVALID for a bad topic, ctx.Err() when ctx is done
// already, and ErrClosed after Close.
func (m *Memory) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	return m.SubscribeSize(ctx, topic, m.bufferSize)
}

// SubscribeSize is Subscribe with a buffer of size events (at least 1): for
// a subscriber that must not be dropped by a burst (the caches' change
// feed).
func (m *Memory) SubscribeSize(ctx context.Context, topic string, size int) (*Subscription, error) {
	if err := validateTopic(topic); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Subscription{topic: topic, ch: make(chan Event, max(size, 1)), broker: m}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	subs := m.topics[topic]
	if subs == nil {
		subs = make(map[*Subscription]struct{})
		m.topics[topic] = subs
	}
	subs[s] = struct{}{}
	m.mu.Unlock()

	// Registered after the subscription is complete: the callback may run at
	// once. Holding s.mu makes it wait until stop is stored.
	s.mu.Lock()
	s.stop = context.AfterFunc(ctx, func() { s.end(context.Cause(ctx)) })
	s.mu.Unlock()
	return s, nil
}

// Epoch is 1 until Close and 0 after: a Memory broker loses no event while
// it is open (see Postgres.Epoch).
func (m *Memory) Epoch() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return 0
	}
	return 1
}

// Close ends every subscription with ErrClosed; later Publish and Subscribe
// calls return ErrClosed. Calling it again does nothing.
func (m *Memory) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	topics := m.topics
	m.topics = nil
	m.mu.Unlock()
	for _, subs := range topics {
		for s := range subs {
			s.end(ErrClosed)
		}
	}
}

// hasSubscribers reports whether topic has a subscriber now; Postgres uses
// it to skip loading large payloads nobody here is waiting for.
func (m *Memory) hasSubscribers(topic string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.topics[topic]) > 0
}

// remove forgets s; a no-op if it is gone already.
func (m *Memory) remove(s *Subscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	subs := m.topics[s.topic]
	if subs == nil {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(m.topics, s.topic)
	}
}
