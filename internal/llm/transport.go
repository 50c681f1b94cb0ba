package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

const (
	// maxResponseBytes bounds a non-streamed response body.
	maxResponseBytes = 8 << 20
	// maxErrorBodyBytes bounds what we read of an error response.
	maxErrorBodyBytes = 4 << 10
	// maxSSELineBytes bounds one line of a server-sent event stream.
	maxSSELineBytes = 1 << 20
	// maxRetryAfter caps a Retry-After header, to keep the arithmetic sane.
	maxRetryAfter = 24 * time.Hour
	// userAgent identifies us to the providers.
	userAgent = "algoitny-llm/1"
)

// transport sends JSON requests to a remote provider with per-attempt
// timeouts and retries. It is safe for concurrent use.
type transport struct {
	name       string
	client     *http.Client
	timeout    time.Duration
	maxRetries int
	baseDelay  time.Duration
	maxDelay   time.Duration
	// secrets are removed from every error text (the Gemini key travels in
	// the URL, which net/http puts into its errors).
	secrets []string
}

// retryable marks an error from a response handler as worth another attempt
// (the body broke off before anything was passed on to the caller).
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

// statusError is a non-2xx answer.
type statusError struct {
	status  int
	message string // the provider's own error message, if it gave one
}

func (e *statusError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.message)
}

// temporary reports whether the status is worth retrying.
func (e *statusError) temporary() bool {
	return e.status == http.StatusTooManyRequests || e.status == http.StatusRequestTimeout || e.status >= 500
}

// post sends body as JSON to endpoint and hands a 2xx response to handle,
// retrying throttling, server errors, network errors and attempt timeouts
// with exponential backoff and jitter, honouring Retry-After. handle runs
// under the attempt's timeout; it may return retryable{err} to ask for
// another attempt. Every error returned is an EINTERNAL *algoitny.Error with
// secrets removed.
func (t *transport) post(ctx context.Context, endpoint string, header http.Header, body any, handle func(*http.Response) error) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return algoitny.Internal(err, "%s: cannot encode the request", t.name)
	}
	var last error
	for attempt := 0; ; attempt++ {
		wait, retry, err := t.attempt(ctx, endpoint, header, payload, handle)
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return t.fail(ctx.Err(), "%s: request abandoned", t.name)
		}
		if !retry {
			break
		}
		if attempt >= t.maxRetries {
			return t.fail(last, "%s: giving up after %d attempts", t.name, attempt+1)
		}
		if wait > t.maxDelay {
			return t.fail(last, "%s: asked to retry after %v, longer than we wait", t.name, wait.Round(time.Second))
		}
		if wait == 0 {
			wait = t.backoff(attempt)
		} else {
			wait += jitter(t.baseDelay / 4)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return t.fail(last, "%s: no time left to retry", t.name)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return t.fail(ctx.Err(), "%s: request abandoned", t.name)
		case <-timer.C:
		}
	}
	var se *statusError
	if errors.As(last, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusForbidden) {
		return t.fail(last, "%s: the API key was refused", t.name)
	}
	return t.fail(last, "%s: request failed", t.name)
}

// attempt makes one request. It returns the Retry-After delay the server
// asked for (0 if none), whether the failure is worth another attempt, and
// the attempt's error. Failures to reach the server, attempt timeouts, HTTP
// 408, 429 and 5xx are worth another attempt; errors of handle only when it
// says so with retryable.
func (t *transport) attempt(ctx context.Context, endpoint string, header http.Header, payload []byte, handle func(*http.Response) error) (time.Duration, bool, error) {
	actx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return 0, false, t.redactErr(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, true, t.redactErr(err)
	}
	defer func() {
		// Drain a little so that the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, maxErrorBodyBytes)
		_ = resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		se := &statusError{status: resp.StatusCode, message: t.redact(errorMessage(raw))}
		return retryAfter(resp.Header.Get("Retry-After"), time.Now()), se.temporary(), se
	}
	if err := handle(resp); err != nil {
		var rt retryable
		if errors.As(err, &rt) {
			return 0, true, t.redactErr(rt.err)
		}
		return 0, false, t.redactErr(err)
	}
	return 0, false, nil
}

// backoff returns the delay before retry number attempt+1: the base delay
// doubled per attempt, capped, with "equal jitter" (half fixed, half random)
// so that clients throttled together do not retry together.
func (t *transport) backoff(attempt int) time.Duration {
	d := t.baseDelay << min(attempt, 20)
	if d <= 0 || d > t.maxDelay {
		d = t.maxDelay
	}
	return d/2 + jitter(d/2)
}

// jitter returns a random duration in [0, d).
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d)))
}

// retryAfter parses a Retry-After header (delay seconds or an HTTP date).
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(s) || s <= 0:
			return 0
		case s > maxRetryAfter.Seconds():
			return maxRetryAfter
		}
		return time.Duration(s * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0)
	}
	return 0
}

// errorMessage digs the message out of a provider's JSON error body
// ({"error":{"message":…}} for both Gemini and OpenAI), or returns the start
// of the body as text.
func errorMessage(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return analysis.TruncateText(obj.Message, 300)
		}
		var s string
		if json.Unmarshal(body.Error, &s) == nil && s != "" {
			return analysis.TruncateText(s, 300)
		}
	}
	return analysis.TruncateText(strings.TrimSpace(string(raw)), 200)
}

// fail wraps err in an EINTERNAL error whose every text is free of secrets.
func (t *transport) fail(err error, format string, args ...any) error {
	return algoitny.Internal(t.redactErr(err), format, args...)
}

// redact removes the secrets from s.
func (t *transport) redact(s string) string {
	for _, sec := range t.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "REDACTED")
		}
	}
	return s
}

// redactErr returns err with the secrets removed from its text. A *url.Error
// (whose text holds the request URL) is copied with a redacted URL so that
// errors.Is still sees the cause beneath it.
func (t *transport) redactErr(err error) error {
	if err == nil || len(t.secrets) == 0 {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		c := *ue
		c.URL = t.redact(c.URL)
		if u, perr := url.Parse(c.URL); perr == nil {
			u.RawQuery = ""
			c.URL = u.String()
		}
		if err == error(ue) {
			err = &c
		}
	}
	if msg := err.Error(); t.redact(msg) != msg {
		return &redactedError{msg: t.redact(msg), err: err}
	}
	return err
}

// redactedError shows a redacted text but keeps the cause for errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// readJSON decodes a bounded response body into v. A body that breaks off is
// worth another attempt.
func readJSON(resp *http.Response, v any) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return retryable{fmt.Errorf("reading the response: %w", err)}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	return nil
}

// streamChunk is what one event of a provider's stream adds to the answer.
type streamChunk struct {
	text   string // the next piece of the answer ("" if none)
	finish string // why the model stopped, if the event says
	done   bool   // the stream's end marker: nothing follows
}

// streamText is the one streaming loop of every provider: it posts body to
// endpoint asking for server-sent events, turns each event into a chunk
// with decode (the provider's wire format), passes each piece of text to
// onDelta as it arrives and returns the whole answer. A stream that breaks
// off before any text is retried (post); one that breaks off later is not,
// since onDelta has already passed text on. An answer without text is an
// answerError naming the finish reason. Errors are post's.
func (t *transport) streamText(ctx context.Context, provider, endpoint string, header http.Header, body any, decode func(data string) (streamChunk, error), onDelta func(string)) (string, error) {
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Accept", "text/event-stream")
	var b strings.Builder
	var finish string
	err := t.post(ctx, endpoint, h, body, func(resp *http.Response) error {
		err := readSSE(resp.Body, func(data string) (bool, error) {
			c, err := decode(data)
			if err != nil || c.done {
				return c.done, err
			}
			if c.finish != "" {
				finish = c.finish
			}
			if c.text != "" {
				b.WriteString(c.text)
				onDelta(c.text)
			}
			return false, nil
		})
		if err != nil && b.Len() == 0 && !isAnswerError(err) {
			return retryable{err}
		}
		if err != nil {
			return err
		}
		if strings.TrimSpace(b.String()) == "" {
			return emptyAnswer(provider, finish)
		}
		return nil
	})
	return b.String(), err
}

// readSSE reads a server-sent event stream and calls fn with the data of
// each event (data lines joined by "\n"). Comment lines and fields other than
// data are ignored. fn returns stop=true to end reading early.
func readSSE(r io.Reader, fn func(data string) (stop bool, err error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []string
	dispatch := func() (bool, error) {
		if len(data) == 0 {
			return false, nil
		}
		d := strings.Join(data, "\n")
		data = data[:0]
		return fn(d)
	}
	for {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if line == "" && err == nil {
			if stop, ferr := dispatch(); stop || ferr != nil {
				return ferr
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
		if errors.Is(err, io.EOF) {
			_, ferr := dispatch()
			return ferr
		}
	}
}

// readLine reads one line without its line ending ("\n" or "\r\n"),
// refusing lines over maxSSELineBytes.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		buf = append(buf, chunk...)
		if len(buf) > maxSSELineBytes {
			return "", errors.New("event stream line too long")
		}
		if err != nil {
			return string(buf), err
		}
		if !isPrefix {
			return string(buf), nil
		}
	}
}
