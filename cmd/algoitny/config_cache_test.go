package main

import (
	"strings"
	"testing"
	"time"
)

// The display data's bound is read from the environment (at most 1 s); the
// settings of mechanisms that are gone are refused, so that a deployment
// learns they do nothing: ALGOITNY_CACHE_WRITE_WINDOW (replicas no longer
// announce their writes) and SESSION_CACHE_TTL (sessions are never cached).
func TestConfigCache(t *testing.T) {
	t.Setenv("ALGOITNY_CACHE_BOUND", "750ms")
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CacheBound != 750*time.Millisecond {
		t.Fatalf("bound %v", cfg.CacheBound)
	}
	for name, bad := range map[string]string{
		"ALGOITNY_CACHE_WRITE_WINDOW": "5s",
		"ALGOITNY_CACHE_BOUND":        "soon",
		"SESSION_CACHE_TTL":           "30s",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, bad, err)
			}
		})
	}
	t.Run("BoundOverASecond", func(t *testing.T) {
		t.Setenv("ALGOITNY_CACHE_BOUND", "2s")
		if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), "ALGOITNY_CACHE_BOUND") {
			t.Fatalf("ALGOITNY_CACHE_BOUND=2s: %v", err)
		}
	})
}
