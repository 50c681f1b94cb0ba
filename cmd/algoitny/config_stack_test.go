package main

import (
	"io"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/devstack"
)

// resolveStack takes the running make run stack's places when the
// environment names none, keeps what the environment names, and refuses
// to guess AWS.
func TestResolveStack(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ALGOITNY_DATA_DIR", dir)
	t.Setenv("DYNAMODB_ENDPOINT", "")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("ALGOITNY_PUBSUB_CHANNEL", "")

	resolve := func() (Config, error) {
		cfg, err := configFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		return cfg, cfg.resolveStack(io.Discard)
	}
	if _, err := resolve(); err == nil || !strings.Contains(err.Error(), "DYNAMODB_ENDPOINT=aws") {
		t.Fatalf("no stack: %v", err)
	}

	claim, err := devstack.ClaimDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := claim.Publish(devstack.State{Pid: 1, DynamoDB: "http://127.0.0.1:8123", DatabaseURL: "postgres://x@127.0.0.1/db1", PubsubChannel: "ch1", TablePrefix: "T-"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := resolve()
	if err != nil || cfg.Dynamo.Endpoint != "http://127.0.0.1:8123" || cfg.DatabaseURL != "postgres://x@127.0.0.1/db1" || cfg.PubsubChannel != "ch1" || cfg.Dynamo.TablePrefix != "T-" {
		t.Fatalf("with a stack: %+v %v", cfg, err)
	}

	// What the environment names wins; aws is asked for explicitly.
	t.Setenv("DYNAMODB_ENDPOINT", "aws")
	if cfg, err := resolve(); err != nil || !cfg.DynamoAWS || cfg.Dynamo.Endpoint != "" || cfg.DatabaseURL != "" {
		t.Fatalf("aws: %+v %v", cfg, err)
	}
	t.Setenv("DYNAMODB_ENDPOINT", "http://127.0.0.1:9999")
	if cfg, err := resolve(); err != nil || cfg.Dynamo.Endpoint != "http://127.0.0.1:9999" || cfg.DatabaseURL != "" {
		t.Fatalf("explicit endpoint: %+v %v", cfg, err)
	}

	// A stack that ended (its lock free) is not used.
	claim.Release()
	t.Setenv("DYNAMODB_ENDPOINT", "")
	if _, err := resolve(); err == nil {
		t.Fatal("a stopped stack was used")
	}
	again, err := devstack.ClaimDataDir(dir)
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	again.Release()
}
