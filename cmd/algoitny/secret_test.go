package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/auth"
)

// A production server refuses to start with a session secret anyone can
// read (the placeholder the compose file used to ship) or guess; dev mode
// takes any.
func TestSessionSecretOutsideDevMode(t *testing.T) {
	t.Parallel()
	const published = "INSECURE-compose-placeholder-replace-with-openssl-rand-hex-32"
	_, err := sessionSecret(Config{SessionSecret: published})
	if !errors.Is(err, auth.ErrWeakSessionSecret) || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("production with the published placeholder: %v", err)
	}
	if _, err := sessionSecret(Config{SessionSecret: strings.Repeat("x", 40)}); !errors.Is(err, auth.ErrWeakSessionSecret) {
		t.Fatalf("production with a guessable secret: %v", err)
	}
	if _, err := sessionSecret(Config{SessionSecret: published, Dev: true}); err != nil {
		t.Fatalf("dev mode: %v", err)
	}
	if _, err := sessionSecret(Config{SessionSecret: "Zr8mQ2vX9kLp4Tn7Wc1Bd6Hf3Js5Ye0Ua8Io2Ek4Ng7Rq1"}); err != nil {
		t.Fatalf("production with a random secret: %v", err)
	}
}

// A development server reaches AtCoder Problems only when told to; a
// production server syncs by default.
func TestAtCoderPeriodic(t *testing.T) {
	t.Parallel()
	on, off := true, false
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, true},
		{Config{Dev: true}, false},
		{Config{Dev: true, AtCoderBaseURL: "http://127.0.0.1:9/"}, true},
		{Config{Dev: true, AtCoderSync: &on}, true},
		{Config{AtCoderSync: &off}, false},
	} {
		if got := c.cfg.AtCoderPeriodic(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.cfg, got, c.want)
		}
	}
}
