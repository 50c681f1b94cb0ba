package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problempkg"
	"github.com/algoitny/api/internal/problems"
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

// runPackageImport is `algoitny package import`: it verifies the package
// and registers it as a problem on the stack the command finds (as
// `admin` does), as the user --as names or, without it, as the operator
// (a staff actor, the problem without an author). Exit status: 0 when
// imported, 1 otherwise, 2 on bad usage.
func runPackageImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newPackageFlags("import", stderr)
	as := fs.String("as", "", "register the problem as this user (who must be allowed to register problems)")
	id := fs.String("id", "", "the problem's id (default: the package's name)")
	publish := fs.Bool("publish", false, "publish the problem at once (isCompleted)")
	strict := fs.Bool("require-verified", false, "refuse a package whose submissions do not all get what their folders or tags require")
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(positional) != 1 {
		fs.Usage()
		return 2
	}
	cfg, ok := loadConfig(stderr, "package import")
	if !ok {
		return 1
	}
	w, err := openWriter(ctx, cfg, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return fail(stderr, "package import", err)
	}
	defer w.Close()
	actor, err := importActor(ctx, w.DB, *as)
	if err != nil {
		return fail(stderr, "package import", err)
	}
	imp, code := importPackage(ctx, positional[0], f, problempkg.ImportOptions{ProblemID: *id, RequireVerified: *strict}, stderr)
	if imp == nil {
		return code
	}
	imp.Problem.IsCompleted = *publish
	svc := &problems.Service{Store: w.DB}
	p, err := svc.Import(algoitny.WithActor(ctx, actor), problems.CreateInput{Problem: imp.Problem, TestCases: imp.Tests, Subtasks: imp.Subtasks})
	if err != nil {
		return fail(stderr, "package import", err)
	}
	return printImported(stdout, f.asJSON, imp, p)
}

// importActor is who registers an imported problem: the user with the
// email, or the operator (staff, no user id) when it is "".
func importActor(ctx context.Context, db *dynamo.DB, email string) (*algoitny.Actor, error) {
	if email == "" {
		return &algoitny.Actor{User: &algoitny.User{IsStaff: true, IsActive: true}}, nil
	}
	u, err := db.GetUserByEmail(ctx, email)
	if err != nil {
		return nil, fmt.Errorf("--as %s: %w", email, err)
	}
	a := &algoitny.Actor{User: u}
	if u.PlanID != "" {
		if a.Plan, err = db.GetPlan(ctx, u.PlanID); err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return nil, err
		}
	}
	return a, nil
}

// importPackage opens, verifies and maps the package; a nil result comes
// with the exit status.
func importPackage(ctx context.Context, path string, f *packageFlags, opts problempkg.ImportOptions, stderr io.Writer) (*problempkg.Imported, int) {
	pkg, err := problempkg.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny package import: %v\n", err)
		return nil, 1
	}
	defer pkg.Close()
	e, err := f.engine(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "algoitny package import: %v\n", err)
		return nil, 1
	}
	defer e.Close()
	opts.ProbeTime = f.probe
	if !f.asJSON {
		opts.Log = stderr
	}
	imp, err := problempkg.Import(ctx, pkg, e, opts)
	if err != nil {
		if imp != nil && imp.Report != nil && !f.asJSON {
			printReport(stderr, imp.Report)
		}
		fmt.Fprintf(stderr, "algoitny package import: %s\n", algoitny.ErrorMessage(err))
		return nil, 1
	}
	return imp, 0
}

// printImported reports an imported problem.
func printImported(w io.Writer, asJSON bool, imp *problempkg.Imported, p *algoitny.Problem) int {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		out := struct {
			Platform  string             `json:"platform"`
			ProblemID string             `json:"problemId"`
			Tests     int                `json:"tests"`
			Subtasks  int                `json:"subtasks"`
			Notes     []string           `json:"notes,omitempty"`
			Report    *problempkg.Report `json:"report"`
		}{strings.ToUpper(string(p.Platform)), p.ProblemID, p.TestCaseCount, len(p.Subtasks), imp.Notes, imp.Report}
		if err := enc.Encode(out); err != nil {
			return 1
		}
		return 0
	}
	printReport(w, imp.Report)
	for _, n := range imp.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "imported %s/%s: %d tests, %d subtasks, time limit %dms, %s\n", strings.ToUpper(string(p.Platform)), p.ProblemID,
		p.TestCaseCount, len(p.Subtasks), p.TimeLimitMs, map[bool]string{true: "published", false: "a draft"}[p.IsCompleted])
	return 0
}
