package analysis

import (
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// HintRequest is a failed execution to explain.
type HintRequest struct {
	// Problem gives the title, constraints, language and time/memory limits.
	Problem algoitny.Problem
	// Language is the language of the user's code.
	Language algoitny.Language
	// Code is the user's code.
	Code string
	// Verdict is the overall verdict of the execution.
	Verdict algoitny.Verdict
	// CompileMessage is the compiler's output when Verdict is
	// COMPILATION_ERROR.
	CompileMessage string
	// Tests are the failed (and some passed) tests with their data, in the
	// order they ran.
	Tests []HintTest
	// Counterexample is a generated input the code fails on
	// (findCounterexample), nil when none was found. Unlike Tests, its
	// data may be shown to the user: it is no stored test.
	Counterexample *algoitny.Counterexample
}

// HintTest is one test of a HintRequest with its data.
type HintTest struct {
	// Input and Expected are the test case data. They may be large; providers
	// truncate what they send and use.
	Input, Expected string
	// Result is the judge's outcome: verdict, Output (a truncated preview of
	// the actual output), TimeMs, MemoryKB and Message.
	Result algoitny.TestResult
	// Stderr is the beginning of the program's standard error, if the caller
	// has it (runtime errors are recognised from it and from Result.Message).
	Stderr string
	// Number is the 1-based position of the test in the execution, used to
	// name it in hints; 0 names tests by their position in Tests.
	Number int
}

// NumberAt is the number hints and prompts use for the test at position i
// of HintRequest.Tests: Number when set, else i+1.
func (t HintTest) NumberAt(i int) int {
	if t.Number > 0 {
		return t.Number
	}
	return i + 1
}

// MaxHints is the most hints any provider returns.
const MaxHints = 5

// GeneratorRequest asks for a test-case generator program for a problem.
type GeneratorRequest struct {
	// Problem gives the title, constraints (free text such as
	// "1 ≤ N ≤ 10^5, 1 ≤ A_i ≤ 10^9"), tags and the reference solution.
	Problem algoitny.Problem
	// TestCount is how many tests the caller means to generate (a hint for
	// the mix of edge and random cases; 0 means unknown).
	TestCount int
	// Samples are the problem's sample tests, if known. They let the offline
	// provider check the input layout it guessed from the constraints, and
	// show remote models the input format.
	Samples []Sample
}

// Generator is a test-case generator program.
type Generator struct {
	// Language is the generator's language (Python 3 from every provider
	// unless a model chose otherwise).
	Language algoitny.Language
	// Code reads a seed from argv[1] and optionally a test index from
	// argv[2], prints ONE test input to stdout and is deterministic for a
	// given seed and index.
	Code string
	// Notes explains the generator to the person reviewing it (what it
	// assumes, what it ignored).
	Notes string
}

// Sample is one sample test of a problem statement.
type Sample struct {
	Input  string
	Output string
}

// ExtractRequest is a fetched problem page. The Provider method takes its two
// fields as arguments; the type exists for ParseProblemPage and for callers
// that pass pages around.
type ExtractRequest struct {
	// URL is where the page was fetched from; it identifies the judge and the
	// problem id.
	URL string
	// HTML is the page as fetched (UTF-8).
	HTML []byte
}

// ExtractedProblem is what a problem page says about the problem. Text fields
// are plain text (tags removed, LaTeX math turned into Unicode where it is
// simple, e.g. "1 ≤ N ≤ 10^5").
type ExtractedProblem struct {
	Platform algoitny.Platform
	// ProblemID is the judge's id: "1000" (Baekjoon), "4A" (Codeforces),
	// "abc086_a" (AtCoder).
	ProblemID   string
	Title       string
	URL         string
	Description string
	// InputSpec and OutputSpec are the input and output format sections.
	InputSpec  string
	OutputSpec string
	// Constraints holds the constraint lines found on the page, one per line,
	// in a form the offline generator parses.
	Constraints string
	// TimeLimitMs and MemoryLimitMB are 0 when the page does not say.
	TimeLimitMs   int
	MemoryLimitMB int
	Samples       []Sample
	// Tags are the judge's algorithm tags when the page shows them
	// (Baekjoon's 알고리즘 분류, Codeforces' tag boxes; AtCoder has none).
	Tags []string `json:",omitempty"`
}

// Statement is the problem's statement as plain text: the description,
// then the input and output sections under their headings.
func (p ExtractedProblem) Statement() string {
	var b strings.Builder
	for _, part := range []struct{ heading, text string }{{"", p.Description}, {"Input", p.InputSpec}, {"Output", p.OutputSpec}} {
		t := strings.TrimSpace(part.text)
		if t == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if part.heading != "" {
			b.WriteString(part.heading + "\n")
		}
		b.WriteString(t)
	}
	return b.String()
}
