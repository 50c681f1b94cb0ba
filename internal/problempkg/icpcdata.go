package problempkg

import (
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// DataGroup is a node of an ICPC package's test data tree (data/,
// data/sample, data/secret, and their subdirectories): how the results
// of its items make its own, as the format's grader defines it. Polygon
// packages have none.
type DataGroup struct {
	// Name is the path under data/ ("" for data/ itself, "sample",
	// "secret", "secret/group1").
	Name  string
	Items []DataItem
	// OnReject is "break" (the default: judging the group stops at its
	// first rejected item) or "continue".
	OnReject string
	// GraderFlags are the default grader's flags (worst_error,
	// first_error, always_accept, sum, avg, min, max, ignore_sample,
	// accept_if_any_accepted).
	GraderFlags []string
	// AcceptScore and RejectScore are what a test of the group scores
	// when its validator gives no score.
	AcceptScore, RejectScore float64
	// Range bounds the group's score ([-inf, +inf] by default).
	Range [2]float64

	// MaxScore, Aggregation and RequirePass are the 2025-09 format's
	// scoring (used when Scoring2025 is set on the package's root):
	// MaxScore < 0 is unbounded.
	MaxScore    float64
	Aggregation string
	RequirePass []string
}

// DataItem is a test (Test ≥ 0, an index of Package.Tests) or a subgroup.
type DataItem struct {
	Test  int
	Group *DataGroup
}

// groupConfig is a directory's configuration, inherited from its parent
// directory key by key (testdata.yaml, or test_group.yaml from 2023-07).
type groupConfig struct {
	yamlMap
	validatorFlags []string // problem.yaml's validator_flags (legacy)
}

func (c groupConfig) child(m yamlMap) groupConfig {
	merged := yamlMap{}
	for k, v := range c.yamlMap {
		merged[k] = v
	}
	for k, v := range m {
		merged[k] = v
	}
	return groupConfig{yamlMap: merged, validatorFlags: c.validatorFlags}
}

// icpcTests reads data/: the tests of data/sample and data/secret (in
// lexicographic order of their names, directories included), the test data
// tree and, for the flat view the judge stores, one Group per direct
// subdirectory of data/secret.
func icpcTests(pkg *Package, meta yamlMap, legacy bool) error {
	cfg := groupConfig{yamlMap: yamlMap{}}
	if legacy {
		cfg.validatorFlags = meta.list("validator_flags")
	}
	root, err := readDataGroup(pkg, "", cfg)
	if err != nil {
		return err
	}
	pkg.Data = root
	pkg.Scoring2025 = strings.HasPrefix(pkg.Version, "2025") || usesScoring2025(root)
	if pkg.Scoring {
		flattenGroups(pkg)
	}
	return nil
}

// readDataGroup reads the directory data/<name> with the configuration it
// inherits.
func readDataGroup(pkg *Package, name string, inherited groupConfig) (*DataGroup, error) {
	dir := path.Join("data", name)
	own, err := groupFile(pkg, dir)
	if err != nil {
		return nil, err
	}
	cfg := inherited.child(own)
	g := newDataGroup(name, cfg, own)
	entries, err := listDir(joinRel(pkg.Root, dir))
	if err != nil {
		return nil, err
	}
	for _, item := range dataItems(entries, name) {
		if item.dir {
			if name == "" && item.name != "sample" && item.name != "secret" {
				continue // invalid_input, valid_output … are not judged
			}
			sub, err := readDataGroup(pkg, path.Join(name, item.name), cfg)
			if err != nil {
				return nil, err
			}
			g.Items = append(g.Items, DataItem{Test: -1, Group: sub})
			continue
		}
		if name == "" {
			continue // tests directly in data/ are not in the format
		}
		t, err := readTest(pkg, path.Join(name, item.name), cfg)
		if err != nil {
			return nil, err
		}
		pkg.Tests = append(pkg.Tests, t)
		g.Items = append(g.Items, DataItem{Test: len(pkg.Tests) - 1})
	}
	return g, nil
}

// groupFile reads a directory's test_group.yaml or testdata.yaml, with
// the package's constants substituted.
func groupFile(pkg *Package, dir string) (yamlMap, error) {
	for _, f := range []string{"test_group.yaml", "testdata.yaml"} {
		m, ok, err := readYAMLWith(pkg.Root, path.Join(dir, f), pkg.substitute)
		if err != nil || ok {
			return m, err
		}
	}
	return yamlMap{}, nil
}

func newDataGroup(name string, cfg groupConfig, own yamlMap) *DataGroup {
	g := &DataGroup{Name: name, OnReject: "break", AcceptScore: 1, Range: [2]float64{math.Inf(-1), math.Inf(1)}, MaxScore: -1}
	if v := cfg.str("on_reject"); v != "" {
		g.OnReject = v
	}
	g.GraderFlags = cfg.list("grader_flags")
	if v, ok := cfg.num("accept_score"); ok {
		g.AcceptScore = v
	}
	if v, ok := cfg.num("reject_score"); ok {
		g.RejectScore = v
	}
	if r := cfg.list("range"); len(r) == 2 {
		lo, err1 := strconv.ParseFloat(r[0], 64)
		hi, err2 := strconv.ParseFloat(r[1], 64)
		if err1 == nil && err2 == nil {
			g.Range = [2]float64{lo, hi}
		}
	}
	// 2025-09: only the directory's own file says these, never a parent's.
	// Before they were flattened (2025-09's drafts, and packages still
	// written so, such as the format's own scoring example), they sat in a
	// scoring map as score, aggregation and require_pass.
	if sc := own.sub("scoring"); len(sc) > 0 {
		own = maps.Clone(own)
		for from, to := range map[string]string{"score": "max_score", "aggregation": "score_aggregation", "require_pass": "require_pass"} {
			if v, ok := sc[from]; ok && !own.has(to) {
				own[to] = v
			}
		}
	}
	switch v := own.str("max_score"); {
	case v == "unbounded":
	case v != "":
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			g.MaxScore = f
		}
	}
	g.Aggregation = own.str("score_aggregation")
	g.RequirePass = own.list("require_pass")
	return g
}

// item is a test or a directory of a data directory, named by its base
// name (a test without its extension).
type item struct {
	name string
	dir  bool
}

// dataItems lists the tests (by their .in files) and directories of a
// data directory in lexicographic order of their names, as the format
// orders them.
func dataItems(entries []os.DirEntry, parent string) []item {
	var items []item
	for _, e := range entries {
		switch {
		case e.IsDir():
			if !strings.Contains(e.Name(), ".") { // not a test's .files directory
				items = append(items, item{name: e.Name(), dir: true})
			}
		case strings.HasSuffix(e.Name(), ".in"):
			items = append(items, item{name: strings.TrimSuffix(e.Name(), ".in")})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.name, b.name) })
	return items
}

// readTest reads the test data/<name>.in with its .ans and .yaml.
func readTest(pkg *Package, name string, cfg groupConfig) (Test, error) {
	t := Test{Name: name, Input: "data/" + name + ".in", Sample: strings.HasPrefix(name, "sample/")}
	if exists(joinRel(pkg.Root, "data/"+name+".ans")) {
		t.Answer = "data/" + name + ".ans"
	} else if !pkg.Interactive {
		return t, errorf("data/"+name+".in", "has no .ans file")
	}
	own, _, err := readYAML(pkg.Root, "data/"+name+".yaml")
	if err != nil {
		return t, err
	}
	c := cfg.child(own)
	if len(c.list("args")) > 0 {
		pkg.Warnings = append(pkg.Warnings, "data/"+name+": command-line arguments of submissions are not supported; the test runs without them")
	}
	t.OutputValidatorArgs = append(slices.Clone(cfg.validatorFlags), outputArgs(c)...)
	t.InputValidatorArgs = inputArgs(c)
	t.Group = groupOf(name)
	return t, nil
}

// outputArgs are a test's output validator arguments: the 2023-07 and
// later output_validator_args (a list), or the legacy
// output_validator_flags (a string, or a map with its flags).
func outputArgs(c groupConfig) []string {
	if c.has("output_validator_args") {
		return c.list("output_validator_args")
	}
	switch v := c.yamlMap["output_validator_flags"].(type) {
	case map[string]any:
		return yamlMap(v).list("flags")
	default:
		return asList(v)
	}
}

// inputArgs are a test's input validator arguments by validator name (""
// for every validator): input_validator_args (a list or a map of lists) or
// the legacy input_validator_flags (a string, or a map with a validator's
// name and flags).
func inputArgs(c groupConfig) map[string][]string {
	key := "input_validator_args"
	if !c.has(key) {
		key = "input_validator_flags"
	}
	switch v := c.yamlMap[key].(type) {
	case nil:
		return nil
	case map[string]any:
		m := yamlMap(v)
		if m.has("name") && m.has("flags") {
			return map[string][]string{m.str("name"): m.list("flags")}
		}
		out := map[string][]string{}
		for name := range m {
			out[name] = m.list(name)
		}
		return out
	default:
		return map[string][]string{"": asList(v)}
	}
}

// groupOf is the group a test belongs to in the flat view: "sample", the
// first directory under secret ("group1" for secret/group1/x/03), or
// "secret" for a test directly in it.
func groupOf(name string) string {
	parts := strings.Split(name, "/")
	if parts[0] != "secret" {
		return parts[0]
	}
	if len(parts) > 2 {
		return parts[1]
	}
	return "secret"
}

// usesScoring2025 says the data tree uses the 2025-09 scoring keys.
func usesScoring2025(g *DataGroup) bool {
	if g.MaxScore >= 0 || g.Aggregation != "" || len(g.RequirePass) > 0 {
		return true
	}
	for _, it := range g.Items {
		if it.Group != nil && usesScoring2025(it.Group) {
			return true
		}
	}
	return false
}
