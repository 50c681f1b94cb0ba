package dynamo_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func TestJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("LifecycleAndRiverLink", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		j := &algoitny.Job{Type: algoitny.JobScriptGeneration, UserID: "u1", Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Tags: []string{"dp"}}
		j, created, err := db.CreateJob(ctx, j)
		if err != nil || !created || j.Status != algoitny.JobPending {
			t.Fatalf("create: %+v %v %v", j, created, err)
		}
		algoitnytest.Must[*algoitny.Job](t)(db.SetRiverJobID(ctx, j.ID, 4242))
		byTask := algoitnytest.Must[*algoitny.Job](t)(db.GetJobByRiverID(ctx, 4242))
		if byTask.ID != j.ID {
			t.Fatalf("by task = %s", byTask.ID)
		}
		_, err = db.GetJobByRiverID(ctx, 1)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)

		running := algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobProcessing}))
		if running.StartedAt == nil {
			t.Fatal("no StartedAt")
		}
		code := "print(1)"
		done := algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobCompleted, GeneratorCode: &code}))
		if done.Status != algoitny.JobCompleted || done.GeneratorCode != code || done.FinishedAt == nil || done.Tags[0] != "dp" {
			t.Fatalf("done %+v", done)
		}
		// The job returned is the one stored (it is not read back).
		if stored := algoitnytest.Must[*algoitny.Job](t)(db.GetJob(ctx, j.ID)); !reflect.DeepEqual(stored, done) {
			t.Fatalf("transition returned %+v, stored %+v", done, stored)
		}
		// Final states are final.
		_, err = db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobCancelled})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		// From a state read before another transition: ECONFLICT, nothing written.
		_, err = db.TransitionJobFrom(ctx, running, algoitny.JobTransition{Status: algoitny.JobFailed})
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
		if stored := algoitnytest.Must[*algoitny.Job](t)(db.GetJob(ctx, j.ID)); stored.Status != algoitny.JobCompleted {
			t.Fatalf("a stale transition changed the job: %s", stored.Status)
		}
		_, err = db.TransitionJob(ctx, "missing", algoitny.JobTransition{Status: algoitny.JobProcessing})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ConcurrentTransitionsOneWins", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		j, _, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u1"})
		algoitnytest.OK(t, err)
		algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobProcessing}))
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := map[algoitny.JobStatus]int{}
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := []algoitny.JobStatus{algoitny.JobCompleted, algoitny.JobFailed, algoitny.JobCancelled}[i%3]
				_, err := db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: next})
				if err != nil && !algoitny.IsCode(err, algoitny.ECONFLICT) {
					t.Error(err)
				}
				if err == nil {
					mu.Lock()
					wins[next]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		total := 0
		for _, n := range wins {
			total += n
		}
		if total != 1 {
			t.Fatalf("%d transitions out of PROCESSING succeeded: %v", total, wins)
		}
	})

	t.Run("Idempotency", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		var wg sync.WaitGroup
		ids := make([]string, 8)
		created := make([]bool, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j, c, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u1", IdempotencyKey: "k1"})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i], created[i] = j.ID, c
			}()
		}
		wg.Wait()
		n := 0
		for i := range ids {
			if ids[i] != ids[0] {
				t.Fatalf("different jobs for one key: %v", ids)
			}
			if created[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d creations reported", n)
		}
		// The same key of another user is another job.
		other, c, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u2", IdempotencyKey: "k1"})
		if err != nil || !c || other.ID == ids[0] {
			t.Fatalf("other user: %v %v", c, err)
		}
		mine := algoitnytest.Must[algoitny.Page[*algoitny.Job]](t)(db.ListJobs(ctx, algoitny.JobFilter{UserID: "u1"}, algoitny.PageRequest{}))
		if len(mine.Items) != 1 {
			t.Fatalf("u1 has %d jobs", len(mine.Items))
		}
		// A released key (its job could not be queued) makes a new job; the
		// release names the job, so it cannot free a key another job took.
		algoitnytest.OK(t, db.ReleaseIdempotencyKey(ctx, "u2", "k1", ids[0]))
		if again, c, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u2", IdempotencyKey: "k1"}); err != nil || c || again.ID != other.ID {
			t.Fatalf("after releasing another job's key: %v %v", c, err)
		}
		algoitnytest.OK(t, db.ReleaseIdempotencyKey(ctx, "u2", "k1", other.ID))
		if fresh, c, err := db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: "u2", IdempotencyKey: "k1"}); err != nil || !c || fresh.ID == other.ID {
			t.Fatalf("after release: %v %v", c, err)
		}
	})

	t.Run("ListsAndStale", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		clock := tick()
		var now time.Time
		db.SetClock(func() time.Time { now = clock(); return now })
		var jobs []*algoitny.Job
		for i := range 7 {
			typ := algoitny.JobCodeExecution
			if i%2 == 1 {
				typ = algoitny.JobHintGeneration
			}
			j, _, err := db.CreateJob(ctx, &algoitny.Job{Type: typ, UserID: fmt.Sprint("u", i%2)})
			algoitnytest.OK(t, err)
			jobs = append(jobs, j)
		}
		for _, j := range jobs[:4] {
			algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, j.ID, algoitny.JobTransition{Status: algoitny.JobProcessing}))
		}
		cutoff := now.Add(time.Millisecond)
		algoitnytest.Must[*algoitny.Job](t)(db.TransitionJob(ctx, jobs[4].ID, algoitny.JobTransition{Status: algoitny.JobProcessing})) // fresh

		exec := algoitny.JobCodeExecution
		byType, pages := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
			return db.ListJobs(ctx, algoitny.JobFilter{Type: &exec}, r)
		})
		if len(byType) != 4 || pages != 2 || byType[0].ID != jobs[6].ID {
			t.Fatalf("by type: %d in %d pages", len(byType), pages)
		}
		processing := algoitny.JobProcessing
		byStatus, _ := listAll(t, 2, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
			return db.ListJobs(ctx, algoitny.JobFilter{Status: &processing}, r)
		})
		if len(byStatus) != 5 {
			t.Fatalf("processing: %d", len(byStatus))
		}
		mineProcessing, _ := listAll(t, 1, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
			return db.ListJobs(ctx, algoitny.JobFilter{UserID: "u0", Status: &processing}, r)
		})
		if len(mineProcessing) != 3 { // jobs 0, 2, 4
			t.Fatalf("u0 processing: %d", len(mineProcessing))
		}
		_, err := db.ListJobs(ctx, algoitny.JobFilter{}, algoitny.PageRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)

		stale := algoitnytest.Must[[]*algoitny.Job](t)(db.ListStaleJobs(ctx, algoitny.JobProcessing, cutoff, 100))
		if len(stale) != 4 || stale[0].ID != jobs[0].ID {
			t.Fatalf("stale: %d", len(stale))
		}
	})

	t.Run("Progress", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		_, err := db.LatestJobProgress(ctx, "j1")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		long := ""
		for range 30 {
			long += "step "
		}
		// Steps in the same millisecond must not overwrite each other.
		db.SetClock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
		for i := range 5 {
			algoitnytest.OK(t, db.AddJobProgress(ctx, &algoitny.JobProgress{JobID: "j1", Step: fmt.Sprint("step ", i), Status: algoitny.JobProcessing, Percent: i * 20}))
		}
		db.SetClock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC) })
		algoitnytest.OK(t, db.AddJobProgress(ctx, &algoitny.JobProgress{JobID: "j1", Step: long, Status: algoitny.JobCompleted, Percent: 100}))
		all, _ := listAll(t, 4, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.JobProgress], error) {
			return db.ListJobProgress(ctx, "j1", r)
		})
		if len(all) != 6 {
			t.Fatalf("%d steps", len(all))
		}
		latest := algoitnytest.Must[*algoitny.JobProgress](t)(db.LatestJobProgress(ctx, "j1"))
		if latest.Status != algoitny.JobCompleted || len(latest.Step) != 100 {
			t.Fatalf("latest %+v", latest)
		}
	})
}
