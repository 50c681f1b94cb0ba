package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
)

// batchStore records the writes of an attempt, in the order they are
// made; each write takes delay, so that a worker reporting faster than
// storage keeps (the judge between quick tests) queues them.
type batchStore struct {
	jobs.Store // unused methods panic
	delay      time.Duration
	failFinal  error

	mu  sync.Mutex
	log []string
}

func (s *batchStore) record(entry string) {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, entry)
}

func (s *batchStore) writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *batchStore) PutExecutionTests(_ context.Context, evs []algoitny.ExecutionEvent) error {
	for _, ev := range evs {
		s.record(fmt.Sprint("test ", ev.Index))
	}
	return nil
}

func (s *batchStore) AddJobProgress(_ context.Context, p *algoitny.JobProgress) error {
	s.record("progress " + p.Step)
	return nil
}

func (s *batchStore) TransitionJobFrom(_ context.Context, cur *algoitny.Job, t algoitny.JobTransition) (*algoitny.Job, error) {
	s.record("transition " + string(t.Status))
	next := *cur
	next.Status, next.UpdatedAt = t.Status, time.Now()
	return &next, nil
}

func (s *batchStore) CompleteExecution(_ context.Context, h *algoitny.SearchHistory, cur *algoitny.Job, t algoitny.JobTransition, p *algoitny.JobProgress) (*algoitny.Job, error) {
	if s.failFinal != nil {
		return nil, s.failFinal
	}
	s.record("complete")
	next := *cur
	next.Status, next.UpdatedAt = t.Status, time.Now()
	return &next, nil
}

func (s *batchStore) CountExecution(context.Context, *algoitny.SearchHistory) error { return nil }

// recordingBroker logs what is published, in order: "job STATUS step",
// "test INDEX" for each test of an execution event, "end".
type recordingBroker struct {
	pubsub.Broker
	mu  sync.Mutex
	log []string
}

func (b *recordingBroker) Publish(ctx context.Context, topic string, payload []byte) error {
	var msg struct {
		Job *struct {
			Status string
		}
		Progress *struct{ Step string }
		E        *algoitny.ExecutionEvent  `json:"e"`
		Es       []algoitny.ExecutionEvent `json:"es"`
		End      bool                      `json:"end"`
	}
	if err := json.Unmarshal(payload, &msg); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case strings.HasPrefix(topic, "job:"):
		step := ""
		if msg.Progress != nil {
			step = msg.Progress.Step
		}
		b.log = append(b.log, "job "+msg.Job.Status+" "+step)
	case msg.End:
		b.log = append(b.log, "end")
	default:
		if msg.E != nil {
			msg.Es = append(msg.Es, *msg.E)
		}
		for _, ev := range msg.Es {
			b.log = append(b.log, fmt.Sprint("test ", ev.Index))
		}
	}
	return nil
}

func (b *recordingBroker) published() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.log)
}

func newBatchRunner(store *batchStore, interval time.Duration) (*jobs.Runner, *recordingBroker) {
	broker := &recordingBroker{}
	events := &jobs.Events{Broker: broker}
	return jobs.NewBareRunner(jobs.Config{Store: store, Events: events, ExecutionProgressInterval: interval}), broker
}

func runningJob() *algoitny.Job {
	return &algoitny.Job{ID: "j1", Type: algoitny.JobCodeExecution, Status: algoitny.JobProcessing, UserID: "u1", UpdatedAt: time.Now()}
}

// checkTestsOnce fails unless log holds "test 0" … "test n-1" once each.
func checkTestsOnce(t *testing.T, what string, log []string, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, e := range log {
		if strings.HasPrefix(e, "test ") {
			seen[e]++
		}
	}
	for i := range n {
		if c := seen[fmt.Sprint("test ", i)]; c != 1 {
			t.Fatalf("%s: test %d %d times, want once: %v", what, i, c, log)
		}
	}
	if len(seen) != n {
		t.Fatalf("%s: tests %v, want %d", what, seen, n)
	}
}

// before fails unless every entry of log with prefix comes before last.
func before(t *testing.T, what string, log []string, prefix, last string) {
	t.Helper()
	at := slices.Index(log, last)
	if at < 0 {
		t.Fatalf("%s: no %q in %v", what, last, log)
	}
	for i, e := range log {
		if strings.HasPrefix(e, prefix) && i > at {
			t.Fatalf("%s: %q after %q: %v", what, e, last, log)
		}
	}
}

// Progress steps and tests reported while storage lags behind are stored
// and published in the order reported, each test once, and the job's end
// (its final write, then its event) comes after all of them.
func TestBatcherKeepsOrder(t *testing.T) {
	t.Parallel()
	store := &batchStore{delay: 2 * time.Millisecond}
	r, broker := newBatchRunner(store, 5*time.Millisecond)
	a := r.NewAttempt(context.Background())
	job := runningJob()
	a.Progress(job, "judging")
	for i := range 10 {
		a.Announce(algoitny.ExecutionEvent{JobID: job.ID, Index: i, Total: 10})
	}
	if err := a.Finish(job, algoitny.JobTransition{Status: algoitny.JobCompleted}, "done"); err != nil {
		t.Fatal(err)
	}
	writes, published := store.writes(), broker.published()
	if writes[0] != "progress judging" || published[0] != "job PROCESSING judging" {
		t.Fatalf("not first: writes %v, published %v", writes, published)
	}
	checkTestsOnce(t, "stored", writes, 10)
	checkTestsOnce(t, "published", published, 10)
	if !slices.IsSortedFunc(slices.DeleteFunc(slices.Clone(published), func(e string) bool { return !strings.HasPrefix(e, "test ") }), func(a, b string) int {
		var x, y int
		_, _ = fmt.Sscan(strings.TrimPrefix(a, "test "), &x)
		_, _ = fmt.Sscan(strings.TrimPrefix(b, "test "), &y)
		return x - y
	}) {
		t.Fatalf("tests published out of order: %v", published)
	}
	before(t, "stored", writes, "test ", "transition COMPLETED")
	before(t, "stored", writes, "transition ", "progress done")
	before(t, "published", published, "test ", "job COMPLETED done")
}

// The tests no write has begun on when the judge ends are taken by the
// worker and stored with the execution: each test is stored once (on its
// own or with the execution) and published once, before the job's end.
func TestBatcherHandsOverUnwrittenTests(t *testing.T) {
	t.Parallel()
	for _, interval := range []time.Duration{-1, 5 * time.Millisecond, time.Hour} {
		t.Run(fmt.Sprint(interval), func(t *testing.T) {
			t.Parallel()
			store := &batchStore{delay: time.Millisecond}
			r, broker := newBatchRunner(store, interval)
			a := r.NewAttempt(context.Background())
			job := runningJob()
			for i := range 10 {
				a.Announce(algoitny.ExecutionEvent{JobID: job.ID, Index: i, Total: 10})
			}
			taken := a.TakeTests()
			writes := store.writes()
			for _, ev := range taken {
				writes = append(writes, fmt.Sprint("test ", ev.Index)) // stored with the execution
			}
			checkTestsOnce(t, "stored", writes, 10)
			h := &algoitny.SearchHistory{ID: "h1", UserID: "u1", JobID: job.ID}
			if err := a.Complete(job, h, taken); err != nil {
				t.Fatal(err)
			}
			published := broker.published()
			checkTestsOnce(t, "published", published, 10)
			before(t, "published", published, "test ", "job COMPLETED ")
			before(t, "published", published, "job ", "end")
		})
	}
}

// Should the execution's write fail, the tests handed over are stored and
// published on their own (a retry resumes from them), and nothing says
// the job ended.
func TestBatcherKeepsHandedOverTestsOnFailure(t *testing.T) {
	t.Parallel()
	store := &batchStore{failFinal: algoitny.Errorf(algoitny.EINTERNAL, "storage down")}
	r, broker := newBatchRunner(store, time.Hour)
	a := r.NewAttempt(context.Background())
	job := runningJob()
	for i := range 5 {
		a.Announce(algoitny.ExecutionEvent{JobID: job.ID, Index: i, Total: 5})
	}
	taken := a.TakeTests()
	if err := a.Complete(job, &algoitny.SearchHistory{ID: "h1", UserID: "u1", JobID: job.ID}, taken); err == nil {
		t.Fatal("no error")
	}
	checkTestsOnce(t, "stored", store.writes(), 5)
	published := broker.published()
	checkTestsOnce(t, "published", published, 5)
	if slices.ContainsFunc(published, func(e string) bool { return strings.HasPrefix(e, "job ") || e == "end" }) {
		t.Fatalf("an end was published: %v", published)
	}
}

// Reports made after the attempt ended (its batcher closed) are dropped,
// and nothing waits for them.
func TestBatcherClosed(t *testing.T) {
	t.Parallel()
	store := &batchStore{}
	r, broker := newBatchRunner(store, time.Hour)
	a := r.NewAttempt(context.Background())
	job := runningJob()
	a.Announce(algoitny.ExecutionEvent{JobID: job.ID, Index: 0, Total: 2})
	a.Close()
	checkTestsOnce(t, "stored at the end", store.writes(), 1)
	a.Progress(job, "late")
	a.Announce(algoitny.ExecutionEvent{JobID: job.ID, Index: 1, Total: 2})
	a.Flush()
	if taken := a.TakeTests(); len(taken) != 0 {
		t.Fatalf("taken after the end: %+v", taken)
	}
	if w, p := store.writes(), broker.published(); len(w) != 1 || len(p) != 1 {
		t.Fatalf("writes %v, published %v", w, p)
	}
}
