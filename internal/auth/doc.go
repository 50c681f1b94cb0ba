// Package auth authenticates AlgoItny's callers: it verifies Google ID tokens
// (sign-in), issues and parses AlgoItny's own session tokens, and carries the
// resulting request identity in a context.Context.
//
// It uses only the standard library (crypto/rsa, crypto/hmac): the two token
// formats it accepts are fixed (RS256 from Google, HS256 from ourselves), so a
// general JOSE library would only add algorithms we must then refuse.
//
// Errors are *algoitny.Error values:
//   - EUNAUTHENTICATED for every token that must not be accepted (malformed,
//     wrong algorithm, bad signature, unknown signing key, wrong issuer or
//     audience, expired, not yet valid, unverified email). Messages are fixed
//     texts such as "ID token expired" and never contain token contents.
//   - EINTERNAL when Google's signing keys cannot be fetched and none that
//     matches the token is cached. The token may well be good, so the caller
//     should be told to try again rather than that the token is bad.
//   - EINVALID for a configuration that must not start (a session secret
//     shorter than 32 bytes, a missing client id).
//
// Google's keys (JWKS) are cached for the response's Cache-Control max-age
// (minus Age), clamped between GoogleConfig.MinRefreshInterval and 24 hours. A
// token naming an unknown key id triggers a refetch, so key rotation needs no
// restart, but at most one fetch per MinRefreshInterval starts for unknown key
// ids: a flood of tokens with made-up key ids costs the JWKS endpoint at most
// one request per interval. Concurrent verifications that need keys share one
// fetch. If a refresh fails, the keys fetched before stay in use.
//
// Session revocation (logout) is not stored here: Claims expose SessionID and
// ExpiresAt so that a store can keep a revocation marker that expires with
// the token.
package auth
