// Command algoitny is the one binary of the AlgoItny backend: the GraphQL API
// server, the River worker, the schema migrator and a few operator tools.
//
// Usage:
//
//	algoitny <command> [flags]
//
// Run `algoitny help` for the list of commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// command is one subcommand of the binary.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"serve":      {"serve the GraphQL API (and run job workers unless --no-workers)", runServe},
		"worker":     {"run job workers only (scale-out)", runWorker},
		"migrate":    {"create or upgrade the DynamoDB tables and River's schema (idempotent)", runMigrate},
		"seed-plans": {"create the default plans Free, Pro and Admin if missing", runSeedPlans},
		"version":    {"print the version and exit", runVersion},
		"admin":      {"admin grant|revoke EMAIL: make a user staff (the first staff user)", runAdmin},
		"judge":      {"judge a solution against a directory of tests (see `algoitny judge -h`)", runJudge},
		"package":    {"package verify|import PATH: verify or import an ICPC or Polygon problem package", runPackage},
		"dev":        {"local development: start DynamoDB Local + PostgreSQL, migrate, seed, serve (make run)", runDev},
		"stack":      {"run a command against throw-away DynamoDB Local + PostgreSQL (make test)", runStack},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// dispatch runs the subcommand named by args[0] and returns the process exit code:
// 0 on success, 1 on failure, 2 on a usage error.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "algoitny: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: algoitny <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(cmds))
	for name := range cmds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-11s %s\n", name, cmds[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Configuration is read from the environment; see README.md.")
}

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) int {
	fmt.Fprintf(stdout, "algoitny %s\n", version)
	return 0
}
