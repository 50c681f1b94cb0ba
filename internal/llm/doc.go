// Package llm is AlgoItny's access to language models for the three kinds of
// LLM work of the job workers: hints for a failed execution, test-case
// generator programs for a problem, and reading a problem statement from a
// judge's web page. One Provider interface covers them; New picks the
// implementation from configuration (design §3: LLM_PROVIDER,
// GEMINI_API_KEY, LLM_BASE_URL, LLM_MODEL; see ConfigFromEnv).
//
// Providers:
//   - "offline" (the default) needs no network and does real, deterministic
//     work with internal/analysis: hints derived from the failed tests, a
//     Python generator written from the problem's constraints, and a parser
//     of Baekjoon, Codeforces and AtCoder problem pages. The request and
//     answer types (HintRequest, Generator, ExtractedProblem, …) are that
//     package's, under the same names here.
//   - "gemini" speaks Google's Generative Language REST API
//     (generateContent; streamGenerateContent with alt=sse for hints).
//   - "openai" speaks the OpenAI chat completions API, which OpenAI, Ollama,
//     vLLM and most self-hosted servers implement (stream: true for hints).
//
// Remote providers send every prompt from prompts.go, bound each attempt by
// Config.Timeout, and retry HTTP 408, 429 and 5xx answers, network errors and
// attempt timeouts with exponential backoff and jitter, honouring
// Retry-After (a Retry-After longer than Config.RetryMaxDelay fails the call
// at once, so that the job runner reschedules it instead of a worker
// sleeping). A streamed answer is retried only before its first delta has
// been passed on. Answers are parsed leniently: hints from numbered or
// bulleted lists, paragraphs or a JSON array; generator code from the
// fenced Python block; extraction JSON from fenced or surrounded text.
// Problem pages of the three known judges are read without the model.
//
// Errors are *algoitny.Error values:
//   - EINVALID when the request cannot be served: nothing to explain (an
//     accepted execution), constraints the offline generator cannot parse
//     ("cannot parse constraints: …"), a page that is not a problem statement,
//     or a configuration New refuses.
//   - EINTERNAL when the provider failed: unreachable, timed out, refused the
//     request or the key, or answered with something unusable. The cause is
//     wrapped (errors.Is sees context.DeadlineExceeded and context.Canceled)
//     and API keys are removed from every error text; the Gemini key travels
//     in the URL, which net/http would otherwise put into its errors.
package llm
