package llm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/llm"
)

// readFixture reads a problem page of internal/analysis's test data.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "analysis", "testdata", name))
	algoitnytest.OK(t, err)
	return b
}

// The offline provider runs internal/analysis (tested there); these tests
// cover what the provider adds: streaming, validation and the context.
func TestOffline(t *testing.T) {
	t.Parallel()
	req := llm.HintRequest{
		Problem:  algoitny.Problem{Title: "Sum", TimeLimitMs: 1000, MemoryLimitMB: 256},
		Language: algoitny.LanguagePython,
		Code:     "a, b = map(int, input().split())\nprint(a - b)\n",
		Verdict:  algoitny.VerdictWrongAnswer,
		Tests: []llm.HintTest{
			{Input: "1 2\n", Expected: "3\n", Result: algoitny.TestResult{Verdict: algoitny.VerdictWrongAnswer, Output: "-1\n"}, Number: 1},
			{Input: "100000 1\n", Expected: "100001\n", Result: algoitny.TestResult{Verdict: algoitny.VerdictTimeLimitExceeded}, Number: 2},
		},
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()

	t.Run("HintDeltasSpellTheNumberedHints", func(t *testing.T) {
		t.Parallel()
		var deltas []string
		hints, err := llm.NewOffline().Hints(t.Context(), req, func(d string) { deltas = append(deltas, d) })
		algoitnytest.OK(t, err)
		if len(hints) < 1 || len(hints) > llm.MaxHints {
			t.Fatalf("got %d hints, want 1 to %d", len(hints), llm.MaxHints)
		}
		var want strings.Builder
		for i, h := range hints {
			fmt.Fprintf(&want, "%d. %s\n", i+1, h)
		}
		if got := strings.Join(deltas, ""); got != want.String() {
			t.Fatalf("deltas spell\n%q\nwant\n%q", got, want.String())
		}
		if len(deltas) < len(strings.Fields(strings.Join(hints, " "))) {
			t.Fatalf("%d deltas: want the text streamed word by word", len(deltas))
		}
	})

	t.Run("ErrNothingToExplain", func(t *testing.T) {
		t.Parallel()
		ok := llm.HintRequest{Verdict: algoitny.VerdictAccepted, Tests: []llm.HintTest{{Result: algoitny.TestResult{Verdict: algoitny.VerdictAccepted}}}}
		_, err := llm.NewOffline().Hints(t.Context(), ok, nil)
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("ErrHintsContextCancelled", func(t *testing.T) {
		t.Parallel()
		_, err := llm.NewOffline().Hints(cancelled, req, func(string) {})
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	})

	t.Run("Generator", func(t *testing.T) {
		t.Parallel()
		g, err := llm.NewOffline().Generator(t.Context(), llm.GeneratorRequest{Problem: algoitny.Problem{Constraints: "1 ≤ N ≤ 100"}})
		algoitnytest.OK(t, err)
		if g.Language != algoitny.LanguagePython || !strings.Contains(g.Code, "v_N") {
			t.Fatalf("generator %s:\n%s", g.Language, g.Code)
		}
		_, err = llm.NewOffline().Generator(t.Context(), llm.GeneratorRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("ErrGeneratorContextCancelled", func(t *testing.T) {
		t.Parallel()
		_, err := llm.NewOffline().Generator(cancelled, llm.GeneratorRequest{Problem: algoitny.Problem{Constraints: "1 ≤ N ≤ 100"}})
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	})

	t.Run("ExtractProblem", func(t *testing.T) {
		t.Parallel()
		p, err := llm.NewOffline().ExtractProblem(t.Context(), "https://codeforces.com/contest/4/problem/A", readFixture(t, "codeforces_4A.html"))
		algoitnytest.OK(t, err)
		if p.Platform != algoitny.PlatformCodeforces || p.ProblemID != "4A" || p.Title == "" {
			t.Fatalf("extracted %+v", p)
		}
	})

	t.Run("ErrExtractContextCancelled", func(t *testing.T) {
		t.Parallel()
		_, err := llm.NewOffline().ExtractProblem(cancelled, "https://codeforces.com/contest/4/problem/A", readFixture(t, "codeforces_4A.html"))
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
	})
}
