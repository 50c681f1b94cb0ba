package auth_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/algoitny/api/internal/auth"
)

func TestIdentityContext(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		id := &auth.Identity{UserID: "u1", Email: "ada@example.com", SessionID: "s1", IsStaff: true, ExpiresAt: t0.Add(time.Hour)}
		got, ok := auth.FromContext(auth.WithIdentity(context.Background(), id))
		if !ok || got != id {
			t.Fatalf("got %+v, %v", got, ok)
		}
	})

	t.Run("Anonymous", func(t *testing.T) {
		t.Parallel()
		if id, ok := auth.FromContext(context.Background()); ok || id != nil {
			t.Fatalf("got %+v, %v", id, ok)
		}
	})

	t.Run("NilIdentityIsAnonymous", func(t *testing.T) {
		t.Parallel()
		if id, ok := auth.FromContext(auth.WithIdentity(context.Background(), nil)); ok || id != nil {
			t.Fatalf("got %+v, %v", id, ok)
		}
	})
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header []string // Authorization values; none means no header
		token  string
		ok     bool
	}{
		{"OK", []string{"Bearer abc.def.ghi"}, "abc.def.ghi", true},
		{"OKLowerCaseScheme", []string{"bearer abc"}, "abc", true},
		{"OKUpperCaseScheme", []string{"BEARER abc"}, "abc", true},
		{"OKExtraSpaces", []string{"  Bearer    abc  "}, "abc", true},
		{"OKTab", []string{"Bearer\tabc"}, "abc", true},
		{"OKFirstHeader", []string{"Bearer one", "Bearer two"}, "one", true},
		{"NoHeader", nil, "", false},
		{"Empty", []string{""}, "", false},
		{"SchemeOnly", []string{"Bearer"}, "", false},
		{"SchemeAndSpaces", []string{"Bearer   "}, "", false},
		{"Basic", []string{"Basic dXNlcjpwYXNz"}, "", false},
		{"NoSpace", []string{"Bearerabc"}, "", false},
		{"TokenWithSpace", []string{"Bearer abc def"}, "", false},
		{"TokenOnly", []string{"abc.def.ghi"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("POST", "/query", nil)
			for _, v := range tc.header {
				r.Header.Add("Authorization", v)
			}
			token, ok := auth.BearerToken(r)
			if token != tc.token || ok != tc.ok {
				t.Fatalf("got %q, %v; want %q, %v", token, ok, tc.token, tc.ok)
			}
		})
	}
}
