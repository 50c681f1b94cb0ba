package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxTokenLen bounds the tokens we are willing to decode. Google ID tokens are
// about 1 KB and our session tokens a few hundred bytes.
const maxTokenLen = 8 << 10

// errMalformed is the cause of every decoding failure; callers turn it into an
// EUNAUTHENTICATED error with a message of their own and never show it.
var errMalformed = errors.New("malformed compact JWS")

// b64 is unpadded base64url, as RFC 7515 requires; Strict refuses
// non-canonical encodings so that a token has one spelling only.
var b64 = base64.RawURLEncoding.Strict()

// jwsHeader is the protected header of a compact JWS.
type jwsHeader struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid"`
	Crit []string `json:"crit"`
}

// jws is a decoded compact JWS whose signature is not yet verified.
type jws struct {
	header       jwsHeader
	payload      []byte
	signingInput string
	signature    []byte
}

// parseJWS splits and decodes a compact JWS (header.payload.signature). It
// checks the syntax only; the signature and claims are the caller's job.
func parseJWS(token string) (*jws, error) {
	if len(token) == 0 || len(token) > maxTokenLen {
		return nil, errMalformed
	}
	h, rest, ok := strings.Cut(token, ".")
	if !ok {
		return nil, errMalformed
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(s, ".") || h == "" || p == "" {
		return nil, errMalformed
	}
	headerJSON, err := b64.DecodeString(h)
	if err != nil {
		return nil, errMalformed
	}
	payload, err := b64.DecodeString(p)
	if err != nil {
		return nil, errMalformed
	}
	sig, err := b64.DecodeString(s)
	if err != nil {
		return nil, errMalformed
	}
	var header jwsHeader
	if err := json.Unmarshal(headerJSON, &header); err != nil {
		return nil, errMalformed
	}
	// RFC 7515 §4.1.11: extensions marked critical must be understood; we
	// understand none.
	if header.Crit != nil {
		return nil, errMalformed
	}
	return &jws{header: header, payload: payload, signingInput: h + "." + p, signature: sig}, nil
}

// numericDate is a JWT NumericDate: seconds since the epoch, possibly with a
// fraction.
type numericDate struct{ time.Time }

// UnmarshalJSON accepts a JSON number within a sane range.
func (d *numericDate) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return errMalformed
	}
	sec, frac := math.Modf(f)
	d.Time = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	return nil
}

// audience is the "aud" claim, a string or an array of strings.
type audience []string

// UnmarshalJSON accepts both forms.
func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*a = audience{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errMalformed
	}
	*a = many
	return nil
}

// contains reports whether id is one of the audiences.
func (a audience) contains(id string) bool {
	for _, s := range a {
		if s == id {
			return true
		}
	}
	return false
}

// flexBool is a boolean claim that Google has been known to send as the
// string "true" or "false".
type flexBool bool

// UnmarshalJSON accepts true, false, "true" and "false".
func (f *flexBool) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true", `"true"`:
		*f = true
	case "false", `"false"`:
		*f = false
	default:
		return errMalformed
	}
	return nil
}
