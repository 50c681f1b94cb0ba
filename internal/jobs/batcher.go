package jobs

import (
	"context"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// batcher stores and publishes what one attempt of a job reports while it
// works — its progress steps and an execution's finished tests — on a
// goroutine of its own, in the order they were reported, so that the
// worker (the judge between two tests, above all) never waits for
// DynamoDB or PostgreSQL. Each report is stored before it is published: a
// subscriber who joins later reads what it missed, and a rescued job
// resumes from the tests stored.
//
// Finished tests are written in batches: those reported since the last
// write, on each tick of Config.ExecutionProgressInterval (the first an
// interval after the attempt began; negative: each test at once), and
// before any later progress step. A judge running quick tests is not
// slowed by a write and a notification beside each (on two cores, ten of
// them made ten quick Python tests 20–40 % slower), and an execution that
// ends within the interval hands its tests to the transaction that
// completes the job (takeTests) instead of writing them on their own.
//
// One goroutine (loop) owns the unwritten tests; the worker talks to it
// through one channel, so that the order of the channel is the order of
// the writes: flush waits until everything reported before it is stored
// and published, and the worker flushes before the job's final
// transition, so a final state is never written, nor announced, ahead of
// a step or test reported before it.
type batcher struct {
	r        *Runner
	in       chan report
	interval time.Duration
	done     chan struct{} // closed when loop has returned
}

// report is one message to the batcher's loop: exactly one field is set.
type report struct {
	step *algoitny.JobProgress // a progress step, with the job it belongs to
	job  *algoitny.Job
	test *algoitny.ExecutionEvent
	// flush asks for every unwritten test to be written, then is closed.
	flush chan struct{}
	// take asks for the unwritten tests, which the caller then owns.
	take chan []algoitny.ExecutionEvent
	// stop ends the loop after a flush.
	stop bool
}

// batchBuffer is how many reports the worker may be ahead of storage
// before it waits (a problem's tests and steps fit in it).
const batchBuffer = 1024

// maxTestBatch is the most tests written and published together (one
// BatchWriteItem call).
const maxTestBatch = 25

// storeTimeout bounds one write of the batcher (a cancelled or timed-out
// job still keeps the tests it finished: a retry resumes from them).
const storeTimeout = 10 * time.Second

type batcherKey struct{}

// withBatcher starts a batcher for one attempt of a job and returns ctx
// carrying it: Runner.progress and announce then report to it instead of
// writing in line. Call close when the attempt ends.
func (r *Runner) withBatcher(ctx context.Context) (context.Context, *batcher) {
	b := &batcher{r: r, in: make(chan report, batchBuffer), interval: r.cfg.ExecutionProgressInterval, done: make(chan struct{})}
	go b.loop(context.WithoutCancel(ctx))
	return context.WithValue(ctx, batcherKey{}, b), b
}

func batcherFrom(ctx context.Context) *batcher {
	b, _ := ctx.Value(batcherKey{}).(*batcher)
	return b
}

// loop writes the reports in the order they come, holding finished tests
// until the next tick (or a step, a flush, a take or the end).
func (b *batcher) loop(ctx context.Context) {
	defer close(b.done)
	var tick <-chan time.Time
	if b.interval > 0 {
		t := time.NewTicker(b.interval)
		defer t.Stop()
		tick = t.C
	}
	var tests []algoitny.ExecutionEvent // finished, not yet written
	for {
		select {
		case <-tick:
			tests = b.write(ctx, tests)
		case rep := <-b.in:
			switch {
			case rep.test != nil:
				tests = append(tests, *rep.test)
				if tick == nil {
					tests = b.write(ctx, tests)
				}
			case rep.step != nil:
				tests = b.write(ctx, tests)
				b.r.writeProgress(ctx, rep.job, rep.step)
			case rep.take != nil:
				rep.take <- tests
				tests = nil
			case rep.flush != nil:
				tests = b.write(ctx, tests)
				close(rep.flush)
			}
			if rep.stop {
				return
			}
		}
	}
}

// write stores and publishes tests, at most maxTestBatch at a time, and
// returns tests emptied.
func (b *batcher) write(ctx context.Context, tests []algoitny.ExecutionEvent) []algoitny.ExecutionEvent {
	for batch := range slices.Chunk(tests, maxTestBatch) {
		b.r.announceNow(ctx, batch)
	}
	return tests[:0:0]
}

// send hands rep to the loop; after close it is dropped (nothing of an
// attempt is reported after its end).
func (b *batcher) send(rep report) {
	select {
	case b.in <- rep:
	case <-b.done:
	}
}

// flush waits until everything reported before it is stored and
// published (a no-op without a batcher).
func (b *batcher) flush() {
	if b == nil {
		return
	}
	ack := make(chan struct{})
	b.send(report{flush: ack})
	select {
	case <-ack:
	case <-b.done:
	}
}

// takeTests waits until everything reported before it is stored and
// published, except the finished tests not yet written, which it returns:
// the caller stores them (with the execution) and publishes them before
// the job's end.
func (b *batcher) takeTests() []algoitny.ExecutionEvent {
	taken := make(chan []algoitny.ExecutionEvent, 1)
	b.send(report{take: taken})
	select {
	case tests := <-taken:
		return tests
	case <-b.done:
		return nil
	}
}

// close writes what is left and stops the loop.
func (b *batcher) close() {
	ack := make(chan struct{})
	b.send(report{flush: ack, stop: true})
	<-b.done
}

// announce stores a finished test of an execution, then publishes it:
// through the attempt's batcher when ctx has one, else at once.
func (r *Runner) announce(ctx context.Context, ev algoitny.ExecutionEvent) {
	if b := batcherFrom(ctx); b != nil {
		b.send(report{test: &ev})
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
