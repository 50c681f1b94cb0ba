package main

import (
	"strings"
	"testing"
)

// TestSocketLimitsFromEnv: the websocket caps are read from the
// environment; unset ones are sized from the open-file limit.
func TestSocketLimitsFromEnv(t *testing.T) {
	for _, name := range []string{"ALGOITNY_WS_MAX_PER_ADDRESS", "ALGOITNY_WS_MAX_UNAUTHENTICATED", "ALGOITNY_WS_RESERVE", "ALGOITNY_TRUSTED_PROXIES",
		"ALGOITNY_WS_MAX_OPERATIONS", "ALGOITNY_WS_MAX_OPERATIONS_SIGNED_OUT", "ALGOITNY_WS_MAX_OPERATIONS_PER_ADDRESS",
		"ALGOITNY_WS_MAX_UNSENT_BYTES", "ALGOITNY_WS_MAX_UNSENT_BYTES_PER_ADDRESS"} {
		t.Setenv(name, "")
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.socketLimits(20000); l.MaxPerAddress != 256 || l.MaxUnauthenticated != 5000 || l.Reserve != 500 || len(l.TrustedProxies) != 0 ||
		l.MaxOperations != 16 || l.MaxOperationsSignedOut != 2 || l.MaxOperationsPerAddress != 256 ||
		l.MaxUnsentBytes != 16<<20 || l.MaxUnsentBytesPerAddress != 128<<20 {
		t.Fatalf("defaults: %+v", l)
	}

	t.Setenv("ALGOITNY_WS_MAX_PER_ADDRESS", "3")
	t.Setenv("ALGOITNY_WS_MAX_UNAUTHENTICATED", "off")
	t.Setenv("ALGOITNY_WS_RESERVE", "0")
	t.Setenv("ALGOITNY_TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7")
	t.Setenv("ALGOITNY_WS_MAX_OPERATIONS", "8")
	t.Setenv("ALGOITNY_WS_MAX_OPERATIONS_SIGNED_OUT", "1")
	t.Setenv("ALGOITNY_WS_MAX_OPERATIONS_PER_ADDRESS", "off")
	t.Setenv("ALGOITNY_WS_MAX_UNSENT_BYTES", "4MB")
	t.Setenv("ALGOITNY_WS_MAX_UNSENT_BYTES_PER_ADDRESS", "off")
	if cfg, err = configFromEnv(); err != nil {
		t.Fatal(err)
	}
	if l := cfg.socketLimits(20000); l.MaxPerAddress != 3 || l.MaxUnauthenticated != 0 || l.Reserve != 0 || len(l.TrustedProxies) != 2 ||
		l.MaxOperations != 8 || l.MaxOperationsSignedOut != 1 || l.MaxOperationsPerAddress != 0 ||
		l.MaxUnsentBytes != 4<<20 || l.MaxUnsentBytesPerAddress != 0 {
		t.Fatalf("configured: %+v", l)
	}

	for name, bad := range map[string]string{
		"ALGOITNY_WS_MAX_PER_ADDRESS":     "-5",
		"ALGOITNY_WS_MAX_UNAUTHENTICATED": "lots",
		"ALGOITNY_WS_RESERVE":             "-1",
		"ALGOITNY_WS_MAX_OPERATIONS":      "some",
		"ALGOITNY_WS_MAX_UNSENT_BYTES":    "16 parsecs",
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
