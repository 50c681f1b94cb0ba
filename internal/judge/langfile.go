package judge

import (
	"bytes"
	_ "embed" // the built-in language table
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The language table is data: languages.json (embedded) holds the built-in
// languages, and an operator can change or extend it with a file of the
// same format (LoadLanguages; JUDGE_LANGUAGES names it for the server and
// the CLI) without Go code:
//
//	{
//	  "replace": false,             // true: the file's languages are the whole table
//	  "languages": [
//	    {
//	      "id": "cpp23",            // [a-z][a-z0-9_]*; an existing id replaces that language
//	      "name": "C++23 (g++ -O2)",
//	      "source": "main.cpp",     // the file the source is saved as
//	      "compile": ["g++", "-std=c++23", "-O2", "-o", "main", "main.cpp"],  // run in {dir}; optional
//	      "run": ["{dir}/main"],
//	      "env": ["KEY=VALUE"],      // optional, placeholders allowed
//	      "version": ["g++", "--version"],   // optional: the first tool with --version
//	      "cacheDir": "",           // a persistent cache mounted at {cache} while compiling
//	      "extraTime": "0s",        // CPU time added to the problem's limit
//	      "timeFactor": 1,          // the problem's CPU limit multiplied by it first
//	      "extraMemory": "0MiB",    // memory added to the problem's limit (the runtime's own)
//	      "extraProcesses": 0,      // threads the runtime needs
//	      "memory": "address-space",  // or "data-segment", "resident" (MemoryPolicy)
//	      "addressSpaceSlack": "16MiB", "dataSlack": "0B",
//	      "outOfMemory": ["std::bad_alloc"],  // standard error markers of a failed allocation
//	      "sandboxEtc": ["mono"],   // /etc entries the toolchain reads
//	      "sandboxPaths": ["/opt/zig"],  // host directories bound read-only in the sandbox
//	      "extensions": [".cpp"],   // for LanguageForFile
//	      "problemtools": "cpp",    // the problemtools language it judges, for DetectLanguage
//	      "warm": "…",              // an A+B program, compiled and run by Engine.Warm
//	      "disabled": false         // true (with the id alone): remove that language
//	    }
//	  ]
//	}
//
// Durations are Go's ("1s", "500ms"), sizes a number with B, KiB, MiB or
// GiB ("96MiB"). Placeholders: {dir}, {cache}, {memory_mb},
// {memory_bytes} (Language). Unknown keys are refused, so that a typo is
// not a silently ignored setting.

//go:embed languages.json
var builtinLanguages []byte

// languageFile is the format of a language table file.
type languageFile struct {
	Replace   bool           `json:"replace,omitempty"`
	Languages []languageSpec `json:"languages"`
}

// languageSpec is one language of a table file; toLanguage checks it.
type languageSpec struct {
	ID                string   `json:"id"`
	Disabled          bool     `json:"disabled,omitempty"`
	Name              string   `json:"name"`
	Source            string   `json:"source"`
	Compile           []string `json:"compile,omitempty"`
	Run               []string `json:"run"`
	Env               []string `json:"env,omitempty"`
	Version           []string `json:"version,omitempty"`
	CacheDir          string   `json:"cacheDir,omitempty"`
	ExtraTime         string   `json:"extraTime,omitempty"`
	TimeFactor        float64  `json:"timeFactor,omitempty"`
	ExtraMemory       string   `json:"extraMemory,omitempty"`
	ExtraProcesses    int      `json:"extraProcesses,omitempty"`
	Memory            string   `json:"memory"`
	AddressSpaceSlack string   `json:"addressSpaceSlack,omitempty"`
	DataSlack         string   `json:"dataSlack,omitempty"`
	OutOfMemory       []string `json:"outOfMemory,omitempty"`
	SandboxEtc        []string `json:"sandboxEtc,omitempty"`
	SandboxPaths      []string `json:"sandboxPaths,omitempty"`
	Extensions        []string `json:"extensions,omitempty"`
	Problemtools      string   `json:"problemtools,omitempty"`
	Warm              string   `json:"warm,omitempty"`
}

// memoryPolicies names the memory policies in table files.
var memoryPolicies = map[string]MemoryPolicy{
	"address-space": MemoryAddressSpace,
	"data-segment":  MemoryDataSegment,
	"resident":      MemoryResident,
}

var (
	languageID   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	cacheDirName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// builtin is the parsed built-in table (a test checks that it parses).
var builtin = sync.OnceValues(func() ([]Language, error) {
	f, err := readLanguageFile(bytes.NewReader(builtinLanguages), "languages.json (built in)")
	if err != nil {
		return nil, err
	}
	return mergeLanguages(nil, f, "languages.json (built in)")
})

// DefaultLanguages returns the built-in language table (languages.json):
// Python 3, C17, C++17, C++20, Java 17, Go, JavaScript (Node), Rust,
// Kotlin, PyPy 3, C# (Mono), Ruby, PHP and Haskell (GHC). The memory
// choices are documented on each entry and in the package documentation.
// Each call returns a new table.
func DefaultLanguages() []Language {
	langs, err := builtin()
	if err != nil {
		panic(err) // the embedded file is checked by TestDefaultLanguages
	}
	return cloneLanguages(langs)
}

// LoadLanguages returns the built-in languages changed by the table file
// at path (see the format above): its languages replace those of the same
// id and are added after the others, "disabled" removes one, "replace"
// makes the file the whole table. An empty path returns the built-in
// table. Errors are ErrInvalidInput, naming the file and the language.
func LoadLanguages(path string) ([]Language, error) {
	if path == "" {
		return DefaultLanguages(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: language table: %v", ErrInvalidInput, err)
	}
	f, err := readLanguageFile(bytes.NewReader(b), path)
	if err != nil {
		return nil, err
	}
	base := DefaultLanguages()
	if f.Replace {
		base = nil
	}
	return mergeLanguages(base, f, path)
}

// readLanguageFile decodes a table file strictly (unknown keys refused).
func readLanguageFile(r io.Reader, name string) (languageFile, error) {
	var f languageFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%w: language table %s: %v", ErrInvalidInput, name, err)
	}
	if dec.More() {
		return f, fmt.Errorf("%w: language table %s: more than one JSON value", ErrInvalidInput, name)
	}
	return f, nil
}

// mergeLanguages applies the languages of f to base, in order: a disabled
// one removes its id, one of a known id replaces it in place, a new one is
// appended. Every language is checked (toLanguage).
func mergeLanguages(base []Language, f languageFile, name string) ([]Language, error) {
	out := cloneLanguages(base)
	seen := map[string]bool{}
	for i, spec := range f.Languages {
		if seen[spec.ID] {
			return nil, fmt.Errorf("%w: language table %s: language %q is given twice", ErrInvalidInput, name, spec.ID)
		}
		seen[spec.ID] = true
		at := slices.IndexFunc(out, func(l Language) bool { return l.ID == spec.ID })
		if spec.Disabled {
			if at < 0 {
				return nil, fmt.Errorf("%w: language table %s: disabled language %q is not in the table", ErrInvalidInput, name, spec.ID)
			}
			out = slices.Delete(out, at, at+1)
			continue
		}
		l, err := spec.toLanguage()
		if err != nil {
			return nil, fmt.Errorf("%w: language table %s: language %d (%q): %v", ErrInvalidInput, name, i+1, spec.ID, err)
		}
		if at >= 0 {
			out[at] = l
		} else {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: language table %s: no language", ErrInvalidInput, name)
	}
	return out, nil
}

// toLanguage checks a language of a table file and converts it.
func (s languageSpec) toLanguage() (Language, error) {
	if err := s.checkNames(); err != nil {
		return Language{}, err
	}
	policy, ok := memoryPolicies[s.Memory]
	if !ok {
		return Language{}, fmt.Errorf(`memory %q: want "address-space", "data-segment" or "resident"`, s.Memory)
	}
	l := Language{
		ID: s.ID, Name: s.Name, SourceFile: s.Source, Compile: s.Compile, Run: s.Run, Env: s.Env,
		VersionArgs: s.Version, CacheDir: s.CacheDir, TimeFactor: s.TimeFactor, ExtraProcesses: s.ExtraProcesses,
		MemoryPolicy: policy, OutOfMemoryMarkers: s.OutOfMemory, SandboxEtc: s.SandboxEtc, SandboxPaths: s.SandboxPaths,
		Extensions: s.Extensions, Problemtools: s.Problemtools, Warm: s.Warm,
	}
	var err error
	if l.ExtraTime, err = parseDuration("extraTime", s.ExtraTime); err != nil {
		return l, err
	}
	for _, size := range []struct {
		key, value string
		to         *int64
	}{
		{"extraMemory", s.ExtraMemory, &l.ExtraMemoryBytes},
		{"addressSpaceSlack", s.AddressSpaceSlack, &l.AddressSpaceSlackBytes},
		{"dataSlack", s.DataSlack, &l.DataSlackBytes},
	} {
		if *size.to, err = parseSize(size.key, size.value); err != nil {
			return l, err
		}
	}
	switch {
	case s.TimeFactor < 0 || s.TimeFactor > 100:
		return l, fmt.Errorf("timeFactor %v: want 0 (= 1) to 100", s.TimeFactor)
	case s.ExtraProcesses < 0 || s.ExtraProcesses > 1024:
		return l, fmt.Errorf("extraProcesses %d: want 0 to 1024", s.ExtraProcesses)
	}
	return l, nil
}

// checkNames checks the names and commands of a language: the id, the
// source file (a plain name), the commands, the environment, the cache
// directory, the sandbox paths and the extensions.
func (s languageSpec) checkNames() error {
	switch {
	case !languageID.MatchString(s.ID):
		return fmt.Errorf("id %q: want [a-z][a-z0-9_]*, at most 32 characters", s.ID)
	case strings.TrimSpace(s.Name) == "":
		return errors.New("name is required")
	case s.Source == "" || s.Source != filepath.Base(s.Source) || strings.HasPrefix(s.Source, ".") || strings.Count(s.Source, "{") != strings.Count(s.Source, "{main}"):
		return fmt.Errorf("source %q: want a plain file name", s.Source)
	case len(s.Run) == 0 || s.Run[0] == "":
		return errors.New("run is required")
	case len(s.Compile) > 0 && s.Compile[0] == "":
		return errors.New("compile starts with an empty command")
	case s.CacheDir != "" && !cacheDirName.MatchString(s.CacheDir):
		return fmt.Errorf("cacheDir %q: want a plain directory name", s.CacheDir)
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("env %q: want KEY=VALUE", kv)
		}
	}
	for _, p := range s.SandboxEtc {
		if p == "" || strings.Contains(p, "/") || strings.Contains(p, "..") {
			return fmt.Errorf("sandboxEtc %q: want an entry of /etc (a name or glob, no / or ..)", p)
		}
	}
	for _, p := range s.SandboxPaths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return fmt.Errorf("sandboxPaths %q: want an absolute, clean directory other than /", p)
		}
	}
	for _, ext := range s.Extensions {
		if len(ext) < 2 || ext[0] != '.' || strings.ContainsAny(ext, "/*?[") {
			return fmt.Errorf("extensions %q: want .ext", ext)
		}
	}
	return nil
}

// parseDuration reads a non-negative duration of a table file ("" is 0).
func parseDuration(key, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q: want a duration such as 1s or 500ms", key, v)
	}
	return d, nil
}

// sizeUnits are the units of sizes in table files.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// parseSize reads a non-negative size of a table file ("" is 0): a whole
// number with B, KiB, MiB or GiB.
func parseSize(key, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 || n > (1<<62)/u.bytes {
				break
			}
			return n * u.bytes, nil
		}
	}
	return 0, fmt.Errorf("%s %q: want a size such as 96MiB (B, KiB, MiB, GiB)", key, v)
}

// cloneLanguages copies a table, slices included, so that no caller
// changes another's.
func cloneLanguages(in []Language) []Language {
	out := make([]Language, len(in))
	for i, l := range in {
		for _, s := range []*[]string{&l.Compile, &l.Run, &l.Env, &l.VersionArgs, &l.OutOfMemoryMarkers,
			&l.SandboxEtc, &l.SandboxPaths, &l.Extensions} {
			*s = slices.Clone(*s)
		}
		out[i] = l
	}
	return out
}
