package auth_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/auth"
)

var (
	secret      = []byte("0123456789abcdef0123456789abcdef") // 32 bytes
	otherSecret = []byte("fedcba9876543210fedcba9876543210")
	ada         = &algoitny.User{ID: "user-ada", Email: "ada@example.com"}
)

func newSessions(t *testing.T, key []byte, clk *clock) *auth.Sessions {
	t.Helper()
	s, err := auth.NewSessions(auth.SessionConfig{Secret: key, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func issue(t *testing.T, s *auth.Sessions, u *algoitny.User) (string, time.Time) {
	t.Helper()
	token, exp, err := s.Issue(u)
	if err != nil {
		t.Fatal(err)
	}
	return token, exp
}

// sessionClaims returns good session claims issued at now.
func sessionClaims(now time.Time) map[string]any {
	return map[string]any{
		"iss": "algoitny", "sub": ada.ID, "email": ada.Email, "sid": "sid-1",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func hs256(t *testing.T, key []byte, claims map[string]any) string {
	t.Helper()
	return jwt(t, map[string]any{"alg": "HS256", "typ": "JWT"}, claims, hmacSigner(key, sha256.New))
}

func TestNewSessions(t *testing.T) {
	t.Parallel()

	t.Run("ErrShortSecret", func(t *testing.T) {
		t.Parallel()
		for _, key := range [][]byte{nil, []byte(""), []byte("changeme"), secret[:31]} {
			_, err := auth.NewSessions(auth.SessionConfig{Secret: key})
			requireCode(t, err, algoitny.EINVALID, "", "")
			var e *algoitny.Error
			if !strings.Contains(err.Error(), "at least 32 bytes") || !asError(err, &e) || e.Field != "Secret" {
				t.Fatalf("unclear error: %v", err)
			}
		}
	})

	t.Run("ErrNegativeLifetime", func(t *testing.T) {
		t.Parallel()
		_, err := auth.NewSessions(auth.SessionConfig{Secret: secret, Lifetime: -time.Hour})
		requireCode(t, err, algoitny.EINVALID, "the session lifetime must not be negative", "")
	})

	t.Run("OKSecretCopied", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		key := append([]byte(nil), secret...)
		s := newSessions(t, key, clk)
		token, _ := issue(t, s, ada)
		key[0] ^= 1 // the caller reusing its buffer must not change the key
		if _, err := s.Parse(token); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()

	t.Run("OKRoundTrip", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		token, exp := issue(t, s, ada)
		if want := t0.Add(auth.DefaultSessionLifetime); !exp.Equal(want) {
			t.Fatalf("expires %v, want %v", exp, want)
		}
		clk.Advance(auth.DefaultSessionLifetime - time.Second)
		c, err := s.Parse(token)
		if err != nil {
			t.Fatal(err)
		}
		if c.UserID != ada.ID || c.Email != ada.Email || c.SessionID == "" || !c.ExpiresAt.Equal(exp) || !c.IssuedAt.Equal(t0) {
			t.Fatalf("claims %+v", c)
		}
		id := c.Identity()
		want := auth.Identity{UserID: ada.ID, Email: ada.Email, SessionID: c.SessionID, ExpiresAt: exp}
		if *id != want {
			t.Fatalf("identity %+v, want %+v", id, want)
		}
		// The header and claims are the documented ones.
		parts := strings.Split(token, ".")
		var header, claims map[string]any
		decodeSegment(t, parts[0], &header)
		decodeSegment(t, parts[1], &claims)
		if header["alg"] != "HS256" || claims["iss"] != "algoitny" || claims["sub"] != ada.ID || claims["sid"] != c.SessionID {
			t.Fatalf("header %v, claims %v", header, claims)
		}
	})

	t.Run("OKSessionIDsDiffer", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		seen := map[string]bool{}
		for range 100 {
			token, _ := issue(t, s, ada)
			c, err := s.Parse(token)
			if err != nil {
				t.Fatal(err)
			}
			if seen[c.SessionID] || len(c.SessionID) < 20 {
				t.Fatalf("session id %q repeated or short", c.SessionID)
			}
			seen[c.SessionID] = true
		}
	})

	t.Run("OKCustomLifetime", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s, err := auth.NewSessions(auth.SessionConfig{Secret: secret, Lifetime: time.Hour, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		token, exp := issue(t, s, ada)
		if !exp.Equal(t0.Add(time.Hour)) {
			t.Fatalf("expires %v", exp)
		}
		clk.Advance(time.Hour)
		_, err = s.Parse(token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "session expired", token)
	})

	t.Run("ErrExpired", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		token, _ := issue(t, s, ada)
		clk.Advance(auth.DefaultSessionLifetime)
		_, err := s.Parse(token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "session expired", token)
	})

	t.Run("ErrTamperedPayload", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		token, _ := issue(t, s, ada)
		parts := strings.Split(token, ".")
		var claims map[string]any
		decodeSegment(t, parts[1], &claims)
		claims["sub"] = "user-mallory"
		b, _ := json.Marshal(claims)
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
		_, err := s.Parse(forged)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token signature is invalid", forged)
	})

	t.Run("ErrTamperedSignature", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		token, _ := issue(t, s, ada)
		parts := strings.Split(token, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		for i := range sig {
			bad := append([]byte(nil), sig...)
			bad[i] ^= 0x01
			forged := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(bad)
			_, err := s.Parse(forged)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token signature is invalid", forged)
		}
		for _, forged := range []string{parts[0] + "." + parts[1] + ".", parts[0] + "." + parts[1] + "." + parts[2][:20]} {
			_, err := s.Parse(forged)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token signature is invalid", forged)
		}
	})

	t.Run("ErrWrongSecret", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		token, _ := issue(t, newSessions(t, otherSecret, clk), ada)
		_, err := newSessions(t, secret, clk).Parse(token)
		requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token signature is invalid", token)
	})

	t.Run("ErrWrongAlgorithm", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		c := sessionClaims(clk.Now())
		for name, token := range map[string]string{
			"None":     jwt(t, map[string]any{"alg": "none"}, c, func([]byte) []byte { return nil }),
			"HS512":    jwt(t, map[string]any{"alg": "HS512"}, c, hmacSigner(secret, sha512.New)),
			"RS256":    rs256(t, keyA(), c),
			"HS256Low": jwt(t, map[string]any{"alg": "hs256"}, c, hmacSigner(secret, sha256.New)),
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				_, err := s.Parse(token)
				requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token must be signed with HS256", token)
			})
		}
	})

	// Claims signed with the right secret that must still be refused.
	for _, tc := range []struct {
		name, msg string
		edit      func(c map[string]any, now time.Time)
	}{
		{"ErrWrongIssuer", "session token was not issued by AlgoItny", func(c map[string]any, _ time.Time) { c["iss"] = "someone-else" }},
		{"ErrNoIssuer", "session token was not issued by AlgoItny", func(c map[string]any, _ time.Time) { delete(c, "iss") }},
		{"ErrNoSubject", "session token has no subject or session id", func(c map[string]any, _ time.Time) { delete(c, "sub") }},
		{"ErrNoSessionID", "session token has no subject or session id", func(c map[string]any, _ time.Time) { delete(c, "sid") }},
		{"ErrNoExpiry", "session token has no expiry time", func(c map[string]any, _ time.Time) { delete(c, "exp") }},
		{"ErrNoIssueTime", "session token has no issue time", func(c map[string]any, _ time.Time) { delete(c, "iat") }},
		{"ErrIssuedInFuture", "session token is not valid yet", func(c map[string]any, now time.Time) { c["iat"] = now.Add(2 * time.Minute).Unix() }},
		{"ErrExpiredNoLeeway", "session expired", func(c map[string]any, now time.Time) { c["exp"] = now.Unix() }},
		{"ErrTimeAsString", "session token is malformed", func(c map[string]any, _ time.Time) { c["exp"] = "never" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			s := newSessions(t, secret, clk)
			c := sessionClaims(clk.Now())
			tc.edit(c, clk.Now())
			token := hs256(t, secret, c)
			_, err := s.Parse(token)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, tc.msg, token)
		})
	}

	t.Run("OKHandMade", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		c, err := s.Parse(hs256(t, secret, sessionClaims(clk.Now())))
		if err != nil || c.SessionID != "sid-1" || c.UserID != ada.ID {
			t.Fatalf("%+v, %v", c, err)
		}
	})

	t.Run("ErrMalformed", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		s := newSessions(t, secret, clk)
		good, _ := issue(t, s, ada)
		for _, token := range []string{"", "abc", "a.b", "a.b.c.d", "!!!.###.$$$", good + ".x", " " + good, "Bearer " + good} {
			_, err := s.Parse(token)
			requireCode(t, err, algoitny.EUNAUTHENTICATED, "session token is malformed", token)
		}
	})

	t.Run("ErrIssueWithoutUserID", func(t *testing.T) {
		t.Parallel()
		s := newSessions(t, secret, newClock())
		for _, u := range []*algoitny.User{nil, {Email: "ada@example.com"}} {
			_, _, err := s.Issue(u)
			requireCode(t, err, algoitny.EINTERNAL, "", "")
		}
	})
}

func decodeSegment(t *testing.T, seg string, v any) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
