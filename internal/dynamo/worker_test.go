package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// TestWorkers: a worker's record is stored, renewed (languages replaced)
// and listed while it is live; an expired record is not listed.
func TestWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	db.SetClock(func() time.Time { return now })
	python := algoitny.LanguageOffer{Language: algoitny.LanguagePython, Name: "Python 3", Version: "Python 3.11.2"}
	c := algoitny.LanguageOffer{Language: algoitny.LanguageC, Name: "C17 (gcc -O2)", Version: "gcc 12.2.0"}

	algoitnytest.OK(t, db.PutWorker(ctx, &algoitny.Worker{ID: "a", Host: "host-a", Languages: []algoitny.LanguageOffer{python},
		StartedAt: now, SeenAt: now, ExpiresAt: now.Add(algoitny.WorkerExpiry)}))
	algoitnytest.OK(t, db.PutWorker(ctx, &algoitny.Worker{ID: "gone", Languages: []algoitny.LanguageOffer{c},
		StartedAt: now.Add(-time.Hour), SeenAt: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute)}))
	got := algoitnytest.Must[[]*algoitny.Worker](t)(db.ListWorkers(ctx))
	if len(got) != 1 || got[0].ID != "a" || got[0].Host != "host-a" || len(got[0].Languages) != 1 || got[0].Languages[0] != python ||
		!got[0].ExpiresAt.Equal(now.Add(algoitny.WorkerExpiry)) {
		t.Fatalf("live workers %+v, want worker a with python", got)
	}

	// A renewal replaces the record, languages included.
	later := now.Add(algoitny.WorkerHeartbeat)
	algoitnytest.OK(t, db.PutWorker(ctx, &algoitny.Worker{ID: "a", Host: "host-a", Languages: []algoitny.LanguageOffer{python, c},
		StartedAt: now, SeenAt: later, ExpiresAt: later.Add(algoitny.WorkerExpiry)}))
	got = algoitnytest.Must[[]*algoitny.Worker](t)(db.ListWorkers(ctx))
	if len(got) != 1 || len(got[0].Languages) != 2 || !got[0].SeenAt.Equal(later) {
		t.Fatalf("renewed workers %+v", got)
	}

	// Past its expiry, a record no longer counts.
	db.SetClock(func() time.Time { return later.Add(algoitny.WorkerExpiry) })
	if got := algoitnytest.Must[[]*algoitny.Worker](t)(db.ListWorkers(ctx)); len(got) != 0 {
		t.Fatalf("expired workers listed: %+v", got)
	}
}
