package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/auth"
)

func TestCheckSessionSecret(t *testing.T) {
	t.Parallel()
	for _, good := range []string{
		"6f1c2d3e0a4b4c5d8e9f1122334455667788990a1b2c3d4e5f60718293a4b5c6",    // openssl rand -hex 32
		"kQ3v9Zx1Lw8Rt5Yp2Nc7Hb4Jm6Df0Gs3Ae9Uo1Ik5Tq8Wr2Ey6Oi4Pa7Sd0Fg3Hj5Kl", // base64-like
	} {
		if err := auth.CheckSessionSecret([]byte(good)); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for _, bad := range []string{
		"short",
		"INSECURE-compose-placeholder-replace-with-openssl-rand-hex-32", // what compose used to ship
		"test-secret-test-secret-test-secret-0123",
		"please-change-me-before-production-1234567890",
		strings.Repeat("a", 64),
		strings.Repeat("ab12", 16),
	} {
		if err := auth.CheckSessionSecret([]byte(bad)); !errors.Is(err, auth.ErrWeakSessionSecret) || !strings.Contains(err.Error(), "openssl rand") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
