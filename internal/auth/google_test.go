package auth_test

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/auth"
)

func TestNewGoogleVerifier(t *testing.T) {
	t.Parallel()

	t.Run("ErrNoClientID", func(t *testing.T) {
		t.Parallel()
		_, err := auth.NewGoogleVerifier(auth.GoogleConfig{})
		requireCode(t, err, algoitny.EINVALID, "the Google client id is required", "")
	})

	t.Run("ErrBadJWKSURL", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"certs", "ftp://example.com/certs", "https://", "://x"} {
			_, err := auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: clientID, JWKSURL: u})
			requireCode(t, err, algoitny.EINVALID, "the Google JWKS URL must be an absolute http(s) URL", "")
		}
	})

	t.Run("ErrNegativeDurations", func(t *testing.T) {
		t.Parallel()
		_, err := auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: clientID, ClockSkew: -time.Second})
		requireCode(t, err, algoitny.EINVALID, "", "")
		_, err = auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: clientID, MinRefreshInterval: -time.Second})
		requireCode(t, err, algoitny.EINVALID, "", "")
	})

	t.Run("OKDefaults", func(t *testing.T) {
		t.Parallel()
		if _, err := auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: clientID}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestGoogleVerifier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// setup returns a verifier of a server publishing keyA and keyB.
	setup := func(t *testing.T) (*auth.GoogleVerifier, *clock) {
		t.Helper()
		clk := newClock()
		return newVerifier(t, newJWKSServer(t, keyA(), keyB()), clk), clk
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		for _, k := range []*testKey{keyA(), keyB()} {
			got, err := v.Verify(ctx, rs256(t, k, googleClaims(clk.Now())))
			if err != nil {
				t.Fatal(err)
			}
			want := algoitny.GoogleProfile{
				GoogleID: "110169484474386276334", Email: "ada@example.com",
				Name: "Ada Lovelace", Picture: "https://lh3.googleusercontent.com/a/ada",
			}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		}
	})

	// Claims variations Google may send, or that are within the clock skew.
	for name, edit := range map[string]func(c map[string]any, now time.Time){
		"OKIssuerWithoutScheme":   func(c map[string]any, _ time.Time) { c["iss"] = "accounts.google.com" },
		"OKAudienceArray":         func(c map[string]any, _ time.Time) { c["aud"] = []string{"other-client", clientID} },
		"OKEmailVerifiedString":   func(c map[string]any, _ time.Time) { c["email_verified"] = "true" },
		"OKExpiredWithinSkew":     func(c map[string]any, now time.Time) { c["exp"] = now.Add(-50 * time.Second).Unix() },
		"OKIssuedAheadWithinSkew": func(c map[string]any, now time.Time) { c["iat"] = now.Add(50 * time.Second).Unix() },
		"OKNotBeforeWithinSkew":   func(c map[string]any, now time.Time) { c["nbf"] = now.Add(50 * time.Second).Unix() },
		"OKFractionalTimes":       func(c map[string]any, now time.Time) { c["iat"] = float64(now.Unix()) + 0.5 },
		"OKWithoutNamePicture":    func(c map[string]any, _ time.Time) { delete(c, "name"); delete(c, "picture") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v, clk := setup(t)
			c := googleClaims(clk.Now())
			edit(c, clk.Now())
			if _, err := v.Verify(ctx, rs256(t, keyA(), c)); err != nil {
				t.Fatal(err)
			}
		})
	}

	// Claims that must be refused, each for one reason.
	for _, tc := range []struct {
		name, msg string
		edit      func(c map[string]any, now time.Time)
	}{
		{"ErrExpired", "ID token expired", func(c map[string]any, now time.Time) {
			c["iat"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-61*time.Second).Unix()
		}},
		{"ErrNoExpiry", "ID token has no expiry time", func(c map[string]any, _ time.Time) { delete(c, "exp") }},
		{"ErrIssuedInFuture", "ID token is not valid yet", func(c map[string]any, now time.Time) {
			c["iat"], c["exp"] = now.Add(2*time.Minute).Unix(), now.Add(time.Hour).Unix()
		}},
		{"ErrNoIssueTime", "ID token has no issue time", func(c map[string]any, _ time.Time) { delete(c, "iat") }},
		{"ErrNotBefore", "ID token is not valid yet", func(c map[string]any, now time.Time) { c["nbf"] = now.Add(2 * time.Minute).Unix() }},
		{"ErrWrongAudience", "ID token is for another application", func(c map[string]any, _ time.Time) { c["aud"] = "other-client" }},
		{"ErrWrongAudienceArray", "ID token is for another application", func(c map[string]any, _ time.Time) { c["aud"] = []string{"a", "b"} }},
		{"ErrNoAudience", "ID token is for another application", func(c map[string]any, _ time.Time) { delete(c, "aud") }},
		{"ErrWrongIssuer", "ID token was not issued by Google", func(c map[string]any, _ time.Time) { c["iss"] = "https://evil.example.com" }},
		{"ErrIssuerLookalike", "ID token was not issued by Google", func(c map[string]any, _ time.Time) { c["iss"] = "https://accounts.google.com/" }},
		{"ErrEmailNotVerified", "Google account email is not verified", func(c map[string]any, _ time.Time) { c["email_verified"] = false }},
		{"ErrEmailVerifiedMissing", "Google account email is not verified", func(c map[string]any, _ time.Time) { delete(c, "email_verified") }},
		{"ErrEmailVerifiedStringFalse", "Google account email is not verified", func(c map[string]any, _ time.Time) { c["email_verified"] = "false" }},
		{"ErrNoSubject", "ID token has no subject", func(c map[string]any, _ time.Time) { delete(c, "sub") }},
		{"ErrNoEmail", "ID token has no email", func(c map[string]any, _ time.Time) { delete(c, "email") }},
		{"ErrBadTimeType", "ID token is malformed", func(c map[string]any, _ time.Time) { c["exp"] = "tomorrow" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, clk := setup(t)
			c := googleClaims(clk.Now())
			tc.edit(c, clk.Now())
			token := rs256(t, keyA(), c)
			_, err := v.Verify(ctx, token)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, tc.msg, token)
		})
	}

	t.Run("ErrExpiredAsClockMoves", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		token := rs256(t, keyA(), googleClaims(clk.Now()))
		if _, err := v.Verify(ctx, token); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour + time.Minute) // exp + skew
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token expired", token)
	})

	t.Run("ErrBadSignature", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		// Signed by another key that claims keyA's kid.
		token := rs256(t, impostor(), googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token signature is invalid", token)
	})

	t.Run("ErrTamperedPayload", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		good := strings.Split(rs256(t, keyA(), googleClaims(clk.Now())), ".")
		c := googleClaims(clk.Now())
		c["email"] = "mallory@example.com"
		forged := strings.Split(rs256(t, keyB(), c), ".")
		token := good[0] + "." + forged[1] + "." + good[2]
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token signature is invalid", token)
	})

	t.Run("ErrAlgNone", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		for _, alg := range []string{"none", "None", "NONE", ""} {
			for _, sig := range [][]byte{nil, []byte("x")} {
				token := jwt(t, map[string]any{"alg": alg, "kid": keyA().kid}, googleClaims(clk.Now()), func([]byte) []byte { return sig })
				if sig == nil && !strings.HasSuffix(token, ".") {
					t.Fatalf("want an empty signature: %s", token)
				}
				_, err := v.Verify(ctx, token)
				requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token must be signed with RS256", token)
			}
		}
	})

	t.Run("ErrHS256WithPublicKey", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		// The confusion attack: HMAC keyed with the public key, which anybody
		// can download, in every encoding a naive verifier might use.
		pub := &keyA().priv.PublicKey
		pkix, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		pkcs1 := x509.MarshalPKCS1PublicKey(pub)
		for name, secret := range map[string][]byte{
			"PEM":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
			"PKCS1PEM": pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: pkcs1}),
			"DER":      pkix,
			"Modulus":  pub.N.Bytes(),
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				token := jwt(t, map[string]any{"alg": "HS256", "kid": keyA().kid}, googleClaims(clk.Now()), hmacSigner(secret, sha256.New))
				_, err := v.Verify(ctx, token)
				requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token must be signed with RS256", token)
			})
		}
	})

	t.Run("ErrOtherAlgorithms", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		for _, alg := range []string{"RS384", "RS512", "PS256", "ES256", "HS512", "rs256", "EdDSA"} {
			// An RS256 signature under another name must not pass either.
			token := jwt(t, map[string]any{"alg": alg, "kid": keyA().kid}, googleClaims(clk.Now()), rsaSigner(t, keyA()))
			_, err := v.Verify(ctx, token)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token must be signed with RS256", token)
		}
		token := jwt(t, map[string]any{"alg": "HS512", "kid": keyA().kid}, googleClaims(clk.Now()), hmacSigner(keyA().priv.N.Bytes(), sha512.New))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token must be signed with RS256", token)
	})

	t.Run("ErrMalformed", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		enc := base64.RawURLEncoding.EncodeToString
		good := rs256(t, keyA(), googleClaims(clk.Now()))
		parts := strings.Split(good, ".")
		signed := func(header, payload string) string {
			in := enc([]byte(header)) + "." + enc([]byte(payload))
			return in + "." + enc(rsaSigner(t, keyA())([]byte(in)))
		}
		for name, token := range map[string]string{
			"Empty":             "",
			"OnePart":           "abc",
			"TwoParts":          "abc.def",
			"FourParts":         good + ".xyz",
			"EmptyHeader":       "." + parts[1] + "." + parts[2],
			"EmptyPayload":      parts[0] + ".." + parts[2],
			"NotBase64":         "!!!.###.$$$",
			"PaddedBase64":      parts[0] + "=." + parts[1] + "." + parts[2],
			"StdBase64":         strings.ReplaceAll(strings.ReplaceAll(good, "-", "+"), "_", "/") + "+/",
			"Spaces":            " " + good + " ",
			"HeaderNotJSON":     enc([]byte("hello")) + "." + parts[1] + "." + parts[2],
			"HeaderArray":       enc([]byte(`["RS256"]`)) + "." + parts[1] + "." + parts[2],
			"PayloadNotJSON":    signed(`{"alg":"RS256","kid":"key-a"}`, "not json"),
			"PayloadArray":      signed(`{"alg":"RS256","kid":"key-a"}`, `[1,2]`),
			"CriticalExtension": signed(`{"alg":"RS256","kid":"key-a","crit":["exp"],"exp":1}`, `{}`),
			"Huge":              strings.Repeat("a", 10000) + "." + parts[1] + "." + parts[2],
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				_, err := v.Verify(ctx, token)
				requireCode(t, err, algoitny.EUNAUTHENTICATED, "", token)
			})
		}
		for _, token := range []string{"", "abc", "a.b", "!!!.###.$$$", " " + good} {
			_, err := v.Verify(ctx, token)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token is malformed", token)
		}
	})

	t.Run("ErrNoKid", func(t *testing.T) {
		t.Parallel()
		v, clk := setup(t)
		token := jwt(t, map[string]any{"alg": "RS256"}, googleClaims(clk.Now()), rsaSigner(t, keyA()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token does not name its signing key", token)
	})
}

func TestGoogleVerifierKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	requireFetches := func(t *testing.T, srv *jwksServer, want int64) {
		t.Helper()
		if got := srv.fetchCount(); got != want {
			t.Fatalf("%d JWKS fetches, want %d", got, want)
		}
	}
	verify := func(t *testing.T, v *auth.GoogleVerifier, k *testKey, now time.Time) error {
		t.Helper()
		_, err := v.Verify(ctx, rs256(t, k, googleClaims(now)))
		return err
	}

	t.Run("RotationRefetchesUnknownKid", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		v := newVerifier(t, srv, clk)
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 1)

		// Google publishes a new key and starts signing with it while our
		// cache (max-age 300 s) is still fresh.
		clk.Advance(time.Minute)
		srv.set(func(s *jwksServer) { s.keys = []*testKey{keyA(), keyB()} })
		if err := verify(t, v, keyB(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 2)
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 2)

		// The old key is retired: its tokens are refused once refetched.
		clk.Advance(time.Minute)
		srv.set(func(s *jwksServer) { s.keys = []*testKey{keyB()} })
		token := rs256(t, &testKey{kid: "key-c", priv: keyA().priv}, googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token was signed by an unknown key", token)
		requireFetches(t, srv, 3)
		token = rs256(t, keyA(), googleClaims(clk.Now()))
		_, err = v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token was signed by an unknown key", token)
		requireFetches(t, srv, 3) // rate-limited: no fetch within 30 s
	})

	t.Run("ErrUnknownKidAfterRefetch", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		v := newVerifier(t, srv, clk)
		token := rs256(t, keyB(), googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token was signed by an unknown key", token)
		requireFetches(t, srv, 1)
	})

	t.Run("UnknownKidRefetchRateLimited", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		v := newVerifier(t, srv, clk)
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		// keyB appears right after our fetch: it is not fetched before the
		// minimum refresh interval has passed.
		srv.set(func(s *jwksServer) { s.keys = []*testKey{keyA(), keyB()} })
		clk.Advance(auth.DefaultMinRefreshInterval - time.Second)
		token := rs256(t, keyB(), googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token was signed by an unknown key", token)
		requireFetches(t, srv, 1)
		clk.Advance(time.Second)
		if err := verify(t, v, keyB(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 2)
	})

	// flood verifies n tokens with made-up kids concurrently and requires
	// each to be refused as signed by an unknown key.
	flood := func(t *testing.T, v *auth.GoogleVerifier, now time.Time, n int) {
		t.Helper()
		tokens := make([]string, n)
		for i := range tokens {
			tokens[i] = rs256(t, &testKey{kid: fmt.Sprintf("bogus-%d", i), priv: keyA().priv}, googleClaims(now))
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, token := range tokens {
			wg.Go(func() { _, errs[i] = v.Verify(ctx, token) })
		}
		wg.Wait()
		for i, err := range errs {
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "ID token was signed by an unknown key", tokens[i])
		}
	}

	t.Run("BogusKidFloodIsBounded", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		srv.set(func(s *jwksServer) { s.delay = 20 * time.Millisecond })
		v := newVerifier(t, srv, clk)

		flood(t, v, clk.Now(), 100) // cold cache: one shared fetch
		requireFetches(t, srv, 1)
		flood(t, v, clk.Now(), 100) // fresh cache, fetched just now
		requireFetches(t, srv, 1)
		clk.Advance(auth.DefaultMinRefreshInterval)
		flood(t, v, clk.Now(), 100) // one refetch for the whole flood
		requireFetches(t, srv, 2)
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 2)
	})

	t.Run("ConcurrentColdVerificationsShareOneFetch", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		srv.set(func(s *jwksServer) { s.delay = 50 * time.Millisecond })
		v := newVerifier(t, srv, clk)
		token := rs256(t, keyA(), googleClaims(clk.Now()))
		errs := make([]error, 100)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = v.Verify(ctx, token) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		requireFetches(t, srv, 1)
	})

	t.Run("CacheHonoursMaxAge", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name, cacheControl, age string
			ttl                     time.Duration
		}{
			{"MaxAge", "public, max-age=300, must-revalidate", "", 300 * time.Second},
			{"MaxAgeMinusAge", "public, max-age=300", "200", 100 * time.Second},
			{"MaxAgeUpperCase", "Max-Age=7200", "", 2 * time.Hour},
			{"NoMaxAge", "", "", time.Hour},
			{"NoCacheRaisedToMinRefresh", "no-cache", "", auth.DefaultMinRefreshInterval},
			{"CappedAtOneDay", "max-age=31536000", "", 24 * time.Hour},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				clk := newClock()
				srv := newJWKSServer(t, keyA())
				srv.set(func(s *jwksServer) { s.cacheControl, s.age = tc.cacheControl, tc.age })
				v := newVerifier(t, srv, clk)
				for range 3 {
					if err := verify(t, v, keyA(), clk.Now()); err != nil {
						t.Fatal(err)
					}
				}
				requireFetches(t, srv, 1)
				clk.Advance(tc.ttl - time.Second)
				if err := verify(t, v, keyA(), clk.Now()); err != nil {
					t.Fatal(err)
				}
				requireFetches(t, srv, 1)
				clk.Advance(time.Second)
				if err := verify(t, v, keyA(), clk.Now()); err != nil {
					t.Fatal(err)
				}
				requireFetches(t, srv, 2)
			})
		}
	})

	t.Run("ErrJWKSDownIsInternal", func(t *testing.T) {
		t.Parallel()
		for name, edit := range map[string]func(s *jwksServer){
			"Status503": func(s *jwksServer) { s.status = http.StatusServiceUnavailable },
			"Status404": func(s *jwksServer) { s.status = http.StatusNotFound },
			"NoKeys":    func(s *jwksServer) { s.keys = nil },
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				clk := newClock()
				srv := newJWKSServer(t, keyA())
				srv.set(edit)
				v := newVerifier(t, srv, clk)
				token := rs256(t, keyA(), googleClaims(clk.Now()))
				_, err := v.Verify(ctx, token)
				requireCode(t, err, algoitny.EINTERNAL, "Google sign-in is unavailable; try again", token)
			})
		}
	})

	t.Run("ErrJWKSUnreachableIsInternal", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		v := newVerifier(t, srv, clk)
		srv.Close()
		token := rs256(t, keyA(), googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EINTERNAL, "Google sign-in is unavailable; try again", token)
	})

	t.Run("JWKSDownServesCachedKeysAndRecovers", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		v := newVerifier(t, srv, clk)
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		srv.set(func(s *jwksServer) { s.status = http.StatusInternalServerError })
		clk.Advance(10 * time.Minute) // past max-age: a refresh is due and fails
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatalf("stale key not used while JWKS is down: %v", err)
		}
		requireFetches(t, srv, 2)
		// Failures are not retried on every request...
		for range 10 {
			if err := verify(t, v, keyA(), clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		requireFetches(t, srv, 2)
		// ...an unknown kid cannot be checked: "try again", not "bad token".
		token := rs256(t, keyB(), googleClaims(clk.Now()))
		_, err := v.Verify(ctx, token)
		requireCode(t, err, algoitny.EINTERNAL, "Google sign-in is unavailable; try again", token)
		requireFetches(t, srv, 2)
		// ...and after a short backoff the endpoint is asked again.
		srv.set(func(s *jwksServer) { s.status, s.keys = http.StatusOK, []*testKey{keyA(), keyB()} })
		clk.Advance(10 * time.Second)
		if err := verify(t, v, keyB(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 3)
	})

	t.Run("ErrContextCancelledWhileFetching", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := newJWKSServer(t, keyA())
		srv.set(func(s *jwksServer) { s.delay = 200 * time.Millisecond })
		v := newVerifier(t, srv, clk)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		token := rs256(t, keyA(), googleClaims(clk.Now()))
		_, err := v.Verify(cctx, token)
		requireCode(t, err, algoitny.EINTERNAL, "sign-in was interrupted; try again", token)
		// The shared fetch was not cancelled with the caller.
		if err := verify(t, v, keyA(), clk.Now()); err != nil {
			t.Fatal(err)
		}
		requireFetches(t, srv, 1)
	})
}
