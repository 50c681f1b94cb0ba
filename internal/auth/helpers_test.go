package auth_test

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"hash"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/auth"
)

const clientID = "algoitny-test.apps.googleusercontent.com"

// t0 is the start of every test clock.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a manual clock shared by a verifier and its test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testKey is an RSA signing key with its key id.
type testKey struct {
	kid  string
	priv *rsa.PrivateKey
}

// rsaKeys are generated once: 2048-bit generation is slow under -race.
var rsaKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	keys := make([]*rsa.PrivateKey, 3)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

// keyA and keyB are the keys the JWKS server publishes; impostor has keyA's
// kid but another private key.
func keyA() *testKey     { return &testKey{kid: "key-a", priv: rsaKeys()[0]} }
func keyB() *testKey     { return &testKey{kid: "key-b", priv: rsaKeys()[1]} }
func impostor() *testKey { return &testKey{kid: "key-a", priv: rsaKeys()[2]} }

// jwksServer is a real HTTP JWKS endpoint that counts its requests.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int64

	mu           sync.Mutex
	keys         []*testKey
	status       int
	cacheControl string
	age          string
	delay        time.Duration
}

func newJWKSServer(t *testing.T, keys ...*testKey) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys, status: http.StatusOK, cacheControl: "public, max-age=300, must-revalidate, no-transform"}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) serve(w http.ResponseWriter, r *http.Request) {
	s.fetches.Add(1)
	s.mu.Lock()
	keys, status, cc, age, delay := s.keys, s.status, s.cacheControl, s.age, s.delay
	s.mu.Unlock()
	time.Sleep(delay)
	if status != http.StatusOK {
		http.Error(w, "unavailable", status)
		return
	}
	type jwk struct {
		Kty string `json:"kty"`
		Use string `json:"use"`
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		N   string `json:"n"`
		E   string `json:"e"`
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	for _, k := range keys {
		pub := k.priv.PublicKey
		doc.Keys = append(doc.Keys, jwk{
			Kty: "RSA", Use: "sig", Alg: "RS256", Kid: k.kid,
			N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		})
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if cc != "" {
		w.Header().Set("Cache-Control", cc)
	}
	if age != "" {
		w.Header().Set("Age", age)
	}
	_ = json.NewEncoder(w).Encode(doc)
}

// set changes what the server does next.
func (s *jwksServer) set(f func(s *jwksServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *jwksServer) fetchCount() int64 { return s.fetches.Load() }

// newVerifier returns a production verifier whose only differences are the
// JWKS URL and the clock.
func newVerifier(t *testing.T, srv *jwksServer, clk *clock) *auth.GoogleVerifier {
	t.Helper()
	v, err := auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: clientID, JWKSURL: srv.URL, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// googleClaims returns the claims of a good ID token issued at now.
func googleClaims(now time.Time) map[string]any {
	return map[string]any{
		"iss":            "https://accounts.google.com",
		"azp":            clientID,
		"aud":            clientID,
		"sub":            "110169484474386276334",
		"email":          "ada@example.com",
		"email_verified": true,
		"name":           "Ada Lovelace",
		"picture":        "https://lh3.googleusercontent.com/a/ada",
		"iat":            now.Unix(),
		"exp":            now.Add(time.Hour).Unix(),
	}
}

// jwt encodes header and claims and appends sign's signature of them.
func jwt(t *testing.T, header, claims map[string]any, sign func(signingInput []byte) []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	in := enc(header) + "." + enc(claims)
	return in + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(in)))
}

// rs256 signs claims with k the way Google does.
func rs256(t *testing.T, k *testKey, claims map[string]any) string {
	t.Helper()
	return jwt(t, map[string]any{"alg": "RS256", "kid": k.kid, "typ": "JWT"}, claims, rsaSigner(t, k))
}

func rsaSigner(t *testing.T, k *testKey) func([]byte) []byte {
	t.Helper()
	return func(in []byte) []byte {
		d := sha256.Sum256(in)
		sig, err := rsa.SignPKCS1v15(nil, k.priv, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

func hmacSigner(secret []byte, h func() hash.Hash) func([]byte) []byte {
	return func(in []byte) []byte {
		m := hmac.New(h, secret)
		m.Write(in)
		return m.Sum(nil)
	}
}

// requireCode fails unless err has code and message msg, and its text does
// not quote the token.
func requireCode(t *testing.T, err error, code, msg, token string) {
	t.Helper()
	if !algoitny.IsCode(err, code) {
		t.Fatalf("error %v: want code %s", err, code)
	}
	if msg != "" && algoitny.ErrorMessage(err) != msg {
		t.Fatalf("message %q: want %q", algoitny.ErrorMessage(err), msg)
	}
	for _, part := range strings.Split(token, ".") {
		if len(part) >= 8 && strings.Contains(err.Error(), part) {
			t.Fatalf("error %q quotes the token", err)
		}
	}
}

// asError is errors.As for *algoitny.Error.
func asError(err error, target **algoitny.Error) bool {
	return errors.As(err, target)
}
