package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/pubsub"
)

// EventStore is what subscriptions read to start with the current state.
type EventStore interface {
	GetJob(ctx context.Context, id string) (*algoitny.Job, error)
	GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
	// ListExecutionTests returns the finished tests a running execution
	// job has stored so far (the worker stores each before publishing it).
	ListExecutionTests(ctx context.Context, jobID string) ([]algoitny.ExecutionEvent, error)
}

// Events publishes job events for the workers and serves them to GraphQL
// subscriptions, through a pubsub.Broker (Postgres LISTEN/NOTIFY, so an event
// published by a worker in one process reaches subscribers on every replica).
//
// Events carry everything a subscriber shows (the whole job, the test
// result, the hint text), so delivering one costs no DynamoDB read whatever
// the number of subscribers. Publishing is best effort — the state of record
// is in DynamoDB — and a subscription always starts with the current state,
// so a subscriber that arrives late (or after the job finished) misses nothing
// that matters.
type Events struct {
	Broker pubsub.Broker
	Store  EventStore
	Logger *slog.Logger
}

// The topics, one per followed thing.
func jobTopic(id string) string                { return "job:" + id }
func execTopic(jobID string) string            { return "exec:" + jobID }
func hintTopic(ref algoitny.HistoryRef) string { return "hint:" + ref.UserID + ":" + ref.ID }

// execMessage is an execution event or the end marker. The end marker
// says how many test results the execution holds (Tests), so that a
// subscriber that received fewer knows to read the rest.
type execMessage struct {
	Event *algoitny.ExecutionEvent `json:"e,omitempty"`
	// Events are several finished tests announced together.
	Events []algoitny.ExecutionEvent `json:"es,omitempty"`
	End    bool                      `json:"end,omitempty"`
	Tests  int                       `json:"n,omitempty"`
}

func (e *Events) publish(ctx context.Context, topic string, v any) {
	e.publishAll(ctx, []topicValue{{topic, v}})
}

// topicValue is an event to publish: v, as JSON, on topic.
type topicValue struct {
	topic string
	v     any
}

// publishAll publishes events in order, in one round trip to the broker's
// transport where it can (pubsub.PublishAll).
func (e *Events) publishAll(ctx context.Context, events []topicValue) {
	msgs := make([]pubsub.Message, 0, len(events))
	for _, ev := range events {
		b, err := json.Marshal(ev.v)
		if err != nil {
			if e.Logger != nil {
				e.Logger.WarnContext(ctx, "encode event", "topic", ev.topic, "err", err)
			}
			continue
		}
		msgs = append(msgs, pubsub.Message{Topic: ev.topic, Payload: b})
	}
	if err := pubsub.PublishAll(context.WithoutCancel(ctx), e.Broker, msgs); err != nil && e.Logger != nil {
		e.Logger.WarnContext(ctx, "publish events", "events", len(msgs), "err", err)
	}
}

// PublishJob announces a job's new state (and the progress step that came
// with it). A finished job carries its execution, read once here rather than
// once per subscriber.
func (e *Events) PublishJob(ctx context.Context, job *algoitny.Job, progress *algoitny.JobProgress) {
	e.PublishJobAfterTests(ctx, job, progress, nil)
}

// PublishJobAfterTests is PublishJob with the finished tests stored with
// the job's end announced first (PublishExecution), in the same round trip
// to the broker's transport.
func (e *Events) PublishJobAfterTests(ctx context.Context, job *algoitny.Job, progress *algoitny.JobProgress, finished []algoitny.ExecutionEvent) {
	job = e.withHistory(ctx, job)
	events := make([]topicValue, 0, 3)
	if ev, ok := executionMessage(finished); ok {
		events = append(events, ev)
	}
	events = append(events, topicValue{jobTopic(job.ID), algoitny.JobEvent{Job: job, Progress: progress}})
	if job.Status.Final() && job.Type == algoitny.JobCodeExecution {
		end := execMessage{End: true}
		if job.History != nil {
			end.Tests = len(job.History.TestResults)
		}
		events = append(events, topicValue{execTopic(job.ID), end})
	}
	e.publishAll(ctx, events)
}

// PublishExecution announces finished tests of one execution, in one
// message. Store them first (PutExecutionTests): subscribers who join
// later read them from there.
func (e *Events) PublishExecution(ctx context.Context, evs ...algoitny.ExecutionEvent) {
	if ev, ok := executionMessage(evs); ok {
		e.publishAll(ctx, []topicValue{ev})
	}
}

// executionMessage is the one message announcing evs (false: none).
func executionMessage(evs []algoitny.ExecutionEvent) (topicValue, bool) {
	switch len(evs) {
	case 0:
		return topicValue{}, false
	case 1:
		return topicValue{execTopic(evs[0].JobID), execMessage{Event: &evs[0]}}, true
	}
	return topicValue{execTopic(evs[0].JobID), execMessage{Events: evs}}, true
}

// PublishHint announces hint text (or, with Done, the final hints).
func (e *Events) PublishHint(ctx context.Context, ev algoitny.HintEvent) {
	e.publish(ctx, hintTopic(ev.History), ev)
}

// stream runs a subscription: it subscribes first (so nothing published from
// now on is missed), then sends what start returns, then forwards decoded
// events (next turns each message into zero or more) until next says to
// stop, the broker drops the subscriber or ctx ends. A subscriber the
// broker dropped for falling behind (pubsub.ErrSlowSubscriber) is
// subscribed again and sent the current state anew, so a burst of events
// does not end a subscription. The returned
// channel is closed at the end, which completes the GraphQL subscription.
func stream[T any, M any](ctx context.Context, e *Events, topic string,
	start func() (initial []*T, done bool, err error),
	next func(msg M) (out []*T, done bool),
) (<-chan *T, error) {
	sub, err := e.Broker.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	initial, done, err := start()
	if err != nil {
		sub.Close()
		return nil, err
	}
	out := make(chan *T, len(initial)+1)
	for _, v := range initial {
		out <- v
	}
	if done {
		sub.Close()
		close(out)
		return out, nil
	}
	send := func(v *T) bool {
		select {
		case out <- v:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// forward delivers sub's events; it reports whether to subscribe again.
	forward := func(sub *pubsub.Subscription) bool {
		defer sub.Close()
		for ev := range sub.Events() {
			msg, err := pubsub.Decode[M](ev)
			if err != nil {
				continue
			}
			vs, done := next(msg)
			for _, v := range vs {
				if !send(v) {
					return false
				}
			}
			if done {
				return false
			}
		}
		return errors.Is(sub.Err(), pubsub.ErrSlowSubscriber) && ctx.Err() == nil
	}
	go func() {
		defer close(out)
		for forward(sub) {
			if sub, err = e.Broker.Subscribe(ctx, topic); err != nil {
				return
			}
			initial, done, err := startAgain(ctx, start)
			if err != nil {
				sub.Close()
				return
			}
			for _, v := range initial {
				if !send(v) {
					sub.Close()
					return
				}
			}
			if done {
				sub.Close()
				return
			}
		}
	}()
	return out, nil
}

// startAgain reads a subscription's current state again after the broker
// dropped it for falling behind: that happens under load, when a read may
// fail for a moment too, and a subscription that ended there would
// complete without its final state. It tries a few times, 100 ms apart
// and doubling, while ctx lasts.
func startAgain[T any](ctx context.Context, start func() ([]*T, bool, error)) ([]*T, bool, error) {
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		initial, done, err := start()
		if err == nil || attempt == 5 || ctx.Err() != nil {
			return initial, done, err
		}
		select {
		case <-time.After(wait):
			wait *= 2
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// JobEvents follows job id: its current state first, then every status
// change and progress step, ending after a final status. get reads the job,
// with whatever access check the caller needs (submissions.Service.Get): it runs
// once the subscription is in place, so that no change is missed between
// the read and the events, and its error (ENOTFOUND, EFORBIDDEN) is
// returned. One read serves both the check and the current state.
func (e *Events) JobEvents(ctx context.Context, id string, get func(context.Context, string) (*algoitny.Job, error)) (<-chan *algoitny.JobEvent, error) {
	var last *algoitny.Job
	return stream(ctx, e, jobTopic(id),
		func() ([]*algoitny.JobEvent, bool, error) {
			cur, err := get(ctx, id)
			if err != nil {
				return nil, false, err
			}
			cur = e.withHistory(ctx, cur)
			last = cur
			first := &algoitny.JobEvent{Job: cur}
			return []*algoitny.JobEvent{first}, first.Last(), nil
		},
		func(ev algoitny.JobEvent) ([]*algoitny.JobEvent, bool) {
			if ev.Job == nil || ev.Job.UpdatedAt.Before(last.UpdatedAt) {
				return nil, false // older than what the subscriber has seen
			}
			if ev.Progress == nil && ev.Job.Status == last.Status && ev.Job.UpdatedAt.Equal(last.UpdatedAt) {
				return nil, false // the state the subscription started with
			}
			last = ev.Job
			return []*algoitny.JobEvent{&ev}, ev.Last()
		})
}

// withHistory returns a finished job with its execution attached (a copy;
// job is not changed). Without one it returns job as it is.
func (e *Events) withHistory(ctx context.Context, job *algoitny.Job) *algoitny.Job {
	if !job.Status.Final() || job.HistoryID == "" || job.History != nil {
		return job
	}
	j := *job
	h, err := e.Store.GetHistory(ctx, algoitny.HistoryRef{UserID: job.UserID, ID: job.HistoryID})
	if err != nil {
		// No execution (cancelled before it ran): say so, so that no
		// subscriber looks it up again.
		j.HistoryID = ""
		return &j
	}
	j.History = h
	return &j
}

// ExecutionEvents follows the tests of a CODE_EXECUTION job as they
// finish, each test index once: first every test finished so far (those
// the worker stored while the job runs; the execution's results once it
// is final), then the others as they finish, then the end.
//
// No gap at the seam: the subscription is in place before the stored tests
// are read, and the worker stores a test before publishing it, so each
// test is read, received, or both. No duplicate: an index already sent is
// not sent again — a test both read and received, one announced again by
// a job rescued after its worker died, an event delivered twice. And should
// an event be lost (or a test's store fail), the end marker says how many
// results the execution holds: a subscriber that sent fewer reads the
// execution once and sends the missing ones before it completes.
func (e *Events) ExecutionEvents(ctx context.Context, job *algoitny.Job) (<-chan *algoitny.ExecutionEvent, error) {
	sent := map[int]bool{} // start and next never run at the same time
	unsent := func(evs []algoitny.ExecutionEvent) []*algoitny.ExecutionEvent {
		var out []*algoitny.ExecutionEvent
		for _, ev := range evs {
			if !sent[ev.Index] {
				sent[ev.Index] = true
				out = append(out, &ev)
			}
		}
		return out
	}
	// fromExecution returns the tests of a final job's execution not sent yet.
	fromExecution := func(cur *algoitny.Job) []*algoitny.ExecutionEvent {
		if cur.HistoryID == "" {
			return nil // it never ran to the end (cancelled, failed)
		}
		h, err := e.Store.GetHistory(ctx, algoitny.HistoryRef{UserID: cur.UserID, ID: cur.HistoryID})
		if err != nil {
			return nil
		}
		all := make([]algoitny.ExecutionEvent, len(h.TestResults))
		for i, r := range h.TestResults {
			all[i] = algoitny.ExecutionEvent{JobID: cur.ID, Index: i, Total: len(h.TestResults), Result: r}
		}
		return unsent(all)
	}
	return stream(ctx, e, execTopic(job.ID),
		func() ([]*algoitny.ExecutionEvent, bool, error) {
			cur, err := e.Store.GetJob(ctx, job.ID)
			if err != nil {
				return nil, false, err
			}
			if cur.Status.Final() {
				return fromExecution(cur), true, nil
			}
			stored, err := e.Store.ListExecutionTests(ctx, job.ID)
			if err != nil {
				return nil, false, err
			}
			return unsent(stored), false, nil
		},
		func(m execMessage) ([]*algoitny.ExecutionEvent, bool) {
			if m.End {
				if len(sent) >= m.Tests {
					return nil, true
				}
				cur, err := e.Store.GetJob(ctx, job.ID)
				if err != nil {
					return nil, true
				}
				return fromExecution(cur), true
			}
			if m.Event != nil {
				m.Events = append(m.Events, *m.Event)
			}
			return unsent(m.Events), false
		})
}

// HintEvents follows hint generation for an execution. If it already has
// hints, they are sent at once and the subscription ends.
func (e *Events) HintEvents(ctx context.Context, h *algoitny.SearchHistory) (<-chan *algoitny.HintEvent, error) {
	ref := h.Ref()
	return stream(ctx, e, hintTopic(ref),
		func() ([]*algoitny.HintEvent, bool, error) {
			cur, err := e.Store.GetHistory(ctx, ref)
			if err != nil {
				return nil, false, err
			}
			if len(cur.Hints) > 0 {
				return []*algoitny.HintEvent{{History: ref, Done: true, Hints: cur.Hints}}, true, nil
			}
			return nil, false, nil
		},
		func(ev algoitny.HintEvent) ([]*algoitny.HintEvent, bool) { return []*algoitny.HintEvent{&ev}, ev.Done })
}
