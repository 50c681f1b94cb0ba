package analysis

import (
	"html"
	"regexp"
	"strings"
)

// A small, tolerant HTML reader: golang.org/x/net/html is not a dependency of
// the module and the pages we read are regular enough for a scanner that
// builds a tree, closes what was left open, and ignores what it does not
// understand. It is not an HTML5 parser; it never fails.

// node is an element or a text node (tag == "").
type node struct {
	tag      string
	attrs    map[string]string
	text     string
	children []*node
	parent   *node
}

// voidTags never have children.
var voidTags = set("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr")

// blockTags start on a new line when rendered as text, and close an open <p>.
var blockTags = set("address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "fieldset", "figure", "footer",
	"form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
	"tbody", "thead", "tfoot", "tr", "ul", "center")

// skipTags hold no visible text.
var skipTags = set("script", "style", "noscript", "svg", "template", "head", "button")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// parseHTML builds a tree from src. It is lenient like a browser: text
// outside tags is kept, unclosed elements close with their parent, and
// input that ends inside a comment or tag ends the tree there.
func parseHTML(src []byte) *node {
	t := &treeBuilder{s: string(src), root: &node{tag: "#root"}}
	t.cur = t.root
	for i := 0; i < len(t.s); {
		next, ok := t.step(i)
		if !ok {
			break
		}
		i = next
	}
	return t.root
}

// treeBuilder is the state of parseHTML: the source, the tree and the open
// element new nodes go into.
type treeBuilder struct {
	s         string
	root, cur *node
}

// push appends n to the open element.
func (t *treeBuilder) push(n *node) {
	n.parent = t.cur
	t.cur.children = append(t.cur.children, n)
}

// closeTo pops to the nearest open element named tag, unless one of stop is
// nearer; it reports whether it found one.
func (t *treeBuilder) closeTo(tag string, stop ...string) bool {
	for n := t.cur; n != nil && n != t.root; n = n.parent {
		if n.tag == tag {
			t.cur = n.parent
			return true
		}
		for _, st := range stop {
			if n.tag == st {
				return false
			}
		}
	}
	return false
}

// step reads the text, comment, declaration or tag at i and returns where
// the next one starts; false when the input ends inside it.
func (t *treeBuilder) step(i int) (int, bool) {
	s := t.s
	if s[i] != '<' {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			j = len(s) - i
		}
		t.push(&node{text: html.UnescapeString(s[i : i+j])})
		return i + j, true
	}
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		end := strings.Index(rest[4:], "-->")
		if end < 0 {
			return 0, false
		}
		return i + 4 + end + 3, true
	case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return 0, false
		}
		return i + end + 1, true
	case strings.HasPrefix(rest, "</"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return 0, false
		}
		if f := strings.Fields(rest[2:end]); len(f) > 0 {
			t.closeTo(strings.ToLower(f[0]))
		}
		return i + end + 1, true
	case len(rest) > 1 && isASCIILetter(rest[1]):
		return t.startTag(i), true
	default:
		t.push(&node{text: "<"})
		return i + 1, true
	}
}

// startTag reads the start tag at i, closes what it implies (an open li
// before another li, a p before a block), opens the element and returns
// where the next node starts (after the raw text of script, style, textarea
// and title).
func (t *treeBuilder) startTag(i int) int {
	tag, attrs, selfClose, n := scanTag(t.s[i:])
	i += n
	t.closeImplied(tag)
	if blockTags[tag] && t.cur.tag == "p" {
		t.cur = t.cur.parent
	}
	el := &node{tag: tag, attrs: attrs}
	t.push(el)
	if tag == "script" || tag == "style" || tag == "textarea" || tag == "title" {
		return t.rawText(el, i)
	}
	if !selfClose && !voidTags[tag] {
		t.cur = el
	}
	return i
}

// closeImplied closes the element a start tag ends implicitly: a list item,
// table row or cell, definition term or option before another.
func (t *treeBuilder) closeImplied(tag string) {
	switch tag {
	case "li":
		t.closeTo("li", "ul", "ol")
	case "tr":
		t.closeTo("tr", "table", "tbody", "thead", "tfoot")
	case "td", "th":
		if !t.closeTo("td", "tr", "table") {
			t.closeTo("th", "tr", "table")
		}
	case "dt", "dd":
		if !t.closeTo("dt", "dl") {
			t.closeTo("dd", "dl")
		}
	case "option":
		t.closeTo("option", "select")
	}
}

// rawText skips the raw text of el from i up to its end tag (keeping it as
// text for textarea and title) and returns where the next node starts.
func (t *treeBuilder) rawText(el *node, i int) int {
	s := t.s
	end := indexFold(s[i:], "</"+el.tag)
	if end < 0 {
		end = len(s) - i
	}
	if el.tag == "textarea" || el.tag == "title" {
		el.children = []*node{{text: html.UnescapeString(s[i : i+end]), parent: el}}
	}
	i += end
	if gt := strings.IndexByte(s[i:], '>'); gt >= 0 {
		return i + gt + 1
	}
	return len(s)
}

// scanTag reads a start tag at the beginning of s and returns its name,
// attributes, whether it closed itself, and its length in bytes.
func scanTag(s string) (string, map[string]string, bool, int) {
	i := 1
	for i < len(s) && (isASCIILetter(s[i]) || isDigit(s[i]) || s[i] == '-' || s[i] == ':') {
		i++
	}
	tag := strings.ToLower(s[1:i])
	attrs := map[string]string{}
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return tag, attrs, false, i + 1
		}
		if s[i] == '/' {
			if i+1 < len(s) && s[i+1] == '>' {
				return tag, attrs, true, i + 2
			}
			i++
			continue
		}
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' {
			i++
		}
		name := strings.ToLower(s[start:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					end = len(s) - i - 1
				}
				val = s[i+1 : i+1+end]
				i += end + 2
			} else {
				start := i
				for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
					i++
				}
				val = s[start:i]
			}
		}
		if name != "" {
			attrs[name] = html.UnescapeString(val)
		}
	}
	return tag, attrs, false, len(s)
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isSpace(c byte) bool       { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// indexFold is strings.Index ignoring ASCII case.
func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

// hasClass reports whether n's class attribute lists c.
func (n *node) hasClass(c string) bool {
	for f := range strings.FieldsSeq(n.attrs["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// find returns the first element below n (depth first) for which pred holds.
func (n *node) find(pred func(*node) bool) *node {
	for _, c := range n.children {
		if c.tag == "" {
			continue
		}
		if pred(c) {
			return c
		}
		if f := c.find(pred); f != nil {
			return f
		}
	}
	return nil
}

// findAll returns every element below n for which pred holds, in document
// order, without looking inside matches.
func (n *node) findAll(pred func(*node) bool) []*node {
	var out []*node
	for _, c := range n.children {
		if c.tag == "" {
			continue
		}
		if pred(c) {
			out = append(out, c)
			continue
		}
		out = append(out, c.findAll(pred)...)
	}
	return out
}

func byID(id string) func(*node) bool   { return func(n *node) bool { return n.attrs["id"] == id } }
func byClass(c string) func(*node) bool { return func(n *node) bool { return n.hasClass(c) } }
func byTag(tag string) func(*node) bool { return func(n *node) bool { return n.tag == tag } }
func byTagClass(tag, c string) func(*node) bool {
	return func(n *node) bool { return n.tag == tag && n.hasClass(c) }
}

// textRenderer turns a subtree into plain text: whitespace collapsed outside
// <pre>, block elements on their own lines, <br> as a line break, <sup> as
// "^" and <sub> as "_" so that 10<sup>5</sup> reads 10^5.
type textRenderer struct {
	b    strings.Builder
	skip func(*node) bool
}

func (r *textRenderer) atLineStart() bool {
	s := r.b.String()
	return s == "" || strings.HasSuffix(s, "\n")
}

func (r *textRenderer) newline() {
	if !r.atLineStart() {
		r.b.WriteString("\n")
	}
}

func (r *textRenderer) render(n *node, pre bool) {
	if n.tag == "" {
		if pre {
			r.b.WriteString(n.text)
			return
		}
		t := collapseSpaces(n.text)
		if r.atLineStart() {
			t = strings.TrimLeft(t, " ")
		}
		r.b.WriteString(t)
		return
	}
	if skipTags[n.tag] || (r.skip != nil && r.skip(n)) {
		return
	}
	switch n.tag {
	case "br":
		r.b.WriteString("\n")
		return
	case "sup":
		r.b.WriteString("^")
	case "sub":
		r.b.WriteString("_")
	case "td", "th":
		if !r.atLineStart() {
			r.b.WriteString(" ")
		}
	}
	block := blockTags[n.tag]
	if block {
		r.newline()
	}
	for _, c := range n.children {
		r.render(c, pre || n.tag == "pre")
	}
	if block {
		r.newline()
	}
}

var (
	spaceRunRE  = regexp.MustCompile(`[ \t\r\n\f\v\x{00a0}]+`)
	blankRunsRE = regexp.MustCompile(`\n{3,}`)
)

func collapseSpaces(s string) string { return spaceRunRE.ReplaceAllString(s, " ") }

// text renders n's subtree as plain text, leaving out nodes for which skip
// holds (skip may be nil).
func text(n *node, skip func(*node) bool) string {
	if n == nil {
		return ""
	}
	r := &textRenderer{skip: skip}
	for _, c := range n.children {
		r.render(c, n.tag == "pre")
	}
	out := r.b.String()
	ls := strings.Split(out, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(blankRunsRE.ReplaceAllString(strings.Join(ls, "\n"), "\n\n"))
}

// preText renders the content of a <pre> (sample data) exactly, with block
// children (Codeforces' per-line <div>s) on their own lines.
func preText(n *node) string {
	if n == nil {
		return ""
	}
	r := &textRenderer{}
	for _, c := range n.children {
		r.render(c, true)
	}
	return NormalizeSample(r.b.String())
}

// NormalizeSample cleans sample data the way the judge compares it: Unix
// line ends, no trailing spaces, no leading or trailing blank lines, one
// final newline.
func NormalizeSample(s string) string {
	ls := lines(s)
	for len(ls) > 0 && strings.TrimSpace(ls[0]) == "" {
		ls = ls[1:]
	}
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}
