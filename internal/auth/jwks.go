package auth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

const (
	// defaultJWKSTTL is how long keys are kept when the response says nothing.
	defaultJWKSTTL = time.Hour
	// maxJWKSTTL caps a long max-age so that a removed key does not linger.
	maxJWKSTTL = 24 * time.Hour
	// failureBackoff is how long a failed fetch is reported again instead of
	// being retried, so that an outage is not met with one request per login.
	failureBackoff = 5 * time.Second
	// fetchTimeout bounds one fetch; it is shared by every waiting caller and
	// therefore detached from any one caller's context.
	fetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds the response body we read.
	maxJWKSBytes = 1 << 20
	// minRSABits refuses keys too weak to trust.
	minRSABits = 2048
)

// errUnknownKey refuses a token whose key id is not among Google's keys.
func errUnknownKey() error { return unauthenticated("ID token was signed by an unknown key") }

// keySet is a cache of the RSA keys published at a JWKS URL. It is safe for
// concurrent use.
type keySet struct {
	url        string
	client     *http.Client
	now        func() time.Time
	minRefresh time.Duration

	mu        sync.Mutex
	keys      map[string]*rsa.PublicKey
	expires   time.Time // keys are fresh before this instant
	lastFetch time.Time // start of the most recent fetch
	lastErr   error     // error of the most recent fetch, nil if it succeeded
	inflight  *keyFetch // the fetch under way, if any
}

// keyFetch is one fetch shared by every caller waiting for it.
type keyFetch struct {
	done chan struct{}
	err  error // set before done is closed
}

// key returns the key with id kid, fetching the key set when it is stale or
// when kid is unknown and no fetch started within minRefresh.
func (s *keySet) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	s.mu.Lock()
	now := s.now()
	k, known := s.keys[kid]
	fresh := now.Before(s.expires)
	if known && fresh {
		s.mu.Unlock()
		return k, nil
	}
	f := s.inflight
	if f == nil {
		switch {
		case fresh && now.Sub(s.lastFetch) < s.minRefresh:
			// An unknown kid, but we asked recently: do not let made-up kids
			// drive requests to the JWKS endpoint.
			s.mu.Unlock()
			return nil, errUnknownKey()
		case !fresh && s.lastErr != nil && now.Sub(s.lastFetch) < failureBackoff:
			err := s.lastErr
			s.mu.Unlock()
			if known {
				return k, nil // stale, but better than refusing every sign-in
			}
			return nil, err
		}
		f = s.startLocked(ctx, now)
	}
	s.mu.Unlock()

	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, algoitny.Internal(ctx.Err(), "sign-in was interrupted; try again")
	}
	s.mu.Lock()
	k, known = s.keys[kid]
	s.mu.Unlock()
	switch {
	case known:
		// After a failed refresh the previous keys are still here: use them.
		return k, nil
	case f.err != nil:
		return nil, f.err
	default:
		return nil, errUnknownKey()
	}
}

// startLocked starts a fetch in the background; s.mu must be held. The fetch
// outlives the caller's cancellation because other callers may wait for it.
func (s *keySet) startLocked(ctx context.Context, now time.Time) *keyFetch {
	f := &keyFetch{done: make(chan struct{})}
	s.inflight = f
	s.lastFetch = now
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	go func() {
		defer cancel()
		keys, ttl, err := s.download(fctx)
		s.mu.Lock()
		if err == nil {
			s.keys = keys
			s.expires = s.now().Add(ttl)
		}
		s.lastErr = err
		f.err = err
		s.inflight = nil
		s.mu.Unlock()
		close(f.done)
	}()
	return f
}

// download fetches and parses the key set. Every error is EINTERNAL: the
// token being verified may be good, the caller should try again.
func (s *keySet) download(ctx context.Context) (map[string]*rsa.PublicKey, time.Duration, error) {
	fail := func(err error) (map[string]*rsa.PublicKey, time.Duration, error) {
		return nil, 0, algoitny.Internal(err, "Google sign-in is unavailable; try again")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("GET %s: %s", s.url, resp.Status))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fail(fmt.Errorf("GET %s: %w", s.url, err))
	}
	if len(body) > maxJWKSBytes {
		return fail(fmt.Errorf("GET %s: response larger than %d bytes", s.url, maxJWKSBytes))
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return fail(fmt.Errorf("GET %s: %w", s.url, err))
	}
	return keys, cacheTTL(resp.Header, s.minRefresh), nil
}

// jwk is the part of a JSON Web Key (RFC 7517) that an RSA signing key uses.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// parseJWKS returns the RS256 signing keys of a JWKS document by key id.
// Keys of other types or uses, and weak keys, are skipped; a document without
// a usable key is an error.
func parseJWKS(body []byte) (map[string]*rsa.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("decode JWKS: %w", err)
	}
	keys := make(map[string]*rsa.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if k.Kty != "RSA" || k.Kid == "" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err := decodeJWKInt(k.N)
		if err != nil || n.BitLen() < minRSABits {
			continue
		}
		e, err := decodeJWKInt(k.E)
		if err != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			continue
		}
		keys[k.Kid] = &rsa.PublicKey{N: n, E: int(e.Int64())}
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS has no usable RS256 key")
	}
	return keys, nil
}

// decodeJWKInt decodes a base64url big-endian unsigned integer, tolerating
// padding.
func decodeJWKInt(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad JWK integer")
	}
	return new(big.Int).SetBytes(b), nil
}

// cacheTTL returns how long a JWKS response may be used: its Cache-Control
// max-age minus its Age (defaultJWKSTTL without max-age, zero with no-cache or
// no-store), clamped to [floor, maxJWKSTTL]. The floor keeps a max-age of 0
// from turning every sign-in into a fetch.
func cacheTTL(h http.Header, floor time.Duration) time.Duration {
	ttl := defaultJWKSTTL
	noCache := false
	for _, line := range h.Values("Cache-Control") {
		for _, directive := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "max-age":
				if secs, ok := parseSeconds(value); ok {
					ttl = secs
				}
			case "no-cache", "no-store":
				noCache = true
			}
		}
	}
	if noCache {
		ttl = 0
	}
	if age, ok := parseSeconds(h.Get("Age")); ok {
		ttl -= age
	}
	return min(max(ttl, floor), maxJWKSTTL)
}

// parseSeconds parses a non-negative delta-seconds value, capped at
// maxJWKSTTL so that it cannot overflow.
func parseSeconds(s string) (time.Duration, bool) {
	n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(s), `"`), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return min(time.Duration(min(n, int64(maxJWKSTTL/time.Second)))*time.Second, maxJWKSTTL), true
}
