package problempkg

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The 2025-09 format's constants and included files.
//
// problem.yaml's constants map names to a value (a scalar, or a map with
// a value and other representations, its variants). A constant sequence
// {{name}} or {{name.variant}} in a validator, an included file, an
// example submission or a test_group.yaml is replaced by it before the
// file is used; one naming no constant is left as it is. Test data and
// problem.yaml are never rewritten.
//
// include/<language>/ holds files added to every submission in that
// language (include/default/ to those of a language without a directory
// of its own), replacing a submission's file of the same name.

// constantSequence is {{name}} or {{name.variant}}.
var constantSequence = regexp.MustCompile(`\{\{([a-zA-Z_][a-zA-Z0-9_]*)(?:\.([a-zA-Z0-9_]+))?\}\}`)

var constantName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// readConstants reads problem.yaml's constants into pkg.Constants.
func readConstants(pkg *Package, meta yamlMap) error {
	raw, ok := meta["constants"]
	if !ok || raw == nil {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return errorf("problem.yaml", "constants must be a map of names to values")
	}
	pkg.Constants = map[string]map[string]string{}
	for name, v := range m {
		if !constantName.MatchString(name) {
			return errorf("problem.yaml", "constant name %q is not [a-zA-Z_][a-zA-Z0-9_]*", name)
		}
		variants := map[string]string{}
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["value"]; !ok {
				return errorf("problem.yaml", "constant %s has no value", name)
			}
			for k, x := range v {
				s, ok := scalar(x)
				if !ok {
					return errorf("problem.yaml", "constant %s.%s is not a number or a string", name, k)
				}
				variants[k] = s
			}
		default:
			s, ok := scalar(v)
			if !ok {
				return errorf("problem.yaml", "constant %s is not a number, a string or a map", name)
			}
			variants["value"] = s
		}
		pkg.Constants[name] = variants
	}
	return nil
}

// scalar formats a YAML scalar as it was written (integers without a
// decimal point).
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true // 1e6 written as 1000000.0 stays a plain number
	case int, int64, uint64, bool:
		return fmt.Sprint(v), true
	}
	return "", false
}

// substitute replaces the constant sequences of data that name a constant.
func (pkg *Package) substitute(data []byte) []byte {
	if len(pkg.Constants) == 0 {
		return data
	}
	return constantSequence.ReplaceAllFunc(data, func(seq []byte) []byte {
		m := constantSequence.FindSubmatch(seq)
		variant := string(m[2])
		if variant == "" {
			variant = "value"
		}
		if v, ok := pkg.Constants[string(m[1])][variant]; ok {
			return []byte(v)
		}
		return seq
	})
}

// readIncludes reads include/<language>/ (the format's language codes)
// into pkg.Includes; a language code the judge does not know is skipped.
func readIncludes(pkg *Package) error {
	if !isDir(joinRel(pkg.Root, "include")) {
		return nil
	}
	entries, err := listDir(joinRel(pkg.Root, "include"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		rel := "include/" + e.Name()
		if !e.IsDir() {
			pkg.Warnings = append(pkg.Warnings, rel+" is not a directory of included files: ignored")
			continue
		}
		if _, known := icpcLanguageCodes[e.Name()]; !known && e.Name() != "default" {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: "included files of a language the judge does not run"})
			continue
		}
		files, err := listDir(joinRel(pkg.Root, rel))
		if err != nil {
			return err
		}
		set := map[string][]byte{}
		for _, f := range files {
			if f.IsDir() {
				continue // nested directories of a program are not supported
			}
			data, err := readInside(pkg.Root, path.Join(rel, f.Name()))
			if err != nil {
				return err
			}
			set[f.Name()] = data
		}
		if len(set) > 0 {
			if pkg.Includes == nil {
				pkg.Includes = map[string]map[string][]byte{}
			}
			pkg.Includes[e.Name()] = set
		}
	}
	return nil
}

// include adds the included files of the submission's language to it.
func (pkg *Package) include(p *Program) {
	set := pkg.Includes[languageCode(p.Language)]
	if set == nil {
		set = pkg.Includes["default"]
	}
	if len(set) == 0 {
		return
	}
	p.Files = maps.Clone(p.Files)
	if p.Files == nil {
		p.Files = map[string][]byte{}
	}
	for name, data := range set {
		if name == p.Main { // an included driver replaces the submission's main file
			p.mainSource = data
			continue
		}
		p.Files[name] = data
	}
}

// languageCode is the format's code of a judge language ("" if none).
func languageCode(lang string) string {
	switch lang {
	case langCPP, langCPP20:
		return "cpp"
	case langPyPy3, langPython3:
		return "python3"
	}
	for code, l := range icpcLanguageCodes {
		if l == lang {
			return code
		}
	}
	return strings.ToLower(lang)
}
