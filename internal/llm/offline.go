package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

// Offline is the default provider: it needs no network and no key, and does
// real, deterministic work with internal/analysis: hints come from the
// evidence of the failed tests (analysis.Hints), generators from the
// problem's constraints (analysis.Generate), problem pages are read by
// analysis.ParseProblemPage. It is safe for concurrent use; the zero value
// is ready.
type Offline struct{}

var _ Provider = (*Offline)(nil)

// NewOffline returns the offline provider. Job workers may also keep one as
// a fallback when a remote provider fails.
func NewOffline() *Offline { return &Offline{} }

// Name implements Provider.
func (*Offline) Name() string { return ProviderOffline }

// Hints implements Provider: it analyses the failed tests and streams the
// hints word by word as a numbered list. It returns EINVALID when req has
// nothing to explain, and the context's error (wrapped in EINTERNAL) when
// ctx ends while streaming.
func (*Offline) Hints(ctx context.Context, req HintRequest, onDelta func(string)) ([]string, error) {
	if err := validateHintRequest(req); err != nil {
		return nil, err
	}
	hints := analysis.Hints(req)
	if onDelta != nil {
		for i, h := range hints {
			if err := ctx.Err(); err != nil {
				return nil, algoitny.Internal(err, "offline: hints abandoned")
			}
			onDelta(fmt.Sprintf("%d. ", i+1))
			words := strings.SplitAfter(h, " ")
			for _, w := range words {
				onDelta(w)
			}
			onDelta("\n")
		}
	}
	return hints, nil
}

// Generator implements Provider: it parses req.Problem.Constraints, guesses
// the input layout (first line the scalars, then strings, then arrays; checked
// against req.Samples when given) and writes a Python 3 program that prints
// minimal, maximal, small and random tests. It returns EINVALID
// ("cannot parse constraints: …") when the constraints give no usable
// ranges, leave a variable without an upper bound, refer to unknown
// variables, or do not fit the sample input.
func (*Offline) Generator(ctx context.Context, req GeneratorRequest) (Generator, error) {
	if err := ctx.Err(); err != nil {
		return Generator{}, algoitny.Internal(err, "offline: generator abandoned")
	}
	return analysis.Generate(req)
}

// ExtractProblem implements Provider with analysis.ParseProblemPage.
func (*Offline) ExtractProblem(ctx context.Context, pageURL string, html []byte) (ExtractedProblem, error) {
	if err := ctx.Err(); err != nil {
		return ExtractedProblem{}, algoitny.Internal(err, "offline: extraction abandoned")
	}
	return analysis.ParseProblemPage(ExtractRequest{URL: pageURL, HTML: html})
}
