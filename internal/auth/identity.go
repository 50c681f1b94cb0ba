package auth

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Identity is the authenticated caller of one request, put in its context by
// the HTTP or websocket layer once a session token has been parsed. It is
// kept small: resolvers load the user when they need more.
type Identity struct {
	UserID    string
	Email     string
	SessionID string
	// IsStaff is filled by the GraphQL layer after loading the user; a token
	// never grants it.
	IsStaff   bool
	ExpiresAt time.Time
}

// identityKey is the context key of the Identity.
type identityKey struct{}

// WithIdentity returns a context that carries id, so that resolvers deep in
// the call tree can ask who is calling without the identity being passed
// along explicitly.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity WithIdentity stored in ctx; false means an
// anonymous caller (nothing stored, or a nil identity). Resolvers that need a
// caller turn false into EUNAUTHENTICATED.
func FromContext(ctx context.Context) (*Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(*Identity)
	return id, ok && id != nil
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header
// (scheme matched case-insensitively, surrounding spaces trimmed). It returns
// false without the header, for another scheme, or when the token is empty or
// contains spaces, so that callers can treat the request as anonymous or
// refuse it.
func BearerToken(r *http.Request) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		return "", false
	}
	return fields[1], true
}
