package main

import (
	"strings"
	"testing"
)

// TestSocketLimitsFromEnv: the websocket caps are read from the
// environment; unset ones are sized from the open-file limit.
func TestSocketLimitsFromEnv(t *testing.T) {
	for _, name := range []string{"ALGOITNY_WS_MAX_PER_ADDRESS", "ALGOITNY_WS_MAX_UNAUTHENTICATED", "ALGOITNY_WS_RESERVE", "ALGOITNY_TRUSTED_PROXIES"} {
		t.Setenv(name, "")
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.socketLimits(20000); l.MaxPerAddress != 256 || l.MaxUnauthenticated != 5000 || l.Reserve != 500 || len(l.TrustedProxies) != 0 {
		t.Fatalf("defaults: %+v", l)
	}

	t.Setenv("ALGOITNY_WS_MAX_PER_ADDRESS", "3")
	t.Setenv("ALGOITNY_WS_MAX_UNAUTHENTICATED", "off")
	t.Setenv("ALGOITNY_WS_RESERVE", "0")
	t.Setenv("ALGOITNY_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7")
	if cfg, err = configFromEnv(); err != nil {
		t.Fatal(err)
	}
	if l := cfg.socketLimits(20000); l.MaxPerAddress != 3 || l.MaxUnauthenticated != 0 || l.Reserve != 0 || len(l.TrustedProxies) != 2 {
		t.Fatalf("configured: %+v", l)
	}

	for name, bad := range map[string]string{
		"ALGOITNY_WS_MAX_PER_ADDRESS":     "-5",
		"ALGOITNY_WS_MAX_UNAUTHENTICATED": "lots",
		"ALGOITNY_WS_RESERVE":             "-1",
		"ALGOITNY_TRUSTED_PROXIES":        "proxy.internal",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, bad, err)
			}
		})
	}
}
