package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
)

// A subscriber that falls behind is dropped by the broker; the subscription
// must not end there (the client would think the job stopped) but start over
// from the current state and still see the job finish.
func TestJobEventsSurviveASlowSubscriber(t *testing.T) {
	t.Parallel()
	// The deadline only stops a hang: on a loaded machine DynamoDB Local's
	// reads of the current state have taken seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := setup(t)
	events := &jobs.Events{Broker: pubsub.NewMemory(pubsub.MemoryConfig{BufferSize: 2}), Store: b.db}
	job, _, err := b.db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobScriptGeneration, UserID: "u1", Platform: algoitny.PlatformBaekjoon, ProblemID: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := events.JobEvents(ctx, job.ID, b.db.GetJob)
	if err != nil {
		t.Fatal(err)
	}
	// Far more events than the buffers hold, while nobody reads.
	running, err := b.db.TransitionJob(ctx, job.ID, algoitny.JobTransition{Status: algoitny.JobProcessing})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		events.PublishJob(ctx, running, &algoitny.JobProgress{JobID: job.ID, Step: fmt.Sprint("step", i), Status: running.Status})
	}
	// The job finishes while the subscriber is still behind: its event is
	// lost with the dropped subscription.
	done, err := b.db.TransitionJob(ctx, job.ID, algoitny.JobTransition{Status: algoitny.JobCompleted})
	if err != nil {
		t.Fatal(err)
	}
	events.PublishJob(ctx, done, nil)

	var last *algoitny.JobEvent
	n := 0
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				if last == nil || last.Job.Status != algoitny.JobCompleted {
					t.Fatalf("subscription ended after %d events, last %+v", n, last)
				}
				return
			}
			last = ev
			n++
		case <-ctx.Done():
			t.Fatalf("no end after %d events, last status %s", n, last.Job.Status)
		}
	}
}
