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
// for benchmarks. Exit status: 0 when accepted, 1 otherwise, 2 on bad usage.
func runJudge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("algoitny judge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		lang        = fs.String("lang", "", "language: python, c, cpp, java, go, javascript (default: from the file extension)")
		testsDir    = fs.String("tests", "", "directory of NAME.in + NAME.out (or NAME.ans) files")
		cpu         = fs.Duration("cpu", 2*time.Second, "CPU time limit per test")
		wall        = fs.Duration("wall", 0, "wall time limit per test (default 2×cpu + 1s)")
		memory      = fs.Int64("memory-mb", 256, "memory limit per test, MiB")
		output      = fs.Int64("output-mb", 64, "output limit per test, MiB")
		procs       = fs.Int("procs", 1, "processes/threads the program may have")
		checkerKind = fs.String("checker", "lines", "checker: lines, tokens, exact, float, yesno, custom")
		eps         = fs.Float64("eps", judge.DefaultEpsilon, "float checker: absolute or relative tolerance")
		checkerSrc  = fs.String("checker-source", "", "custom checker source file, run as: checker input output answer")
		checkerLang = fs.String("checker-lang", "", "custom checker language (default: from its file extension)")
		workers     = fs.Int("workers", 0, "tests run at once (default: number of CPUs)")
		unsandboxed = fs.Bool("unsandboxed", false, "run WITHOUT bubblewrap (local development only: no isolation)")
		listLangs   = fs.Bool("languages", false, "list the languages and whether they work here, then exit")
		asJSON      = fs.Bool("json", false, "print the result as JSON")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: algoitny judge [flags] --tests DIR SOURCE")
		fmt.Fprintln(stderr, "       algoitny judge --languages")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Judges SOURCE against every NAME.in/NAME.out pair in DIR in the sandbox and prints a verdict table.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	// Flags may come before or after the source file.
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}

	cfg := judge.Config{Workers: *workers}
	if *unsandboxed {
		cfg.Sandbox, cfg.AllowUnsandboxed = judge.SandboxNone, true
		fmt.Fprintln(stderr, "algoitny judge: WARNING: running user code without a sandbox (--unsandboxed)")
	}
	if *listLangs {
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
	if len(positional) != 1 || *testsDir == "" {
		fs.Usage()
		return 2
	}
	sourcePath := positional[0]
	if *lang == "" {
		if *lang = judge.LanguageForFile(sourcePath); *lang == "" {
			fmt.Fprintf(stderr, "algoitny judge: cannot tell the language of %s: use --lang\n", sourcePath)
			return 2
		}
	}
	source, err := os.ReadFile(sourcePath)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	tests, err := judge.LoadTestDir(*testsDir)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	checker := judge.Checker{Kind: judge.CheckerKind(*checkerKind)}
	switch checker.Kind {
	case judge.CheckFloat:
		checker.AbsEps, checker.RelEps = *eps, *eps
	case judge.CheckCustom:
		if *checkerSrc == "" {
			fmt.Fprintln(stderr, "algoitny judge: --checker custom needs --checker-source")
			return 2
		}
		src, err := os.ReadFile(*checkerSrc)
		if err != nil {
			fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
			return 1
		}
		checker.Source, checker.Language = string(src), *checkerLang
		if checker.Language == "" {
			checker.Language = judge.LanguageForFile(*checkerSrc)
		}
	}

	e, err := judge.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	defer e.Close()
	sub := judge.Submission{
		Language: *lang,
		Source:   string(source),
		Tests:    tests,
		Checker:  checker,
		Limits: judge.Limits{CPUTime: *cpu, WallTime: *wall, MemoryBytes: *memory << 20,
			OutputBytes: *output << 20, MaxProcesses: *procs},
	}
	start := time.Now()
	res, err := e.Judge(ctx, sub, nil)
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny judge: %v\n", err)
		return 1
	}
	if *asJSON {
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
