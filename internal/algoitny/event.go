package algoitny

// Live events pushed to subscribers while jobs run.

// JobEvent is a job's status change or progress step; it carries the whole
// job so that subscribers need no read per event.
type JobEvent struct {
	Job *Job
	// Progress is set when the event is a progress step.
	Progress *JobProgress
}

// Last reports whether e is the last event of its job: the job's status is
// final, and a subscription to the job ends after it (so a transport can
// send the event and the subscription's end together).
func (e *JobEvent) Last() bool { return e != nil && e.Job != nil && e.Job.Status.Final() }

// ExecutionEvent is one finished test of a CODE_EXECUTION job.
type ExecutionEvent struct {
	JobID string
	// Index is the test's 0-based position; Total the number of tests.
	Index  int
	Total  int
	Result TestResult
}

// HintEvent is hint text as it is produced.
type HintEvent struct {
	History HistoryRef
	// Delta is the new text since the previous event.
	Delta string
	Done  bool
	// Hints are all hints, on the final event.
	Hints []string
}
