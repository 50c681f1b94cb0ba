package judge_test

import (
	"fmt"
	"os"
	"testing"
)

// secretEnv imitates the server's secrets. TestMain puts them in the test
// process's environment; sandboxed programs must never see them.
var secretEnv = map[string]string{
	"SESSION_SECRET":        "canary-session-secret-7f3a",
	"GEMINI_API_KEY":        "canary-gemini-key-91bc",
	"AWS_ACCESS_KEY_ID":     "AKIACANARY0000000000",
	"AWS_SECRET_ACCESS_KEY": "canary-aws-secret-55e1",
	"DATABASE_URL":          "postgres://canary:canary-db-password@db/algoitny",
}

func TestMain(m *testing.M) {
	for k, v := range secretEnv {
		_ = os.Setenv(k, v)
	}
	code := m.Run()
	closeSharedEngine()
	// Whatever happened in the tests, no sandboxed process may outlive them.
	if left := sandboxProcesses(uidRangeStart, uidRangeEnd, ""); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left behind by the sandbox: %v\n", left)
		code = 1
	}
	os.Exit(code)
}
