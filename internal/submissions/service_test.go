package submissions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/submissions"
)

// The storage of the service is *dynamo.DB (asserted here, beside the
// consumer, so that internal/dynamo need not import the feature).
var _ submissions.Store = (*dynamo.DB)(nil)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// queue is an Enqueuer that records what it was given; failing makes
// Enqueue fail as an unreachable PostgreSQL would.
type queue struct {
	mu        sync.Mutex
	enqueued  []*algoitny.Job
	cancelled []*algoitny.Job
	failing   error
}

func (q *queue) Enqueue(_ context.Context, job *algoitny.Job) (*algoitny.Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failing != nil {
		return job, q.failing
	}
	q.enqueued = append(q.enqueued, job)
	return job, nil
}

func (q *queue) Cancel(_ context.Context, job *algoitny.Job) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancelled = append(q.cancelled, job)
	return q.failing
}

func (q *queue) count() (enqueued, cancelled int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.enqueued), len(q.cancelled)
}

// publisher records the announced jobs.
type publisher struct {
	mu   sync.Mutex
	jobs []*algoitny.Job
}

func (p *publisher) PublishJob(_ context.Context, job *algoitny.Job, _ *algoitny.JobProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jobs = append(p.jobs, job)
}

// problems serves one published problem with test cases, "p1" on Baekjoon,
// and a draft "draft"; any other is ENOTFOUND.
type problems struct{}

func (problems) Get(_ context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	switch ref.ProblemID {
	case "p1":
		return &algoitny.Problem{Platform: ref.Platform, ProblemID: "p1", Title: "A+B", IsCompleted: true, TestCaseCount: 3}, nil
	case "draft":
		return &algoitny.Problem{Platform: ref.Platform, ProblemID: "draft", Title: "Draft", TestCaseCount: 3}, nil
	}
	return nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem not found")
}

type bundle struct {
	db     *dynamo.DB
	queue  *queue
	events *publisher
	svc    *submissions.Service
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{db: dynamotest.NewDB(t), queue: &queue{}, events: &publisher{}}
	b.svc = &submissions.Service{
		Store: b.db, Problems: problems{}, Quota: &accounts.Service{}, Queue: b.queue, Events: b.events,
		CanRegister: func(ctx context.Context) error {
			if algoitny.ActorFrom(ctx).IsStaff() {
				return nil
			}
			return algoitny.Errorf(algoitny.EFORBIDDEN, "your plan cannot register problems")
		},
	}
	return b
}

// as returns a context signed in as user id, with executionsPerDay a day.
func as(id string, executionsPerDay int) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{
		User: &algoitny.User{ID: id, Email: id + "@example.com", IsActive: true},
		Plan: &algoitny.Plan{ // unnamed: a named plan is checked against its stored item when charged
			MaxExecutionsPerDay: executionsPerDay, MaxHintsPerDay: executionsPerDay},
	})
}

func asStaff(id string) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{
		User: &algoitny.User{ID: id, Email: id + "@example.com", IsActive: true, IsStaff: true},
		Plan: &algoitny.Plan{MaxExecutionsPerDay: algoitny.Unlimited}, // unnamed: not stored
	})
}

func submission(code string) submissions.ExecuteInput {
	return submissions.ExecuteInput{
		Problem:  algoitny.ProblemRef{Platform: algoitny.PlatformBaekjoon, ProblemID: "p1"},
		Language: algoitny.LanguagePython, Code: code,
	}
}

// used returns how many executions user has been charged today (and the
// day before, should the test have run over midnight UTC).
func (b *bundle) used(t *testing.T, user string, since time.Time) int {
	t.Helper()
	n := 0
	for _, day := range days(since) {
		counts, err := b.db.UsageCounts(context.Background(), user, day)
		algoitnytest.OK(t, err)
		n += counts[algoitny.ActionExecution]
	}
	return n
}

// days returns the quota days from since to now.
func days(since time.Time) []string {
	out := []string{algoitny.UsageDay(since)}
	if now := algoitny.UsageDay(time.Now()); now != out[0] {
		out = append(out, now)
	}
	return out
}

func TestExecute(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		start := time.Now()
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		if j.Status != algoitny.JobPending || j.Type != algoitny.JobCodeExecution || j.UserID != "u1" || j.UserEmail != "u1@example.com" || j.Title != "A+B" {
			t.Fatalf("job = %+v", j)
		}
		if j.PaidWith == nil {
			t.Fatal("the execution is not paid for")
		}
		if n, _ := b.queue.count(); n != 1 {
			t.Fatalf("enqueued %d jobs, want 1", n)
		}
		if n := b.used(t, "u1", start); n != 1 {
			t.Fatalf("charged %d executions, want 1", n)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		start := time.Now()
		for name, in := range map[string]submissions.ExecuteInput{
			"EmptyCode":      submission(""),
			"BlankCode":      submission(" \n\t"),
			"OversizedCode":  submission(strings.Repeat("x", submissions.MaxCodeBytes+1)),
			"NonUTF8Code":    submission("print(1)\xff"),
			"BadLanguage":    func() submissions.ExecuteInput { in := submission("print(1)"); in.Language = "cobol"; return in }(),
			"BadIdempotency": func() submissions.ExecuteInput { in := submission("print(1)"); in.IdempotencyKey = "a#b"; return in }(),
			"LongIdempotency": func() submissions.ExecuteInput {
				in := submission("print(1)")
				in.IdempotencyKey = strings.Repeat("k", 101)
				return in
			}(),
			"PublicOfDraft": func() submissions.ExecuteInput {
				in := submission("print(1)")
				in.Problem.ProblemID, in.IsCodePublic = "draft", true
				return in
			}(),
		} {
			_, err := b.svc.Execute(as("u1", 5), in)
			if got := algoitny.ErrorCode(err); got != algoitny.EINVALID {
				t.Errorf("%s: error code = %q (%v), want EINVALID", name, got, err)
			}
		}
		if n, _ := b.queue.count(); n != 0 {
			t.Fatalf("enqueued %d jobs, want 0", n)
		}
		if n := b.used(t, "u1", start); n != 0 {
			t.Fatalf("charged %d executions, want 0", n)
		}
	})

	t.Run("CodeAtLimit", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.svc.Execute(as("u1", 5), submission(strings.Repeat("x", submissions.MaxCodeBytes)))
		algoitnytest.OK(t, err)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		in := submission("print(1)")
		in.Problem.ProblemID = "nope"
		_, err := b.svc.Execute(as("u1", 5), in)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ErrUnauthenticated", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.svc.Execute(context.Background(), submission("print(1)"))
		algoitnytest.ErrCode(t, err, algoitny.EUNAUTHENTICATED)
	})

	// N concurrent submissions against a limit of L admit exactly L; the
	// rest are refused with ERATELIMITED and neither stored nor queued.
	t.Run("QuotaExact", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const n, limit = 12, 5
		start := time.Now()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = b.svc.Execute(as("u1", limit), submission("print(1)")) })
		}
		wg.Wait()
		admitted, refused := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				admitted++
			case algoitny.IsCode(err, algoitny.ERATELIMITED):
				refused++
			default:
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if len(days(start)) > 1 {
			t.Skip("the test ran over midnight UTC: two quota days")
		}
		if admitted != limit || refused != n-limit {
			t.Fatalf("admitted %d and refused %d, want %d and %d", admitted, refused, limit, n-limit)
		}
		if q, _ := b.queue.count(); q != limit {
			t.Fatalf("enqueued %d jobs, want %d", q, limit)
		}
		if used := b.used(t, "u1", start); used != limit {
			t.Fatalf("charged %d executions, want %d", used, limit)
		}
	})

	// A repeated idempotency key returns the first job, charged and queued
	// once — one after the other, and all at once.
	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		start := time.Now()
		in := submission("print(1)")
		in.IdempotencyKey = "k1"
		first, err := b.svc.Execute(as("u1", 5), in)
		algoitnytest.OK(t, err)
		again, err := b.svc.Execute(as("u1", 5), in)
		algoitnytest.OK(t, err)
		if again.ID != first.ID {
			t.Fatalf("the repeat got job %s, want %s", again.ID, first.ID)
		}
		in.IdempotencyKey = "k2"
		ids := make([]string, 6)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				j, err := b.svc.Execute(as("u1", 5), in)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = j.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent repeats got jobs %v, want one", ids)
			}
		}
		if q, _ := b.queue.count(); q != 2 {
			t.Fatalf("enqueued %d jobs, want 2", q)
		}
		if used := b.used(t, "u1", start); used != 2 {
			t.Fatalf("charged %d executions, want 2", used)
		}
		// Another user's key is theirs.
		in.IdempotencyKey = "k1"
		other, err := b.svc.Execute(as("u2", 5), in)
		algoitnytest.OK(t, err)
		if other.ID == first.ID {
			t.Fatal("another user's key returned the first user's job")
		}
	})

	// A job that could not be queued is stored PENDING, unlinked and paid
	// for, and returned: the reaper queues it later.
	t.Run("EnqueueFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.queue.failing = errors.New("postgres is down")
		start := time.Now()
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		stored, err := b.db.GetJob(algoitny.WithFreshReads(context.Background()), j.ID)
		algoitnytest.OK(t, err)
		if stored.Status != algoitny.JobPending || stored.RiverJobID != 0 || j.Status != algoitny.JobPending {
			t.Fatalf("stored job = %+v, want PENDING and unlinked", stored)
		}
		if used := b.used(t, "u1", start); used != 1 {
			t.Fatalf("charged %d executions, want 1", used)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		cancelled, err := b.svc.Cancel(as("u1", 5), j.ID)
		algoitnytest.OK(t, err)
		if cancelled.Status != algoitny.JobCancelled {
			t.Fatalf("status = %s, want CANCELLED", cancelled.Status)
		}
		if _, n := b.queue.count(); n != 1 {
			t.Fatalf("the queue was told to cancel %d jobs, want 1", n)
		}
		if len(b.events.jobs) != 1 || b.events.jobs[0].Status != algoitny.JobCancelled {
			t.Fatalf("announced %+v, want the cancelled job", b.events.jobs)
		}
		steps, err := b.svc.Progress(algoitny.WithFreshReads(as("u1", 5)), cancelled, algoitny.PageRequest{First: 10})
		algoitnytest.OK(t, err)
		if len(steps.Items) != 1 || steps.Items[0].Step != "cancelled" {
			t.Fatalf("steps = %+v, want the cancellation", steps.Items)
		}
		// A finished job cannot be cancelled again.
		_, err = b.svc.Cancel(as("u1", 5), j.ID)
		algoitnytest.ErrCode(t, err, algoitny.ECONFLICT)
	})

	// The record is CANCELLED even if the queue could not be told: the
	// worker checks the record.
	t.Run("QueueFails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		b.queue.failing = errors.New("postgres is down")
		cancelled, err := b.svc.Cancel(as("u1", 5), j.ID)
		algoitnytest.OK(t, err)
		if cancelled.Status != algoitny.JobCancelled {
			t.Fatalf("status = %s, want CANCELLED", cancelled.Status)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		_, err = b.svc.Cancel(as("u2", 5), j.ID)
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = b.svc.Cancel(as("u1", 5), "no-such-job")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		if _, n := b.queue.count(); n != 0 {
			t.Fatalf("the queue was told to cancel %d jobs, want 0", n)
		}
	})

	t.Run("Staff", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		j, err := b.svc.Execute(as("u1", 5), submission("print(1)"))
		algoitnytest.OK(t, err)
		_, err = b.svc.Cancel(asStaff("admin"), j.ID)
		algoitnytest.OK(t, err)
	})
}

func TestExtractProblem(t *testing.T) {
	t.Parallel()
	b := setup(t)

	t.Run("OK", func(t *testing.T) {
		j, err := b.svc.ExtractProblem(asStaff("admin"), "https://www.acmicpc.net/problem/1000")
		algoitnytest.OK(t, err)
		if j.Type != algoitny.JobProblemExtraction || j.ProblemURL != "https://www.acmicpc.net/problem/1000" {
			t.Fatalf("job = %+v", j)
		}
	})
	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := b.svc.ExtractProblem(as("u1", 5), "https://www.acmicpc.net/problem/1000")
		algoitnytest.ErrCode(t, err, algoitny.EFORBIDDEN)
	})
	t.Run("ErrInvalidHost", func(t *testing.T) {
		_, err := b.svc.ExtractProblem(asStaff("admin"), "https://example.com/problem/1000")
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
	t.Run("ErrInvalidURL", func(t *testing.T) {
		_, err := b.svc.ExtractProblem(asStaff("admin"), "ftp://www.acmicpc.net/problem/1000")
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
}

func TestGenerateHints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	history := func(verdict algoitny.Verdict, hints []string) algoitny.HistoryRef {
		t.Helper()
		id, at := b.db.NewHistoryID()
		h := &algoitny.SearchHistory{
			ID: id, CreatedAt: at, UserID: "u1", UserEmail: "u1@example.com", Platform: algoitny.PlatformBaekjoon, ProblemID: "p1",
			ProblemTitle: "A+B", Language: algoitny.LanguagePython, Code: "print(1)", Verdict: verdict, TotalCount: 1, Hints: hints,
		}
		algoitnytest.OK(t, b.db.CreateHistory(ctx, h))
		return algoitny.HistoryRef{UserID: "u1", ID: id}
	}
	hintsUsed := func() int {
		t.Helper()
		counts, err := b.db.UsageCounts(ctx, "u1", algoitny.UsageDay(time.Now()))
		algoitnytest.OK(t, err)
		return counts[algoitny.ActionHint]
	}

	t.Run("OK", func(t *testing.T) {
		before := hintsUsed()
		j, err := b.svc.GenerateHints(as("u1", 5), history(algoitny.VerdictWrongAnswer, nil))
		algoitnytest.OK(t, err)
		if j.Type != algoitny.JobHintGeneration || j.PaidWith == nil || hintsUsed() != before+1 {
			t.Fatalf("job = %+v, want a charged HINT_GENERATION", j)
		}
	})
	// An execution with hints already is not charged again.
	t.Run("HintsAlreadyThere", func(t *testing.T) {
		before := hintsUsed()
		j, err := b.svc.GenerateHints(as("u1", 5), history(algoitny.VerdictWrongAnswer, []string{"think of overflow"}))
		algoitnytest.OK(t, err)
		if j.PaidWith != nil || hintsUsed() != before {
			t.Fatalf("job = %+v, want it free", j)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := b.svc.GenerateHints(as("u1", 5), history(algoitny.VerdictAccepted, nil))
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := b.svc.GenerateHints(as("u2", 5), history(algoitny.VerdictWrongAnswer, nil))
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})
	t.Run("ErrRateLimited", func(t *testing.T) {
		_, err := b.svc.GenerateHints(as("u1", 0), history(algoitny.VerdictWrongAnswer, nil))
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
	})
}
