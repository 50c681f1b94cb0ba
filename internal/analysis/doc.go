// Package analysis reads problems and failed runs without a language model:
// it is the work of the offline LLM provider (internal/llm), and remote
// providers use its page reader and text clean-up too.
//
//   - Hints explains a failed execution from its evidence: the first
//     difference between expected and actual output, empty output, layout
//     and letter-case differences, debug prints, off-by-one answers, 32-bit
//     overflow, the complexity an input size demands on
//     TIME_LIMIT_EXCEEDED, memory estimates, runtime-error patterns, the
//     compiler's first error (hints.go).
//   - Generate writes a Python 3 test-case generator from a problem's
//     constraints: the constraint text is tokenised, parsed into clauses and
//     applied to variables (constraints.go), the input layout is guessed and
//     checked against the samples, and the program is written (genpy.go,
//     generate.go). It returns EINVALID ("cannot parse constraints: …")
//     when the constraints cannot be used.
//   - ParseProblemPage reads a Baekjoon, Codeforces or AtCoder problem page
//     with a small HTML scanner (htmlscan.go, extract.go). It returns
//     EINVALID for other pages and for pages without a problem.
//
// Everything here is deterministic and needs no network; the package imports
// only the standard library and internal/algoitny.
package analysis
