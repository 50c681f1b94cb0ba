package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problempkg"
)

// runPackage is `algoitny package verify|import PATH`: problem packages
// as setters ship them (ICPC/Kattis and Polygon).
func runPackage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "Usage: algoitny package verify|import [flags] PATH")
		return 2
	}
	switch args[0] {
	case "verify":
		return runPackageVerify(ctx, args[1:], stdout, stderr)
	case "import":
		return runPackageImport(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "algoitny package: unknown subcommand %q (verify or import)\n", args[0])
	return 2
}

// packageFlags are the flags verify and import share.
type packageFlags struct {
	asJSON, unsandboxed bool
	probe               time.Duration
	workers             int
}

func newPackageFlags(name string, stderr io.Writer) (*flag.FlagSet, *packageFlags) {
	fs := newFlags("package "+name, "package "+name+" [flags] PATH (a directory or a zip)", stderr)
	f := &packageFlags{}
	fs.BoolVar(&f.asJSON, "json", false, "print the report as one JSON object")
	fs.BoolVar(&f.unsandboxed, "unsandboxed", false, "run programs without the sandbox (local development only)")
	fs.DurationVar(&f.probe, "probe-time", time.Minute, "the time limit of the runs a time limit is inferred from, for packages that state none")
	fs.IntVar(&f.workers, "workers", 0, "tests judged at once (default: one per CPU)")
	return fs, f
}

// engine starts the judge for a package command, its toolchains warmed.
func (f *packageFlags) engine(stderr io.Writer) (*judge.Engine, error) {
	base, err := judgeUIDBaseFromEnv()
	if err != nil {
		return nil, err
	}
	cfg := judge.Config{Workers: f.workers, UIDBase: base}
	if f.unsandboxed {
		cfg.Sandbox, cfg.AllowUnsandboxed = judge.SandboxNone, true
		fmt.Fprintln(stderr, "algoitny package: WARNING: running the package's programs without a sandbox (--unsandboxed)")
	}
	return judge.New(cfg)
}

// runPackageVerify is `algoitny package verify`: it judges every
// submission of the package and reports its verdict beside the one its
// folder (ICPC) or tag (Polygon) expects. Exit status: 0 when the package
// verifies, 1 otherwise, 2 on bad usage.
func runPackageVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newPackageFlags("verify", stderr)
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(positional) != 1 {
		fs.Usage()
		return 2
	}
	report, code := verifyPackage(ctx, positional[0], f, stderr)
	if report == nil {
		return code
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return 1
		}
	} else {
		printReport(stdout, report)
	}
	if !report.OK() {
		return 1
	}
	return 0
}

// verifyPackage opens and verifies the package at path, with progress on
// stderr; a nil report comes with the exit status.
func verifyPackage(ctx context.Context, path string, f *packageFlags, stderr io.Writer) (*problempkg.Report, int) {
	pkg, err := problempkg.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny package: %v\n", err)
		return nil, 1
	}
	defer pkg.Close()
	e, err := f.engine(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny package: %v\n", err)
		return nil, 1
	}
	defer e.Close()
	var log io.Writer
	if !f.asJSON {
		log = stderr
	}
	report, err := problempkg.Verify(ctx, pkg, e, problempkg.Options{ProbeTime: f.probe, Log: log})
	if err != nil {
		fmt.Fprintf(stderr, "algoitny package: %v\n", err)
		return nil, 1
	}
	return report, 0
}

// printReport writes the report as a table.
func printReport(w io.Writer, r *problempkg.Report) {
	fmt.Fprintf(w, "%s (%s), time limit %dms\n\n", r.Problem, r.Format, r.TimeLimitMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBMISSION\tEXPECTED\tVERDICT\tSCORE\tTIME\tOK")
	for _, s := range r.Submissions {
		ok := "yes"
		if !s.OK {
			ok = "NO: " + s.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%dms\t%s\n", s.Path, s.Expected, s.Verdict, s.Score, s.TimeMs, ok)
	}
	tw.Flush()
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Path, s.Reason)
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	for _, m := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", m)
	}
	if r.OK() {
		fmt.Fprintln(w, "\nthe package verifies")
	} else {
		fmt.Fprintln(w, "\nthe package does NOT verify")
	}
}

func runPackageImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, strings.TrimSpace("algoitny package import: not yet"))
	return 1
}
