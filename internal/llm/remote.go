package llm

import (
	"context"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

// backend is one remote wire format: a prompt in, text out.
type backend interface {
	name() string
	// complete returns the whole answer to c.
	complete(ctx context.Context, c call) (string, error)
	// stream passes the answer to onDelta as it arrives and returns it whole.
	stream(ctx context.Context, c call, onDelta func(string)) (string, error)
}

// call is one prompt to a model.
type call struct {
	system      string
	user        string
	temperature float64
	// json asks for a JSON answer where the API can enforce it.
	json bool
}

// remote is the Provider over a remote backend: the prompts (prompts.go) and
// the parsing of answers (response.go) are the same for every backend.
type remote struct {
	b backend
}

var _ Provider = (*remote)(nil)

// Name implements Provider.
func (r *remote) Name() string { return r.b.name() }

// Hints implements Provider: it streams the model's answer through onDelta
// and parses it into 1–MaxHints hints.
func (r *remote) Hints(ctx context.Context, req HintRequest, onDelta func(string)) ([]string, error) {
	if err := validateHintRequest(req); err != nil {
		return nil, err
	}
	if onDelta == nil {
		onDelta = func(string) {}
	}
	text, err := r.b.stream(ctx, call{system: hintSystemPrompt, user: hintPrompt(req), temperature: 0.3}, onDelta)
	if err != nil {
		return nil, err
	}
	hints := parseHints(text)
	if len(hints) == 0 {
		return nil, algoitny.Internal(nil, "%s: the answer held no hints", r.b.name())
	}
	return hints, nil
}

// Generator implements Provider: it asks for a Python generator and takes
// the code from the answer's fenced code block.
func (r *remote) Generator(ctx context.Context, req GeneratorRequest) (Generator, error) {
	if strings.TrimSpace(req.Problem.Constraints) == "" && strings.TrimSpace(req.Problem.Title) == "" && len(req.Samples) == 0 {
		return Generator{}, algoitny.Invalid("constraints", "cannot write a generator: the problem has no title, constraints or samples")
	}
	text, err := r.b.complete(ctx, call{system: generatorSystemPrompt, user: generatorPrompt(req), temperature: 0.2})
	if err != nil {
		return Generator{}, err
	}
	g, err := parseGenerator(text)
	if err != nil {
		return Generator{}, algoitny.Internal(err, "%s: unusable generator", r.b.name())
	}
	return g, nil
}

// ExtractProblem implements Provider. Pages of the judges that
// analysis.ParseProblemPage knows are read without the model (exact, free
// and deterministic); any other page's visible text goes to the model, which
// answers in JSON.
func (r *remote) ExtractProblem(ctx context.Context, pageURL string, html []byte) (ExtractedProblem, error) {
	req := ExtractRequest{URL: pageURL, HTML: html}
	if p, err := analysis.ParseProblemPage(req); err == nil {
		return p, nil
	}
	text := analysis.PageText(html)
	if strings.TrimSpace(text) == "" {
		return ExtractedProblem{}, algoitny.Invalid("url", "the page has no text to read a problem from")
	}
	answer, err := r.b.complete(ctx, call{system: extractSystemPrompt, user: extractPrompt(pageURL, text), temperature: 0, json: true})
	if err != nil {
		return ExtractedProblem{}, err
	}
	p, err := parseExtracted(answer)
	if err != nil {
		return ExtractedProblem{}, algoitny.Internal(err, "%s: unusable extraction", r.b.name())
	}
	if p.Title == "" {
		return ExtractedProblem{}, algoitny.Invalid("url", "the page does not look like a problem statement")
	}
	analysis.FillFromURL(&p, pageURL)
	return p, nil
}

// validateHintRequest refuses a request with nothing to explain.
func validateHintRequest(req HintRequest) error {
	if req.Verdict == algoitny.VerdictAccepted {
		for _, t := range req.Tests {
			if t.Result.Verdict != algoitny.VerdictAccepted && t.Result.Verdict != "" {
				return nil
			}
		}
		return algoitny.Invalid("verdict", "nothing to explain: every test passed")
	}
	if req.Verdict == "" && len(req.Tests) == 0 && req.CompileMessage == "" {
		return algoitny.Invalid("verdict", "nothing to explain: the request has no verdict, tests or compiler output")
	}
	return nil
}
