package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestOpsDocs keeps docs/operations.md, the Dockerfile and
// docker-compose.yml honest without a Docker engine (scripts/images-test.sh,
// `make images-test`, runs them on one):
//   - every environment variable they set or read is a setting of README.md's
//     Configuration table (the Dockerfile's ENV, the environment of the
//     compose services built from the Dockerfile, the compose file's
//     ${VARIABLES}, and the settings operations.md names);
//   - every `algoitny SUBCOMMAND` they run or name is in main.go's command
//     table (compose commands, the Dockerfile's CMD under an algoitny
//     ENTRYPOINT, and the text), and the flags those commands and CMDs
//     pass are in its usage;
//   - every algoitny_… metric operations.md names is registered by the
//     server (a string literal of internal/httpserver or cmd/algoitny);
//   - the compose file parses, builds targets the Dockerfile has,
//     publishes no host port of `make run` (8080, 8000) or of a host
//     PostgreSQL (5432), runs nothing `privileged`, asks for no `nofile`
//     ulimit (a hard limit above the host's stops the container), and
//     names seccomp profiles that exist.
func TestOpsDocs(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	settings := readmeSettings(t, read("README.md"))
	dockerfile, composeSrc, ops := read("Dockerfile"), read("docker-compose.yml"), read("docs/operations.md")
	cmds := commands()

	checkSetting := func(where, name string) {
		t.Helper()
		if !settings[name] {
			t.Errorf("%s: %s is not a setting of README.md's Configuration table", where, name)
		}
	}
	checkCommand := func(where string, args []string) {
		t.Helper()
		if len(args) == 0 {
			t.Errorf("%s: an empty command", where)
			return
		}
		if _, ok := cmds[args[0]]; !ok {
			t.Errorf("%s: `algoitny %s` is not a command of cmd/algoitny/main.go", where, strings.Join(args, " "))
			return
		}
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			// The command's usage (-h, before it reads any setting) lists its flags.
			var usage bytes.Buffer
			dispatch(context.Background(), []string{args[0], "-h"}, io.Discard, &usage)
			flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.Contains(usage.String(), "-"+flag+" ") && !strings.Contains(usage.String(), "-"+flag+"\n") {
				t.Errorf("%s: `algoitny %s`: %s has no flag %s:\n%s", where, strings.Join(args, " "), args[0], a, usage.String())
			}
		}
	}
	// Commands named in the text: "algoitny serve", "bin/algoitny admin …".
	textCommand := regexp.MustCompile("(?m)(?:^|[\\s\"'`/;&|(])algoitny[ \\t]+([a-z][a-z-]*)")
	checkText := func(where, text string) int {
		t.Helper()
		n := 0
		for _, m := range textCommand.FindAllStringSubmatch(text, -1) {
			checkCommand(where, []string{m[1]})
			n++
		}
		return n
	}

	// Dockerfile: stages, ENV, CMD under ENTRYPOINT algoitny.
	stages := map[string]bool{}
	var entrypoint []string
	var stageCmds int
	for i, line := range strings.Split(dockerfile, "\n") {
		where := "Dockerfile:" + strconv.Itoa(i+1)
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			entrypoint = nil
			if len(fields) == 4 && strings.EqualFold(fields[2], "AS") {
				stages[fields[3]] = true
			}
		case "ENV":
			for _, kv := range fields[1:] {
				name, _, _ := strings.Cut(kv, "=")
				checkSetting(where, name)
			}
		case "ENTRYPOINT":
			entrypoint = jsonArgs(t, where, line)
		case "CMD":
			if len(entrypoint) > 0 && filepath.Base(entrypoint[len(entrypoint)-1]) == "algoitny" {
				checkCommand(where, jsonArgs(t, where, line))
				stageCmds++
			}
		}
	}
	checkText("Dockerfile", dockerfile)
	for _, s := range []string{"build", "api", "worker"} {
		if !stages[s] {
			t.Errorf("Dockerfile has no stage %q", s)
		}
	}
	if stageCmds < 2 {
		t.Errorf("Dockerfile: found %d CMDs of algoitny, want the api's and the worker's", stageCmds)
	}

	// docker-compose.yml: it parses; the services built from the Dockerfile.
	var compose struct {
		Services map[string]struct {
			Build       any            `yaml:"build"`
			Entrypoint  any            `yaml:"entrypoint"`
			Command     any            `yaml:"command"`
			Environment map[string]any `yaml:"environment"`
			Ports       []string       `yaml:"ports"`
			Privileged  bool           `yaml:"privileged"`
			SecurityOpt []string       `yaml:"security_opt"`
			Ulimits     map[string]any `yaml:"ulimits"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(composeSrc), &compose); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	built := 0
	for name, svc := range compose.Services {
		where := "docker-compose.yml: service " + name
		for _, p := range svc.Ports {
			parts := strings.Split(p, ":")
			if len(parts) >= 2 && slices.Contains([]string{"5432", "8000", "8080"}, parts[len(parts)-2]) {
				t.Errorf("%s publishes host port %s, which `make run` or a host PostgreSQL uses", where, parts[len(parts)-2])
			}
		}
		if svc.Privileged {
			t.Errorf("%s is privileged", where)
		}
		if _, ok := svc.Ulimits["nofile"]; ok {
			t.Errorf("%s sets a nofile ulimit: serve raises its soft limit to the engine's hard one", where)
		}
		for _, opt := range svc.SecurityOpt {
			if name, file, _ := strings.Cut(opt, ":"); name == "seccomp" && file != "unconfined" {
				if _, err := os.Stat(filepath.Join(root, file)); err != nil {
					t.Errorf("%s: security_opt %s: %v", where, opt, err)
				}
			}
		}
		if svc.Build == nil {
			continue // images of others (DynamoDB Local, PostgreSQL): their settings are theirs
		}
		built++
		if b, ok := svc.Build.(map[string]any); ok {
			if target, _ := b["target"].(string); !stages[target] {
				t.Errorf("%s builds target %q, which the Dockerfile does not have", where, target)
			}
		}
		if len(svc.Environment) == 0 {
			t.Errorf("%s has no environment", where)
		}
		for env := range svc.Environment {
			checkSetting(where, env)
		}
		command := stringList(svc.Command)
		if svc.Entrypoint == nil {
			checkCommand(where, command) // the image's ENTRYPOINT is algoitny
		} else if checkText(where, strings.Join(command, "\n")) == 0 {
			t.Errorf("%s runs no `algoitny` command", where)
		}
	}
	if built < 3 {
		t.Errorf("docker-compose.yml: %d services built from the Dockerfile, want migrate, api and worker", built)
	}
	checkText("docker-compose.yml", composeSrc)
	interpolated := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)
	for _, m := range interpolated.FindAllStringSubmatch(strings.ReplaceAll(composeSrc, "$$", ""), -1) {
		checkSetting("docker-compose.yml: ${"+m[1]+"}", m[1])
	}

	// docs/operations.md: settings, commands and metrics it names.
	setting := regexp.MustCompile(`\b((?:ALGOITNY|ATCODER|DYNAMODB|LLM|GEMINI|OPENAI|JUDGE|SESSION|GOOGLE|DATABASE|AWS)_[A-Z0-9_]+)\b`)
	for _, m := range setting.FindAllStringSubmatch(ops, -1) {
		checkSetting("docs/operations.md", m[1])
	}
	if n := checkText("docs/operations.md", ops); n < 5 {
		t.Errorf("docs/operations.md names only %d algoitny commands", n)
	}
	metrics := registeredMetrics(t, root)
	// Names of the code that are not metrics, and where the code has them.
	notMetrics := map[string]string{
		"algoitny_events":          "internal/pubsub/postgres.go", // the default LISTEN/NOTIFY channel
		"algoitny_pubsub_payloads": "internal/pubsub/postgres.go", // the events table
	}
	metricName := regexp.MustCompile(`\balgoitny_[a-z0-9_]+\b`)
	seen := 0
	for _, name := range metricName.FindAllString(ops, -1) {
		if file, ok := notMetrics[name]; ok {
			if !strings.Contains(read(file), name) {
				t.Errorf("docs/operations.md names %s, which %s no longer has", name, file)
			}
			continue
		}
		seen++
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && metrics[b] {
				base = b
			}
		}
		if !metrics[base] {
			t.Errorf("docs/operations.md names the metric %s, which the server does not register", name)
		}
	}
	if seen < 10 {
		t.Errorf("docs/operations.md names only %d metrics", seen)
	}
}

// readmeSettings returns the backticked names of README.md's Configuration
// table.
func readmeSettings(t *testing.T, readme string) map[string]bool {
	t.Helper()
	_, section, ok := strings.Cut(readme, "## Configuration")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	names := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(line, -1) {
			names[m[1]] = true
		}
	}
	if len(names) < 30 {
		t.Fatalf("README.md's Configuration table lists only %d settings", len(names))
	}
	return names
}

// registeredMetrics returns the algoitny_… string literals of the code that
// registers metrics (internal/httpserver, cmd/algoitny).
func registeredMetrics(t *testing.T, root string) map[string]bool {
	t.Helper()
	literal := regexp.MustCompile(`"(algoitny_[a-z0-9_]+)"`)
	names := map[string]bool{}
	for _, dir := range []string{"internal/httpserver", "cmd/algoitny"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
				names[m[1]] = true
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d metric names in the code: %v", len(names), names)
	}
	return names
}

// jsonArgs reads the exec form of a Dockerfile instruction: INSTR ["a", "b"].
func jsonArgs(t *testing.T, where, line string) []string {
	t.Helper()
	_, arr, _ := strings.Cut(line, " ")
	var args []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(arr)), &args); err != nil {
		t.Errorf("%s: want the exec form [\"…\"]: %v", where, err)
	}
	return args
}

// stringList reads a compose command: a list of strings, or one string
// split on spaces.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
