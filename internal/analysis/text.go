package analysis

import (
	"strings"
	"unicode/utf8"
)

// TruncateText returns s cut to at most max runes, with "…" when cut. It
// never splits a UTF-8 sequence.
func TruncateText(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	i, n := 0, 0
	for i < len(s) && n < max-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return s[:i] + "…"
}

// lines splits output the way the judge's default checker compares it:
// trailing whitespace of each line and trailing blank lines do not count.
func lines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " \t\r\f\v")
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// quote shows a piece of program text or data in a hint: backquoted, on one
// line, cut to max runes.
func quote(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	s = strings.ReplaceAll(s, "\t", " ")
	return "`" + TruncateText(s, max) + "`"
}

// codeLine returns line n (1-based) of code, trimmed, or "".
func codeLine(code string, n int) string {
	if n <= 0 {
		return ""
	}
	ls := strings.Split(strings.ReplaceAll(code, "\r\n", "\n"), "\n")
	if n > len(ls) {
		return ""
	}
	return strings.TrimSpace(ls[n-1])
}
