package submissions_test

import (
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/submissions"
)

// The workers' records are read from DynamoDB.
var _ submissions.Workers = (*dynamo.DB)(nil)

// offer stores the record of a live worker running langs.
func (b *bundle) offer(t *testing.T, id string, expires time.Time, langs ...algoitny.Language) {
	t.Helper()
	w := &algoitny.Worker{ID: id, StartedAt: time.Now(), SeenAt: time.Now(), ExpiresAt: expires}
	for _, l := range langs {
		w.Languages = append(w.Languages, algoitny.LanguageOffer{Language: l, Name: "the " + string(l), Version: string(l) + " 1.0"})
	}
	algoitnytest.OK(t, b.db.PutWorker(t.Context(), w))
}

// TestExecuteOfferedLanguages: a submission in a language no live judge
// worker runs is refused (EINVALID on "language") before it is charged or
// queued; Languages lists what the live workers run.
func TestExecuteOfferedLanguages(t *testing.T) {
	t.Parallel()
	live := time.Now().Add(algoitny.WorkerExpiry)

	t.Run("ErrInvalid_NotOffered", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.svc.Workers = b.db
		b.offer(t, "w1", live, algoitny.LanguagePython, algoitny.LanguageC)
		// A worker that is gone does not count, whatever it ran.
		b.offer(t, "gone", time.Now().Add(-time.Second), algoitny.LanguageRust)
		start := time.Now()
		in := submission("fn main() {}")
		in.Language = algoitny.LanguageRust
		_, err := b.svc.Execute(as("u1", 5), in)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		if ae, ok := err.(*algoitny.Error); !ok || ae.Field != "language" {
			t.Fatalf("error %v, want one on the field language", err)
		}
		if n, _ := b.queue.count(); n != 0 {
			t.Fatalf("enqueued %d jobs, want 0", n)
		}
		if n := b.used(t, "u1", start); n != 0 {
			t.Fatalf("charged %d executions for a language no worker runs", n)
		}
		// What a live worker runs is taken.
		algoitnytest.Must[*algoitny.Job](t)(b.svc.Execute(as("u1", 5), submission("print(1)")))
	})

	t.Run("Languages", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.svc.Workers = b.db
		b.offer(t, "w1", live, algoitny.LanguageC, algoitny.LanguagePython)
		b.offer(t, "w2", live, algoitny.LanguagePython, algoitny.LanguageGo)
		got := algoitnytest.Must[[]*algoitny.LanguageOffer](t)(b.svc.Languages(as("u1", 5)))
		var ids []algoitny.Language
		for _, o := range got {
			ids = append(ids, o.Language)
		}
		// Each once, in the order of algoitny.Languages.
		if want := []algoitny.Language{algoitny.LanguagePython, algoitny.LanguageC, algoitny.LanguageGo}; len(ids) != 3 ||
			ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
			t.Fatalf("languages %v, want %v", ids, want)
		}
		if got[1].Name != "the c" || got[1].Version != "c 1.0" {
			t.Fatalf("offer %+v, want its name and version", got[1])
		}
	})

	t.Run("OK_NoWorkerAnnounced", func(t *testing.T) {
		t.Parallel()
		// Nothing is known while no worker has announced itself (the
		// first one starting): the job queues as it always did.
		b := setup(t)
		b.svc.Workers = b.db
		in := submission("fn main() {}")
		in.Language = algoitny.LanguageRust
		algoitnytest.Must[*algoitny.Job](t)(b.svc.Execute(as("u1", 5), in))
	})
}
