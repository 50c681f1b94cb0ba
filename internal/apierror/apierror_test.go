package apierror_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
)

// TestCode: every domain code has its extensions.code, and a code nobody
// mapped is INTERNAL, never something milder.
func TestCode(t *testing.T) {
	t.Parallel()
	for domain, want := range map[string]string{
		algoitny.EUNAUTHENTICATED:       "UNAUTHENTICATED",
		algoitny.EFORBIDDEN:             "FORBIDDEN",
		algoitny.ENOTFOUND:              "NOT_FOUND",
		algoitny.EINVALID:               "BAD_USER_INPUT",
		algoitny.ERATELIMITED:           "RATE_LIMITED",
		algoitny.ECONFLICT:              "CONFLICT",
		algoitny.EINTERNAL:              "INTERNAL",
		algoitny.EUNAVAILABLE:           "UNAVAILABLE",
		algoitny.EINTROSPECTIONDISABLED: "INTROSPECTION_DISABLED",
		"no such code":                  "INTERNAL",
	} {
		if got := apierror.Code(domain); got != want {
			t.Errorf("Code(%q) = %q, want %q", domain, got, want)
		}
	}
}

// TestExtensions: the code alone, the field of EINVALID, and the quota of
// ERATELIMITED (resetAt only for daily limits), as clients read them.
func TestExtensions(t *testing.T) {
	t.Parallel()
	reset := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		code string
		err  *algoitny.Error
		want string
	}{
		{"OK", "SERVER_BUSY", nil, `{"code":"SERVER_BUSY"}`},
		{"Field", "BAD_USER_INPUT", algoitny.Invalid("first", "bad"), `{"code":"BAD_USER_INPUT","field":"first","fields":[{"field":"first","message":"bad"}]}`},
		{"Fields", "BAD_USER_INPUT", algoitny.Invalids(algoitny.Invalid("problemId", "bad id"), nil, algoitny.Invalid("title", "empty"), algoitny.Invalid("problemId", "again")).(*algoitny.Error),
			`{"code":"BAD_USER_INPUT","field":"problemId","fields":[{"field":"problemId","message":"bad id"},{"field":"title","message":"empty"}]}`},
		{"DailyLimit", "RATE_LIMITED", &algoitny.Error{Code: algoitny.ERATELIMITED, RateLimit: &algoitny.RateLimit{Limit: 10, Used: 12, ResetAt: reset}},
			`{"code":"RATE_LIMITED","limit":10,"remaining":0,"resetAt":"2026-01-02T00:00:00Z","used":12}`},
		{"LimitWithoutReset", "RATE_LIMITED", &algoitny.Error{Code: algoitny.ERATELIMITED, RateLimit: &algoitny.RateLimit{Limit: 10, Used: 3}},
			`{"code":"RATE_LIMITED","limit":10,"remaining":7,"used":3}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(apierror.Extensions(c.code, c.err))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Fatalf("got %s, want %s", b, c.want)
			}
		})
	}
}

// TestNew: a transport error is its message and its code, nothing else.
func TestNew(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(apierror.New("REQUEST_TIMEOUT", "too slow"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"message":"too slow","extensions":{"code":"REQUEST_TIMEOUT"}}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
