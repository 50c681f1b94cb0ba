package judge_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

func TestLoadTestDir(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "10.in", "10.out", "2.in", "2.ans", "1.in", "1.out", "sample.in", "sample.out", "notes.txt")
		tests, err := judge.LoadTestDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tc := range tests {
			ids = append(ids, tc.ID)
		}
		if got := filepath.Join(ids...); got != filepath.Join("1", "2", "10", "sample") {
			t.Fatalf("order %v, want natural order 1 2 10 sample", ids)
		}
		if tests[1].ExpectedFile != filepath.Join(dir, "2.ans") || tests[1].InputFile != filepath.Join(dir, "2.in") {
			t.Fatalf("test 2 files: %+v", tests[1])
		}
	})

	t.Run("ErrInvalidInput_MissingAnswer", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "1.in", "1.out", "2.in")
		if _, err := judge.LoadTestDir(dir); !errors.Is(err, judge.ErrInvalidInput) {
			t.Fatalf("err %v, want ErrInvalidInput", err)
		}
	})

	t.Run("ErrInvalidInput_Empty", func(t *testing.T) {
		t.Parallel()
		if _, err := judge.LoadTestDir(t.TempDir()); !errors.Is(err, judge.ErrInvalidInput) {
			t.Fatalf("err %v, want ErrInvalidInput", err)
		}
	})
}

func TestLanguageForFile(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"a.py": "python", "Main.java": "java", "x.CPP": "cpp", "s.cc": "cpp",
		"m.c": "c", "main.go": "go", "a.js": "javascript", "main.rs": "rust", "a.kt": "kotlin", "README": "",
		"x.C": "cpp", "a.cs": "csharp", "a.rb": "ruby", "a.php": "php", "Main.hs": "haskell", "a.txt": ""} {
		if got := judge.LanguageForFile(name); got != want {
			t.Errorf("LanguageForFile(%q) = %q, want %q", name, got, want)
		}
	}
}
