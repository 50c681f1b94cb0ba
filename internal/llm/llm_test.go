package llm_test

import (
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/llm"
)

func TestNew(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name string
		cfg  llm.Config
		want string
	}{
		{"OfflineByDefault", llm.Config{}, "offline"},
		{"Offline", llm.Config{Provider: "offline"}, "offline"},
		{"GeminiCaseInsensitive", llm.Config{Provider: " Gemini ", GeminiAPIKey: "k"}, "gemini"},
		{"OpenAIDefaultEndpointWithoutKey", llm.Config{Provider: "openai"}, "openai"},
		{"OpenAICompatibleLocalServer", llm.Config{Provider: "openai", BaseURL: "http://localhost:11434/v1/", Model: "llama3.1"}, "openai"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := llm.New(c.cfg)
			algoitnytest.OK(t, err)
			if p.Name() != c.want {
				t.Fatalf("Name() = %q, want %q", p.Name(), c.want)
			}
		})
	}
	bad := []struct {
		name string
		cfg  llm.Config
	}{
		{"ErrUnknownProvider", llm.Config{Provider: "claude"}},
		{"ErrGeminiWithoutKey", llm.Config{Provider: "gemini"}},
		{"ErrBaseURLWithoutScheme", llm.Config{Provider: "openai", BaseURL: "localhost:11434/v1"}},
		{"ErrBaseURLNotHTTP", llm.Config{Provider: "gemini", GeminiAPIKey: "k", BaseURL: "ftp://example.com"}},
		{"ErrNegativeTimeout", llm.Config{Provider: "openai", Timeout: -time.Second}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := llm.New(c.cfg)
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		cfg := llm.ConfigFromEnv(env(map[string]string{
			"LLM_PROVIDER": "openai", "LLM_BASE_URL": "http://vllm:8000/v1", "LLM_MODEL": "qwen", "LLM_API_KEY": "k",
			"LLM_TIMEOUT": "90s", "LLM_MAX_RETRIES": "5", "GEMINI_API_KEY": "g",
		}))
		want := llm.Config{Provider: "openai", BaseURL: "http://vllm:8000/v1", Model: "qwen", OpenAIAPIKey: "k", GeminiAPIKey: "g", Timeout: 90 * time.Second, MaxRetries: 5}
		if cfg.Provider != want.Provider || cfg.BaseURL != want.BaseURL || cfg.Model != want.Model || cfg.OpenAIAPIKey != want.OpenAIAPIKey ||
			cfg.GeminiAPIKey != want.GeminiAPIKey || cfg.Timeout != want.Timeout || cfg.MaxRetries != want.MaxRetries {
			t.Fatalf("got %+v, want %+v", cfg, want)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		p, err := llm.New(llm.ConfigFromEnv(env(nil)))
		algoitnytest.OK(t, err)
		if p.Name() != "offline" {
			t.Fatalf("Name() = %q, want offline", p.Name())
		}
	})

	t.Run("ZeroRetriesMeansNone", func(t *testing.T) {
		t.Parallel()
		if cfg := llm.ConfigFromEnv(env(map[string]string{"LLM_MAX_RETRIES": "0"})); cfg.MaxRetries >= 0 {
			t.Fatalf("MaxRetries = %d, want negative (no retries)", cfg.MaxRetries)
		}
	})

	t.Run("ErrBadTimeoutRefusedByNew", func(t *testing.T) {
		t.Parallel()
		_, err := llm.New(llm.ConfigFromEnv(env(map[string]string{"LLM_PROVIDER": "openai", "LLM_TIMEOUT": "soon"})))
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
}
