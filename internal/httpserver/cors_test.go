package httpserver

import (
	"strings"
	"testing"
)

func TestCORSLocalOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"http://localhost:5173":       true,
		"http://127.0.0.1:3000":       true,
		"https://localhost":           true,
		"http://[::1]:8080":           true,
		"http://localhost.evil.test":  false,
		"http://127.0.0.2:3000":       false,
		"file://localhost":            false,
		"http://user@localhost:3000":  false,
		"http://localhost:3000/path":  false,
		"null":                        false,
		"https://app.algoitny.dev":    false,
		"http://evil.test#localhost":  false,
		"http://evil.test?127.0.0.1":  false,
		"http://127.0.0.1.nip.io:300": false,
	} {
		if got := localOrigin(origin); got != want {
			t.Errorf("localOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestCORSAllowHeaders(t *testing.T) {
	got := allowHeaders([]string{"content-type, Apollographql-Client-Name,sentry-trace", "baggage", "bad header", "x\r\ny", ""})
	for _, h := range []string{"Content-Type", "Authorization", "Apollographql-Client-Name", "sentry-trace", "baggage"} {
		if !strings.Contains(got, h) {
			t.Errorf("%s not allowed: %s", h, got)
		}
	}
	if strings.Contains(got, "bad header") || strings.Contains(got, "\r") || strings.Count(got, "ontent-") != 1 {
		t.Errorf("allowed %q", got)
	}
	many := make([]string, 200)
	for i := range many {
		many[i] = "x-h" + strings.Repeat("a", i%50)
	}
	if n := strings.Count(allowHeaders(many), ","); n >= 64 {
		t.Errorf("%d headers allowed", n+1)
	}
}
