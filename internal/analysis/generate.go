package analysis

import (
	"fmt"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// Generate parses req.Problem.Constraints, guesses the input layout (first
// line the scalars, then strings, then arrays; checked against req.Samples
// when given) and writes a Python 3 program that prints minimal, maximal,
// small and random tests. It returns EINVALID naming the field
// "constraints" ("cannot parse constraints: …") when the constraints give no
// usable ranges, leave a variable without an upper bound, refer to unknown
// variables, or do not fit the sample input.
func Generate(req GeneratorRequest) (Generator, error) {
	text := strings.TrimSpace(req.Problem.Constraints)
	if text == "" {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: the problem has none")
	}
	sp, err := parseConstraints(text)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	l, err := sp.chooseLayout(req.Samples)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	code, err := pythonGenerator(sp, l, text)
	if err != nil {
		return Generator{}, algoitny.Invalid("constraints", "cannot parse constraints: %v", err)
	}
	return Generator{Language: algoitny.LanguagePython, Code: code, Notes: generatorNotes(sp, l, len(req.Samples) > 0)}, nil
}

// generatorNotes tells the reviewer what the generator assumes.
func generatorNotes(sp *spec, l *layout, checked bool) string {
	var vars []string
	for _, v := range sp.vars {
		s := fmt.Sprintf("%s in [%s, %s]", displayName(v), v.lo, v.hi)
		switch {
		case v.kind == arrayVar:
			s += fmt.Sprintf(" with %s elements", v.length)
			if v.guessedLen && !checked {
				s += " (assumed)"
			}
			if v.distinct {
				s += ", distinct"
			}
			switch v.sorted {
			case 1:
				s += ", ascending"
			case -1:
				s += ", descending"
			}
		case v.kind == stringVar:
			s += fmt.Sprintf(" over %q", TruncateText(v.alphabet, 12))
		}
		vars = append(vars, s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Variables: %s.\n", strings.Join(vars, "; "))
	how := "guessed from the constraints"
	if checked {
		how = "checked against the sample input"
	}
	fmt.Fprintf(&b, "Input layout (%s): %s.\n", how, strings.Join(l.describe(), " / "))
	b.WriteString("Test index 0 is minimal, 1 maximal, 2 maximal sizes with random values, 3 and 4 small, then mostly random.")
	if sp.sumCap != nil {
		fmt.Fprintf(&b, "\nThe sum of %s over all tests is kept within %s.", sp.sumVar, sp.sumCap)
	}
	for _, n := range sp.notes {
		fmt.Fprintf(&b, "\nAssumed: %s.", n)
	}
	for _, ig := range sp.ignored {
		fmt.Fprintf(&b, "\nNot enforced: %s", TruncateText(ig, 120))
	}
	return b.String()
}
