package llm

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

// Provider is what the job workers call for LLM work. Every implementation
// returns *algoitny.Error values: EINVALID when the request itself cannot be
// served (nothing to explain, constraints that cannot be parsed, a page that
// is not a problem statement) and EINTERNAL when the provider failed (the
// remote API was unreachable, refused the request, or answered with something
// unusable). EINTERNAL errors wrap the cause (context.Canceled and
// context.DeadlineExceeded included) for errors.Is, and never contain an API
// key.
type Provider interface {
	// Hints streams hint text through onDelta as it is produced and returns
	// the final hints (1–5 short strings). The concatenated deltas read as a
	// numbered list ("1. …\n2. …\n"); the returned slice is authoritative.
	// onDelta may be nil. It returns EINVALID when req has nothing to explain
	// (an accepted execution without failed tests).
	Hints(ctx context.Context, req HintRequest, onDelta func(string)) ([]string, error)
	// Generator returns a program that prints one test input per run for
	// req.Problem. It returns EINVALID when the problem says too little to
	// write a generator for (for the offline provider: constraints it cannot
	// parse).
	Generator(ctx context.Context, req GeneratorRequest) (Generator, error)
	// ExtractProblem reads a problem statement (title, id, limits,
	// constraints, samples) from the HTML of a judge's problem page fetched
	// from url. It returns EINVALID when the page is not a problem statement
	// it can read.
	ExtractProblem(ctx context.Context, url string, html []byte) (ExtractedProblem, error)
	// Name names the provider ("offline", "gemini", "openai") for logs and
	// job records.
	Name() string
}

// The requests and answers of a Provider are those of the offline analysis
// (internal/analysis), which is what the offline provider runs; remote
// providers fill in the same types from a model's answer.
type (
	// HintRequest is a failed execution to explain.
	HintRequest = analysis.HintRequest
	// HintTest is one test of a HintRequest with its data.
	HintTest = analysis.HintTest
	// GeneratorRequest asks for a test-case generator program for a problem.
	GeneratorRequest = analysis.GeneratorRequest
	// Generator is a test-case generator program.
	Generator = analysis.Generator
	// Sample is one sample test of a problem statement.
	Sample = analysis.Sample
	// ExtractRequest is a fetched problem page.
	ExtractRequest = analysis.ExtractRequest
	// ExtractedProblem is what a problem page says about the problem.
	ExtractedProblem = analysis.ExtractedProblem
)

// The provider names accepted by Config.Provider.
const (
	ProviderOffline = "offline"
	ProviderGemini  = "gemini"
	ProviderOpenAI  = "openai"
)

// Defaults used when Config leaves a field empty.
const (
	DefaultGeminiBaseURL  = "https://generativelanguage.googleapis.com"
	DefaultGeminiModel    = "gemini-2.5-flash"
	DefaultOpenAIBaseURL  = "https://api.openai.com/v1"
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultTimeout        = 60 * time.Second
	DefaultMaxRetries     = 3
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 30 * time.Second
)

// MaxHints is the most hints any provider returns.
const MaxHints = analysis.MaxHints

// Config chooses and configures a provider. The zero value is the offline
// provider.
type Config struct {
	// Provider is "offline" (the default when empty), "gemini" or "openai"
	// (any OpenAI-compatible chat completions endpoint: OpenAI, Ollama, vLLM).
	Provider string
	// GeminiAPIKey is required for Gemini.
	GeminiAPIKey string
	// OpenAIAPIKey is sent as a bearer token to OpenAI-compatible endpoints
	// when set (local servers such as Ollama need none).
	OpenAIAPIKey string
	// BaseURL overrides the provider's endpoint: for Gemini the part before
	// "/v1beta" (DefaultGeminiBaseURL), for OpenAI-compatible servers the
	// part before "/chat/completions" (DefaultOpenAIBaseURL, or e.g.
	// "http://localhost:11434/v1" for Ollama).
	BaseURL string
	// Model names the model (DefaultGeminiModel, DefaultOpenAIModel).
	Model string
	// HTTPClient sends the requests; nil means a client of our own. Its own
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
	// Timeout bounds one attempt, a streamed response included
	// (DefaultTimeout when 0). The caller's context bounds the whole call,
	// retries and waits included.
	Timeout time.Duration
	// MaxRetries is how many times a request that failed with HTTP 408, 429,
	// 5xx, a network error or an attempt timeout is retried
	// (DefaultMaxRetries when 0; negative means never).
	MaxRetries int
	// RetryBaseDelay is the first backoff delay; each retry doubles it, with
	// jitter (DefaultRetryBaseDelay when 0).
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps a backoff delay and the Retry-After we are willing
	// to wait; a longer Retry-After fails the call at once so that the job
	// runner reschedules it instead of blocking a worker
	// (DefaultRetryMaxDelay when 0).
	RetryMaxDelay time.Duration
}

// ConfigFromEnv reads a Config from the environment variables of the
// deployment (design §3): LLM_PROVIDER, GEMINI_API_KEY, OPENAI_API_KEY (or
// LLM_API_KEY), LLM_BASE_URL, LLM_MODEL, LLM_TIMEOUT (a Go duration),
// LLM_MAX_RETRIES. getenv is os.Getenv in production. Values that do not
// parse are left for New to refuse (an unparsable timeout becomes -1).
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{
		Provider:     strings.TrimSpace(getenv("LLM_PROVIDER")),
		GeminiAPIKey: strings.TrimSpace(getenv("GEMINI_API_KEY")),
		OpenAIAPIKey: strings.TrimSpace(cmp.Or(getenv("OPENAI_API_KEY"), getenv("LLM_API_KEY"))),
		BaseURL:      strings.TrimSpace(getenv("LLM_BASE_URL")),
		Model:        strings.TrimSpace(getenv("LLM_MODEL")),
	}
	if s := strings.TrimSpace(getenv("LLM_TIMEOUT")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			d = -1
		}
		cfg.Timeout = d
	}
	if s := strings.TrimSpace(getenv("LLM_MAX_RETRIES")); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			cfg.MaxRetries = n
			if n == 0 {
				cfg.MaxRetries = -1 // an explicit 0 means no retries
			}
		}
	}
	return cfg
}

// New returns the provider cfg names. It returns EINVALID for an unknown
// provider name, a Gemini provider without an API key, a base URL that is not
// an absolute http(s) URL, or a negative timeout or delay.
func New(cfg Config) (Provider, error) {
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case "", ProviderOffline:
		return NewOffline(), nil
	case ProviderGemini:
		if cfg.GeminiAPIKey == "" {
			return nil, algoitny.Invalid("GEMINI_API_KEY", "the gemini provider needs an API key")
		}
		t, base, err := newTransport(ProviderGemini, cfg, DefaultGeminiBaseURL, cfg.GeminiAPIKey)
		if err != nil {
			return nil, err
		}
		return &remote{b: &gemini{t: t, base: base, model: cmp.Or(cfg.Model, DefaultGeminiModel), key: cfg.GeminiAPIKey}}, nil
	case ProviderOpenAI:
		t, base, err := newTransport(ProviderOpenAI, cfg, DefaultOpenAIBaseURL, cfg.OpenAIAPIKey)
		if err != nil {
			return nil, err
		}
		return &remote{b: &openAI{t: t, base: base, model: cmp.Or(cfg.Model, DefaultOpenAIModel), key: cfg.OpenAIAPIKey}}, nil
	}
	return nil, algoitny.Invalid("LLM_PROVIDER", "unknown LLM provider %q (want offline, gemini or openai)", cfg.Provider)
}

// newTransport validates the shared part of cfg and builds the retrying HTTP
// transport of a remote provider; secret is redacted from every error.
func newTransport(name string, cfg Config, defaultBase, secret string) (*transport, string, error) {
	base := strings.TrimRight(cmp.Or(strings.TrimSpace(cfg.BaseURL), defaultBase), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", algoitny.Invalid("LLM_BASE_URL", "the LLM base URL must be an absolute http(s) URL")
	}
	if cfg.Timeout < 0 || cfg.RetryBaseDelay < 0 || cfg.RetryMaxDelay < 0 {
		return nil, "", algoitny.Invalid("LLM_TIMEOUT", "LLM timeouts and delays must not be negative")
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	t := &transport{
		name:       name,
		client:     client,
		timeout:    cmp.Or(cfg.Timeout, DefaultTimeout),
		maxRetries: retries,
		baseDelay:  cmp.Or(cfg.RetryBaseDelay, DefaultRetryBaseDelay),
		maxDelay:   cmp.Or(cfg.RetryMaxDelay, DefaultRetryMaxDelay),
	}
	if secret != "" {
		t.secrets = []string{secret, url.QueryEscape(secret)}
	}
	return t, base, nil
}
