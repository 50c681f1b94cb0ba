package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Session token settings.
const (
	// MinSessionSecretLen is the shortest secret accepted: HS256 keys
	// shorter than the hash output (32 bytes) weaken it.
	MinSessionSecretLen = 32
	// DefaultSessionLifetime is how long a session lasts by default.
	DefaultSessionLifetime = 7 * 24 * time.Hour
	// SessionIssuer is the "iss" of every session token.
	SessionIssuer = "algoitny"
	// sessionSkew tolerates clocks of replicas that disagree slightly about
	// when a token was issued.
	sessionSkew = time.Minute
)

// sessionHeader is the encoded protected header of every session token.
var sessionHeader = b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// SessionConfig configures Sessions.
type SessionConfig struct {
	// Secret signs the tokens (HMAC-SHA256); at least MinSessionSecretLen
	// bytes. Changing it signs everybody out.
	Secret []byte
	// Lifetime of a session (DefaultSessionLifetime if zero).
	Lifetime time.Duration
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Sessions issues and parses AlgoItny session tokens: HS256 JWTs that a
// client sends as "Authorization: Bearer" after signing in. They are
// stateless so that most requests need no session lookup; logout is a
// revocation marker keyed by Claims.SessionID, stored by the caller.
// Sessions is safe for concurrent use.
type Sessions struct {
	secret   []byte
	lifetime time.Duration
	now      func() time.Time
}

// NewSessions returns Sessions for cfg. It returns EINVALID (Field "Secret")
// when the secret is shorter than MinSessionSecretLen, so that the server
// refuses to start with a guessable key, and EINVALID (Field "Lifetime") for
// a negative lifetime.
func NewSessions(cfg SessionConfig) (*Sessions, error) {
	if len(cfg.Secret) < MinSessionSecretLen {
		return nil, algoitny.Invalid("Secret", "the session secret must be at least %d bytes long, got %d", MinSessionSecretLen, len(cfg.Secret))
	}
	if cfg.Lifetime < 0 {
		return nil, algoitny.Invalid("Lifetime", "the session lifetime must not be negative")
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultSessionLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sessions{secret: append([]byte(nil), cfg.Secret...), lifetime: cfg.Lifetime, now: cfg.Now}, nil
}

// Claims is what a valid session token says.
type Claims struct {
	// UserID is the subject ("sub").
	UserID string
	Email  string
	// SessionID ("sid") is random per Issue; revocation markers are keyed by it.
	SessionID string
	IssuedAt  time.Time
	// ExpiresAt ("exp") is when the token stops being accepted; a revocation
	// marker can expire then too.
	ExpiresAt time.Time
	// Plan ("plan") is the name of the user's plan when the session began:
	// a hint that lets authentication read the plan beside the user. It
	// decides nothing: the plan is the one the user's item names now.
	Plan string
}

// Identity returns the request identity the claims establish; IsStaff is
// left false for the caller to fill after loading the user.
func (c Claims) Identity() *Identity {
	return &Identity{UserID: c.UserID, Email: c.Email, SessionID: c.SessionID, ExpiresAt: c.ExpiresAt}
}

// sessionClaims is the JSON payload of a session token.
type sessionClaims struct {
	Iss   string `json:"iss"`
	Sub   string `json:"sub"`
	Email string `json:"email"`
	Sid   string `json:"sid"`
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
	Plan  string `json:"plan,omitempty"`
}

// Issue starts a session for u: it returns a signed token and the instant it
// expires (whole seconds, equal to Claims.ExpiresAt of the token). It returns
// EINTERNAL if u has no id, which is a bug of the caller.
func (s *Sessions) Issue(u *algoitny.User) (token string, expiresAt time.Time, err error) {
	if u == nil || u.ID == "" {
		return "", time.Time{}, algoitny.Internal(nil, "cannot start a session for a user without id")
	}
	now := s.now()
	c := sessionClaims{
		Iss:   SessionIssuer,
		Sub:   u.ID,
		Email: u.Email,
		Sid:   rand.Text(), // 128 random bits
		Iat:   now.Unix(),
		Exp:   now.Add(s.lifetime).Unix(),
		Plan:  u.PlanName,
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", time.Time{}, algoitny.Internal(err, "cannot encode session")
	}
	signingInput := sessionHeader + "." + b64.EncodeToString(payload)
	return signingInput + "." + b64.EncodeToString(s.sign(signingInput)), time.Unix(c.Exp, 0).UTC(), nil
}

// Parse verifies a session token and returns its claims. It returns
// EUNAUTHENTICATED for a malformed token, any algorithm but HS256, a bad
// signature (tampered, or signed with another secret), another issuer, a
// missing subject or session id, an expired token, or one issued in the
// future. It does not check revocation.
func (s *Sessions) Parse(token string) (Claims, error) {
	tok, err := parseJWS(token)
	if err != nil {
		return Claims{}, unauthenticated("session token is malformed")
	}
	if tok.header.Alg != "HS256" {
		return Claims{}, unauthenticated("session token must be signed with HS256")
	}
	if !hmac.Equal(tok.signature, s.sign(tok.signingInput)) {
		return Claims{}, unauthenticated("session token signature is invalid")
	}
	var c sessionClaims
	if err := json.Unmarshal(tok.payload, &c); err != nil {
		return Claims{}, unauthenticated("session token is malformed")
	}
	if c.Iss != SessionIssuer {
		return Claims{}, unauthenticated("session token was not issued by AlgoItny")
	}
	if c.Sub == "" || c.Sid == "" {
		return Claims{}, unauthenticated("session token has no subject or session id")
	}
	var exp, iat *numericDate
	if c.Exp > 0 {
		exp = &numericDate{time.Unix(c.Exp, 0).UTC()}
	}
	if c.Iat > 0 {
		iat = &numericDate{time.Unix(c.Iat, 0).UTC()}
	}
	// Our own tokens get no leeway on expiry: the issuer's clock set it.
	if exp != nil && !s.now().Before(exp.Time) {
		return Claims{}, unauthenticated("session expired")
	}
	if err := checkTimes(s.now(), sessionSkew, exp, iat, nil, "session token"); err != nil {
		return Claims{}, err
	}
	return Claims{UserID: c.Sub, Email: c.Email, SessionID: c.Sid, IssuedAt: iat.Time, ExpiresAt: exp.Time, Plan: c.Plan}, nil
}

// sign returns the HMAC-SHA256 of signingInput under the secret.
func (s *Sessions) sign(signingInput string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(signingInput))
	return m.Sum(nil)
}
