package jobs_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/judge"
)

// slowJudge answers every test ACCEPTED after perTest, like a judge
// running a quick program (Python A+B: a few milliseconds a test).
type slowJudge struct{ perTest time.Duration }

func (j slowJudge) Judge(ctx context.Context, sub judge.Submission, onTest func(judge.TestResult)) (judge.Result, error) {
	res := judge.Result{Verdict: judge.Accepted, Total: len(sub.Tests)}
	for i, tc := range sub.Tests {
		select {
		case <-time.After(j.perTest):
		case <-ctx.Done():
			return res, ctx.Err()
		}
		tr := judge.TestResult{Index: i, TestID: tc.ID, Verdict: judge.Accepted, CPUTime: time.Millisecond, MemoryBytes: 1 << 20}
		res.Tests = append(res.Tests, tr)
		onTest(tr)
	}
	return res, nil
}

// BenchmarkExecutionPipeline is the worker's share of the bench's
// executeCode → COMPLETED row, on DynamoDB Local and PostgreSQL: an
// execution of three tests, 5 ms each, from its River insert to its
// COMPLETED event, one at a time, with the production progress interval.
// It reports the median (p50-ms) beside the mean.
func BenchmarkExecutionPipeline(b *testing.B) {
	bundle := setupExecuteWith(b, slowJudge{perTest: 5 * time.Millisecond}, func(c *jobs.Config) { c.ExecutionProgressInterval = 0 })
	bundle.submit(b, "print(1)") // warm: connections, River's queue
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if j := bundle.submit(b, "print(1)"); !j.Status.Final() {
			b.Fatalf("job %+v", j)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
