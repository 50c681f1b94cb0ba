package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// runJudge is `algoitny judge`: judge one solution against a directory of
// tests with the same engine the workers use, printing a verdict table. It is
// for problem authors (check a reference solution, a checker, the limits) and
// for benchmarks. Users' code runs as the uids from JUDGE_UID_BASE, as in
// the server. Exit status: 0 when accepted, 1 otherwise, 2 on bad usage.
func runJudge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newJudgeFlags(stderr)
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	base, err := judgeUIDBaseFromEnv()
	if err != nil {
		fmt.Fprintln(stderr, "algoitny judge:", err)
		return 2
	}
	langs, err := judge.LoadLanguages(strings.TrimSpace(os.Getenv("JUDGE_LANGUAGES")))
	if err != nil {
		fmt.Fprintln(stderr, "algoitny judge: JUDGE_LANGUAGES:", err)
		return 2
	}
	cfg := judge.Config{Workers: f.workers, UIDBase: base, Languages: langs}
	if f.unsandboxed {
		cfg.Sandbox, cfg.AllowUnsandboxed = judge.SandboxNone, true
		fmt.Fprintln(stderr, "algoitny judge: WARNING: running user code without a sandbox (--unsandboxed)")
	}
	if f.listLangs {
		return listLanguages(cfg, stdout, stderr)
	}
	if len(positional) != 1 || f.testsDir == "" {
		fs.Usage()
		return 2
	}
	sub, code := f.submission(positional[0], langs, stderr)
	if code != 0 {
		return code
	}
	return judgeSubmission(ctx, cfg, sub, f.asJSON, stdout, stderr)
}

// judgeFlags are the flags of `algoitny judge`.
type judgeFlags struct {
	lang, testsDir                       string
	cpu, wall                            time.Duration
	memoryMB, outputMB                   int64
	procs, workers                       int
	checkerKind, checkerSrc, checkerLang string
	eps                                  float64
	unsandboxed, listLangs, asJSON       bool
}

// newJudgeFlags defines the flags of `algoitny judge` and its usage.
func newJudgeFlags(stderr io.Writer) (*flag.FlagSet, *judgeFlags) {
	fs := flag.NewFlagSet("algoitny judge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &judgeFlags{}
	fs.StringVar(&f.lang, "lang", "", "language id (see --languages; default: from the file extension)")
	fs.StringVar(&f.testsDir, "tests", "", "directory of NAME.in + NAME.out (or NAME.ans) files")
	fs.DurationVar(&f.cpu, "cpu", 2*time.Second, "CPU time limit per test")
	fs.DurationVar(&f.wall, "wall", 0, "wall time limit per test (default 2×cpu + 1s)")
	fs.Int64Var(&f.memoryMB, "memory-mb", 256, "memory limit per test, MiB")
	fs.Int64Var(&f.outputMB, "output-mb", 64, "output limit per test, MiB")
	fs.IntVar(&f.procs, "procs", 1, "processes/threads the program may have")
	fs.StringVar(&f.checkerKind, "checker", "lines", "checker: lines, tokens, exact, float, yesno, custom")
	fs.Float64Var(&f.eps, "eps", judge.DefaultEpsilon, "float checker: absolute or relative tolerance")
	fs.StringVar(&f.checkerSrc, "checker-source", "", "custom checker source file, run as: checker input output answer")
	fs.StringVar(&f.checkerLang, "checker-lang", "", "custom checker language (default: from its file extension)")
	fs.IntVar(&f.workers, "workers", 0, "tests run at once (default: number of CPUs)")
	fs.BoolVar(&f.unsandboxed, "unsandboxed", false, "run WITHOUT bubblewrap (local development only: no isolation)")
	fs.BoolVar(&f.listLangs, "languages", false, "list the languages and whether they work here, then exit")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: algoitny judge [flags] --tests DIR SOURCE")
		fmt.Fprintln(stderr, "       algoitny judge --languages")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Judges SOURCE against every NAME.in/NAME.out pair in DIR in the sandbox and prints a verdict table.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	return fs, f
}

// parseInterspersed parses args with fs, flags before or after the
// positional arguments, and returns those; its error is fs.Parse's.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// listLanguages prints the languages of an engine of cfg and whether they
// work here, with the exit status of `algoitny judge --languages`.
func listLanguages(cfg judge.Config, stdout, stderr io.Writer) int {
	e, err := judge.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	defer e.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tAVAILABLE\tVERSION / REASON")
	for _, l := range e.Languages() {
		info := l.Version
		if !l.Available {
			info = l.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", l.ID, l.Name, l.Available, info)
	}
	tw.Flush()
	return 0
}

// submission reads the source at sourcePath and the tests and the checker
// the flags name. A non-zero status (1: unreadable, 2: bad usage) means it
// failed, the reason written to stderr.
func (f *judgeFlags) submission(sourcePath string, langs []judge.Language, stderr io.Writer) (judge.Submission, int) {
	lang := f.lang
	if lang == "" {
		if lang = judge.LanguageForFileIn(langs, sourcePath); lang == "" {
			fmt.Fprintf(stderr, "algoitny judge: cannot tell the language of %s: use --lang\n", sourcePath)
			return judge.Submission{}, 2
		}
	}
	source, err := os.ReadFile(sourcePath)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return judge.Submission{}, 1
	}
	tests, err := judge.LoadTestDir(f.testsDir)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return judge.Submission{}, 1
	}
	checker, code := f.checker(langs, stderr)
	if code != 0 {
		return judge.Submission{}, code
	}
	return judge.Submission{
		Language: lang,
		Source:   string(source),
		Tests:    tests,
		Checker:  checker,
		Limits: judge.Limits{CPUTime: f.cpu, WallTime: f.wall, MemoryBytes: f.memoryMB << 20,
			OutputBytes: f.outputMB << 20, MaxProcesses: f.procs},
	}, 0
}

// checker is the checker the flags choose, a custom one's source read; a
// non-zero status as for submission.
func (f *judgeFlags) checker(langs []judge.Language, stderr io.Writer) (judge.Checker, int) {
	checker := judge.Checker{Kind: judge.CheckerKind(f.checkerKind)}
	switch checker.Kind {
	case judge.CheckFloat:
		checker.AbsEps, checker.RelEps = f.eps, f.eps
	case judge.CheckCustom:
		if f.checkerSrc == "" {
			fmt.Fprintln(stderr, "algoitny judge: --checker custom needs --checker-source")
			return checker, 2
		}
		src, err := os.ReadFile(f.checkerSrc)
		if err != nil {
			fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
			return checker, 1
		}
		checker.Source, checker.Language = string(src), f.checkerLang
		if checker.Language == "" {
			checker.Language = judge.LanguageForFileIn(langs, f.checkerSrc)
		}
	}
	return checker, 0
}

// judgeSubmission judges sub with an engine of cfg and prints the result
// (a table, or JSON); the exit status is 0 only when it is accepted.
func judgeSubmission(ctx context.Context, cfg judge.Config, sub judge.Submission, asJSON bool, stdout, stderr io.Writer) int {
	e, err := judge.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	defer e.Close()
	// A cold toolchain (Go's standard packages on a fresh machine) is
	// warmed before the judging, not paid for by the first compile.
	for _, w := range e.WarmLanguages(ctx, sub.Language, sub.Checker.Language) {
		if w.Err != nil {
			fmt.Fprintf(stderr, "algoitny judge: warming %s: %v\n", w.Language, w.Err)
		}
	}
	start := time.Now()
	res, err := e.Judge(ctx, sub, nil)
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return 1
		}
	} else {
		printResult(stdout, res, elapsed)
	}
	if res.Verdict != judge.Accepted {
		return 1
	}
	return 0
}

// printResult writes the verdict table and the summary line.
func printResult(w io.Writer, res judge.Result, elapsed time.Duration) {
	if res.Verdict == judge.CompilationError {
		fmt.Fprintf(w, "%s\n\n%s\n", res.Verdict, strings.TrimRight(res.CompileOutput, "\n"))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEST\tVERDICT\tCPU\tWALL\tMEMORY\tMESSAGE")
	for _, tr := range res.Tests {
		msg := tr.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i] + " …"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", tr.TestID, tr.Verdict, ms(tr.CPUTime), ms(tr.WallTime), mib(tr.MemoryBytes), msg)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s: %d/%d passed, max CPU %s, max wall %s, max memory %s; %d tests in %s (%.1f tests/s)\n",
		res.Verdict, res.Passed, res.Total, ms(res.MaxCPUTime), ms(res.MaxWallTime), mib(res.MaxMemoryBytes),
		len(res.Tests), elapsed.Round(time.Millisecond), float64(len(res.Tests))/elapsed.Seconds())
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func mib(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }
