package jobs

import (
	"context"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// journal stores and publishes what one attempt of a job reports while it
// works — its progress steps and an execution's finished tests — on a
// goroutine of its own, in the order they were reported: the worker (the
// judge between two tests, above all) never waits for DynamoDB or
// PostgreSQL on the way. Each entry is stored before it is published, so a
// subscriber who joins later reads what it missed, and a rescued job
// resumes from the tests stored (a test lost with its worker was never
// published either, and is judged and announced by the rescue, once).
//
// flush waits until everything reported so far is stored and published:
// the worker flushes before it stores the execution and before the job's
// final transition, so a final state is never written, nor announced,
// ahead of a step or test reported before it.
type journal struct {
	r     *Runner
	bg    context.Context // the attempt's values, never cancelled
	start time.Time       // the first batch of tests waits an interval from here

	mu       sync.Mutex
	queue    []entry
	busy     bool          // the writer goroutine is running
	drained  chan struct{} // closed when queue and busy are both empty; nil when idle
	flushing int           // flush calls waiting: tests are written without lingering
	dropped  bool          // the job did not begin: nothing more is written
	hurry    chan struct{} // wakes a lingering writer when flush is called
}

// entry is one thing reported: an operation, or a finished test (tests in
// a row are stored and published together).
type entry struct {
	op   func(context.Context)
	test *algoitny.ExecutionEvent
}

type journalKey struct{}

// withJournal returns ctx carrying a journal for one attempt of a job:
// Runner.progress and announce append to it instead of writing in line.
func (r *Runner) withJournal(ctx context.Context) (context.Context, *journal) {
	j := &journal{r: r, bg: context.WithoutCancel(ctx), start: time.Now(), hurry: make(chan struct{}, 1)}
	return context.WithValue(ctx, journalKey{}, j), j
}

func journalFrom(ctx context.Context) *journal {
	j, _ := ctx.Value(journalKey{}).(*journal)
	return j
}

// add queues e; it never blocks.
func (j *journal) add(e entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.dropped {
		return
	}
	j.queue = append(j.queue, e)
	if !j.busy {
		j.busy = true
		j.drained = make(chan struct{})
		go j.write()
	}
}

// write runs the queued entries in order until the queue is empty. Tests
// are written in batches: the tests in a row at the head of the queue (at
// most maxTestBatch) in one BatchWriteItem and one event, and a batch
// waits until Config.ExecutionProgressInterval has passed since the one
// before (the first: since the attempt began), so that the tests
// finishing meanwhile join it, unless a flush is waiting. A judge running
// quick tests is not slowed by a write and a notification beside each
// (on two cores, ten of them made ten quick Python tests 20–40 % slower);
// one that ends within the interval writes its tests with the execution.
func (j *journal) write() {
	last := j.start // when the last batch of tests was written
	for {
		j.mu.Lock()
		if len(j.queue) == 0 {
			j.busy = false
			close(j.drained)
			j.drained = nil
			j.mu.Unlock()
			return
		}
		head := j.queue[0]
		if head.test == nil {
			j.queue[0] = entry{}
			j.queue = j.queue[1:]
			j.mu.Unlock()
			head.op(j.bg)
			continue
		}
		if wait := time.Until(last.Add(j.r.cfg.ExecutionProgressInterval)); wait > 0 && j.flushing == 0 {
			j.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-j.hurry:
				t.Stop()
			}
			continue
		}
		var batch []algoitny.ExecutionEvent
		n := 0
		for n < len(j.queue) && j.queue[n].test != nil && len(batch) < maxTestBatch {
			batch = append(batch, *j.queue[n].test)
			j.queue[n] = entry{}
			n++
		}
		j.queue = j.queue[n:]
		j.mu.Unlock()
		last = time.Now()
		j.r.announceNow(j.bg, batch)
	}
}

// drop discards what is queued and whatever is added later (the job did
// not begin, so nothing of the attempt is stored or published).
func (j *journal) drop() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.dropped = true
	clear(j.queue)
	j.queue = j.queue[:0]
}

// takeTests takes the tests at the end of the queue that no write has
// started on, and waits for everything else to be stored and published.
// The caller owns the tests taken: it stores them (with the execution)
// and publishes them before the job's end.
func (j *journal) takeTests() []algoitny.ExecutionEvent {
	j.mu.Lock()
	i := len(j.queue)
	for i > 0 && j.queue[i-1].test != nil {
		i--
	}
	var tests []algoitny.ExecutionEvent
	for _, e := range j.queue[i:] {
		tests = append(tests, *e.test)
	}
	clear(j.queue[i:])
	j.queue = j.queue[:i]
	j.mu.Unlock()
	j.flush()
	return tests
}

// maxTestBatch is the most tests written and published together (one
// BatchWriteItem call).
const maxTestBatch = 25

// flush waits until every entry added before it is stored and published.
func (j *journal) flush() {
	if j == nil {
		return
	}
	j.mu.Lock()
	d := j.drained
	if d != nil {
		j.flushing++
		select {
		case j.hurry <- struct{}{}:
		default:
		}
	}
	j.mu.Unlock()
	if d == nil {
		return
	}
	<-d
	j.mu.Lock()
	j.flushing--
	j.mu.Unlock()
}

// storeTimeout bounds one write of the journal (a cancelled or timed-out
// job still keeps the tests it finished: a retry resumes from them).
const storeTimeout = 10 * time.Second

// announce stores a finished test of an execution, then publishes it:
// through the attempt's journal when ctx has one, else at once.
func (r *Runner) announce(ctx context.Context, ev algoitny.ExecutionEvent) {
	if j := journalFrom(ctx); j != nil {
		j.add(entry{test: &ev})
		return
	}
	r.announceNow(context.WithoutCancel(ctx), []algoitny.ExecutionEvent{ev})
}

// announceNow stores finished tests, then publishes them in one event.
func (r *Runner) announceNow(ctx context.Context, evs []algoitny.ExecutionEvent) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := r.cfg.Store.PutExecutionTests(sctx, evs); err != nil {
		// Announced anyway: subscribers following now get them, and one
		// who joins later gets them from the execution when the job ends.
		r.cfg.Logger.WarnContext(ctx, "store execution tests", "job", evs[0].JobID, "tests", len(evs), "err", err)
	}
	r.cfg.Events.PublishExecution(ctx, evs...)
}
