package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/httpserver"
)

// The limits' settings are read from the environment, and bad values are
// refused with the variable's name.
func TestConfigLimits(t *testing.T) {
	t.Setenv("ALGOITNY_REQUEST_TIMEOUT", "5s")
	t.Setenv("ALGOITNY_MAX_CONCURRENT_REQUESTS", "4")
	t.Setenv("ALGOITNY_MAX_QUEUED_REQUESTS", "0")
	t.Setenv("ALGOITNY_QUEUE_TIMEOUT", "250ms")
	t.Setenv("ALGOITNY_MAX_CONCURRENT_REQUESTS_PER_ADDRESS", "2")
	t.Setenv("ALGOITNY_MAX_QUEUED_REQUESTS_PER_ADDRESS", "off")
	t.Setenv("ALGOITNY_RESPONSE_BYTES_SIGNED_OUT", "512KB")
	t.Setenv("ALGOITNY_RESPONSE_BYTES_SIGNED_IN", "1048576")
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := httpserver.Admission{Concurrency: 4, Queue: -1, QueueTimeout: 250 * time.Millisecond, PerAddress: 2, PerAddressQueue: -1}
	if cfg.RequestTimeout != 5*time.Second || cfg.Admission != want || cfg.ResponseBudget != (httpserver.ResponseBudget{SignedOut: 512 << 10, SignedIn: 1 << 20}) {
		t.Fatalf("%v %+v %+v", cfg.RequestTimeout, cfg.Admission, cfg.ResponseBudget)
	}
	t.Setenv("ALGOITNY_MAX_CONCURRENT_REQUESTS", "off")
	if cfg, err := configFromEnv(); err != nil || cfg.Admission.Concurrency != -1 {
		t.Fatalf("off: %+v %v", cfg.Admission, err)
	}
	for name, bad := range map[string]string{
		"ALGOITNY_MAX_CONCURRENT_REQUESTS":             "0",
		"ALGOITNY_MAX_QUEUED_REQUESTS":                 "-1",
		"ALGOITNY_MAX_CONCURRENT_REQUESTS_PER_ADDRESS": "0",
		"ALGOITNY_MAX_QUEUED_REQUESTS_PER_ADDRESS":     "many",
		"ALGOITNY_RESPONSE_BYTES_SIGNED_OUT":           "16 parsecs",
		"ALGOITNY_REQUEST_TIMEOUT":                     "soon",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, bad)
			if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, bad, err)
			}
		})
	}
}

// ALGOITNY_OWN_ADDRESSES lists the server's own public addresses that
// users' URLs may not lead to; a bad entry is refused with its name.
func TestConfigOwnAddresses(t *testing.T) {
	t.Setenv("ALGOITNY_OWN_ADDRESSES", " 203.0.113.9, ::ffff:198.51.100.7 ")
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cfg.FetchOwnAddresses); got != "[203.0.113.9 198.51.100.7]" {
		t.Fatalf("own addresses %s", got)
	}
	t.Setenv("ALGOITNY_OWN_ADDRESSES", "203.0.113.9,example.com")
	if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), "ALGOITNY_OWN_ADDRESSES") {
		t.Fatalf("a host name was accepted: %v", err)
	}
}

func TestConfigJudgeUIDBase(t *testing.T) {
	cfg, err := configFromEnv()
	if err != nil || cfg.JudgeUIDBase != 0 {
		t.Fatalf("unset: %d %v (0 is the judge's default)", cfg.JudgeUIDBase, err)
	}
	t.Setenv("JUDGE_UID_BASE", "2500000")
	if cfg, err := configFromEnv(); err != nil || cfg.JudgeUIDBase != 2_500_000 {
		t.Fatalf("2500000: %d %v", cfg.JudgeUIDBase, err)
	}
	for _, bad := range []string{"1000", "100000", "0", "-5", "many", "2147483000"} {
		t.Setenv("JUDGE_UID_BASE", bad)
		if _, err := configFromEnv(); err == nil || !strings.Contains(err.Error(), "JUDGE_UID_BASE") {
			t.Fatalf("JUDGE_UID_BASE=%s accepted: %v", bad, err)
		}
	}
}
