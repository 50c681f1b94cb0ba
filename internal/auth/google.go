package auth

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// DefaultGoogleJWKSURL is where Google publishes the keys that sign its ID
// tokens.
const DefaultGoogleJWKSURL = "https://www.googleapis.com/oauth2/v3/certs"

// Defaults of GoogleConfig.
const (
	// DefaultClockSkew tolerates small differences between Google's clock
	// and ours on exp, iat and nbf.
	DefaultClockSkew = time.Minute
	// DefaultMinRefreshInterval bounds refetches caused by unknown key ids to
	// two a minute; Google publishes new keys long before signing with them.
	DefaultMinRefreshInterval = 30 * time.Second
)

// googleIssuers are the two spellings of "iss" Google uses.
var googleIssuers = map[string]bool{"accounts.google.com": true, "https://accounts.google.com": true}

// GoogleConfig configures a GoogleVerifier. Only ClientID is required; the
// other fields exist so that tests and unusual deployments can change them.
type GoogleConfig struct {
	// ClientID is our OAuth client id; an ID token must name it in "aud".
	ClientID string
	// JWKSURL is where the signing keys are fetched (DefaultGoogleJWKSURL if
	// empty). Tests point it at a local server.
	JWKSURL string
	// HTTPClient fetches the keys (a client with a 10-second timeout if nil).
	HTTPClient *http.Client
	// ClockSkew is the leeway allowed on exp, iat and nbf (DefaultClockSkew
	// if zero).
	ClockSkew time.Duration
	// MinRefreshInterval is the least time between two fetches of the keys
	// caused by unknown key ids, and the least time keys are cached
	// (DefaultMinRefreshInterval if zero).
	MinRefreshInterval time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// GoogleVerifier verifies Google ID tokens, the credential of
// loginWithGoogle. It exists so that the GraphQL layer only ever sees a
// verified algoitny.GoogleProfile. It is safe for concurrent use and should
// be shared, since it caches Google's keys.
type GoogleVerifier struct {
	clientID string
	skew     time.Duration
	now      func() time.Time
	keys     *keySet
}

// NewGoogleVerifier returns a verifier for cfg. It makes no request; keys are
// fetched on first use. It returns EINVALID (with Field set to the setting)
// for a missing client id, a JWKS URL that is not an absolute http(s) URL, or
// a negative duration.
func NewGoogleVerifier(cfg GoogleConfig) (*GoogleVerifier, error) {
	if cfg.ClientID == "" {
		return nil, algoitny.Invalid("ClientID", "the Google client id is required")
	}
	if cfg.JWKSURL == "" {
		cfg.JWKSURL = DefaultGoogleJWKSURL
	}
	if u, err := url.Parse(cfg.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, algoitny.Invalid("JWKSURL", "the Google JWKS URL must be an absolute http(s) URL")
	}
	if cfg.ClockSkew < 0 {
		return nil, algoitny.Invalid("ClockSkew", "the clock skew must not be negative")
	}
	if cfg.MinRefreshInterval < 0 {
		return nil, algoitny.Invalid("MinRefreshInterval", "the minimum refresh interval must not be negative")
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.MinRefreshInterval == 0 {
		cfg.MinRefreshInterval = DefaultMinRefreshInterval
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: fetchTimeout}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &GoogleVerifier{
		clientID: cfg.ClientID,
		skew:     cfg.ClockSkew,
		now:      cfg.Now,
		keys: &keySet{
			url:        cfg.JWKSURL,
			client:     cfg.HTTPClient,
			now:        cfg.Now,
			minRefresh: cfg.MinRefreshInterval,
		},
	}, nil
}

// googleClaims are the ID-token claims we read.
type googleClaims struct {
	Iss           string       `json:"iss"`
	Aud           audience     `json:"aud"`
	Sub           string       `json:"sub"`
	Email         string       `json:"email"`
	EmailVerified flexBool     `json:"email_verified"`
	Name          string       `json:"name"`
	Picture       string       `json:"picture"`
	Exp           *numericDate `json:"exp"`
	Iat           *numericDate `json:"iat"`
	Nbf           *numericDate `json:"nbf"`
}

// Verify checks idToken (signature, issuer, audience, times, verified email)
// and returns its owner's profile.
//
// It returns EUNAUTHENTICATED for a token that must be refused: malformed,
// not RS256 (including "none" and HS256), signed by an unknown key or with a
// bad signature, not from Google, for another client, expired or not yet
// valid (beyond the clock skew), without subject or email, or with an
// unverified email. It returns EINTERNAL when Google's keys cannot be fetched
// (the token may be good: the caller should try again) or ctx ends first.
func (v *GoogleVerifier) Verify(ctx context.Context, idToken string) (algoitny.GoogleProfile, error) {
	var none algoitny.GoogleProfile
	tok, err := parseJWS(idToken)
	if err != nil {
		return none, unauthenticated("ID token is malformed")
	}
	// The algorithm is fixed, never taken from the token: this refuses "none"
	// and HS256 signed with our public key as the secret.
	if tok.header.Alg != "RS256" {
		return none, unauthenticated("ID token must be signed with RS256")
	}
	if tok.header.Kid == "" {
		return none, unauthenticated("ID token does not name its signing key")
	}
	key, err := v.keys.key(ctx, tok.header.Kid)
	if err != nil {
		return none, err
	}
	digest := sha256.Sum256([]byte(tok.signingInput))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], tok.signature) != nil {
		return none, unauthenticated("ID token signature is invalid")
	}
	var c googleClaims
	if err := json.Unmarshal(tok.payload, &c); err != nil {
		return none, unauthenticated("ID token is malformed")
	}
	if !googleIssuers[c.Iss] {
		return none, unauthenticated("ID token was not issued by Google")
	}
	if !c.Aud.contains(v.clientID) {
		return none, unauthenticated("ID token is for another application")
	}
	if err := checkTimes(v.now(), v.skew, c.Exp, c.Iat, c.Nbf, "ID token"); err != nil {
		return none, err
	}
	if c.Sub == "" {
		return none, unauthenticated("ID token has no subject")
	}
	if c.Email == "" {
		return none, unauthenticated("ID token has no email")
	}
	if !c.EmailVerified {
		return none, unauthenticated("Google account email is not verified")
	}
	return algoitny.GoogleProfile{GoogleID: c.Sub, Email: c.Email, Name: c.Name, Picture: c.Picture}, nil
}

// checkTimes applies exp (required), iat (required) and nbf (optional) with
// skew of leeway; what names the token in messages.
func checkTimes(now time.Time, skew time.Duration, exp, iat, nbf *numericDate, what string) error {
	switch {
	case exp == nil:
		return unauthenticated(what + " has no expiry time")
	case !now.Before(exp.Add(skew)):
		return unauthenticated(what + " expired")
	case iat == nil:
		return unauthenticated(what + " has no issue time")
	case iat.After(now.Add(skew)), nbf != nil && nbf.After(now.Add(skew)):
		return unauthenticated(what + " is not valid yet")
	}
	return nil
}

// unauthenticated returns an EUNAUTHENTICATED error. It never wraps a cause:
// causes could quote the token.
func unauthenticated(msg string) error {
	return &algoitny.Error{Code: algoitny.EUNAUTHENTICATED, Message: msg}
}
