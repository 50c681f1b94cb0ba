package watch

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/pubsub"
)

// Topic is the pubsub topic of one check's events: "check:{id}". Payloads
// are JSON-encoded CheckEvents.
func Topic(checkID string) string { return "check:" + checkID }

// Events publishes check events (the scheduler's results, the service's
// changes) and follows them for subscriptions, through a pubsub.Broker
// (Postgres LISTEN/NOTIFY in production, so a result recorded by a worker
// reaches subscribers on every replica). Publishing is best effort: the
// state of record is in DynamoDB, and a subscription starts with it.
type Events struct {
	Broker pubsub.Broker
	// Logger receives failed publications (default: none).
	Logger *slog.Logger
}

// Publish announces ev on its check's topic. Failures are logged, not
// returned: a lost event costs a subscriber one update, not correctness. A
// nil Events publishes nothing.
func (e *Events) Publish(ctx context.Context, ev *algoitny.CheckEvent) {
	if e == nil || e.Broker == nil || ev == nil || ev.Check == nil {
		return
	}
	b, err := json.Marshal(ev)
	if err == nil {
		err = e.Broker.Publish(context.WithoutCancel(ctx), Topic(ev.Check.ID), b)
	}
	if err != nil && e.Logger != nil {
		e.Logger.WarnContext(ctx, "publish check event", "check", ev.Check.ID, "err", err)
	}
}

// follow subscribes to a check's topic first (so nothing published from
// then on is missed), then reads the current state with current and sends
// it, then forwards newer events until the check is deleted, the broker
// drops the subscriber (it fell behind) or ctx ends. The channel is closed
// at the end. Events older than what was sent (by Version) are skipped.
func (e *Events) follow(ctx context.Context, id string, current func(ctx context.Context) (*algoitny.Check, error)) (<-chan *algoitny.CheckEvent, error) {
	if e == nil || e.Broker == nil {
		return nil, algoitny.Internal(nil, "check events are not configured")
	}
	sub, err := e.Broker.Subscribe(ctx, Topic(id))
	if err != nil {
		return nil, err
	}
	cur, err := current(ctx)
	if err != nil {
		sub.Close()
		return nil, err
	}
	out := make(chan *algoitny.CheckEvent, 1)
	out <- &algoitny.CheckEvent{Check: cur}
	go func() {
		defer close(out)
		defer sub.Close()
		last := cur.Version
		for msg := range sub.Events() {
			var ev algoitny.CheckEvent
			if err := json.Unmarshal(msg.Payload, &ev); err != nil || ev.Check == nil {
				continue
			}
			if !ev.Deleted && ev.Check.Version <= last {
				continue // the state the subscription started with, or older
			}
			last = ev.Check.Version
			select {
			case out <- &ev:
			case <-ctx.Done():
				return
			}
			if ev.Deleted {
				return
			}
		}
	}()
	return out, nil
}
