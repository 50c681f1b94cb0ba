package judge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// WarmResult is what warming one language's toolchain took.
type WarmResult struct {
	Language string
	// Duration is the compile and one run of a small program.
	Duration time.Duration
	// Err is set when the program did not compile or run as expected.
	Err error
}

// Warm compiles and runs a small program in every available language (its
// Language.Warm: an A+B reading two numbers and printing their sum, with
// what contest programs commonly use), so that the first submission in
// each does not pay for a cold toolchain: Go's
// build cache of the standard packages (CacheDir, shared by the engines of
// the machine), the compilers', runtimes' and libraries' files in the page
// cache, Java's class data sharing archive (the JDK's, used with
// -Xshare:auto). Languages are warmed concurrently, within Config.Workers.
// A worker calls it at start, in the background, and takes executions
// once it is done; ctx stops it.
func (e *Engine) Warm(ctx context.Context) []WarmResult { return e.WarmLanguages(ctx) }

// WarmLanguages is Warm for the languages named by ids only (none: every
// language): what one judging needs, as `algoitny judge` warms the
// languages of the submission and of its checker before judging it.
// Unknown or unavailable ids are skipped.
func (e *Engine) WarmLanguages(ctx context.Context, ids ...string) []WarmResult {
	var (
		mu  sync.Mutex
		out []WarmResult
		wg  sync.WaitGroup
	)
	for _, l := range e.Languages() {
		if !l.Available || (len(ids) > 0 && !slices.Contains(ids, l.ID)) {
			continue
		}
		src := l.Warm
		if src == "" {
			continue // a language without a warm-up program
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := e.warmOne(ctx, l.ID, src)
			mu.Lock()
			out = append(out, WarmResult{Language: l.ID, Duration: time.Since(start), Err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (e *Engine) warmOne(ctx context.Context, lang, src string) error {
	p, err := e.Compile(ctx, lang, src)
	if err != nil {
		return err
	}
	defer p.Close()
	var out strings.Builder
	rr, err := p.Run(ctx, RunOptions{Stdin: strings.NewReader("20 22\n"), Stdout: &out,
		Limits: Limits{CPUTime: 5 * time.Second}})
	if err != nil {
		return err
	}
	if rr.Verdict != Accepted || strings.TrimSpace(out.String()) != "42" {
		return fmt.Errorf("%w: %s warm-up run: %s %s (output %q)", ErrSandboxFailed, lang, rr.Verdict, rr.Message, out.String())
	}
	return nil
}
