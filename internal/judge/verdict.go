package judge

// Verdict is the outcome of one test, or of a whole submission. The string values
// are part of the public contract (GraphQL enums, stored results, LLM hints), so
// they never change.
type Verdict string

// The verdicts a judged test or submission can have.
const (
	// Accepted: the program exited normally within every limit and the checker
	// accepted its output. For a bare [Program.Run] it means "exited with status 0
	// within every limit".
	Accepted Verdict = "ACCEPTED"
	// WrongAnswer: the program ran cleanly but the checker rejected its output.
	WrongAnswer Verdict = "WRONG_ANSWER"
	// TimeLimitExceeded: the program used more CPU time than allowed, or stayed
	// alive past the wall-clock limit (sleeping, blocked on input).
	TimeLimitExceeded Verdict = "TIME_LIMIT_EXCEEDED"
	// MemoryLimitExceeded: the program's peak memory went over the limit, or it
	// died because an allocation failed at the limit.
	MemoryLimitExceeded Verdict = "MEMORY_LIMIT_EXCEEDED"
	// RuntimeError: the program exited with a non-zero status or was killed by a
	// signal (TestResult.ExitCode / TestResult.Signal say which).
	RuntimeError Verdict = "RUNTIME_ERROR"
	// OutputLimitExceeded: the program wrote more than Limits.OutputBytes to
	// standard output, or a file larger than Limits.FileSizeBytes.
	OutputLimitExceeded Verdict = "OUTPUT_LIMIT_EXCEEDED"
	// CompilationError: the source did not compile; Result.CompileOutput holds the
	// compiler's (truncated) message.
	CompilationError Verdict = "COMPILATION_ERROR"
	// InternalError: the judge itself failed (sandbox could not start, checker
	// crashed or misbehaved, test data unreadable). Never the contestant's fault.
	InternalError Verdict = "INTERNAL_ERROR"
)

// Verdicts lists every verdict in a stable order, for callers that map them to
// an enum (GraphQL) or validate stored values.
func Verdicts() []Verdict {
	return []Verdict{Accepted, WrongAnswer, TimeLimitExceeded, MemoryLimitExceeded,
		RuntimeError, OutputLimitExceeded, CompilationError, InternalError}
}
