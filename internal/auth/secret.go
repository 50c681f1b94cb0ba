package auth

import (
	"errors"
	"math"
	"strings"
)

// MinSessionSecretBits is the least entropy a production session secret
// may show (estimated from its characters): what `openssl rand -hex 32`
// or `-base64 48` gives, and far more than a word or a repeated pattern.
const MinSessionSecretBits = 128

// knownSecretWords are parts of the placeholders that documentation and
// compose files show for a secret: a secret containing one was copied
// from a page everyone can read.
var knownSecretWords = []string{"placeholder", "insecure", "changeme", "change-me", "change_me", "replace",
	"example", "your-secret", "yoursecret", "test-secret", "dev-secret", "secret-secret", "password"}

// ErrWeakSessionSecret is CheckSessionSecret's error.
var ErrWeakSessionSecret = errors.New("auth: weak session secret")

// CheckSessionSecret refuses a session secret anyone could guess: shorter
// than MinSessionSecretLen, holding a placeholder's words (a value
// published in docs or a compose file), or of little entropy (fewer than
// MinSessionSecretBits by its characters' frequencies, "aaaa…", or a
// repeated pattern, "abcabc…"). Whoever holds the secret can sign a session for any account,
// staff included, so a production server must not start with such a one.
// The error wraps ErrWeakSessionSecret and says how to make a good one.
func CheckSessionSecret(secret []byte) error {
	const how = "generate one with `openssl rand -base64 48`"
	switch {
	case len(secret) < MinSessionSecretLen:
		return errors.Join(ErrWeakSessionSecret, errors.New("SESSION_SECRET is shorter than 32 bytes: "+how))
	case containsAny(strings.ToLower(string(secret)), knownSecretWords):
		return errors.Join(ErrWeakSessionSecret, errors.New("SESSION_SECRET is a published placeholder: anyone can sign sessions with it; "+how))
	case entropyBits(secret) < MinSessionSecretBits || periodic(secret):
		return errors.Join(ErrWeakSessionSecret, errors.New("SESSION_SECRET is too predictable (little variety in its characters): "+how))
	}
	return nil
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// periodic says b repeats a pattern of at most half its length
// ("ab12ab12…"), which its characters' frequencies do not show.
func periodic(b []byte) bool {
	for p := 1; p <= len(b)/2; p++ {
		if string(b[:len(b)-p]) == string(b[p:]) {
			return true
		}
	}
	return false
}

// entropyBits estimates the entropy of b from the frequencies of its
// bytes (Shannon entropy times the length), which a repeated or
// low-variety string cannot reach.
func entropyBits(b []byte) float64 {
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	n := float64(len(b))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h * n
}
