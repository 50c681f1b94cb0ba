package jobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func TestReaper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	newJob := func(status algoitny.JobStatus, riverID int64) *algoitny.Job {
		t.Helper()
		j, _, err := b.db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		if riverID != 0 {
			if _, err := b.db.SetRiverJobID(ctx, j.ID, riverID); err != nil {
				t.Fatal(err)
			}
		}
		if status == algoitny.JobProcessing {
			if _, err := b.db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: status}); err != nil {
				t.Fatal(err)
			}
		}
		return j
	}
	insert := func(args river.JobArgs) int64 {
		t.Helper()
		res, err := b.runner.Client().Insert(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}

	neverQueued := newJob(algoitny.JobPending, 0)
	unlinked := newJob(algoitny.JobPending, 0) // inserted, but the process died before linking it
	unlinkedRiverID := insert(jobs.ExecuteArgs{JobID: unlinked.ID})
	lost := newJob(algoitny.JobProcessing, 987654321)
	requeuedID := insert(jobs.ExecuteArgs{JobID: "x1"}) // available in River: a rescued job waiting to run again
	requeued := newJob(algoitny.JobProcessing, requeuedID)
	discardedID := insert(jobs.ExecuteArgs{JobID: "x2"})
	if _, err := b.runner.Client().JobCancel(ctx, discardedID); err != nil {
		t.Fatal(err)
	}
	cancelled := newJob(algoitny.JobProcessing, discardedID)
	healthyID := insert(jobs.ExecuteArgs{JobID: "x3"})
	healthy := newJob(algoitny.JobPending, healthyID) // PENDING and queued: fine
	time.Sleep(5 * time.Millisecond)
	follow, err := b.events.JobEvents(ctx, lost.ID, b.db.GetJob)
	if err != nil {
		t.Fatal(err)
	}
	<-follow // the current state

	n, err := b.runner.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Fatalf("repaired %d records, want 5", n)
	}
	for _, tc := range []struct {
		name   string
		job    *algoitny.Job
		status algoitny.JobStatus
		msg    string
	}{
		{"NeverQueued", neverQueued, algoitny.JobPending, ""},
		{"NeverLinked", unlinked, algoitny.JobPending, ""},
		{"LostByRiver", lost, algoitny.JobFailed, "lost by the job runner"},
		{"BackInTheQueue", requeued, algoitny.JobPending, ""},
		{"CancelledInRiver", cancelled, algoitny.JobCancelled, ""},
		{"Healthy", healthy, algoitny.JobPending, ""},
	} {
		got, err := b.db.GetJob(ctx, tc.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.status || !strings.Contains(got.ErrorMessage, tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, got.Status, got.ErrorMessage, tc.status, tc.msg)
		}
	}
	// A record without a River job is queued (it was paid for); one whose
	// River job exists is linked to it, not queued twice.
	for _, tc := range []struct {
		name  string
		job   *algoitny.Job
		river int64
	}{{"NeverQueued", neverQueued, 0}, {"NeverLinked", unlinked, unlinkedRiverID}} {
		got, err := b.db.GetJob(ctx, tc.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.RiverJobID == 0 || (tc.river != 0 && got.RiverJobID != tc.river) {
			t.Fatalf("%s: linked to River job %d, want %d", tc.name, got.RiverJobID, tc.river)
		}
		row, err := b.runner.Client().JobGet(ctx, got.RiverJobID)
		if err != nil || row.State != rivertype.JobStateAvailable || !strings.Contains(string(row.EncodedArgs), tc.job.ID) {
			t.Fatalf("%s: River job %+v %v", tc.name, row, err)
		}
		if p, err := b.db.LatestJobProgress(ctx, tc.job.ID); err != nil || p.Step != "reaper" || !strings.Contains(p.Message, "queued late") {
			t.Fatalf("%s: progress %+v %v", tc.name, p, err)
		}
	}
	// Each repair left a progress step explaining it.
	p, err := b.db.LatestJobProgress(ctx, lost.ID)
	if err != nil || p.Step != "reaper" {
		t.Fatalf("progress %+v %v", p, err)
	}
	// A subscriber following the job sees it end.
	select {
	case ev := <-follow:
		if ev == nil || ev.Job.Status != algoitny.JobFailed || ev.Progress == nil || ev.Progress.Step != "reaper" {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the repair was not published")
	}
	// A second sweep finds nothing more to do.
	if n, err := b.runner.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep repaired %d (%v)", n, err)
	}
}

// TestReaperQueuesUnlinkedAfterAMinute: a record whose River job was never
// inserted (PostgreSQL was down at the insert) is queued a minute after it
// was stored, not after StaleAfter; a linked one waits StaleAfter, and a
// record of a moment ago is left to its request.
func TestReaperQueuesUnlinkedAfterAMinute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, id := freshStores(t, "reapu")
	events := &jobs.Events{Broker: pubsub.NewMemory(pubsub.MemoryConfig{}), Store: db}
	r, err := jobs.New(jobs.Config{Pool: pool, Schema: id, Store: db, Events: events, StaleAfter: 10 * time.Minute, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ago time.Duration) *algoitny.Job {
		t.Helper()
		db.SetClock(func() time.Time { return time.Now().Add(-ago) })
		defer db.SetClock(time.Now)
		j, _, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u1"})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	old := at(2 * time.Minute)
	recent := at(5 * time.Second)
	linked := at(2 * time.Minute)
	res, err := r.Client().Insert(ctx, jobs.ExecuteArgs{JobID: linked.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.SetClock(func() time.Time { return time.Now().Add(-2 * time.Minute) })
	if _, err := db.SetRiverJobID(ctx, linked.ID, res.Job.ID); err != nil {
		t.Fatal(err)
	}
	db.SetClock(time.Now)
	if n, err := r.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("repaired %d (%v), want 1: the unlinked record of two minutes ago", n, err)
	}
	for _, tc := range []struct {
		name   string
		job    *algoitny.Job
		linked bool
		river  int64
	}{{"UnlinkedTwoMinutes", old, true, 0}, {"UnlinkedFiveSeconds", recent, false, 0}, {"Linked", linked, true, res.Job.ID}} {
		got, err := db.GetJob(ctx, tc.job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if (got.RiverJobID != 0) != tc.linked || (tc.river != 0 && got.RiverJobID != tc.river) {
			t.Errorf("%s: River job %d", tc.name, got.RiverJobID)
		}
	}
}
