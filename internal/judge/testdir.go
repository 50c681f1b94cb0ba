package judge

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadTestDir reads a directory of test files, the layout problem authors and
// Polygon exports use: NAME.in with its expected output NAME.out (or NAME.ans).
// Tests are ordered naturally (2 before 10) and refer to the files by path, so
// nothing is loaded into memory. It exists for the CLI and for seeding
// problems from disk.
//
// It returns ErrInvalidInput when the directory cannot be read, holds no .in
// file, or an input has no expected output.
func LoadTestDir(dir string) ([]TestCase, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			files[e.Name()] = true
		}
	}
	var tests []TestCase
	for name := range files {
		base, ok := strings.CutSuffix(name, ".in")
		if !ok || base == "" {
			continue
		}
		expected := ""
		for _, ext := range []string{".out", ".ans"} {
			if files[base+ext] {
				expected = base + ext
				break
			}
		}
		if expected == "" {
			return nil, fmt.Errorf("%w: %s has no %s.out or %s.ans", ErrInvalidInput, filepath.Join(dir, name), base, base)
		}
		tests = append(tests, TestCase{ID: base, InputFile: filepath.Join(dir, name), ExpectedFile: filepath.Join(dir, expected)})
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("%w: no NAME.in files in %s", ErrInvalidInput, dir)
	}
	sort.Slice(tests, func(i, j int) bool { return naturalLess(tests[i].ID, tests[j].ID) })
	return tests, nil
}

// naturalLess orders strings with embedded numbers by value: "2" < "10".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// LanguageForFile guesses a language ID from a source file name (main.cpp →
// cpp) with the built-in table's Language.Extensions; empty when the
// extension is unknown. For the CLI; DetectLanguage chooses a package's
// program's language the way problemtools does.
func LanguageForFile(name string) string { return LanguageForFileIn(DefaultLanguages(), name) }

// LanguageForFileIn is LanguageForFile with the table langs: the first
// language claiming the file's extension exactly (".C" is C++, ".c" C),
// else the first claiming it in another case ("x.CPP").
func LanguageForFileIn(langs []Language, name string) string {
	ext := filepath.Ext(name)
	if ext == "" {
		return ""
	}
	for _, fold := range []bool{false, true} {
		for _, l := range langs {
			for _, e := range l.Extensions {
				if e == ext || (fold && strings.EqualFold(e, ext)) {
					return l.ID
				}
			}
		}
	}
	return ""
}
