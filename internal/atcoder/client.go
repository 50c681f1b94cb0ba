package atcoder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Defaults of ClientConfig.
const (
	// DefaultBaseURL is AtCoder Problems (kenkoooo.com).
	DefaultBaseURL = "https://kenkoooo.com"
	// DefaultUserAgent names us to the API's operator, as its README asks.
	DefaultUserAgent = "AlgoItny/1.0 (+https://github.com/algoitny/api; AtCoder solved-problem sync)"
	// DefaultMinInterval is the API's etiquette: at most one call a second.
	DefaultMinInterval = time.Second
	// SubmissionsPageSize is the most submissions one call returns.
	SubmissionsPageSize = 500
)

// Submission is one submission as the AtCoder Problems API serves it.
type Submission struct {
	ID            int64   `json:"id"`
	EpochSecond   int64   `json:"epoch_second"`
	ProblemID     string  `json:"problem_id"`
	ContestID     string  `json:"contest_id"`
	UserID        string  `json:"user_id"`
	Language      string  `json:"language"`
	Point         float64 `json:"point"`
	Length        int     `json:"length"`
	Result        string  `json:"result"`
	ExecutionTime *int    `json:"execution_time"`
}

// Contest is one entry of the API's contests list
// (/atcoder/resources/contests.json).
type Contest struct {
	ID               string `json:"id"`
	StartEpochSecond int64  `json:"start_epoch_second"`
	DurationSecond   int64  `json:"duration_second"`
	Title            string `json:"title"`
	RateChange       string `json:"rate_change"`
}

// ContestProblem is one entry of the API's contest–problem pairs
// (/atcoder/resources/contest-problem.json): a problem set in a contest,
// with its index there. One problem can be in several contests (an ADT
// contest reuses ABC problems, under indexes of its own).
type ContestProblem struct {
	ContestID    string `json:"contest_id"`
	ProblemID    string `json:"problem_id"`
	ProblemIndex string `json:"problem_index"`
}

// Problem is one entry of the API's problem list
// (/atcoder/resources/problems.json). ContestID is one contest the problem
// is in (not necessarily the one it was first set in).
type Problem struct {
	ID           string `json:"id"`
	ContestID    string `json:"contest_id"`
	ProblemIndex string `json:"problem_index"`
	// Name is the problem's name ("Sequence Sum"); Title adds the index of
	// ContestID ("E. Sequence Sum").
	Name  string `json:"name"`
	Title string `json:"title"`
}

// ProblemModel is one value of the API's estimated problem models
// (/atcoder/resources/problem-models.json, keyed by problem id). Every
// field may be absent; Difficulty is the raw IRT estimate, on the scale of
// AtCoder ratings and negative for the easiest problems (AtCoder Problems
// displays it clipped: algoitny.AtCoderDifficulty).
type ProblemModel struct {
	Slope            *float64 `json:"slope,omitempty"`
	Intercept        *float64 `json:"intercept,omitempty"`
	Variance         *float64 `json:"variance,omitempty"`
	Difficulty       *float64 `json:"difficulty,omitempty"`
	Discrimination   *float64 `json:"discrimination,omitempty"`
	IrtLoglikelihood *float64 `json:"irt_loglikelihood,omitempty"`
	IrtUsers         *float64 `json:"irt_users,omitempty"`
	// IsExperimental marks a difficulty estimated from too little data
	// (AtCoder Problems shows it with a flask icon).
	IsExperimental bool `json:"is_experimental"`
}

// ClientConfig configures a Client. Zero values take the defaults.
type ClientConfig struct {
	// BaseURL is the API's origin (default DefaultBaseURL). It is operator
	// configuration, never user input, which is why the client is a plain
	// http.Client and not internal/safehttp: the only user input in a URL is
	// a validated handle, sent as a query parameter.
	BaseURL string
	// UserAgent is sent with every call (default DefaultUserAgent).
	UserAgent string
	// MinInterval is the least time between the starts of two calls of this
	// client, shared by every goroutine using it (default 1 s; tests use
	// milliseconds). Ignored when Limiter is set.
	MinInterval time.Duration
	// Limiter spaces the calls; set it to share one budget between clients.
	Limiter *Limiter
	// Timeout bounds one attempt, reading the body included (default 30 s).
	Timeout time.Duration
	// MaxRetries is how many times a call failing with 429, 5xx or a
	// transport error is retried (default 4; negative: never).
	MaxRetries int
	// RetryBase is the first retry's backoff; each further retry doubles it,
	// with jitter, up to 30 s (default 1 s). A Retry-After header overrides it.
	RetryBase time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for (default
	// 1 min); longer ones fail the call so that a River job retries later
	// instead of holding a worker.
	MaxRetryAfter time.Duration
	// MaxResponseBytes bounds a response body (default 64 MiB; contests.json,
	// problems.json and problem-models.json are a few MB each).
	MaxResponseBytes int64
	// HTTPClient is the transport (default: a new http.Client). Its own
	// Timeout, if any, also applies.
	HTTPClient *http.Client
}

// Client calls the AtCoder Problems API politely: one call per MinInterval
// across all its users, a user agent, a timeout per attempt and retries with
// backoff on 429 and 5xx that honour Retry-After. It is safe for concurrent
// use; share one per process.
type Client struct {
	base          *url.URL
	userAgent     string
	limiter       *Limiter
	timeout       time.Duration
	maxRetries    int
	retryBase     time.Duration
	maxRetryAfter time.Duration
	maxBytes      int64
	http          *http.Client
}

// NewClient checks cfg and returns a client. It returns EINVALID when the
// base URL is not an absolute http(s) URL.
func NewClient(cfg ClientConfig) (*Client, error) {
	raw := cfg.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, algoitny.Invalid("baseURL", "the AtCoder Problems base URL must be an absolute http(s) URL, got %q", raw)
	}
	c := &Client{
		base: base, userAgent: cfg.UserAgent, limiter: cfg.Limiter, timeout: cfg.Timeout,
		maxRetries: cfg.MaxRetries, retryBase: cfg.RetryBase, maxRetryAfter: cfg.MaxRetryAfter,
		maxBytes: cfg.MaxResponseBytes, http: cfg.HTTPClient,
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.limiter == nil {
		interval := cfg.MinInterval
		if interval <= 0 {
			interval = DefaultMinInterval
		}
		c.limiter = NewLimiter(interval)
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = 4
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.retryBase <= 0 {
		c.retryBase = time.Second
	}
	if c.maxRetryAfter <= 0 {
		c.maxRetryAfter = time.Minute
	}
	if c.maxBytes <= 0 {
		c.maxBytes = 64 << 20
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	return c, nil
}

// Submissions returns up to SubmissionsPageSize submissions of handle with
// epoch_second ≥ fromSecond, oldest first
// (GET /atcoder/atcoder-api/v3/user/submissions). Errors wrap an *APIError
// in an EINTERNAL *algoitny.Error.
func (c *Client) Submissions(ctx context.Context, handle string, fromSecond int64) ([]Submission, error) {
	if err := ValidateHandle(handle); err != nil {
		return nil, err
	}
	q := url.Values{"user": {handle}, "from_second": {strconv.FormatInt(fromSecond, 10)}}
	var subs []Submission
	if err := c.get(ctx, "/atcoder/atcoder-api/v3/user/submissions", q, &subs); err != nil {
		return nil, err
	}
	return subs, nil
}

// ContestsPath is where AtCoder Problems serves its contest list
// (https://kenkoooo.com/atcoder/resources/contests.json): like the
// submissions API, under /atcoder/.
const ContestsPath = "/atcoder/resources/contests.json"

// Contests returns every contest AtCoder Problems knows
// (GET ContestsPath). Errors as for Submissions.
func (c *Client) Contests(ctx context.Context) ([]Contest, error) {
	var cs []Contest
	if err := c.get(ctx, ContestsPath, nil, &cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// The static resources besides the contest list, under /atcoder/ as well
// (https://kenkoooo.com/atcoder/resources/…). Each is one file of a few MB,
// rebuilt by AtCoder Problems from time to time.
const (
	ContestProblemsPath = "/atcoder/resources/contest-problem.json"
	ProblemsPath        = "/atcoder/resources/problems.json"
	ProblemModelsPath   = "/atcoder/resources/problem-models.json"
)

// ContestProblems returns every contest–problem pair AtCoder Problems knows
// (GET ContestProblemsPath). Errors as for Submissions.
func (c *Client) ContestProblems(ctx context.Context) ([]ContestProblem, error) {
	var out []ContestProblem
	if err := c.get(ctx, ContestProblemsPath, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Problems returns every problem AtCoder Problems knows (GET ProblemsPath).
// Errors as for Submissions.
func (c *Client) Problems(ctx context.Context) ([]Problem, error) {
	var out []Problem
	if err := c.get(ctx, ProblemsPath, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ProblemModels returns the estimated models by problem id
// (GET ProblemModelsPath). Errors as for Submissions.
func (c *Client) ProblemModels(ctx context.Context) (map[string]ProblemModel, error) {
	var out map[string]ProblemModel
	if err := c.get(ctx, ProblemModelsPath, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// APIError is a failed call to the API. Temporary failures (429, 5xx,
// transport errors, timeouts) were already retried by the client.
type APIError struct {
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Path is the API path called (no host, no query).
	Path string
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration
	// Err is the transport or decoding error, if any.
	Err error
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "AtCoder Problems %s", e.Path)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *APIError) Unwrap() error { return e.Err }

// Temporary reports whether a later call may succeed: rate limiting, server
// errors and transport failures, not 4xx answers or malformed bodies.
func (e *APIError) Temporary() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	case e.Status == 0:
		return e.Err != nil && !errors.Is(e.Err, errDecode)
	}
	return false
}

var errDecode = errors.New("malformed response")

// IsTemporaryAPIError reports whether err carries an *APIError that a later
// attempt might not meet (the API is down or limiting us).
func IsTemporaryAPIError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Temporary()
}

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery = q.Encode()
	for attempt := 0; ; attempt++ {
		if err := c.limiter.Wait(ctx); err != nil {
			return err
		}
		body, apiErr := c.do(ctx, u.String(), path)
		if apiErr == nil {
			if err := json.Unmarshal(body, out); err != nil {
				apiErr = &APIError{Status: http.StatusOK, Path: path, Err: fmt.Errorf("%w: %v", errDecode, err)}
			} else {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !apiErr.Temporary() || attempt >= c.maxRetries || apiErr.RetryAfter > c.maxRetryAfter {
			return algoitny.Internal(apiErr, "the AtCoder Problems API failed")
		}
		if apiErr.RetryAfter > 0 {
			// The server asked every caller to wait, not only this one: the
			// limiter holds back the next call (ours included) until then.
			c.limiter.Pause(apiErr.RetryAfter)
			continue
		}
		if err := sleep(ctx, c.backoff(attempt)); err != nil {
			return err
		}
	}
}

// do makes one attempt and returns the body of a 200 answer.
func (c *Client) do(ctx context.Context, rawURL, path string) ([]byte, *APIError) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &APIError{Path: path, Err: err}
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	// Accept-Encoding is left to the transport, which asks for gzip and
	// decompresses transparently (the API's README asks clients to use gzip).
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &APIError{Path: path, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		return nil, &APIError{Status: resp.StatusCode, Path: path, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, &APIError{Path: path, Err: err}
	}
	if int64(len(body)) > c.maxBytes {
		return nil, &APIError{Status: resp.StatusCode, Path: path, Err: fmt.Errorf("%w: body larger than %d bytes", errDecode, c.maxBytes)}
	}
	return body, nil
}

// backoff is the wait before retry attempt+1: RetryBase·2^attempt, capped at
// 30 s, with equal jitter (half fixed, half random).
func (c *Client) backoff(attempt int) time.Duration {
	d := min(c.retryBase<<min(attempt, 20), 30*time.Second)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// It returns 0 when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Limiter lets one call start per interval, in the order callers arrive, and
// lets a server's Retry-After pause every caller. It is safe for concurrent use.
type Limiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time // the earliest start of the next call
}

// NewLimiter returns a limiter allowing one call per interval.
func NewLimiter(interval time.Duration) *Limiter { return &Limiter{interval: interval} }

// Wait blocks until the caller may start a call, or returns ctx's error. A
// caller that gives up still used its turn, which only makes us slower.
func (l *Limiter) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	now := time.Now()
	slot := l.next
	if slot.Before(now) {
		slot = now
	}
	l.next = slot.Add(l.interval)
	l.mu.Unlock()
	return sleep(ctx, slot.Sub(now))
}

// Pause makes every call wait until d from now (a Retry-After).
func (l *Limiter) Pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := time.Now().Add(d); until.After(l.next) {
		l.next = until
	}
}
