package problempkg

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/algoitny/api/internal/judge"
)

// Language ids of the judge (internal/judge's language table) that package
// programs are mapped to.
const (
	langC       = "c"
	langCPP     = "cpp"
	langCPP20   = "cpp20"
	langJava    = "java"
	langKotlin  = "kotlin"
	langPython3 = "python"
	langPyPy3   = "pypy3"
	langJS      = "javascript"
	langGo      = "go"
	langRust    = "rust"
	langCSharp  = "csharp"
	langRuby    = "ruby"
	langPHP     = "php"
	langHaskell = "haskell"
	// langPython2 is recognised (so that it can be reported) but no judge
	// language runs it.
	langPython2 = "python2"
)

// Detect returns the judge language of a one-file program from its name
// and content, as problemtools determines it (judge.DetectLanguage: by
// extension, and for .py by the shebang: `#!…python2` is Python 2), or ""
// when the judge runs no such language — "python2" for Python 2, so that
// the caller can say why it is skipped.
func Detect(name string, content []byte) string {
	lang, _, _ := detect(map[string][]byte{name: content})
	return lang
}

// detect chooses the language of a program's files (judge.DetectLanguage),
// with why there is none ("" when there is one) and its source files.
func detect(files map[string][]byte) (lang, why string, sources []string) {
	pf := make([]judge.ProgramFile, 0, len(files))
	for name, data := range files {
		head, _, _ := bytes.Cut(data, []byte("\n"))
		pf = append(pf, judge.ProgramFile{Name: name, Head: head})
	}
	d, err := judge.DetectLanguage(pf, nil)
	if err != nil {
		if d.Problemtools == "python2" {
			return langPython2, "Python 2 is not supported", d.Files
		}
		return "", err.Error(), d.Files
	}
	return d.Language, "", d.Files
}

// polygonLanguage is the judge language of a Polygon source of type t
// (the "type" attribute of a <source>: "cpp.g++17", "python.pypy3",
// "java21" …), falling back to the file's extension; "" for one the judge
// does not run (Pascal, D …), "python2" for Python 2.
func polygonLanguage(t, file string, content []byte) string {
	t = strings.ToLower(t)
	switch {
	case strings.HasPrefix(t, "cpp."):
		if strings.Contains(t, "20") || strings.Contains(t, "23") {
			return langCPP20
		}
		return langCPP
	case strings.HasPrefix(t, "c."):
		return langC
	case strings.HasPrefix(t, "python."):
		switch {
		case strings.Contains(t, "pypy3"):
			return langPyPy3
		case strings.Contains(t, "2"):
			return langPython2
		}
		return langPython3
	}
	for _, p := range []struct{ prefix, lang string }{
		{"java", langJava}, {"kotlin", langKotlin}, {"js", langJS}, {"javascript", langJS}, {"node", langJS},
		{"go", langGo}, {"rust", langRust}, {"csharp", langCSharp}, {"ruby", langRuby}, {"php", langPHP},
		{"haskell", langHaskell},
	} {
		if strings.HasPrefix(t, p.prefix) {
			return p.lang
		}
	}
	return Detect(file, content)
}

var mainPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?m)\bmain\s*\(`),                  // C, C++, Go, Rust (fn main), Kotlin (fun main)
	regexp.MustCompile(`static\s+(void|int|async)\s+Main`), // C#
	regexp.MustCompile(`(?m)^main\s*(::|=)`),               // Haskell
	regexp.MustCompile(`__name__\s*==\s*['"]__main__['"]`), // Python
}

// hasMainFunction says a source file seems to hold its program's entry
// point, to tell it from the helpers of a multi-file program.
func hasMainFunction(content []byte) bool {
	for _, re := range mainPatterns {
		if re.Match(content) {
			return true
		}
	}
	return false
}
