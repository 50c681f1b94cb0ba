package problempkg

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// legacyFolders are the submission folders of the legacy format (and the
// 2023-07 drafts) with the overall verdict each must get; DOMjudge's
// extra folders are read too.
var legacyFolders = map[string]Expectation{
	"accepted":            {Verdict: AC, LowerBoundsTime: true},
	"partially_accepted":  {Verdict: AC, Partial: true},
	"wrong_answer":        {Verdict: WA},
	"time_limit_exceeded": {Verdict: TLE},
	"run_time_error":      {Verdict: RTE},
	// DOMjudge's
	"compiler_error": {CompileError: true},
	"no_output":      {Verdict: WA},
	"output_limit":   {Verdict: OLE},
	"memory_limit":   {Verdict: MLE},
}

// folderRules are the 2025-09 format's default requirements of its
// submission folders.
var folderRules = map[string]Rule{
	"accepted":            {Permitted: []Outcome{AC}},
	"rejected":            {Required: []Outcome{RTE, TLE, WA}},
	"wrong_answer":        {Permitted: []Outcome{AC, WA}, Required: []Outcome{WA}},
	"time_limit_exceeded": {Permitted: []Outcome{AC, TLE}, Required: []Outcome{TLE}},
	"run_time_error":      {Permitted: []Outcome{AC, RTE}, Required: []Outcome{RTE}},
	"brute_force":         {Permitted: []Outcome{AC, RTE, TLE}, Required: []Outcome{RTE, TLE}},
}

// icpcLanguageCodes maps the format's language codes (submissions.yaml's
// language key) to the judge's languages.
var icpcLanguageCodes = map[string]string{
	"c": langC, "cpp": langCPP20, "java": langJava, "kotlin": langKotlin, "python3": langPython3,
	"python2": langPython2, "javascript": langJS, "go": langGo, "rust": langRust, "csharp": langCSharp,
	"ruby": langRuby, "php": langPHP, "haskell": langHaskell,
}

// icpcSubmissions reads submissions/<folder>/<file or directory>, with
// what each folder requires (and, from 2025-09, submissions.yaml's rules).
func icpcSubmissions(pkg *Package, _ yamlMap, legacy bool) error {
	v2025 := strings.HasPrefix(pkg.Version, "2025")
	conf, _, err := readYAML(pkg.Root, "submissions/submissions.yaml")
	if err != nil {
		return err
	}
	folders, err := listDir(joinRel(pkg.Root, "submissions"))
	if err != nil {
		return err
	}
	for _, f := range folders {
		if !f.IsDir() {
			continue
		}
		exp, ok := folderExpectation(f.Name(), v2025, conf)
		if !ok {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: "submissions/" + f.Name(), Reason: "a folder whose expected verdict the format does not define"})
			continue
		}
		if err := folderSubmissions(pkg, f.Name(), exp, v2025, conf); err != nil {
			return err
		}
	}
	for i := range pkg.Submissions {
		if pkg.Submissions[i].Expect.Folder == "accepted" {
			pkg.Submissions[i].Main = true
			break
		}
	}
	return nil
}

// folderExpectation is what the submissions of a folder must get.
func folderExpectation(folder string, v2025 bool, conf yamlMap) (Expectation, bool) {
	if !v2025 {
		exp, ok := legacyFolders[folder]
		exp.Folder = folder
		return exp, ok
	}
	rule, ok := folderRules[folder]
	if c := conf.sub(folder); len(c) > 0 { // a folder's defaults overridden
		if c.has("permitted") {
			rule.Permitted = outcomes(c.list("permitted"))
		}
		if c.has("required") {
			rule.Required = outcomes(c.list("required"))
		}
		ok = true
	}
	exp := Expectation{Folder: folder, Rules: []Rule{rule}}
	if score := conf.sub(folder).list("score"); len(score) > 0 {
		exp.Score = scoreRange(score)
	}
	exp.LowerBoundsTime = folder == "accepted" || folder == "wrong_answer" || folder == "run_time_error"
	return exp, ok
}

func outcomes(words []string) []Outcome {
	out := make([]Outcome, 0, len(words))
	for _, w := range words {
		out = append(out, Outcome(strings.ToUpper(w)))
	}
	return out
}

// folderSubmissions reads the submissions of one folder.
func folderSubmissions(pkg *Package, folder string, exp Expectation, v2025 bool, conf yamlMap) error {
	entries, err := listDir(joinRel(pkg.Root, "submissions/"+folder))
	if err != nil {
		return err
	}
	for _, e := range entries {
		rel := "submissions/" + folder + "/" + e.Name()
		prog, err := loadProgram(pkg.Root, rel)
		if err != nil {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: err.Error()})
			continue
		}
		sub := Submission{Path: rel, Program: prog, Expect: exp}
		if v2025 {
			applySubmissionsYAML(&sub, conf)
		}
		if reason := unsupported(sub.Program); reason != "" {
			pkg.Skipped = append(pkg.Skipped, Skipped{Path: rel, Reason: reason})
			continue
		}
		pkg.Submissions = append(pkg.Submissions, sub)
	}
	return nil
}

// applySubmissionsYAML adds the rules of every submissions.yaml key whose
// glob matches the submission (its path under submissions/, or a
// directory above it): language, entrypoint, permitted, required, score.
func applySubmissionsYAML(sub *Submission, conf yamlMap) {
	name := strings.TrimPrefix(sub.Path, "submissions/")
	folder, _, _ := strings.Cut(name, "/")
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, pattern := range keys {
		if pattern == folder || !globMatchesPath(pattern, name) {
			continue // a folder's own key replaced its defaults already
		}
		c := conf.sub(pattern)
		if lang := c.str("language"); lang != "" {
			sub.Program.Language = icpcLanguageCodes[lang]
		}
		if ep := c.str("entrypoint"); ep != "" {
			setEntryPoint(&sub.Program, ep)
		}
		if c.has("permitted") || c.has("required") {
			sub.Expect.Rules = append(sub.Expect.Rules, Rule{Permitted: outcomes(c.list("permitted")), Required: outcomes(c.list("required"))})
		}
		if score := c.list("score"); len(score) > 0 {
			sub.Expect.Score = scoreRange(score)
		}
		for k, v := range c {
			if m, ok := v.(map[string]any); ok { // requirements on a test group
				r := yamlMap(m)
				sub.Expect.Rules = append(sub.Expect.Rules, Rule{Tests: k, Permitted: outcomes(r.list("permitted")), Required: outcomes(r.list("required"))})
			}
		}
	}
}

// setEntryPoint makes the file ep of a directory program its main source,
// as submissions.yaml's entrypoint says; a name that is not one of its
// files leaves the program as it is. The file chosen before is left out:
// the judge saves an entry point under its language's own name (main.py),
// which may be that file's.
func setEntryPoint(p *Program, ep string) {
	if _, ok := p.Files[ep]; !ok || ep == p.Main {
		return
	}
	delete(p.Files, ep)
	p.Main = ep
}

// scoreRange reads submissions.yaml's score: a number or [low, high].
func scoreRange(words []string) *[2]float64 {
	var r [2]float64
	for i := range 2 {
		w := strings.Trim(words[min(i, len(words)-1)], "[],")
		v, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return nil
		}
		r[i] = v
	}
	return &r
}

// globMatchesPath says the glob pattern (with {a,b} alternatives; * within
// one path element) matches name or one of the directories above it.
func globMatchesPath(pattern, name string) bool {
	for _, alt := range expandBraces(pattern) {
		for p := name; p != "." && p != ""; p = path.Dir(p) {
			if ok, _ := path.Match(alt, p); ok {
				return true
			}
		}
	}
	return false
}

// expandBraces expands the first {a,b,…} in p, recursively.
func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	end := strings.IndexByte(p[open:], '}')
	if end < 0 {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:open+end], ",") {
		out = append(out, expandBraces(p[:open]+alt+p[open+end+1:])...)
	}
	return out
}
