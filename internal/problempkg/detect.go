package problempkg

import (
	"bytes"
	"path"
	"regexp"
	"strings"
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

// byExtension maps file endings to languages as the ICPC package format's
// language table does (appendix "Languages"); a C++ file is judged as
// C++20, the newest standard the judge offers, as Kattis judges C++ with
// its newest compiler.
var byExtension = map[string]string{
	".c":  langC,
	".cc": langCPP20, ".cpp": langCPP20, ".cxx": langCPP20, ".c++": langCPP20, ".C": langCPP20,
	".java": langJava,
	".kt":   langKotlin,
	".py":   langPython3, ".py3": langPython3, ".py2": langPython2,
	".js":  langJS,
	".go":  langGo,
	".rs":  langRust,
	".cs":  langCSharp,
	".rb":  langRuby,
	".php": langPHP,
	".hs":  langHaskell,
}

// Detect returns the judge language of a source file from its name and
// content, as the ICPC format determines it: by extension, and for .py by
// the shebang (`#!…python2` is Python 2, `#!…python3` or none Python 3).
// Unknown extensions, and languages the judge does not run (Python 2 among
// them, reported as "python2"), are returned as "" — but python2, which
// is returned so that the caller can say why it is skipped.
func Detect(name string, content []byte) string {
	ext := path.Ext(name)
	lang, ok := byExtension[ext]
	if !ok {
		lang = byExtension[strings.ToLower(ext)]
	}
	if lang == langPython3 {
		line, _, _ := bytes.Cut(content, []byte("\n"))
		if bytes.HasPrefix(line, []byte("#!")) && bytes.Contains(line, []byte("python2")) {
			return langPython2
		}
	}
	return lang
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
