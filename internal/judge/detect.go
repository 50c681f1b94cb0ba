package judge

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// problemtoolsLanguage is one language of problemtools' language table
// (Kattis' problemtools, config/languages.yaml), the part its language
// detection reads: the key, the name, the tie-breaking priority, the
// source file globs, and for a language that claims some of its files by
// their first line only (Python 2), which files and the line's pattern.
type problemtoolsLanguage struct {
	key, name    string
	priority     int
	files        []string
	shebangFiles []string
	shebang      *regexp.Regexp
}

// problemtoolsLanguages is problemtools' table as of its 2024–2025 format
// (every language it knows, so that a program in one the judge lacks is
// named, not taken for another).
var problemtoolsLanguages = []problemtoolsLanguage{
	{key: "c", name: "C", priority: 950, files: []string{"*.c"}},
	{key: "cpp", name: "C++", priority: 1000, files: []string{"*.cc", "*.C", "*.cpp", "*.cxx", "*.c++"}},
	{key: "csharp", name: "C#", priority: 700, files: []string{"*.cs"}},
	{key: "cobol", name: "Cobol", priority: 50, files: []string{"*.cob"}},
	{key: "fsharp", name: "F#", priority: 675, files: []string{"*.fs"}},
	{key: "go", name: "Go", priority: 400, files: []string{"*.go"}},
	{key: "haskell", name: "Haskell", priority: 600, files: []string{"*.hs", "*.c"}},
	{key: "java", name: "Java", priority: 800, files: []string{"*.java"}},
	{key: "javascript", name: "JavaScript", priority: 500, files: []string{"*.js"}},
	{key: "kotlin", name: "Kotlin", priority: 250, files: []string{"*.kt"}},
	{key: "lisp", name: "Common Lisp", priority: 200, files: []string{"*.lisp", "*.cl"}},
	{key: "ocaml", name: "OCaml", priority: 375, files: []string{"*.ml"}},
	{key: "objectivec", name: "Objective C", priority: 300, files: []string{"*.m", "*.c"}},
	{key: "pascal", name: "Pascal", priority: 350, files: []string{"*.pas"}},
	{key: "php", name: "PHP", priority: 450, files: []string{"*.php"}},
	{key: "prolog", name: "Prolog", priority: 100, files: []string{"*.pl"}},
	{key: "python2", name: "Python 2", priority: 860, files: []string{"*.py", "*.py2"},
		shebangFiles: []string{"*.py"}, shebang: regexp.MustCompile(`^#!.*python2\b`)},
	{key: "python3", name: "Python 3", priority: 850, files: []string{"*.py", "*.py3"}},
	{key: "ruby", name: "Ruby", priority: 650, files: []string{"*.rb"}},
	{key: "rust", name: "Rust", priority: 575, files: []string{"*.rs"}},
	{key: "scala", name: "Scala", priority: 550, files: []string{"*.sc", "*.scala"}},
}

// ProgramFile is one file of a program whose language DetectLanguage
// chooses.
type ProgramFile struct {
	// Name is the file's path in the program; its base name is matched.
	Name string
	// Head is the start of the file, at least its first line (a shebang
	// decides Python 2); it may be empty for other files.
	Head []byte
}

// DetectedLanguage is the language of a program as DetectLanguage chose it.
type DetectedLanguage struct {
	// Problemtools is the language's key in problemtools' table
	// ("cpp", "python2"); Name its name there ("C++", "Python 2").
	Problemtools, Name string
	// Language is the ID of the judge's language that judges it (the
	// table's Language.Problemtools); empty when none does.
	Language string
	// Files are the program's source files in that language (every file
	// matching its globs), sorted.
	Files []string
}

// DetectLanguage chooses the language of a program made of files the way
// problemtools (Kattis; also DOMjudge's and the ICPC package format's
// submissions/ folders) does: a file is a source file of every language
// whose globs match its name (case-sensitive: *.C is C++, *.c C); it counts
// as evidence for a language unless the language claims such files only
// by a first line (Python 2: *.py files whose first line matches
// `#!…python2`; a *.py2 is Python 2 whatever its first line); the
// language with the most evidence wins, ties going to problemtools'
// priority (C++ over C, Python 2 over Python 3 when every .py file says
// python2). The language is then mapped to the first language of langs
// (nil: DefaultLanguages) whose Language.Problemtools names it: C++ to
// cpp20, Python 3 to python, C# to csharp, and so on.
//
// It exists for the package importer: a package's submissions are files
// and directories whose language nobody states. Errors: ErrUnknownLanguage
// when no file is a source file of any language problemtools knows, or the
// language found is not one the judge runs (Python 2, say: the detected
// language, with Language empty, is returned with the error, to say so).
func DetectLanguage(files []ProgramFile, langs []Language) (DetectedLanguage, error) {
	best, bestEvidence := -1, 0
	for i, pl := range problemtoolsLanguages {
		n := 0
		for _, f := range files {
			if pl.evidence(f) {
				n++
			}
		}
		if n > 0 && (n > bestEvidence || (n == bestEvidence && pl.priority > problemtoolsLanguages[best].priority)) {
			best, bestEvidence = i, n
		}
	}
	if best < 0 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = path.Base(f.Name)
		}
		return DetectedLanguage{}, fmt.Errorf("%w: no source file of a known language among %s", ErrUnknownLanguage, strings.Join(names, ", "))
	}
	pl := problemtoolsLanguages[best]
	d := DetectedLanguage{Problemtools: pl.key, Name: pl.name}
	for _, f := range files {
		if matchAny(pl.files, f.Name) {
			d.Files = append(d.Files, f.Name)
		}
	}
	sort.Strings(d.Files)
	if langs == nil {
		langs = DefaultLanguages()
	}
	for _, l := range langs {
		if l.Problemtools == pl.key {
			d.Language = l.ID
			return d, nil
		}
	}
	return d, fmt.Errorf("%w: %s (problemtools' %s) is not a language this judge runs", ErrUnknownLanguage, pl.name, pl.key)
}

// evidence reports whether f counts for the language in detection: a
// source file of it, unless the language claims such a file only by its
// first line and that line does not say so.
func (pl problemtoolsLanguage) evidence(f ProgramFile) bool {
	if !matchAny(pl.files, f.Name) {
		return false
	}
	if pl.shebang == nil || !matchAny(pl.shebangFiles, f.Name) {
		return true
	}
	line, _, _ := bytes.Cut(f.Head, []byte("\n"))
	return pl.shebang.Match(line)
}

// matchAny reports whether the base name of name matches one of globs.
func matchAny(globs []string, name string) bool {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	for _, g := range globs {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}
