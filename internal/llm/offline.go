package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// Offline is the default provider: it needs no network and no key, and does
// real, deterministic work. Hints come from the evidence of the failed tests
// (hints.go), generators from the problem's constraints (constraints.go,
// genpy.go), problem pages are read by ParseProblemPage. It is safe for
// concurrent use; the zero value is ready.
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
	hints := analyzeHints(req)
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
	text := strings.TrimSpace(req.Problem.Constraints)
	if text == "" {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: the problem has none")
	}
	sp, err := parseConstraints(text)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	l, err := sp.chooseLayout(req.Samples)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	code, err := pythonGenerator(sp, l, text)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	return Generator{Language: algoitny.LanguagePython, Code: code, Notes: generatorNotes(sp, l, len(req.Samples) > 0)}, nil
}

// generatorNotes tells the reviewer what the generator assumes.
func generatorNotes(sp *spec, l *layout, checked bool) string {
	var vars []string
	for _, v := range sp.vars {
		s := fmt.Sprintf("%s in [%s, %s]", displayName(v), v.lo, v.hi)
		switch {
		case v.kind == arrayVar:
			s += fmt.Sprintf(" with %s elements", v.length)
			if v.guessedLen && !checked {
				s += " (assumed)"
			}
			if v.distinct {
				s += ", distinct"
			}
			switch v.sorted {
			case 1:
				s += ", ascending"
			case -1:
				s += ", descending"
			}
		case v.kind == stringVar:
			s += fmt.Sprintf(" over %q", truncateText(v.alphabet, 12))
		}
		vars = append(vars, s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Variables: %s.\n", strings.Join(vars, "; "))
	how := "guessed from the constraints"
	if checked {
		how = "checked against the sample input"
	}
	fmt.Fprintf(&b, "Input layout (%s): %s.\n", how, strings.Join(l.describe(), " / "))
	b.WriteString("Test index 0 is minimal, 1 maximal, 2 maximal sizes with random values, 3 and 4 small, then mostly random.")
	if sp.sumCap != nil {
		fmt.Fprintf(&b, "\nThe sum of %s over all tests is kept within %s.", sp.sumVar, sp.sumCap)
	}
	for _, n := range sp.notes {
		fmt.Fprintf(&b, "\nAssumed: %s.", n)
	}
	for _, ig := range sp.ignored {
		fmt.Fprintf(&b, "\nNot enforced: %s", truncateText(ig, 120))
	}
	return b.String()
}

// ExtractProblem implements Provider with ParseProblemPage.
func (*Offline) ExtractProblem(ctx context.Context, pageURL string, html []byte) (ExtractedProblem, error) {
	if err := ctx.Err(); err != nil {
		return ExtractedProblem{}, algoitny.Internal(err, "offline: extraction abandoned")
	}
	return ParseProblemPage(ExtractRequest{URL: pageURL, HTML: html})
}
