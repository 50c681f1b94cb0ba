package judge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// TestCompilerTimeout: a compiler that does not finish within the compile
// limits — asleep (a machine too busy to run it) or spinning — is the
// judge's failure, ErrCompilerTimeout with an INTERNAL_ERROR result, never
// a COMPILATION_ERROR that blames the source.
func TestCompilerTimeout(t *testing.T) {
	t.Parallel()
	slow := func(id string, compile ...string) judge.Language {
		return judge.Language{ID: id, Name: id, SourceFile: "main.txt", Compile: compile,
			Run: []string{"cat", "{dir}/main.txt"}, VersionArgs: []string{"cat", "--version"}}
	}
	e, _ := newEngine(t, judge.Config{
		CompileLimits: judge.Limits{CPUTime: time.Second, WallTime: 2 * time.Second},
		Languages:     []judge.Language{slow("sleeps", "sleep", "60"), slow("spins", "sh", "-c", "while :; do :; done")},
	})
	for _, lang := range []string{"sleeps", "spins"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			requireLanguage(t, e, lang)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := e.Compile(ctx, lang, "x")
			var ce *judge.CompileError
			if !errors.Is(err, judge.ErrCompilerTimeout) || errors.As(err, &ce) {
				t.Fatalf("Compile: %v, want ErrCompilerTimeout and no compilation error", err)
			}
			res, err := e.Judge(ctx, judge.Submission{Language: lang, Source: "x", Tests: []judge.TestCase{{Expected: []byte("x")}}}, nil)
			if !errors.Is(err, judge.ErrCompilerTimeout) || res.Verdict != judge.InternalError {
				t.Fatalf("Judge: %s, %v; want INTERNAL_ERROR and ErrCompilerTimeout", res.Verdict, err)
			}
		})
	}
}
