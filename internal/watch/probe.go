package watch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
)

// Fetcher fetches a user's URL without letting it reach the server's own
// network (*safehttp.Client).
type Fetcher interface {
	Get(ctx context.Context, raw string) (*safehttp.Response, error)
}

var _ Fetcher = (*safehttp.Client)(nil)

// Prober runs one check once: it fetches the URL through a Fetcher (public
// http(s) addresses only, checked again after DNS resolution and on every
// redirect; bodies capped) and judges the response. It exists apart from the
// scheduler so that what a run means can be tested without one.
type Prober struct {
	Fetch Fetcher
	// Timeout bounds one attempt (default 15 s); an attempt that takes
	// longer failed.
	Timeout time.Duration
	// Retries is how many times a failed fetch is retried within the run
	// (0: none; NewChecks sets DefaultRetries).
	Retries int
	// RetryBackoff is the wait before the first retry, doubled for each
	// next one (default DefaultRetryBackoff).
	RetryBackoff time.Duration
	// CertWarning is how close to its expiry an https certificate sets the
	// result's CertExpiresSoon (default DefaultCertWarning).
	CertWarning time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Probe runs c once and returns its result. A fetch that fails (network
// error, timeout, HTTP ≥ 400) is retried up to Retries times, after
// RetryBackoff and then twice as long each time, and the result is the last
// attempt's with Attempts counting them. It never fails: every problem is a
// DOWN result whose Error says what went wrong in words that do not reveal
// the server's network. ErrForbidden in Probe's second result says the
// destination was refused as non-public (not retried: the check goes DOWN
// at once).
func (p *Prober) Probe(ctx context.Context, c *algoitny.Check) (*algoitny.CheckResult, error) {
	backoff := p.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	for attempt := 1; ; attempt++ {
		r, err := p.probeOnce(ctx, c)
		r.Attempts = attempt
		if err != nil || !r.Failed() || attempt > p.Retries {
			return r, err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return r, nil
		}
		backoff *= 2
	}
}

// MaxDuration bounds how long Probe may take: every attempt's timeout and
// the waits between them.
func (p *Prober) MaxDuration() time.Duration {
	backoff := p.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	total := p.timeout()
	for range max(p.Retries, 0) {
		total += backoff + p.timeout()
		backoff *= 2
	}
	return total
}

func (p *Prober) timeout() time.Duration {
	if p.Timeout <= 0 {
		return 15 * time.Second
	}
	return p.Timeout
}

// probeOnce is one attempt of Probe.
func (p *Prober) probeOnce(ctx context.Context, c *algoitny.Check) (*algoitny.CheckResult, error) {
	timeout := p.timeout()
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := now()
	resp, err := p.Fetch.Get(ctx, c.URL)
	elapsed := now().Sub(start)
	r := &algoitny.CheckResult{CheckID: c.ID, Status: algoitny.CheckDown, ResponseTimeMs: int(elapsed.Milliseconds()), CheckedAt: start.UTC()}
	if err != nil {
		r.Error = describeFetchError(ctx, err, timeout)
		if errors.Is(err, safehttp.ErrForbidden) {
			return r, ErrForbidden
		}
		return r, nil
	}
	if resp.Elapsed > 0 {
		r.ResponseTimeMs = int(resp.Elapsed.Milliseconds())
	}
	r.HTTPStatus = resp.StatusCode
	if resp.CertNotAfter != nil {
		warn := p.CertWarning
		if warn <= 0 {
			warn = DefaultCertWarning
		}
		r.CertNotAfter = resp.CertNotAfter
		r.CertExpiresSoon = resp.CertNotAfter.Sub(now()) < warn
	}
	if resp.StatusCode >= 400 {
		r.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
		return r, nil
	}
	r.Status = algoitny.CheckUp
	if c.Type == algoitny.CheckKeyword {
		found := containsFold(resp.Body, c.Keyword)
		r.KeywordFound = &found
		if found == c.Invert {
			r.Status = algoitny.CheckDown
			r.Error = fmt.Sprintf("the page does not contain the keyword %q", c.Keyword)
			if c.Invert {
				r.Error = fmt.Sprintf("the page contains the keyword %q", c.Keyword)
			}
		}
	}
	return r, nil
}

// ErrForbidden is returned by Probe when the destination was refused because
// it is not a public address (it may resolve differently than when the check
// was created), or because its host name does not exist: the two read and
// act alike (the check stops at once), so that checks cannot be used to ask
// which names the server's own DNS knows (safehttp.NotPublicMessage). Code
// EINVALID.
var ErrForbidden = &algoitny.Error{Code: algoitny.EINVALID, Field: "url", Message: safehttp.NotPublicMessage}

// containsFold reports whether body contains keyword, ignoring case (ASCII
// and Unicode simple folding, as bytes.EqualFold). A keyword beyond the body
// cap is not found.
func containsFold(body []byte, keyword string) bool {
	if keyword == "" {
		return false
	}
	return bytes.Contains(bytes.ToLower(body), bytes.ToLower([]byte(keyword)))
}

// describeFetchError turns a fetch error into a short message for the
// check's owner. It names the kind of failure only: raw network errors
// could reveal addresses of the server's network.
func describeFetchError(ctx context.Context, err error, timeout time.Duration) string {
	var ae *algoitny.Error
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, safehttp.ErrForbidden):
		return ErrForbidden.Message
	case errors.As(err, &ae) && ae.Code != algoitny.EINTERNAL:
		return ae.Message
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Sprintf("timed out after %s", timeout)
	case errors.As(err, &dnsErr):
		// Temporary: a name that does not exist is ErrForbidden above.
		return "the host name could not be resolved (DNS failure)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return "the host is unreachable"
	case errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr):
		return "the TLS certificate is not valid"
	}
	if strings.Contains(err.Error(), "redirects") {
		return "too many redirects"
	}
	return "the request failed"
}
