package llm

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// truncateBlock keeps the start of a possibly huge block of test data (at
// most maxBytes, cut at a line end when one is near) and says how much was
// left out, so that a prompt stays small while the model still sees the shape
// of the data.
func truncateBlock(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl > maxBytes/2 {
		cut = nl + 1
	}
	rest := s[cut:]
	return fmt.Sprintf("%s\n… (%d more bytes, %d more lines)", strings.TrimRight(s[:cut], "\n"), len(rest), strings.Count(rest, "\n"))
}
