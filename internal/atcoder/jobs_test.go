package atcoder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/atcoder/atcodertest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// atcoderBundle is a test's tables, River schema, fake AtCoder Problems API
// and a River client running only the sync's jobs.
type atcoderBundle struct {
	db     *dynamo.DB
	srv    *atcodertest.Server
	client *river.Client[pgx.Tx]
	queue  *atcoder.Queue
}

func setupAtCoder(t *testing.T, cfg atcoder.JobsConfig) atcoderBundle {
	t.Helper()
	db, id := newDB(t), riverSchema(t, "atc")
	srv := atcodertest.NewServer(t)
	api, err := atcoder.NewClient(atcoder.ClientConfig{BaseURL: srv.URL, MinInterval: 10 * time.Millisecond, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	cfg.Syncer = &atcoder.Syncer{Store: db, API: api, Logger: logger}
	cfg.Logger = logger
	plugin, err := atcoder.NewJobs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	workers := river.NewWorkers()
	if err := plugin.Register(workers); err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema: id, Logger: logger, Workers: workers, PeriodicJobs: plugin.PeriodicJobs(),
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client.Stop(ctx)
	})
	return atcoderBundle{db: db, srv: srv, client: client, queue: atcoder.NewQueue(client)}
}

// acHistory returns n submissions of handle, two a second, every other one
// accepted, and the problems they accept.
func acHistory(handle string, n int, firstID int64) ([]atcoder.Submission, []string) {
	var subs []atcoder.Submission
	var ac []string
	for i := range n {
		p := fmt.Sprintf("abc%03d_%c", 100+i/8, 'a'+i%4)
		r := "WA"
		if i%2 == 0 {
			r = "AC"
			ac = append(ac, p)
		}
		subs = append(subs, atcodertest.Sub(firstID+int64(i), 1_700_000_000+int64(i/2), handle, fmt.Sprintf("abc%03d", 100+i/8), p, r))
	}
	slices.Sort(ac)
	return subs, slices.Compact(ac)
}

func TestAtCoderSweepJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A one-nanosecond budget: each run of the sweep syncs one user and
	// snoozes, so the users are synced over several runs of one job.
	b := setupAtCoder(t, atcoder.JobsConfig{Interval: 200 * time.Millisecond, MinAge: time.Millisecond, Budget: time.Nanosecond})
	b.srv.SetContests(atcoder.Contest{ID: "adt_all_20250522_3", StartEpochSecond: 1747904400, DurationSecond: 4800, Title: "AtCoder Daily Training ALL 2025/05/22 18:00start", RateChange: "-"})
	want := map[string][]string{}
	for i := range 3 {
		h := fmt.Sprintf("handle_%d", i)
		subs, ac := acHistory(h, 300*(i+1), int64(i)*100_000)
		b.srv.AddSubmissions(subs...)
		userID := fmt.Sprintf("u%d", i)
		if _, _, err := b.db.LinkAtCoder(ctx, userID, h); err != nil {
			t.Fatal(err)
		}
		want[userID] = ac
	}
	if err := b.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	algoitnytest.Eventually(t, 60*time.Second, "every linked user to be synced", func() bool {
		for u := range want {
			l, err := b.db.GetAtCoderLink(ctx, u)
			if err != nil || l.LastSyncedAt == nil {
				return false
			}
		}
		return true
	})
	for u, ac := range want {
		got, err := b.db.GetACList(ctx, u)
		if err != nil || !slices.Equal(got.ProblemIDs, ac) {
			t.Fatalf("%s: %d problems (%v), want %d", u, len(got.ProblemIDs), err, len(ac))
		}
	}
	// The first run discovered the ADT contests.
	if cs, err := b.db.ListADTContests(ctx, "202505"); err != nil || len(cs) != 1 {
		t.Fatalf("contests %+v %v", cs, err)
	}
	// One sweep job did it, snoozing between users.
	algoitnytest.Eventually(t, 30*time.Second, "the sweep job to complete after snoozing", func() bool {
		res, err := b.client.JobList(ctx, river.NewJobListParams().Kinds(atcoder.SweepArgs{}.Kind()).States(rivertype.JobStateCompleted))
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Jobs, func(j *rivertype.JobRow) bool { return snoozeCount(t, j) >= 2 })
	})
}

// snoozeCount reads River's snooze counter from a job's metadata.
func snoozeCount(t *testing.T, j *rivertype.JobRow) int {
	t.Helper()
	var md struct {
		Snoozes int `json:"snoozes"`
	}
	if err := json.Unmarshal(j.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	return md.Snoozes
}

func TestAtCoderSyncNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupAtCoder(t, atcoder.JobsConfig{Interval: time.Hour})
	subs, ac := acHistory("tourist", 700, 1)
	b.srv.AddSubmissions(subs...)
	if _, _, err := b.db.LinkAtCoder(ctx, "u1", "tourist"); err != nil {
		t.Fatal(err)
	}

	// Queued twice before any worker runs: one job.
	first, err := b.queue.EnqueueSync(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.queue.EnqueueSync(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if first.AlreadyQueued || !second.AlreadyQueued || second.JobID != first.JobID {
		t.Fatalf("first %+v second %+v", first, second)
	}
	ghost, err := b.queue.EnqueueSync(ctx, "ghost") // not linked
	if err != nil {
		t.Fatal(err)
	}

	if err := b.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	completed := func(id int64) func() bool {
		return func() bool {
			row, err := b.client.JobGet(ctx, id)
			return err == nil && row.State == rivertype.JobStateCompleted
		}
	}
	algoitnytest.Eventually(t, 30*time.Second, "the sync job", completed(first.JobID))
	got, err := b.db.GetACList(ctx, "u1")
	if err != nil || !slices.Equal(got.ProblemIDs, ac) {
		t.Fatalf("list %d problems (%v), want %d", len(got.ProblemIDs), err, len(ac))
	}
	// A user who is not linked (any more) is nothing to do, not a failure.
	algoitnytest.Eventually(t, 30*time.Second, "the job of an unlinked user", completed(ghost.JobID))

	// Once done, asking again queues a new sync.
	again, err := b.queue.EnqueueSync(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if again.AlreadyQueued || again.JobID == first.JobID {
		t.Fatalf("again %+v", again)
	}
	algoitnytest.Eventually(t, 30*time.Second, "the second sync job", completed(again.JobID))
}

// A manual plugin has no periodic sweep: nothing calls AtCoder Problems on
// its own.
func TestAtCoderPluginManual(t *testing.T) {
	t.Parallel()
	syncer := &atcoder.Syncer{}
	auto, err := atcoder.NewJobs(atcoder.JobsConfig{Syncer: syncer})
	if err != nil || len(auto.PeriodicJobs()) != 1 {
		t.Fatalf("the default plugin: %v %d periodic jobs", err, len(auto.PeriodicJobs()))
	}
	manual, err := atcoder.NewJobs(atcoder.JobsConfig{Syncer: syncer, Manual: true})
	if err != nil || len(manual.PeriodicJobs()) != 0 {
		t.Fatalf("a manual plugin: %v %d periodic jobs", err, len(manual.PeriodicJobs()))
	}
}
