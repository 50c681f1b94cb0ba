package algoitny

// Practice: running code on one's own input (CODE_RUN jobs) and searching a
// counterexample for a failed execution (COUNTEREXAMPLE jobs).

// RunVerdict is how one run of a program on the user's own input ended.
type RunVerdict string

// The run verdicts.
const (
	RunOK                  RunVerdict = "OK"
	RunCompilationError    RunVerdict = "COMPILATION_ERROR"
	RunTimeLimitExceeded   RunVerdict = "TIME_LIMIT_EXCEEDED"
	RunMemoryLimitExceeded RunVerdict = "MEMORY_LIMIT_EXCEEDED"
	RunRuntimeError        RunVerdict = "RUNTIME_ERROR"
	RunOutputLimitExceeded RunVerdict = "OUTPUT_LIMIT_EXCEEDED"
)

// CodeRunParams are the parameters of a CODE_RUN job (its Params); the
// language and code are the job's Language and SolutionCode, the problem
// whose limits apply (if any) its Platform and ProblemID.
type CodeRunParams struct {
	Stdin string `json:"stdin"`
	// TimeLimitMs and MemoryLimitMB are the limits the run gets (the
	// problem's, or the judge's defaults), fixed when the job is made.
	TimeLimitMs   int `json:"timeLimitMs"`
	MemoryLimitMB int `json:"memoryLimitMb"`
}

// CodeRunResult is the JSON result of a completed CODE_RUN job.
type CodeRunResult struct {
	Verdict RunVerdict `json:"verdict"`
	// Stdout and Stderr are the beginnings of what the program printed
	// (CodeRunOutputMax, CodeRunStderrMax); Truncated says one was cut.
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	Truncated bool   `json:"truncated"`
	// ExitCode is the exit status, -1 when a signal (Signal) killed it.
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	TimeMs   int    `json:"timeMs"`
	MemoryKB int    `json:"memoryKb"`
	// CompileMessage is the compiler's output (COMPILATION_ERROR, or
	// warnings).
	CompileMessage string `json:"compileMessage,omitempty"`
	// Message explains the verdict (the limit, the exit code or signal).
	Message       string `json:"message,omitempty"`
	TimeLimitMs   int    `json:"timeLimitMs"`
	MemoryLimitMB int    `json:"memoryLimitMb"`
}

// What a code run keeps of its output.
const (
	CodeRunOutputMax = 16 << 10
	CodeRunStderrMax = 4 << 10
)

// Counterexample is a generated input on which an execution's code and the
// problem's reference solution disagree: never one of the problem's stored
// tests. It is stored on the execution and shown to its owner only.
type Counterexample struct {
	Input          string `json:"input"`
	ExpectedOutput string `json:"expectedOutput"`
	ActualOutput   string `json:"actualOutput"`
	// Verdict is the user's code's verdict on Input.
	Verdict Verdict `json:"verdict"`
	// Message explains the verdict (the checker's first difference, the
	// limit, the exit code).
	Message string `json:"message,omitempty"`
	// Seed and Args are the generator run that made the input before it
	// was shrunk (Shrunk: lines or tokens were removed from its output).
	Seed   int64    `json:"seed"`
	Args   []string `json:"args"`
	Shrunk bool     `json:"shrunk,omitempty"`
	// Truncated says Input or an output was cut to fit
	// (CounterexampleDataMax).
	Truncated bool `json:"truncated,omitempty"`
}

// CounterexampleDataMax bounds each of a stored counterexample's input and
// outputs.
const CounterexampleDataMax = 8 << 10

// CounterexampleResult is the JSON result of a completed COUNTEREXAMPLE job.
type CounterexampleResult struct {
	// Found says whether a counterexample was found within the budget;
	// Counterexample is it (nil otherwise).
	Found          bool            `json:"found"`
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	// Tried counts the generated inputs run (the search's and the
	// shrinking's); Shrinks counts the steps that made it smaller.
	Tried   int `json:"tried"`
	Shrinks int `json:"shrinks"`
	// BudgetMs is the search's time budget; ElapsedMs what it used.
	BudgetMs  int `json:"budgetMs"`
	ElapsedMs int `json:"elapsedMs"`
	// Message says what happened in words ("none found within the budget
	// after 40 inputs").
	Message string `json:"message"`
}
