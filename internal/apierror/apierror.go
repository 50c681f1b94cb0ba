// Package apierror is the one place an error's `extensions` are written as
// clients of the API see them: `extensions.code` and, for domain errors,
// the offending field and the quota that refused the request. graph's
// error presenter and the transport (internal/httpserver) both call it, so
// that a code means the same wherever the error is made.
//
// It imports internal/algoitny and gqlparser only: the GraphQL layer and
// the transport sit above it.
package apierror

import (
	"github.com/algoitny/api/internal/algoitny"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Codes of `extensions.code` that the presenter and the transport name.
const (
	// Internal is a bug or an unavailable dependency (algoitny.EINTERNAL,
	// and any error without a code); its details are logged, not shown.
	Internal = "INTERNAL"
	// Unauthenticated is a missing or bad session (algoitny.EUNAUTHENTICATED).
	Unauthenticated = "UNAUTHENTICATED"
	// Unavailable is what cannot be done now (algoitny.EUNAVAILABLE): not
	// a bug, logged below ERROR.
	Unavailable = "UNAVAILABLE"
	// BadRequest is an HTTP request that is not a GraphQL request.
	BadRequest = "BAD_REQUEST"
)

// codes maps each domain error code to its `extensions.code`.
var codes = map[string]string{
	algoitny.EUNAUTHENTICATED: Unauthenticated,
	algoitny.EFORBIDDEN:       "FORBIDDEN",
	algoitny.ENOTFOUND:        "NOT_FOUND",
	algoitny.EINVALID:         "BAD_USER_INPUT",
	algoitny.ERATELIMITED:     "RATE_LIMITED",
	algoitny.ECONFLICT:        "CONFLICT",
	algoitny.EINTERNAL:        Internal,
	algoitny.EUNAVAILABLE:     Unavailable,
	// ALGOITNY_INTROSPECTION is off: the client's mistake, not ours.
	algoitny.EINTROSPECTIONDISABLED: "INTROSPECTION_DISABLED",
}

// Code returns the `extensions.code` of a domain error code
// (algoitny.EINVALID is BAD_USER_INPUT, …); Internal for a code it does
// not know, so that an unmapped code never shows as something milder.
func Code(domainCode string) string {
	if c, ok := codes[domainCode]; ok {
		return c
	}
	return Internal
}

// Extensions returns the `extensions` of an error whose `extensions.code`
// is code: the code and, when e is set, e's offending field (EINVALID:
// `field`, and `fields`, each invalid field with its message) and
// the quota that refused the request (ERATELIMITED: limit, used,
// remaining, and resetAt for the daily ones). It is the only function that
// writes `extensions.code`.
func Extensions(code string, e *algoitny.Error) map[string]any {
	ext := map[string]any{"code": code}
	if e == nil {
		return ext
	}
	if e.Field != "" {
		ext["field"] = e.Field
	}
	// Every invalid field at once (the first is also `field`).
	if fs := e.InvalidFields(); len(fs) > 0 {
		list := make([]map[string]string, len(fs))
		for i, f := range fs {
			list[i] = map[string]string{"field": f.Field, "message": f.Message}
		}
		ext["fields"] = list
	}
	if rl := e.RateLimit; rl != nil {
		ext["limit"], ext["used"] = rl.Limit, rl.Used
		ext["remaining"] = max(0, rl.Limit-rl.Used)
		if !rl.ResetAt.IsZero() { // limits that are not daily (checks, problems) never reset
			ext["resetAt"] = rl.ResetAt
		}
	}
	return ext
}

// New returns a GraphQL error with message msg and `extensions.code` code:
// the transport's errors (limits, budgets, timeouts, a busy server, a bad
// session), which no domain error precedes.
func New(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: Extensions(code, nil)}
}
