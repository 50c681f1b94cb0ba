package judge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

func TestNew(t *testing.T) {
	t.Parallel()

	t.Run("ErrSandboxUnavailable_NoBwrap", func(t *testing.T) {
		t.Parallel()
		_, err := judge.New(judge.Config{BwrapPath: "/nonexistent/bwrap"})
		if !errors.Is(err, judge.ErrSandboxUnavailable) {
			t.Fatalf("New without bwrap: %v, want ErrSandboxUnavailable", err)
		}
		if !strings.Contains(err.Error(), "apt-get install -y bubblewrap") {
			t.Fatalf("the error should say how to fix it: %v", err)
		}
	})

	t.Run("ErrSandboxUnavailable_UnsandboxedNotAllowed", func(t *testing.T) {
		t.Parallel()
		_, err := judge.New(judge.Config{Sandbox: judge.SandboxNone})
		if !errors.Is(err, judge.ErrSandboxUnavailable) {
			t.Fatalf("New(Sandbox: none): %v, want ErrSandboxUnavailable", err)
		}
	})

	t.Run("ErrInvalidInput_SandboxMode", func(t *testing.T) {
		t.Parallel()
		if _, err := judge.New(judge.Config{Sandbox: "docker"}); !errors.Is(err, judge.ErrInvalidInput) {
			t.Fatalf("New(Sandbox: docker): %v, want ErrInvalidInput", err)
		}
	})

	// A cache directory someone else made first (in /tmp, say), or a
	// symlink, is refused: what it holds (compilers' caches, the
	// supervisor) runs for every submission.
	t.Run("ErrInvalidInput_CacheDirNotOurs", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("needs root to make a directory someone else's")
		}
		theirs := filepath.Join(t.TempDir(), "theirs")
		if err := os.Mkdir(theirs, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(t.TempDir(), link); err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{theirs, link} {
			if _, err := judge.New(judge.Config{CacheDir: dir}); !errors.Is(err, judge.ErrInvalidInput) {
				t.Fatalf("New(CacheDir: %s): %v, want ErrInvalidInput", dir, err)
			}
		}
	})

	// The work directory of an engine whose process died (no Close) is
	// removed by the next engine; a live engine's, or one just made, is not.
	t.Run("StaleWorkDirsAreSwept", func(t *testing.T) {
		t.Parallel()
		workDir := func(age time.Duration) string {
			dir, err := os.MkdirTemp("", "algoitny-judge-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-age)
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
			return dir
		}
		dead, fresh, live := workDir(time.Hour), workDir(0), workDir(time.Hour)
		lock, err := os.Open(filepath.Join(live, ".lock"))
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		e, err := judge.New(judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true, Languages: []judge.Language{}})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for dir, wantGone := range map[string]bool{dead: true, fresh: false, live: false} {
			if _, err := os.Stat(dir); os.IsNotExist(err) != wantGone {
				t.Fatalf("%s: removed %t, want %t", dir, os.IsNotExist(err), wantGone)
			}
		}
	})

	t.Run("Unsandboxed", func(t *testing.T) {
		t.Parallel()
		e, base := newEngine(t, judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true}, "c")
		if e.Sandboxed() {
			t.Fatal("Sandboxed() = true in the unsandboxed mode")
		}
		src := modal["c"]
		res := judgeSub(t, e, judge.Submission{Language: "c", Source: src, Limits: judge.Limits{CPUTime: time.Second, MemoryBytes: 64 << 20},
			Tests: []judge.TestCase{
				{Input: []byte("sum 2 3"), Expected: []byte("5")},
				{Input: []byte("loop")},
				{Input: []byte("hog")},
			}})
		for i, want := range []judge.Verdict{judge.Accepted, judge.TimeLimitExceeded, judge.MemoryLimitExceeded} {
			requireVerdict(t, "unsandboxed", res.Tests[i].Verdict, want, res.Tests[i])
		}
		requireNoLeftovers(t, e, base, "")
	})

	t.Run("LanguageUnavailable", func(t *testing.T) {
		t.Parallel()
		cobol := judge.Language{ID: "cobol", Name: "COBOL", SourceFile: "main.cob",
			Compile: []string{"cobc-not-installed", "-x", "main.cob"}, Run: []string{"{dir}/main"}}
		langs := append([]judge.Language{cobol}, judge.DefaultLanguages()[1]) // + C
		e, _ := newEngine(t, judge.Config{Languages: langs})
		got := e.Languages()
		if len(got) != 2 || got[0].ID != "cobol" || got[0].Available || got[0].Reason == "" {
			t.Fatalf("COBOL should be listed as unavailable with a reason: %+v", got)
		}
		if !got[1].Available || got[1].Version == "" {
			t.Fatalf("C should be available with a version: %+v", got[1])
		}
		if _, err := e.Compile(context.Background(), "cobol", "x"); !errors.Is(err, judge.ErrLanguageUnavailable) {
			t.Fatalf("Compile(cobol): %v, want ErrLanguageUnavailable", err)
		}
		if _, err := e.Compile(context.Background(), "brainfuck", "x"); !errors.Is(err, judge.ErrUnknownLanguage) {
			t.Fatalf("Compile(brainfuck): %v, want ErrUnknownLanguage", err)
		}
	})

	t.Run("EveryLanguageAvailable", func(t *testing.T) {
		t.Parallel()
		e := sharedEngine(t)
		for _, l := range e.Languages() {
			requireLanguage(t, e, l.ID)
		}
	})

	t.Run("Close", func(t *testing.T) {
		t.Parallel()
		work := tempDir(t) + "/work"
		e, _ := newEngine(t, judge.Config{WorkDir: work}, "c")
		p := compile(t, e, "c", aPlusBC)
		if entries := runEntries(t, work); len(entries) != 1 {
			t.Fatalf("work directory should hold the build: %v", entries)
		}
		p.Close()
		if entries := runEntries(t, work); len(entries) != 0 {
			t.Fatalf("Program.Close left files: %v", entries)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
			t.Fatalf("Close should leave the given work directory, empty: %v %v", entries, err)
		}
		if _, err := e.Compile(context.Background(), "c", aPlusBC); !errors.Is(err, judge.ErrClosed) {
			t.Fatalf("Compile after Close: %v, want ErrClosed", err)
		}
	})
}
