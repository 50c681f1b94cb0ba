package archtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path; the rules below name packages relative to it.
const module = "github.com/algoitny/api"

// edge is one import: from imports to (paths relative to the module).
type edge struct{ from, to string }

// knownViolations are imports that break a rule today and are being
// removed, each with the reason and the issue that removes it. The test
// fails on an entry that no longer happens, so that the list only shrinks:
// delete the entry with the import.
var knownViolations = map[edge]string{}

// pkg is what the test reads of `go list -json`.
type pkg struct {
	ImportPath string
	Imports    []string // direct imports of the non-test files
	Deps       []string // every package the non-test files depend on
}

// rel returns path relative to the module, and whether it is in the module.
func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// under reports whether path (relative) is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// standard reports whether an import path belongs to the standard library:
// its first element has no dot (std packages never do, modules do).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// listPackages runs `go list -json ./...` at the module root.
func listPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if r, ok := rel(p.ImportPath); ok {
			pkgs[r] = &p
		}
	}
	if pkgs["internal/algoitny"] == nil || pkgs["internal/dynamo"] == nil {
		t.Fatalf("go list found %d packages, not the module's", len(pkgs))
	}
	return pkgs
}

// chain returns an import path from one package to another (relative
// paths) for messages, e.g. "internal/dynamo → internal/pubsub → x".
func chain(pkgs map[string]*pkg, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for p := cur; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return strings.Join(path, " → ")
		}
		p := pkgs[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			r, ok := rel(imp)
			if !ok {
				r = imp
			}
			if _, seen := prev[r]; !seen {
				prev[r] = cur
				queue = append(queue, r)
			}
		}
	}
	return from + " → … → " + to
}

// violation is one broken rule; known ones are checked against
// knownViolations instead of failing.
type violation struct {
	edge
	rule, why string
}

// checkLayering applies the rules to the packages and returns what breaks
// them, in a stable order.
func checkLayering(pkgs map[string]*pkg) []violation {
	var out []violation
	for _, name := range slices.Sorted(mapKeys(pkgs)) {
		p := pkgs[name]
		// Rule 1: the domain vocabulary imports only the standard library
		// (and its own sub-packages), directly or indirectly.
		if under(name, "internal/algoitny") {
			for _, d := range p.Deps {
				if r, ok := rel(d); (ok && !under(r, "internal/algoitny")) || (!ok && !standard(d)) {
					out = append(out, violation{edge{name, relOr(d)}, "internal/algoitny imports only the standard library", chain(pkgs, name, relOr(d))})
				}
			}
		}
		// Rule 2: storage is a plain repository: it imports nothing of the
		// module but the domain vocabulary (internal/algoitny), directly or
		// indirectly — no feature, no transport, no event bus: features
		// declare the interfaces it implements, and what it stores is in
		// internal/algoitny. (Its test helpers, dynamotest, may start the
		// development stack.)
		if name == "internal/dynamo" {
			for _, d := range p.Deps {
				if r, ok := rel(d); ok && !under(r, "internal/algoitny") {
					out = append(out, violation{edge{name, r}, "internal/dynamo imports only internal/algoitny", chain(pkgs, name, r)})
				}
			}
		}
		// Rule 5: the submissions service depends on neither River nor the
		// package that runs it: it hands jobs to an Enqueuer (jobs.Runner)
		// that cmd/algoitny gives it, so its rules are tested without
		// PostgreSQL.
		if under(name, "internal/submissions") {
			for _, d := range p.Deps {
				r, ok := rel(d)
				if (ok && under(r, "internal/jobs")) || strings.HasPrefix(d, "github.com/riverqueue/") {
					out = append(out, violation{edge{name, relOr(d)}, "internal/submissions depends on neither internal/jobs nor River", chain(pkgs, name, relOr(d))})
				}
			}
		}
		// Rule 6: the job runner hosts the River jobs of URL checks and of
		// the AtCoder sync without depending on them: their args and workers
		// live in their features (vertical slices), which cmd/algoitny hands
		// to it as jobs.Plugin values.
		if under(name, "internal/jobs") {
			for _, d := range p.Deps {
				if r, ok := rel(d); ok && (under(r, "internal/watch") || under(r, "internal/atcoder")) {
					out = append(out, violation{edge{name, r}, "internal/jobs depends on neither internal/watch nor internal/atcoder", chain(pkgs, name, r)})
				}
			}
		}
		for _, imp := range p.Imports {
			r, ok := rel(imp)
			if !ok {
				continue
			}
			// Rule 3: nothing under internal/ imports the GraphQL layer;
			// graph/ sits on top of the services and calls them.
			if under(name, "internal") && under(r, "graph") {
				out = append(out, violation{edge{name, r}, "nothing under internal/ imports graph/", name + " → " + r})
			}
			// Rule 4: only the wiring (cmd/, bench) imports storage; the
			// rest declare the interfaces they need and get *dynamo.DB from
			// cmd/algoitny. (dynamo's own sub-packages, such as dynamotest,
			// may, and so may test helpers: a package named …test, such as
			// internal/jobs/jobstest, is test code — rule 7.)
			wiring := under(name, "cmd") || under(name, "bench") || under(name, "internal/dynamo") || testHelper(name)
			if under(r, "internal/dynamo") && !wiring {
				out = append(out, violation{edge{name, r}, "only cmd/ and bench import internal/dynamo", name + " → " + r})
			}
			// Rule 7: test helpers (packages named …test) are imported by
			// tests and other test helpers only, so that what they may
			// import (rule 4) never reaches a binary.
			if testHelper(r) && !testHelper(name) {
				out = append(out, violation{edge{name, r}, "only tests import test helpers (packages named …test)", name + " → " + r})
			}
		}
	}
	return out
}

// testHelper reports whether a package of the module is a test helper:
// its name ends in "test" (dynamotest, algoitnytest, jobstest).
func testHelper(name string) bool {
	return strings.HasSuffix(name, "test") && !strings.HasSuffix(name, "/archtest")
}

// relOr returns path relative to the module when it is in it.
func relOr(path string) string {
	if r, ok := rel(path); ok {
		return r
	}
	return path
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestLayering fails when a package imports across the layers of
// docs/architecture.md. Only the non-test files count: tests may wire real
// storage (dynamotest) into any package.
func TestLayering(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	seen := map[edge]bool{}
	for _, v := range checkLayering(pkgs) {
		if _, known := knownViolations[v.edge]; known {
			seen[v.edge] = true
			continue
		}
		t.Errorf("%s: %s", v.rule, v.why)
	}
	for e, why := range knownViolations {
		if !seen[e] {
			t.Errorf("known violation %s → %s (%s) no longer happens: delete its entry in knownViolations", e.from, e.to, why)
		}
	}
}

// TestJobsRule checks that rule 6 catches a runner that imports a feature
// whose jobs it hosts, directly or through another package.
func TestJobsRule(t *testing.T) {
	t.Parallel()
	pkgs := map[string]*pkg{
		"internal/jobs":     {Imports: []string{module + "/internal/llm"}, Deps: []string{module + "/internal/llm", module + "/internal/watch"}},
		"internal/llm":      {Imports: []string{module + "/internal/watch"}, Deps: []string{module + "/internal/watch"}},
		"internal/watch":    {},
		"internal/jobs/sub": {Imports: []string{module + "/internal/atcoder"}, Deps: []string{module + "/internal/atcoder"}},
	}
	var got []string
	for _, v := range checkLayering(pkgs) {
		got = append(got, v.why)
	}
	want := []string{"internal/jobs → internal/llm → internal/watch", "internal/jobs/sub → internal/atcoder"}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %q, want %q", got, want)
	}
}

// TestHelperRule checks rules 4 and 7 for test helpers: a test helper may
// import storage, and only tests and test helpers may import one.
func TestHelperRule(t *testing.T) {
	t.Parallel()
	pkgs := map[string]*pkg{
		"internal/jobs/jobstest": {Imports: []string{module + "/internal/dynamo/dynamotest", module + "/internal/jobs"}},
		"internal/watch":         {Imports: []string{module + "/internal/jobs/jobstest"}},
	}
	var got []string
	for _, v := range checkLayering(pkgs) {
		got = append(got, v.why)
	}
	want := []string{"internal/watch → internal/jobs/jobstest"}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %q, want %q", got, want)
	}
}
