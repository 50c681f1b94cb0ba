package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/llm"
)

const (
	geminiKey = "AIzaTEST-secret_key+/=42"
	openAIKey = "sk-test-secret-0123456789"
)

// generatorAnswer is a model's answer to the generator prompt.
const generatorAnswer = "Here is the generator:\n\n```python\nimport random\nimport sys\n\nseed = int(sys.argv[1])\nrng = random.Random(seed)\nn = rng.randint(1, 10)\nprint(n)\n```\n\nIt prints N on one line."

var hintRequest = llm.HintRequest{
	Problem:  algoitny.Problem{Title: "Sum", Constraints: "1 ≤ N ≤ 10^5", TimeLimitMs: 1000},
	Language: algoitny.LanguageCPP,
	Code:     "int main() { int s = 0; }",
	Verdict:  algoitny.VerdictWrongAnswer,
	Tests: []llm.HintTest{{Input: "2\n3000000000 2000000000\n", Expected: "5000000000\n",
		Result: algoitny.TestResult{Verdict: algoitny.VerdictWrongAnswer, Output: "705032704\n"}}},
}

var generatorRequest = llm.GeneratorRequest{
	Problem:   algoitny.Problem{Title: "Sum", Constraints: "1 ≤ N ≤ 10^5, 1 ≤ A_i ≤ 10^9", SolutionCode: "print(sum(map(int, open(0).read().split()[1:])))", Language: algoitny.LanguagePython},
	TestCount: 10,
	Samples:   []llm.Sample{{Input: "3\n1 2 3\n", Output: "6\n"}},
}

// recorder counts a test server's requests and keeps their bodies.
type recorder struct {
	mu     sync.Mutex
	n      atomic.Int32
	bodies []map[string]any
	times  []time.Time
	reqs   []*http.Request
}

func (rec *recorder) record(t *testing.T, r *http.Request) int {
	t.Helper()
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("request body is not JSON: %v: %s", err, raw)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.bodies = append(rec.bodies, body)
	rec.times = append(rec.times, time.Now())
	rec.reqs = append(rec.reqs, r)
	return int(rec.n.Add(1))
}

// server starts a test server whose handler gets the attempt number.
func server(t *testing.T, h func(w http.ResponseWriter, r *http.Request, attempt int)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, rec.record(t, r))
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func newProvider(t *testing.T, cfg llm.Config) llm.Provider {
	t.Helper()
	if cfg.RetryBaseDelay == 0 {
		cfg.RetryBaseDelay = 5 * time.Millisecond
	}
	p, err := llm.New(cfg)
	algoitnytest.OK(t, err)
	return p
}

func geminiConfig(base string) llm.Config {
	return llm.Config{Provider: "gemini", GeminiAPIKey: geminiKey, BaseURL: base, Model: "gemini-test"}
}

func openAIConfig(base string) llm.Config {
	return llm.Config{Provider: "openai", OpenAIAPIKey: openAIKey, BaseURL: base + "/v1", Model: "test-model"}
}

// geminiJSON is a generateContent response (or stream event) with text.
func geminiJSON(text, finish string) string {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}
	if finish != "" {
		cand["finishReason"] = finish
	}
	b, _ := json.Marshal(map[string]any{"candidates": []any{cand}})
	return string(b)
}

// openAIJSON is a chat completion with content.
func openAIJSON(content string) string {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	return string(b)
}

// openAIChunk is one chunk of a streamed chat completion.
func openAIChunk(content string) string {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}}})
	return string(b)
}

// promptText returns all prompt text of a recorded request body.
func promptText(body map[string]any) string {
	b, _ := json.Marshal(body)
	var s strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "text" || k == "content" {
					if str, ok := x.(string); ok {
						s.WriteString(str + "\n")
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	_ = b
	walk(body)
	return s.String()
}

func TestGemini(t *testing.T) {
	t.Parallel()

	t.Run("GeneratorNonStreamed", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1beta/models/gemini-test:generateContent" {
				t.Errorf("request %s %s", r.Method, r.URL.Path)
			}
			if got := r.URL.Query().Get("key"); got != geminiKey {
				t.Errorf("key = %q", got)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, geminiJSON(generatorAnswer, "STOP"))
		})
		g, err := newProvider(t, geminiConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		algoitnytest.OK(t, err)
		if g.Language != algoitny.LanguagePython || !strings.HasPrefix(g.Code, "import random\nimport sys\n") || strings.Contains(g.Code, "```") {
			t.Fatalf("Generator = %#v", g)
		}
		requireContains(t, g.Notes, "It prints N on one line.")
		body := rec.bodies[0]
		if _, ok := body["systemInstruction"]; !ok {
			t.Fatalf("no systemInstruction in %v", body)
		}
		requireContains(t, promptText(body), "1 ≤ N ≤ 10^5, 1 ≤ A_i ≤ 10^9", "sys.argv[1]", "3\n1 2 3", "print(sum(")
	})

	t.Run("HintsStreamed", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			if r.URL.Path != "/v1beta/models/gemini-test:streamGenerateContent" || r.URL.Query().Get("alt") != "sse" {
				t.Errorf("request %s?%s", r.URL.Path, r.URL.RawQuery)
			}
			w.Header().Set("Content-Type", "text/event-stream")
			writeSSE(t, w, geminiJSON("1. The expected answer 5000000000 does not fit in an ", ""))
			// CRLF line ends and a comment line are part of the SSE format.
			fmt.Fprintf(w, ": keep-alive\r\ndata: %s\r\n\r\n", geminiJSON("int.\n2. Use long long for the sum.", ""))
			w.(http.Flusher).Flush()
			writeSSE(t, w, geminiJSON("\n", "STOP"))
		})
		var deltas []string
		hints, err := newProvider(t, geminiConfig(srv.URL)).Hints(t.Context(), hintRequest, func(d string) { deltas = append(deltas, d) })
		algoitnytest.OK(t, err)
		want := []string{"The expected answer 5000000000 does not fit in an int.", "Use long long for the sum."}
		if strings.Join(hints, "|") != strings.Join(want, "|") {
			t.Fatalf("hints = %q, want %q", hints, want)
		}
		if len(deltas) != 3 || deltas[0] != "1. The expected answer 5000000000 does not fit in an " {
			t.Fatalf("deltas = %q", deltas)
		}
		requireContains(t, promptText(rec.bodies[0]), "5000000000", "705032704", "int main()", "numbered list")
	})

	t.Run("ErrBlockedPromptIsNotRetried", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			fmt.Fprint(w, `{"promptFeedback": {"blockReason": "SAFETY"}}`)
		})
		_, err := newProvider(t, geminiConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		e := algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		requireContains(t, e.Error(), "SAFETY")
		if n := rec.n.Load(); n != 1 {
			t.Fatalf("%d attempts, want 1", n)
		}
	})
}

// Pages of known judges are read without the model; others go to it.
func TestGeminiExtract(t *testing.T) {
	t.Parallel()

	t.Run("ExtractUnknownPageAsksTheModel", func(t *testing.T) {
		t.Parallel()
		answer := "```json\n{\"title\": \"Two Sum\", \"problemId\": \"\", \"timeLimitMs\": \"2000\", \"memoryLimitMB\": 256, \"constraints\": \"1 \\\\le N \\\\le 10^5\", \"samples\": [{\"input\": \"2\\n1 2\\n\", \"output\": \"3\\n\"}]}\n```"
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			fmt.Fprint(w, geminiJSON(answer, "STOP"))
		})
		page := []byte("<html><head><script>var x = 1;</script></head><body><nav>Menu</nav><h1>Two Sum</h1><p>Add two numbers.</p><pre>2\n1 2</pre></body></html>")
		p, err := newProvider(t, geminiConfig(srv.URL)).ExtractProblem(t.Context(), "https://judge.example.com/p/7", page)
		algoitnytest.OK(t, err)
		want := llm.ExtractedProblem{Platform: algoitny.PlatformCustom, Title: "Two Sum", URL: "https://judge.example.com/p/7",
			Constraints: "1 ≤ N ≤ 10^5", TimeLimitMs: 2000, MemoryLimitMB: 256, Samples: []llm.Sample{{Input: "2\n1 2\n", Output: "3\n"}}}
		if fmt.Sprintf("%#v", p) != fmt.Sprintf("%#v", want) {
			t.Fatalf("got  %#v\nwant %#v", p, want)
		}
		prompt := promptText(rec.bodies[0])
		requireContains(t, prompt, "Add two numbers.", "https://judge.example.com/p/7")
		if strings.Contains(prompt, "var x = 1") || strings.Contains(prompt, "Menu") {
			t.Fatalf("the prompt holds script or navigation text:\n%s", prompt)
		}
		gc, _ := rec.bodies[0]["generationConfig"].(map[string]any)
		if gc["responseMimeType"] != "application/json" {
			t.Fatalf("generationConfig = %v, want JSON output", gc)
		}
	})

	t.Run("ExtractKnownPageNeedsNoModel", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Error(w, "unexpected", http.StatusInternalServerError)
		})
		p, err := newProvider(t, geminiConfig(srv.URL)).ExtractProblem(t.Context(), "https://codeforces.com/contest/4/problem/A", readFixture(t, "codeforces_4A.html"))
		algoitnytest.OK(t, err)
		if p.Title != "Watermelon" || rec.n.Load() != 0 {
			t.Fatalf("title %q after %d requests", p.Title, rec.n.Load())
		}
	})
}

func TestOpenAI(t *testing.T) {
	t.Parallel()

	t.Run("GeneratorNonStreamed", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
				t.Errorf("request %s %s", r.Method, r.URL.Path)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer "+openAIKey {
				t.Errorf("Authorization = %q", got)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, openAIJSON(generatorAnswer))
		})
		g, err := newProvider(t, openAIConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		algoitnytest.OK(t, err)
		if !strings.HasPrefix(g.Code, "import random\n") || g.Language != algoitny.LanguagePython {
			t.Fatalf("Generator = %#v", g)
		}
		body := rec.bodies[0]
		if body["model"] != "test-model" || body["stream"] != nil {
			t.Fatalf("body = %v", body)
		}
		msgs, _ := body["messages"].([]any)
		if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["role"] != "user" {
			t.Fatalf("messages = %v", msgs)
		}
	})

	t.Run("HintsStreamed", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Content-Type", "text/event-stream")
			writeSSE(t, w, `{"id":"c","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`)
			writeSSE(t, w, openAIChunk("Here are some hints:\n\n1. 5000000000 overflows a 32-bit "))
			writeSSE(t, w, openAIChunk("int.\n2. Declare the sum as long long.\n"))
			writeSSE(t, w, `{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
			writeSSE(t, w, `{"id":"c","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20}}`)
			writeSSE(t, w, "[DONE]")
		})
		var got strings.Builder
		hints, err := newProvider(t, openAIConfig(srv.URL)).Hints(t.Context(), hintRequest, func(d string) { got.WriteString(d) })
		algoitnytest.OK(t, err)
		want := []string{"5000000000 overflows a 32-bit int.", "Declare the sum as long long."}
		if strings.Join(hints, "|") != strings.Join(want, "|") {
			t.Fatalf("hints = %q, want %q", hints, want)
		}
		if !strings.HasPrefix(got.String(), "Here are some hints:") {
			t.Fatalf("deltas = %q", got.String())
		}
		if rec.bodies[0]["stream"] != true {
			t.Fatalf("body = %v, want stream: true", rec.bodies[0])
		}
	})
}

func TestOpenAIEdgeCases(t *testing.T) {
	t.Parallel()

	t.Run("NoKeyNoAuthorization", func(t *testing.T) {
		t.Parallel()
		srv, _ := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			if h := r.Header.Get("Authorization"); h != "" {
				t.Errorf("Authorization = %q, want none", h)
			}
			fmt.Fprint(w, openAIJSON(generatorAnswer))
		})
		cfg := openAIConfig(srv.URL)
		cfg.OpenAIAPIKey = ""
		_, err := newProvider(t, cfg).Generator(t.Context(), generatorRequest)
		algoitnytest.OK(t, err)
	})

	t.Run("StreamErrorEventIsNotRetried", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeSSE(t, w, openAIChunk("1. Check "))
			writeSSE(t, w, `{"error":{"message":"model overloaded"}}`)
		})
		_, err := newProvider(t, openAIConfig(srv.URL)).Hints(t.Context(), hintRequest, nil)
		e := algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		requireContains(t, e.Error(), "model overloaded")
		if n := rec.n.Load(); n != 1 {
			t.Fatalf("%d attempts, want 1", n)
		}
	})
}

func TestRemoteAnswerParsing(t *testing.T) {
	t.Parallel()
	generators := []struct {
		name, answer, wantCode string
		lang                   algoitny.Language
	}{
		{"PythonFenceAmongOthers", "```text\nN\n```\n```python\nimport sys\nprint(sys.argv[1])\n```", "import sys\nprint(sys.argv[1])\n", algoitny.LanguagePython},
		{"PyFence", "```py\nimport sys\nprint(sys.argv[1])\n```", "import sys\nprint(sys.argv[1])\n", algoitny.LanguagePython},
		{"BareFence", "```\nimport sys\nprint(sys.argv[1])\n```", "import sys\nprint(sys.argv[1])\n", algoitny.LanguagePython},
		{"CutOffFence", "```python\nimport sys\nprint(sys.argv[1])\n", "import sys\nprint(sys.argv[1])\n", algoitny.LanguagePython},
		{"NoFence", "import sys\nprint(sys.argv[1])", "import sys\nprint(sys.argv[1])\n", algoitny.LanguagePython},
		{"CppFence", "```cpp\n#include <cstdio>\nint main(int argc, char** argv) { puts(argv[1]); }\n```", "#include <cstdio>\nint main(int argc, char** argv) { puts(argv[1]); }\n", algoitny.LanguageCPP},
	}
	for _, c := range generators {
		t.Run("Generator"+c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, func(w http.ResponseWriter, r *http.Request, _ int) { fmt.Fprint(w, openAIJSON(c.answer)) })
			g, err := newProvider(t, openAIConfig(srv.URL)).Generator(t.Context(), generatorRequest)
			algoitnytest.OK(t, err)
			if g.Code != c.wantCode || g.Language != c.lang {
				t.Fatalf("Generator = %#v", g)
			}
		})
	}
	for _, answer := range []string{"I cannot help with that.", "```python\nprint(42)\n```"} {
		t.Run("ErrGeneratorUnusable", func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, func(w http.ResponseWriter, r *http.Request, _ int) { fmt.Fprint(w, openAIJSON(answer)) })
			_, err := newProvider(t, openAIConfig(srv.URL)).Generator(t.Context(), generatorRequest)
			algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		})
	}
	hints := []struct {
		name, answer string
		want         []string
	}{
		{"JSONArray", "```json\n[\"First.\", \"Second.\"]\n```", []string{"First.", "Second."}},
		{"BulletsWithDecoration", "Sure!\n- **Hint 1:** Check bounds.\n- Hint 2: Use long\n  long.\n", []string{"Check bounds.", "Use long long."}},
		{"Paragraphs", "Check the bounds.\n\nUse a long.", []string{"Check the bounds.", "Use a long."}},
		{"AtMostFive", "1. a\n2. b\n3. c\n4. d\n5. e\n6. f\n7. g", []string{"a", "b", "c", "d", "e"}},
	}
	for _, c := range hints {
		t.Run("Hints"+c.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				writeSSE(t, w, openAIChunk(c.answer))
				writeSSE(t, w, "[DONE]")
			})
			got, err := newProvider(t, openAIConfig(srv.URL)).Hints(t.Context(), hintRequest, nil)
			algoitnytest.OK(t, err)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("hints = %q, want %q", got, c.want)
			}
		})
	}
}

func TestRemoteRetries(t *testing.T) {
	t.Parallel()

	t.Run("RateLimitedThenSuccessHonoursRetryAfter", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
			if attempt == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, openAIJSON(generatorAnswer))
		})
		_, err := newProvider(t, openAIConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		algoitnytest.OK(t, err)
		if n := rec.n.Load(); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
		if gap := rec.times[1].Sub(rec.times[0]); gap < time.Second || gap > 20*time.Second {
			t.Fatalf("retried after %v, want the 1s of Retry-After", gap)
		}
	})

	t.Run("RetryAfterAsHTTPDate", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
			if attempt == 1 {
				w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, geminiJSON(generatorAnswer, "STOP"))
		})
		_, err := newProvider(t, geminiConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		algoitnytest.OK(t, err)
		if n := rec.n.Load(); n != 2 {
			t.Fatalf("%d attempts, want 2", n)
		}
		if gap := rec.times[1].Sub(rec.times[0]); gap < 900*time.Millisecond || gap > 20*time.Second {
			t.Fatalf("retried after %v, want about the 1–2s of Retry-After", gap)
		}
	})

	t.Run("GeminiStreamRetriedBeforeAnyDelta", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, attempt int) {
			if attempt == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, http.StatusTooManyRequests)
				return
			}
			writeSSE(t, w, geminiJSON("1. Use long long.", "STOP"))
		})
		var deltas []string
		hints, err := newProvider(t, geminiConfig(srv.URL)).Hints(t.Context(), hintRequest, func(d string) { deltas = append(deltas, d) })
		algoitnytest.OK(t, err)
		if rec.n.Load() != 2 || len(hints) != 1 || len(deltas) != 1 {
			t.Fatalf("%d attempts, hints %q, deltas %q", rec.n.Load(), hints, deltas)
		}
	})
}

// Retries stop after MaxRetries, at once for a request error, and when
// Retry-After is longer than a worker waits.
func TestRemoteRetryLimits(t *testing.T) {
	t.Parallel()

	t.Run("ErrServerErrorRetriedUpToMaxRetries", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Error(w, "upstream failed", http.StatusInternalServerError)
		})
		cfg := geminiConfig(srv.URL)
		cfg.MaxRetries = 2
		_, err := newProvider(t, cfg).Generator(t.Context(), generatorRequest)
		e := algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		requireContains(t, e.Error(), "giving up after 3 attempts", "HTTP 500")
		if n := rec.n.Load(); n != 3 {
			t.Fatalf("%d attempts, want 1 + MaxRetries = 3", n)
		}
	})

	t.Run("ErrBadRequestIsNotRetried", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Error(w, `{"error":{"message":"unknown field"}}`, http.StatusBadRequest)
		})
		_, err := newProvider(t, openAIConfig(srv.URL)).Generator(t.Context(), generatorRequest)
		e := algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		requireContains(t, e.Error(), "HTTP 400: unknown field")
		if n := rec.n.Load(); n != 1 {
			t.Fatalf("%d attempts, want 1", n)
		}
	})

	t.Run("ErrRetryAfterLongerThanWeWait", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		cfg := openAIConfig(srv.URL)
		cfg.RetryMaxDelay = time.Second
		start := time.Now()
		_, err := newProvider(t, cfg).Generator(t.Context(), generatorRequest)
		e := algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		requireContains(t, e.Error(), "retry after 2m0s")
		if n, d := rec.n.Load(), time.Since(start); n != 1 || d > 30*time.Second { // Retry-After asked for 120 s
			t.Fatalf("%d attempts in %v, want one and no wait", n, d)
		}
	})
}

// Attempt timeouts, broken streams and the caller's deadline.
func TestRemoteDeadlines(t *testing.T) {
	t.Parallel()

	t.Run("ErrTimeout", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		})
		cfg := openAIConfig(srv.URL)
		// Long enough for each attempt to reach the server on a loaded
		// machine (the server counts the attempts), short beside the test.
		cfg.Timeout = 2 * time.Second
		cfg.MaxRetries = 1
		start := time.Now()
		_, err := newProvider(t, cfg).Hints(t.Context(), hintRequest, nil)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
		if n, d := rec.n.Load(), time.Since(start); n != 2 || d > 50*time.Second {
			t.Fatalf("%d attempts in %v, want 2 that each end at the attempt timeout", n, d)
		}
	})

	t.Run("ErrStreamBrokenAfterADeltaIsNotRetried", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			writeSSE(t, w, openAIChunk("1. Check "))
			<-r.Context().Done()
		})
		cfg := openAIConfig(srv.URL)
		cfg.Timeout = 200 * time.Millisecond
		var deltas []string
		_, err := newProvider(t, cfg).Hints(t.Context(), hintRequest, func(d string) { deltas = append(deltas, d) })
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
		if n := rec.n.Load(); n != 1 || len(deltas) != 1 {
			t.Fatalf("%d attempts, deltas %q: a stream that started must not be repeated", n, deltas)
		}
	})

	t.Run("ErrCallerDeadlineShorterThanRetryAfter", func(t *testing.T) {
		t.Parallel()
		srv, rec := server(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		// The caller's 8 s cannot cover a 20 s wait: give up at once rather
		// than sleep until the deadline (a bound far from both, for loaded machines).
		ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
		defer cancel()
		start := time.Now()
		cfg := geminiConfig(srv.URL)
		cfg.RetryMaxDelay = time.Minute
		_, err := newProvider(t, cfg).Generator(ctx, generatorRequest)
		algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
		if n, d := rec.n.Load(), time.Since(start); n != 1 || d > 5*time.Second {
			t.Fatalf("%d attempts in %v, want to give up at once", n, d)
		}
	})
}

func TestRemoteErrorsNeverShowTheKey(t *testing.T) {
	t.Parallel()
	echo := func(status int) func(w http.ResponseWriter, r *http.Request, _ int) {
		return func(w http.ResponseWriter, r *http.Request, _ int) {
			// A careless server that echoes the request back.
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"bad request %s key=%s auth=%s"}}`, r.URL.String(), r.URL.Query().Get("key"), r.Header.Get("Authorization"))
		}
	}
	hang := func(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() }
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, _ int)
		base    string
	}{
		{"BadRequestEchoingTheKey", echo(http.StatusBadRequest), ""},
		{"Unauthorized", echo(http.StatusUnauthorized), ""},
		{"ServerErrorsUntilGivingUp", echo(http.StatusInternalServerError), ""},
		{"Timeout", hang, ""},
		{"ConnectionRefused", nil, closed.URL},
	}
	for _, c := range cases {
		for _, provider := range []string{"gemini", "openai"} {
			t.Run(c.name+"/"+provider, func(t *testing.T) {
				t.Parallel()
				base := c.base
				if c.handler != nil {
					srv, _ := server(t, c.handler)
					base = srv.URL
				}
				cfg := geminiConfig(base)
				if provider == "openai" {
					cfg = openAIConfig(base)
				}
				cfg.Timeout = 100 * time.Millisecond
				cfg.MaxRetries = 1
				p := newProvider(t, cfg)
				_, err := p.Generator(t.Context(), generatorRequest)
				algoitnytest.ErrCode(t, err, algoitny.EINTERNAL)
				_, herr := p.Hints(t.Context(), hintRequest, nil)
				algoitnytest.ErrCode(t, herr, algoitny.EINTERNAL)
				for _, e := range []error{err, herr} {
					for _, text := range []string{e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", errors.Unwrap(e)), algoitny.ErrorMessage(e)} {
						for _, secret := range []string{geminiKey, url.QueryEscape(geminiKey), openAIKey} {
							if strings.Contains(text, secret) {
								t.Fatalf("the error shows the key: %s", text)
							}
						}
					}
				}
			})
		}
	}
}
