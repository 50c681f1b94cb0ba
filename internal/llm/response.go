package llm

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

// Parsing of model answers. Models do not always follow the requested form:
// hints come as numbered or bulleted lists, paragraphs or a JSON array; code
// comes in fenced blocks with or without a language, or bare; JSON comes
// fenced or with prose around it. Each parser accepts all of these.

const maxHintRunes = 600

var (
	listItemRE   = regexp.MustCompile(`^\s*(?:\d{1,2}[.)]|[-*•])\s+`)
	hintPrefixRE = regexp.MustCompile(`(?i)^\s*(?:\*\*)?hint\s*\d*\s*[:.)-]\s*(?:\*\*)?\s*`)
	fenceRE      = regexp.MustCompile("(?s)```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)```")
	spacesRE     = regexp.MustCompile(`\s+`)
)

// parseHints turns a model's answer into at most MaxHints hints.
func parseHints(text string) []string {
	text = strings.TrimSpace(text)
	if inner := strings.TrimSpace(unfence(text)); strings.HasPrefix(inner, "[") {
		var arr []string
		if json.Unmarshal([]byte(inner), &arr) == nil {
			return cleanHints(arr)
		}
	}
	type item struct {
		text   string
		marked bool
	}
	var items []item
	var cur strings.Builder
	marked, anyMarked := false, false
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			items = append(items, item{s, marked})
		}
		cur.Reset()
		marked = false
	}
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			flush()
		case listItemRE.MatchString(l):
			flush()
			cur.WriteString(listItemRE.ReplaceAllString(l, ""))
			marked, anyMarked = true, true
		default:
			if cur.Len() > 0 {
				cur.WriteString(" ")
			}
			cur.WriteString(strings.TrimSpace(l))
		}
	}
	flush()
	var hints []string
	for _, it := range items {
		if it.marked || !anyMarked {
			hints = append(hints, it.text)
		}
	}
	return cleanHints(hints)
}

// cleanHints strips decoration, collapses whitespace, bounds the length of
// each hint and the number of hints.
func cleanHints(in []string) []string {
	var out []string
	for _, h := range in {
		h = hintPrefixRE.ReplaceAllString(h, "")
		h = strings.TrimSpace(spacesRE.ReplaceAllString(h, " "))
		if strings.HasPrefix(h, "**") && strings.HasSuffix(h, "**") && len(h) > 4 {
			h = strings.TrimSpace(h[2 : len(h)-2])
		}
		if h == "" {
			continue
		}
		out = append(out, analysis.TruncateText(h, maxHintRunes))
		if len(out) == MaxHints {
			break
		}
	}
	return out
}

// parseGenerator takes the generator program out of a model's answer: the
// first Python block, else the first fenced block, else the whole answer if
// it looks like a program. The rest of the answer becomes the notes.
func parseGenerator(text string) (Generator, error) {
	lang, code, rest := pickCodeBlock(text)
	code = strings.TrimSpace(code)
	if code == "" {
		return Generator{}, errors.New("the answer has no code block")
	}
	if !strings.Contains(code, "argv") && !strings.Contains(code, "args") && !strings.Contains(code, "Args") {
		return Generator{}, errors.New("the generator does not read its seed from the command line")
	}
	return Generator{Language: lang, Code: code + "\n", Notes: analysis.TruncateText(strings.TrimSpace(rest), 1000)}, nil
}

// pickCodeBlock returns the language, code and surrounding text of the best
// code block in text.
func pickCodeBlock(text string) (algoitny.Language, string, string) {
	ms := fenceRE.FindAllStringSubmatchIndex(text, -1)
	// Best: a block tagged Python; then one tagged with another language we
	// run; then an untagged one; then any ("```text" blocks show formats).
	best, bestRank := -1, 0
	for i, m := range ms {
		tag := strings.ToLower(text[m[2]:m[3]])
		rank := 1
		switch {
		case tag == "python" || tag == "py" || tag == "python3":
			rank = 4
		case fenceLanguage(tag) != algoitny.LanguagePython:
			rank = 3
		case tag == "":
			rank = 2
		}
		if rank > bestRank {
			best, bestRank = i, rank
		}
	}
	if best >= 0 {
		m := ms[best]
		return fenceLanguage(text[m[2]:m[3]]), text[m[4]:m[5]], text[:m[0]] + text[m[1]:]
	}
	// An unclosed fence: the answer was cut off after the code started.
	if i := strings.Index(text, "```"); i >= 0 {
		after := text[i+3:]
		nl := strings.IndexByte(after, '\n')
		if nl >= 0 {
			return fenceLanguage(strings.TrimSpace(after[:nl])), after[nl+1:], text[:i]
		}
	}
	if strings.Contains(text, "import ") || strings.Contains(text, "def ") {
		return algoitny.LanguagePython, text, ""
	}
	return algoitny.LanguagePython, "", text
}

// fenceLanguage maps a code fence's info string to a language (Python when
// it names none we know).
func fenceLanguage(tag string) algoitny.Language {
	switch strings.ToLower(tag) {
	case "c":
		return algoitny.LanguageC
	case "cpp", "c++", "cc", "cxx":
		return algoitny.LanguageCPP
	case "java":
		return algoitny.LanguageJava
	case "go", "golang":
		return algoitny.LanguageGo
	case "js", "javascript", "node":
		return algoitny.LanguageJavaScript
	case "rust", "rs":
		return algoitny.LanguageRust
	case "kotlin", "kt":
		return algoitny.LanguageKotlin
	}
	return algoitny.LanguagePython
}

// unfence returns the content of the first fenced block of s, or s.
func unfence(s string) string {
	if m := fenceRE.FindStringSubmatch(s); m != nil {
		return m[2]
	}
	return s
}

// extractedJSON is the JSON the extraction prompt asks for.
type extractedJSON struct {
	Title         string  `json:"title"`
	ProblemID     string  `json:"problemId"`
	TimeLimitMs   flexInt `json:"timeLimitMs"`
	MemoryLimitMB flexInt `json:"memoryLimitMB"`
	Description   string  `json:"description"`
	Input         string  `json:"input"`
	Output        string  `json:"output"`
	Constraints   string  `json:"constraints"`
	Samples       []struct {
		Input  string `json:"input"`
		Output string `json:"output"`
	} `json:"samples"`
	Tags []string `json:"tags"`
}

// flexInt accepts a JSON number or a numeric string.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		*f = 0 // a model's "2 seconds" is not worth failing over
		return nil
	}
	*f = flexInt(v)
	return nil
}

// parseExtracted reads the extraction JSON out of a model's answer.
func parseExtracted(text string) (ExtractedProblem, error) {
	s := unfence(text)
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return ExtractedProblem{}, errors.New("the answer has no JSON object")
	}
	var x extractedJSON
	if err := json.Unmarshal([]byte(s[i:j+1]), &x); err != nil {
		return ExtractedProblem{}, err
	}
	p := ExtractedProblem{
		ProblemID:     strings.TrimSpace(x.ProblemID),
		Title:         strings.TrimSpace(x.Title),
		Description:   strings.TrimSpace(x.Description),
		InputSpec:     strings.TrimSpace(x.Input),
		OutputSpec:    strings.TrimSpace(x.Output),
		Constraints:   strings.TrimSpace(analysis.LatexToText(x.Constraints)),
		TimeLimitMs:   max(int(x.TimeLimitMs), 0),
		MemoryLimitMB: max(int(x.MemoryLimitMB), 0),
		Tags:          analysis.CleanTags(x.Tags),
	}
	for _, s := range x.Samples {
		if strings.TrimSpace(s.Input) == "" && strings.TrimSpace(s.Output) == "" {
			continue
		}
		p.Samples = append(p.Samples, Sample{Input: analysis.NormalizeSample(s.Input), Output: analysis.NormalizeSample(s.Output)})
	}
	return p, nil
}
