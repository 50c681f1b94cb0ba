package llm_test

import (
	"net/http"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

// A counterexample (findCounterexample) reaches the model as data it may
// quote, beside the hidden tests.
func TestHintPromptCounterexample(t *testing.T) {
	t.Parallel()
	srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(t, w, geminiJSON("1. Use long long.\n", "STOP"))
	})
	req := hintRequest
	req.Counterexample = &algoitny.Counterexample{Input: "1\n2000000000 1500000000\n", ExpectedOutput: "3500000000\n",
		ActualOutput: "-794967296\n", Verdict: algoitny.VerdictWrongAnswer, Seed: 7, Args: []string{"7", "5"}}
	_, err := newProvider(t, geminiConfig(srv.URL)).Hints(t.Context(), req, nil)
	algoitnytest.OK(t, err)
	requireContains(t, promptText(rec.bodies[0]), "A counterexample found by stress-testing", "2000000000 1500000000", "3500000000", "-794967296")
}
