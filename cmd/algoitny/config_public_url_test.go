package main

import (
	"strings"
	"testing"
)

// ALGOITNY_PUBLIC_URL is where clients reach the server (a published
// container port): taken without its trailing slash, refused unless it is
// an http(s) URL with a host. scripts/images-test.sh checks that the api
// container prints it.
func TestConfigPublicURL(t *testing.T) {
	t.Setenv("ALGOITNY_PUBLIC_URL", "http://localhost:18080/")
	cfg, err := configFromEnv()
	if err != nil || cfg.PublicURL != "http://localhost:18080" {
		t.Fatalf("%q %v", cfg.PublicURL, err)
	}
	for _, bad := range []string{"localhost:18080", "ftp://example.com", "http://", "://x"} {
		t.Setenv("ALGOITNY_PUBLIC_URL", bad)
		if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), "ALGOITNY_PUBLIC_URL") {
			t.Errorf("ALGOITNY_PUBLIC_URL=%q: %v", bad, err)
		}
	}
}
