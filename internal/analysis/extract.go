package analysis

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// ParseProblemPage reads a problem statement from the HTML of a Baekjoon
// (acmicpc.net), Codeforces or AtCoder problem page, without any model. The
// judge is recognised from req.URL's host, or from the page's markup when
// the URL says nothing. It returns EINVALID when the page belongs to none of
// these judges or has no problem title (a login page, a 404 page).
func ParseProblemPage(req ExtractRequest) (ExtractedProblem, error) {
	root := parseHTML(req.HTML)
	platform := platformOf(req.URL, root)
	var p ExtractedProblem
	switch platform {
	case algoitny.PlatformBaekjoon:
		p = parseBaekjoon(root)
	case algoitny.PlatformCodeforces:
		p = parseCodeforces(root)
	case algoitny.PlatformAtCoder:
		p = parseAtCoder(root)
	default:
		return ExtractedProblem{}, algoitny.Invalid("url", "cannot read this page: it is not a Baekjoon, Codeforces or AtCoder problem page")
	}
	if p.Title == "" {
		return ExtractedProblem{}, algoitny.Invalid("url", "cannot read this page: no problem title found")
	}
	p.Platform = platform
	pageURL := req.URL
	if pageURL == "" {
		pageURL = canonicalURL(root)
	}
	FillFromURL(&p, pageURL)
	p.Tags = CleanTags(p.Tags)
	p.Title = LatexToText(p.Title)
	p.Description = LatexToText(p.Description)
	p.InputSpec = LatexToText(p.InputSpec)
	p.OutputSpec = LatexToText(p.OutputSpec)
	p.Constraints = LatexToText(p.Constraints)
	if p.Constraints == "" {
		p.Constraints = constraintLines(p.InputSpec)
	}
	return p, nil
}

// platformOf names the judge of a page.
func platformOf(pageURL string, root *node) algoitny.Platform {
	if u, err := url.Parse(pageURL); err == nil {
		host := strings.ToLower(u.Hostname())
		switch {
		case host == "acmicpc.net" || strings.HasSuffix(host, ".acmicpc.net"):
			return algoitny.PlatformBaekjoon
		case strings.HasPrefix(host, "codeforces.") || strings.Contains(host, ".codeforces."):
			return algoitny.PlatformCodeforces
		case host == "atcoder.jp" || strings.HasSuffix(host, ".atcoder.jp"):
			return algoitny.PlatformAtCoder
		}
	}
	switch {
	case root.find(byID("problem_title")) != nil:
		return algoitny.PlatformBaekjoon
	case root.find(byClass("problem-statement")) != nil:
		return algoitny.PlatformCodeforces
	case root.find(byID("task-statement")) != nil:
		return algoitny.PlatformAtCoder
	}
	return ""
}

// canonicalURL returns the page's own idea of its URL (og:url or a
// canonical link), for pages handed over without one.
func canonicalURL(root *node) string {
	if m := root.find(func(n *node) bool { return n.tag == "meta" && n.attrs["property"] == "og:url" }); m != nil {
		return m.attrs["content"]
	}
	if l := root.find(func(n *node) bool { return n.tag == "link" && n.attrs["rel"] == "canonical" }); l != nil {
		return l.attrs["href"]
	}
	return ""
}

var (
	baekjoonIDRE   = regexp.MustCompile(`/problem/(\d+)`)
	codeforcesIDRE = regexp.MustCompile(`/(?:problemset/problem|contest|gym)/(\d+)/(?:problem/)?([A-Za-z]\d?)`)
	atcoderIDRE    = regexp.MustCompile(`/contests/[^/]+/tasks/([^/?#]+)`)
)

// FillFromURL sets the URL, platform and problem id a page's address gives,
// where they are still empty.
func FillFromURL(p *ExtractedProblem, pageURL string) {
	if p.URL == "" {
		p.URL = pageURL
	}
	var platform algoitny.Platform
	var id string
	if u, err := url.Parse(pageURL); err == nil {
		platform = platformOf(pageURL, &node{})
		switch platform {
		case algoitny.PlatformBaekjoon:
			if m := baekjoonIDRE.FindStringSubmatch(u.Path); m != nil {
				id = m[1]
			}
		case algoitny.PlatformCodeforces:
			if m := codeforcesIDRE.FindStringSubmatch(u.Path); m != nil {
				id = m[1] + strings.ToUpper(m[2])
			}
		case algoitny.PlatformAtCoder:
			if m := atcoderIDRE.FindStringSubmatch(u.Path); m != nil {
				id = m[1]
			}
		}
	}
	if p.Platform == "" {
		p.Platform = platform
		if p.Platform == "" {
			p.Platform = algoitny.PlatformCustom
		}
	}
	if p.ProblemID == "" {
		p.ProblemID = id
	}
}

// parseBaekjoon reads acmicpc.net's markup: #problem_title, the
// #problem-info table (time and memory limits), #problem_description,
// #problem_input, #problem_output, #problem_limit and
// #sample-input-N/#sample-output-N.
func parseBaekjoon(root *node) ExtractedProblem {
	p := ExtractedProblem{
		Title:       text(root.find(byID("problem_title")), nil),
		Description: text(root.find(byID("problem_description")), nil),
		InputSpec:   text(root.find(byID("problem_input")), nil),
		OutputSpec:  text(root.find(byID("problem_output")), nil),
		Constraints: constraintLines(text(root.find(byID("problem_limit")), nil)),
	}
	if info := root.find(byID("problem-info")); info != nil {
		heads := info.findAll(byTag("th"))
		var cells []*node
		if row := info.find(func(n *node) bool { return n.tag == "tr" && n.find(byTag("td")) != nil }); row != nil {
			cells = row.findAll(byTag("td"))
		}
		for i, h := range heads {
			if i >= len(cells) {
				break
			}
			ht, ct := strings.ToLower(text(h, nil)), text(cells[i], nil)
			switch {
			case strings.Contains(ht, "시간") || strings.Contains(ht, "time"):
				p.TimeLimitMs = parseSeconds(ct)
			case strings.Contains(ht, "메모리") || strings.Contains(ht, "memory"):
				p.MemoryLimitMB = parseMegabytes(ct)
			}
		}
	}
	if sec := root.find(byID("problem_tags")); sec != nil {
		for _, a := range sec.findAll(byTag("a")) {
			p.Tags = append(p.Tags, text(a, nil))
		}
	}
	for i := 1; ; i++ {
		in := root.find(byID("sample-input-" + strconv.Itoa(i)))
		out := root.find(byID("sample-output-" + strconv.Itoa(i)))
		if in == nil && out == nil {
			break
		}
		p.Samples = append(p.Samples, Sample{Input: preText(in), Output: preText(out)})
	}
	return p
}

var cfTitlePrefixRE = regexp.MustCompile(`^[A-Z][0-9]?\.\s+`)

// parseCodeforces reads .problem-statement: .header .title, .time-limit,
// .memory-limit, the untitled statement <div>, .input-specification,
// .output-specification and .sample-test .input/.output <pre>s, and the
// sidebar's .tag-box tags.
func parseCodeforces(root *node) ExtractedProblem {
	st := root.find(byClass("problem-statement"))
	if st == nil {
		return ExtractedProblem{}
	}
	notTitle := func(n *node) bool { return n.hasClass("section-title") || n.hasClass("property-title") }
	p := ExtractedProblem{}
	if h := st.find(byClass("header")); h != nil {
		p.Title = cfTitlePrefixRE.ReplaceAllString(text(h.find(byClass("title")), nil), "")
		p.TimeLimitMs = parseSeconds(text(h.find(byClass("time-limit")), notTitle))
		p.MemoryLimitMB = parseMegabytes(text(h.find(byClass("memory-limit")), notTitle))
	}
	for _, c := range st.children {
		if c.tag == "div" && c.attrs["class"] == "" {
			p.Description = text(c, nil)
			break
		}
	}
	p.InputSpec = text(st.find(byClass("input-specification")), notTitle)
	p.OutputSpec = text(st.find(byClass("output-specification")), notTitle)
	for _, t := range st.findAll(byClass("sample-test")) {
		ins := t.findAll(byClass("input"))
		outs := t.findAll(byClass("output"))
		for i, in := range ins {
			s := Sample{Input: preText(in.find(byTag("pre")))}
			if i < len(outs) {
				s.Output = preText(outs[i].find(byTag("pre")))
			}
			p.Samples = append(p.Samples, s)
		}
	}
	// The sidebar's tag boxes ("implementation", "math", "*800").
	for _, tb := range root.findAll(byClass("tag-box")) {
		p.Tags = append(p.Tags, text(tb, nil))
	}
	return p
}

var (
	atcoderTitlePrefixRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]?\s*-\s+`)
	atcoderLimitsRE      = regexp.MustCompile(`(?i)(?:Time Limit|実行時間制限)\s*:\s*([\d.]+)\s*sec\s*/\s*(?:Memory Limit|メモリ制限)\s*:\s*(\d+)\s*(KB|MB|MiB|GB)`)
	atcoderSampleRE      = regexp.MustCompile(`(?i)^(?:sample\s+(input|output)|(入力|出力)例)\s*(\d+)$`)
)

// parseAtCoder reads #task-statement (the English part when there is one),
// whose <section>s are named by <h3> headings ("Constraints"/"制約",
// "Sample Input 1"/"入力例 1", …), the span.h2 title and the
// "Time Limit: 2 sec / Memory Limit: 1024 MB" line.
func parseAtCoder(root *node) ExtractedProblem {
	p := ExtractedProblem{}
	if h := root.find(byTagClass("span", "h2")); h != nil {
		p.Title = text(h, byTag("a"))
	}
	if p.Title == "" {
		t := text(root.find(byTag("title")), nil)
		if i := strings.LastIndex(t, " - "); i > 0 && strings.Count(t, " - ") > 1 {
			t = t[:i]
		}
		p.Title = t
	}
	p.Title = atcoderTitlePrefixRE.ReplaceAllString(p.Title, "")
	if m := atcoderLimitsRE.FindStringSubmatch(text(root, nil)); m != nil {
		p.TimeLimitMs = parseSeconds(m[1] + " sec")
		p.MemoryLimitMB = parseMegabytes(m[2] + " " + m[3])
	}
	ts := root.find(byID("task-statement"))
	if ts == nil {
		return p
	}
	part := ts
	if en := ts.find(byClass("lang-en")); en != nil {
		part = en
	} else if ja := ts.find(byClass("lang-ja")); ja != nil {
		part = ja
	}
	samples := map[string]*Sample{}
	var order []string
	for _, sec := range part.findAll(byTag("section")) {
		h := sec.find(byTag("h3"))
		if h == nil {
			continue
		}
		heading := strings.TrimSpace(collapseSpaces(text(h, byTag("span"))))
		notHeading := func(n *node) bool { return n == h }
		switch strings.ToLower(heading) {
		case "problem statement", "問題文":
			p.Description = text(sec, notHeading)
			continue
		case "constraints", "制約":
			var cs []string
			for _, li := range sec.findAll(byTag("li")) {
				cs = append(cs, text(li, nil))
			}
			if len(cs) == 0 {
				cs = append(cs, text(sec, notHeading))
			}
			p.Constraints = strings.Join(cs, "\n")
			continue
		case "input", "入力":
			p.InputSpec = text(sec, notHeading)
			continue
		case "output", "出力":
			p.OutputSpec = text(sec, notHeading)
			continue
		}
		m := atcoderSampleRE.FindStringSubmatch(heading)
		if m == nil {
			continue
		}
		k := m[3]
		s, ok := samples[k]
		if !ok {
			s = &Sample{}
			samples[k] = s
			order = append(order, k)
		}
		data := preText(sec.find(byTag("pre")))
		if strings.EqualFold(m[1], "input") || m[2] == "入力" {
			s.Input = data
		} else {
			s.Output = data
		}
	}
	for _, k := range order {
		p.Samples = append(p.Samples, *samples[k])
	}
	return p
}

var (
	secondsRE   = regexp.MustCompile(`(?i)([\d.]+)\s*(초|seconds?|secs?|s\b|ms|milliseconds?)`)
	megabytesRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(megabytes?|mb|mib|kb|kilobytes?|gb|gigabytes?|gib)`)
)

// parseSeconds reads "2 초", "1 second", "0.5 seconds", "2 sec" or
// "1500 ms" as milliseconds (0 if it cannot).
func parseSeconds(s string) int {
	m := secondsRE.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	if u := strings.ToLower(m[2]); u == "ms" || strings.HasPrefix(u, "milli") {
		return int(v + 0.5)
	}
	return int(v*1000 + 0.5)
}

// parseMegabytes reads "128 MB", "256 megabytes" or "1 GB" as megabytes (0
// if it cannot).
func parseMegabytes(s string) int {
	m := megabytesRE.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	switch u := strings.ToLower(m[2]); {
	case strings.HasPrefix(u, "k"):
		v /= 1024
	case strings.HasPrefix(u, "g"):
		v *= 1024
	}
	return int(v + 0.5)
}

var (
	parenRelRE = regexp.MustCompile(`\(([^()]*[≤≥<>≦≧⩽⩾][^()]*)\)`)
	relRE      = regexp.MustCompile(`[≤≥<>≦≧⩽⩾]`)
)

// constraintLines picks the constraints out of an input section or a limits
// section: the parenthesised relations of each line ("N (1 ≤ N ≤ 10^5)"),
// or the whole line when it holds a relation outside parentheses.
func constraintLines(s string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		l = strings.TrimSpace(l)
		if !relRE.MatchString(l) || !strings.ContainsAny(l, "0123456789") {
			continue
		}
		ms := parenRelRE.FindAllStringSubmatch(l, -1)
		if len(ms) == 0 {
			out = append(out, strings.TrimRight(l, "."))
			continue
		}
		for _, m := range ms {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return strings.Join(out, "\n")
}

// PageText is the visible text of a page, for a model to read.
func PageText(src []byte) string {
	root := parseHTML(src)
	body := root.find(byTag("body"))
	if body == nil {
		body = root
	}
	return text(body, func(n *node) bool { return n.tag == "nav" || n.tag == "footer" })
}

var (
	mathDelimRE  = regexp.MustCompile(`\$\$\$|\$\$|\$|\\\(|\\\)|\\\[|\\\]`)
	latexCmdRE   = regexp.MustCompile(`\\([A-Za-z]+|[,;:! ])`)
	latexGroupRE = regexp.MustCompile(`([_^])\{([A-Za-z0-9]+)\}`)
)

// latexCommands maps the LaTeX commands of problem statements to text.
var latexCommands = map[string]string{
	"le": "≤", "leq": "≤", "leqq": "≤", "leqslant": "≤", "ge": "≥", "geq": "≥", "geqq": "≥", "geqslant": "≥",
	"lt": "<", "gt": ">", "ne": "≠", "neq": "≠", "times": "×", "cdot": "·", "ldots": "…", "cdots": "…",
	"dots": "…", "dotsc": "…", "vert": "|", "lvert": "|", "rvert": "|", "mid": "|", "left": "", "right": "",
	"text": "", "mathrm": "", "mathit": "", "mathbf": "", "textrm": "", "textbf": "", "operatorname": "",
	"displaystyle": "", "quad": " ", "qquad": " ", ",": " ", ";": " ", ":": " ", "!": "", " ": " ",
	"infty": "∞", "in": "∈", "leftarrow": "←", "rightarrow": "→", "to": "→", "bmod": "mod", "mod": "mod",
	"min": "min", "max": "max", "log": "log", "sum": "∑", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
}

// LatexToText turns the LaTeX math of statements ($$$1 \le n \le 10^5$$$ on
// Codeforces, <var>1 \leq N</var> on AtCoder) into plain text
// ("1 ≤ n ≤ 10^5"); text without LaTeX is returned unchanged.
func LatexToText(s string) string {
	if !strings.ContainsAny(s, `\$`) {
		return s
	}
	s = mathDelimRE.ReplaceAllString(s, "")
	s = latexCmdRE.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1:]
		if r, ok := latexCommands[name]; ok {
			if r == "" || r == " " {
				return r
			}
			return " " + r + " "
		}
		return name
	})
	s = latexGroupRE.ReplaceAllString(s, "$1$2")
	var b strings.Builder
	for i, r := range s {
		if (r == '{' || r == '}') && !(r == '{' && i > 0 && (s[i-1] == '_' || s[i-1] == '^')) && !groupOpen(s, i) {
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	ls := strings.Split(out, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSpace(strings.Join(strings.Fields(l), " "))
	}
	return strings.TrimSpace(strings.Join(ls, "\n"))
}

// groupOpen reports whether the '}' at i closes a "_{…}" or "^{…}" group.
func groupOpen(s string, i int) bool {
	if s[i] != '}' {
		return false
	}
	j := strings.LastIndexByte(s[:i], '{')
	return j > 0 && (s[j-1] == '_' || s[j-1] == '^') && !strings.ContainsAny(s[j+1:i], "{}")
}

// CleanTags trims tags and drops empty ones, duplicates and Codeforces'
// difficulty box ("*800", a rating rather than a topic).
func CleanTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = collapseSpaces(strings.TrimSpace(t))
		if t == "" || strings.HasPrefix(t, "*") || slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}
