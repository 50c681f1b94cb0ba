package judge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/judge"
)

// TestToolchainChecksRemembered: an engine's start checks each language's
// toolchain in the sandbox once per toolchain, not once per start: a second
// engine on the same CacheDir takes what the first one's check found, a
// changed command is checked again, and a failed check is never
// remembered.
func TestToolchainChecksRemembered(t *testing.T) {
	t.Parallel()
	// The sandbox uids traverse the cache directory, as they do the
	// default one: not under t.TempDir (0700).
	cache := algoitnytest.Must[string](t)(os.MkdirTemp("", "toolchains-"))
	t.Cleanup(func() { os.RemoveAll(cache) })
	python := func(version ...string) judge.Language {
		for _, l := range judge.DefaultLanguages() {
			if l.ID == "python" {
				l.VersionArgs = version
				return l
			}
		}
		t.Fatal("no python")
		return judge.Language{}
	}
	broken := python("python3", "-c", "import sys; sys.exit(3)")
	broken.ID = "broken"
	start := func(langs ...judge.Language) map[string]judge.Language {
		e, _ := newEngine(t, judge.Config{Workers: 1, CacheDir: cache, Languages: langs})
		out := map[string]judge.Language{}
		for _, l := range e.Languages() {
			out[l.ID] = l
		}
		return out
	}
	file := filepath.Join(cache, "toolchains.json")
	type check struct {
		Version   string    `json:"version"`
		CheckedAt time.Time `json:"checkedAt"`
	}
	remembered := func() map[string]check {
		var m map[string]check
		algoitnytest.OK(t, json.Unmarshal(algoitnytest.Must[[]byte](t)(os.ReadFile(file)), &m))
		return m
	}

	first := start(python("python3", "--version"), broken)
	if l := first["python"]; !l.Available || !strings.HasPrefix(l.Version, "Python 3") {
		t.Fatalf("python: %+v", l)
	}
	if l := first["broken"]; l.Available || !strings.Contains(l.Reason, "failed in the sandbox") {
		t.Fatalf("a failing check: %+v", l)
	}
	m := remembered()
	if len(m) != 1 {
		t.Fatalf("remembered %v, want python's check alone", m)
	}
	// What the next engine reports comes from the file: no check ran.
	rewrite := func(version string, at time.Time) {
		for k := range m {
			m[k] = check{Version: version, CheckedAt: at}
		}
		algoitnytest.OK(t, os.WriteFile(file, algoitnytest.Must[[]byte](t)(json.Marshal(m)), 0o600))
	}
	rewrite("remembered", time.Now().Add(-time.Hour))
	second := start(python("python3", "--version"), broken)
	if l := second["python"]; !l.Available || l.Version != "remembered" {
		t.Fatalf("second engine's python: %+v", l)
	}
	if l := second["broken"]; l.Available {
		t.Fatalf("a failed check was remembered: %+v", l)
	}
	// A check older than a day is made again.
	rewrite("remembered", time.Now().Add(-25*time.Hour))
	if l := start(python("python3", "--version"))["python"]; !strings.HasPrefix(l.Version, "Python 3") {
		t.Fatalf("a day-old check was trusted: %+v", l)
	}
	// Another command is another check.
	third := start(python("python3", "-c", "print('Python 3 again')"))
	if l := third["python"]; l.Version != "Python 3 again" {
		t.Fatalf("a changed command: %+v", l)
	}
	if n := len(remembered()); n != 2 {
		t.Fatalf("%d checks remembered, want 2", n)
	}
}
