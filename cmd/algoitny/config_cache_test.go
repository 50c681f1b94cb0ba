package main

import (
	"strings"
	"testing"
	"time"
)

// The caches' settings are read from the environment; a write window under
// a second is refused, and so is SESSION_CACHE_TTL, which no longer does
// anything (it used to bound how long a logout could be ignored).
func TestConfigCache(t *testing.T) {
	t.Setenv("ALGOITNY_CACHE_BOUND", "750ms")
	t.Setenv("ALGOITNY_CACHE_WRITE_WINDOW", "3s")
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CacheBound != 750*time.Millisecond || cfg.CacheWriteWindow != 3*time.Second {
		t.Fatalf("bound %v, window %v", cfg.CacheBound, cfg.CacheWriteWindow)
	}
	for name, bad := range map[string]string{
		"ALGOITNY_CACHE_WRITE_WINDOW": "500ms",
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
}
