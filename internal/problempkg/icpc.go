package problempkg

import (
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// readICPC reads an ICPC / Kattis problem package: problem.yaml, data/,
// input_validators/ (or input_format_validators/), output_validators/
// (legacy) or output_validator/ (2023-07 and later), submissions/.
func readICPC(root, name string) (*Package, error) {
	meta, _, err := readYAML(root, "problem.yaml")
	if err != nil {
		return nil, err
	}
	pkg := &Package{Format: FormatICPC, Root: root, Name: name}
	pkg.Version = meta.str("problem_format_version")
	if pkg.Version == "" {
		pkg.Version = "legacy"
	}
	legacy := strings.HasPrefix(pkg.Version, "legacy")
	pkg.Title = icpcName(meta, name)
	if err := icpcType(pkg, meta, legacy); err != nil {
		return nil, err
	}
	if err := icpcLimits(pkg, meta, legacy); err != nil {
		return nil, err
	}
	if err := readConstants(pkg, meta); err != nil {
		return nil, err
	}
	if err := readIncludes(pkg); err != nil {
		return nil, err
	}
	steps := []func(*Package, yamlMap, bool) error{icpcValidators, icpcTests, icpcSubmissions}
	for _, step := range steps {
		if err := step(pkg, meta, legacy); err != nil {
			return nil, err
		}
	}
	if len(pkg.Tests) == 0 {
		return nil, errorf("data/secret", "the package has no test cases")
	}
	for i := range pkg.Submissions {
		pkg.include(&pkg.Submissions[i].Program)
	}
	if isDir(joinRel(root, "graders")) {
		pkg.Skipped = append(pkg.Skipped, Skipped{Path: "graders", Reason: "custom graders are not supported"})
	}
	return pkg, nil
}

// icpcName is the problem's name: problem.yaml's name (English when it
// is a map of languages), else the \problemname of a statement, else the
// package's name.
func icpcName(meta yamlMap, fallback string) string {
	switch v := meta["name"].(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	case map[string]any:
		names := yamlMap(v)
		if n := names.str("en"); n != "" {
			return n
		}
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) > 0 {
			return names.str(keys[0])
		}
	}
	return fallback
}

// icpcType reads whether the problem is scoring and interactive: the
// legacy format's type and validation keys, the later formats' type list.
func icpcType(pkg *Package, meta yamlMap, legacy bool) error {
	types := meta.list("type")
	for _, t := range types {
		switch t {
		case "pass-fail":
		case "scoring":
			pkg.Scoring = true
		case "interactive":
			pkg.Interactive = true
		case "multi-pass":
			pkg.MultiPass = true
		case "submit-answer":
			return errorf("problem.yaml", "problems of type %s are not supported", t)
		default:
			return errorf("problem.yaml", "unknown problem type %q", t)
		}
	}
	if legacy {
		validation := strings.Fields(meta.str("validation"))
		if slices.Contains(validation, "interactive") {
			pkg.Interactive = true
		}
		if slices.Contains(validation, "score") {
			pkg.Scoring = true
		}
		if slices.Contains(validation, "multi-pass") { // as DOMjudge writes it: custom multi-pass
			pkg.MultiPass = true
		}
	}
	return nil
}

// maxValidationPasses bounds limits.validation_passes (the judge's own
// bound on a multi-pass problem's passes).
const maxValidationPasses = 100

// Defaults of the ICPC format's problem timing.
const (
	legacyTimeMultiplier = 5.0
	legacySafetyMargin   = 2.0
	acToTimeLimit        = 2.0
	timeLimitToTLE       = 1.5
)

// icpcLimits reads limits (the legacy time_multiplier/time_safety_margin
// or the later time_multipliers and time_limit), and an explicit time
// limit from .timelimit or domjudge-problem.ini when the package has one.
func icpcLimits(pkg *Package, meta yamlMap, legacy bool) error {
	lim := meta.sub("limits")
	l := &pkg.Limits
	l.TimeResolution = time.Second
	if legacy {
		l.ACToTimeLimit, l.TimeLimitToTLE = legacyTimeMultiplier, legacySafetyMargin
		if v, ok := lim.num("time_multiplier"); ok {
			l.ACToTimeLimit = v
		}
		if v, ok := lim.num("time_safety_margin"); ok {
			l.TimeLimitToTLE = v
		}
	} else {
		l.ACToTimeLimit, l.TimeLimitToTLE = acToTimeLimit, timeLimitToTLE
		mult := lim.sub("time_multipliers")
		if v, ok := mult.num("ac_to_time_limit"); ok {
			l.ACToTimeLimit = v
		}
		if v, ok := mult.num("time_limit_to_tle"); ok {
			l.TimeLimitToTLE = v
		}
		if v, ok := lim.num("time_resolution"); ok && v > 0 {
			l.TimeResolution = seconds(v)
		}
		if v, ok := lim.num("time_limit"); ok {
			l.TimeLimit = seconds(v)
		}
	}
	if v, ok := lim.num("memory"); ok {
		l.MemoryMB = int(v)
	}
	if v, ok := lim.num("output"); ok {
		l.OutputMB = int(v)
	}
	if pkg.MultiPass {
		l.ValidationPasses = 2
		if v, ok := lim.num("validation_passes"); ok || lim.has("validation_passes") {
			if !ok || v < 2 || v > maxValidationPasses || v != math.Trunc(v) {
				return errorf("problem.yaml", "limits.validation_passes must be an integer from 2 to %d", maxValidationPasses)
			}
			l.ValidationPasses = int(v)
		}
	}
	if l.TimeLimit == 0 {
		t, err := explicitTimeLimit(pkg.Root)
		if err != nil {
			return err
		}
		l.TimeLimit = t
	}
	if l.TimeLimit < 0 || l.ACToTimeLimit < 1 || l.TimeLimitToTLE < 1 || l.MemoryMB < 0 || l.OutputMB < 0 {
		return errorf("problem.yaml", "limits out of range")
	}
	return nil
}

func seconds(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Second))) }

// explicitTimeLimit reads the time limit a package states outside
// problem.yaml: the .timelimit file problemtools and DOMjudge write (in
// seconds), or domjudge-problem.ini's timelimit.
func explicitTimeLimit(root string) (time.Duration, error) {
	for _, f := range []struct{ file, key string }{{".timelimit", ""}, {"domjudge-problem.ini", "timelimit"}} {
		data, err := os.ReadFile(joinRel(root, f.file))
		if err != nil {
			continue
		}
		text := string(data)
		if f.key != "" {
			text = iniValue(text, f.key)
		}
		v, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(text), `'"`), 64)
		if err != nil || v <= 0 || v > 3600 {
			return 0, errorf(f.file, "not a time limit in seconds: %q", strings.TrimSpace(text))
		}
		return seconds(v), nil
	}
	return 0, nil
}

// iniValue is the value of key in an ini file's text ("" when absent).
func iniValue(text, key string) string {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// icpcValidators reads the input validators and the output validator
// (or the default one's flags).
func icpcValidators(pkg *Package, meta yamlMap, legacy bool) error {
	for _, dir := range []string{"input_validators", "input_format_validators"} {
		progs, err := programsIn(pkg, dir)
		if err != nil {
			return err
		}
		pkg.InputValidators = append(pkg.InputValidators, progs...)
	}
	custom, err := outputValidator(pkg, legacy && !strings.HasPrefix(meta.str("validation"), "custom"))
	if err != nil {
		return err
	}
	switch {
	case custom != nil && pkg.Interactive:
		pkg.Interactor = custom
	case custom != nil:
		pkg.Checker = Checker{Kind: CheckICPC, Program: custom}
	case pkg.Interactive:
		return errorf("problem.yaml", "an interactive problem needs an output validator")
	default:
		// The default validator; its flags are each test's
		// OutputValidatorArgs (problem.yaml's validator_flags, then its
		// group's), checked as the tests are read.
		pkg.Checker = Checker{Kind: CheckDefault}
	}
	return nil
}

// hasScripts says the program directory dir has a build or run script.
func hasScripts(root, dir string) bool {
	return exists(joinRel(root, dir+"/build")) || exists(joinRel(root, dir+"/run"))
}

// outputValidator reads the custom output validator: the program in
// output_validator/ (2023-07 and later), else the one in
// output_validators/ (legacy). defaultOnly says the legacy metadata asks
// for the default validator, so a custom one is ignored (with a warning).
func outputValidator(pkg *Package, defaultOnly bool) (*Program, error) {
	var progs []Program
	if isDir(joinRel(pkg.Root, "output_validator")) {
		p, err := loadProgram(pkg.Root, "output_validator")
		if (err != nil || unsupported(p) != "") && !hasScripts(pkg.Root, "output_validator") {
			// problemtools also takes the program from a directory of its
			// own inside output_validator/ (its guess example:
			// output_validator/guess_validator/validate.cc); never a file
			// of a program its build or run script is the way to run.
			if sub, serr := programsIn(pkg, "output_validator"); serr == nil && len(sub) == 1 {
				p, err = sub[0], nil
			}
		}
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	} else {
		var err error
		if progs, err = programsIn(pkg, "output_validators"); err != nil {
			return nil, err
		}
	}
	switch {
	case len(progs) == 0:
		return nil, nil
	case defaultOnly:
		pkg.Warnings = append(pkg.Warnings, "output_validators/ is not used: problem.yaml's validation is not custom")
		return nil, nil
	case len(progs) > 1:
		pkg.Warnings = append(pkg.Warnings, "more than one output validator: only "+progs[0].Path+" is run")
	}
	if why := unsupported(progs[0]); why != "" {
		return nil, errorf(progs[0].Path, "the output validator cannot be run: %s", why)
	}
	return &progs[0], nil
}

// programsIn reads every program (file or directory) in dir; what cannot
// be run is added to Skipped.
func programsIn(pkg *Package, dir string) ([]Program, error) {
	entries, err := listDir(joinRel(pkg.Root, dir))
	if err != nil {
		return nil, err
	}
	var progs []Program
	for _, e := range entries {
		rel := dir + "/" + e.Name()
		if ext := path.Ext(e.Name()); ext == ".ctd" || ext == ".viva" {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: "checktestdata and VIVA validators are not supported"})
			continue
		}
		p, err := loadProgram(pkg.Root, rel)
		if err != nil {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: err.Error()})
			continue
		}
		if reason := unsupported(p); reason != "" {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: reason})
			continue
		}
		progs = append(progs, p)
	}
	return progs, nil
}

// unsupported says why the program cannot be run ("" when it can).
func unsupported(p Program) string {
	switch {
	case p.why != "":
		return p.why
	case p.Language == "":
		return "the language of " + p.Main + " is not one the judge runs"
	}
	return ""
}

// DefaultChecker is the default output validator with its flags:
// case_sensitive, space_change_sensitive, float_relative_tolerance ε,
// float_absolute_tolerance ε, float_tolerance ε (both).
func DefaultChecker(flags []string) (Checker, error) {
	c := Checker{Kind: CheckDefault}
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; f {
		case "case_sensitive":
			c.CaseSensitive = true
		case "space_change_sensitive":
			c.SpaceSensitive = true
		case "float_relative_tolerance", "float_absolute_tolerance", "float_tolerance":
			if i+1 >= len(flags) {
				return c, errorf("", "%s needs a value", f)
			}
			v, err := strconv.ParseFloat(flags[i+1], 64)
			if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return c, errorf("", "%s: not a tolerance: %q", f, flags[i+1])
			}
			i++
			if f != "float_absolute_tolerance" {
				c.RelTolerance = v
			}
			if f != "float_relative_tolerance" {
				c.AbsTolerance = v
			}
		default:
			return c, errorf("", "unknown flag %q of the default output validator", f)
		}
	}
	return c, nil
}
