package analysis

import (
	"fmt"
	"math/big"
	"strings"
)

// The offline generator: a spec from constraints.go, a guess of the input
// layout (checked against the sample input when there is one), and a Python
// program that prints one test for a seed and index.

// defaultBudget bounds the total number of elements of one generated input
// when the constraints give no "sum of N" limit, so that a maximal test of a
// multi-test problem stays printable.
const defaultBudget = 2_000_000

// lineKind is the shape of one line (or block of lines) of input.
type lineKind int

const (
	lineScalars lineKind = iota // "N K"
	lineString                  // "S"
	lineRow                     // "A_1 … A_N"
	lineColumns                 // N lines "a_i b_i"
)

type layoutLine struct {
	kind lineKind
	vars []*cvar
}

// layout is the input format: the test count line of a multi-test input,
// then the lines of each test.
type layout struct {
	multi *cvar
	block []layoutLine
}

// describe writes the layout for notes and the program's doc string.
func (l *layout) describe() []string {
	var out []string
	if l.multi != nil {
		out = append(out, l.multi.name, "then "+l.multi.name+" tests, each:")
	}
	for _, ln := range l.block {
		switch ln.kind {
		case lineScalars:
			var names []string
			for _, v := range ln.vars {
				names = append(names, v.name)
			}
			out = append(out, strings.Join(names, " "))
		case lineString:
			out = append(out, ln.vars[0].name)
		case lineRow:
			v := ln.vars[0]
			out = append(out, fmt.Sprintf("%s_1 … %s_%s", v.name, v.name, v.length))
		case lineColumns:
			var names []string
			for _, v := range ln.vars {
				names = append(names, v.name+"_i")
			}
			out = append(out, fmt.Sprintf("%s lines: %s", ln.vars[0].length, strings.Join(names, " ")))
		}
	}
	return out
}

// candidateLayouts returns the plausible layouts, most likely first: the
// scalars on the first line, one per line, or each length just before its
// arrays; arrays declared together as columns or rows.
func (sp *spec) candidateLayouts() []*layout {
	parts := sp.inputParts()
	var out []*layout
	for arrangement := range 3 {
		for style := range 3 {
			l := &layout{multi: sp.multi}
			switch arrangement {
			case 0, 1:
				l.block = parts.scalarsFirst(arrangement == 0, style)
			case 2:
				l.block = parts.lengthsBeforeArrays(style)
			}
			out = append(out, l)
		}
	}
	return out
}

// inputParts are the variables of one test, sorted into what goes on a line
// of its own: scalars, strings, and arrays grouped by the clause that
// declared them and their length (arrays of one group may share lines).
type inputParts struct {
	scalars, strs []*cvar
	groups        [][]*cvar
}

// inputParts sorts the variables of sp, except the test count, into parts.
func (sp *spec) inputParts() inputParts {
	var p inputParts
	groupOf := map[string]int{}
	for _, v := range sp.vars {
		switch {
		case v == sp.multi:
		case v.kind == scalarVar:
			p.scalars = append(p.scalars, v)
		case v.kind == stringVar:
			p.strs = append(p.strs, v)
		case v.kind == arrayVar:
			key := fmt.Sprintf("%d|%s", v.group, v.length)
			if g, ok := groupOf[key]; ok {
				p.groups[g] = append(p.groups[g], v)
			} else {
				groupOf[key] = len(p.groups)
				p.groups = append(p.groups, []*cvar{v})
			}
		}
	}
	return p
}

// arrayLines lays out a group of arrays: style 1 as columns, style 2 as
// rows, style 0 as columns when the group has several arrays, else a row.
func arrayLines(g []*cvar, style int) []layoutLine {
	if style == 1 || (style == 0 && len(g) > 1) {
		return []layoutLine{{kind: lineColumns, vars: g}}
	}
	var out []layoutLine
	for _, v := range g {
		out = append(out, layoutLine{kind: lineRow, vars: []*cvar{v}})
	}
	return out
}

// groupLength is the scalar naming the length of a group of arrays, or "".
func groupLength(g []*cvar) string {
	if g[0].length.op == "ref" {
		return g[0].length.name
	}
	return ""
}

// scalarsFirst lays out the scalars (on one line, or one per line), then
// the strings, then the arrays.
func (p inputParts) scalarsFirst(oneLine bool, style int) []layoutLine {
	var block []layoutLine
	if oneLine && len(p.scalars) > 0 {
		block = append(block, layoutLine{kind: lineScalars, vars: p.scalars})
	} else {
		for _, v := range p.scalars {
			block = append(block, layoutLine{kind: lineScalars, vars: []*cvar{v}})
		}
	}
	for _, v := range p.strs {
		block = append(block, layoutLine{kind: lineString, vars: []*cvar{v}})
	}
	for _, g := range p.groups {
		block = append(block, arrayLines(g, style)...)
	}
	return block
}

// lengthsBeforeArrays lays out the scalars that are no length on the first
// line, then the strings, then each length followed by its arrays, then the
// arrays whose length is no scalar.
func (p inputParts) lengthsBeforeArrays(style int) []layoutLine {
	var block []layoutLine
	sized := map[string]bool{}
	for _, g := range p.groups {
		sized[groupLength(g)] = true
	}
	var first []*cvar
	for _, v := range p.scalars {
		if !sized[v.name] {
			first = append(first, v)
		}
	}
	if len(first) > 0 {
		block = append(block, layoutLine{kind: lineScalars, vars: first})
	}
	for _, v := range p.strs {
		block = append(block, layoutLine{kind: lineString, vars: []*cvar{v}})
	}
	placed := map[int]bool{}
	for _, v := range p.scalars {
		if !sized[v.name] {
			continue
		}
		block = append(block, layoutLine{kind: lineScalars, vars: []*cvar{v}})
		for gi, g := range p.groups {
			if groupLength(g) == v.name && !placed[gi] {
				placed[gi] = true
				block = append(block, arrayLines(g, style)...)
			}
		}
	}
	for gi, g := range p.groups {
		if !placed[gi] {
			block = append(block, arrayLines(g, style)...)
		}
	}
	return block
}

// chooseLayout returns the first candidate layout the samples fit, or the
// most likely one when there are no samples. When no layout fits and some
// array lengths were guesses, the other scalars are tried as their lengths.
func (sp *spec) chooseLayout(samples []Sample) (*layout, error) {
	var inputs []string
	for _, s := range samples {
		if strings.TrimSpace(s.Input) != "" {
			inputs = append(inputs, s.Input)
		}
	}
	if len(inputs) == 0 {
		return sp.candidateLayouts()[0], nil
	}
	l, err := sp.fitLayouts(inputs)
	if err == nil {
		return l, nil
	}
	var guessed []*cvar
	var lengths []string
	for _, v := range sp.vars {
		switch {
		case v.kind == arrayVar && v.guessedLen:
			guessed = append(guessed, v)
		case v.kind == scalarVar && v != sp.multi:
			lengths = append(lengths, v.name)
		}
	}
	if len(guessed) == 0 || len(guessed) > 4 || len(lengths) > 6 {
		return nil, err
	}
	saved := make([]*expr, len(guessed))
	for i, v := range guessed {
		saved[i] = v.length
	}
	choice := make([]int, len(guessed))
	for {
		for i, v := range guessed {
			v.length = &expr{op: "ref", name: lengths[choice[i]]}
		}
		if l, ferr := sp.fitLayouts(inputs); ferr == nil {
			return l, nil
		}
		// Next assignment, as an odometer over the scalars.
		k := 0
		for k < len(choice) {
			choice[k]++
			if choice[k] < len(lengths) {
				break
			}
			choice[k] = 0
			k++
		}
		if k == len(choice) {
			break
		}
	}
	for i, v := range guessed {
		v.length = saved[i]
	}
	return nil, err
}

// fitLayouts returns the first candidate layout every input fits.
func (sp *spec) fitLayouts(inputs []string) (*layout, error) {
	cands := sp.candidateLayouts()
	var firstErr error
	for _, l := range cands {
		var err error
		for _, in := range inputs {
			if err = l.fit(in); err != nil {
				break
			}
		}
		if err == nil {
			return l, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("the sample input does not fit the input layout the constraints suggest (%s: %v)",
		strings.Join(cands[0].describe(), " / "), firstErr)
}

// fit checks that a sample input has the shape of the layout and that its
// values respect the constraints.
func (l *layout) fit(sample string) error {
	var rows [][]string
	for _, ln := range lines(sample) {
		if f := strings.Fields(ln); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	r := &sampleReader{rows: rows, env: map[string]*big.Int{}}
	tests := 1
	if l.multi != nil {
		vals, err := r.ints(1, l.multi.name)
		if err != nil {
			return err
		}
		if err := r.checkRange(l.multi, vals[0]); err != nil {
			return err
		}
		if !vals[0].IsInt64() || vals[0].Int64() > 10000 {
			return fmt.Errorf("%s = %s tests is too many for a sample", l.multi.name, vals[0])
		}
		tests = int(vals[0].Int64())
	}
	for range tests {
		if err := l.fitBlock(r); err != nil {
			return err
		}
	}
	if r.row < len(r.rows) {
		return fmt.Errorf("line %d is not described by the constraints", r.row+1)
	}
	return nil
}

func (l *layout) fitBlock(r *sampleReader) error {
	for _, ln := range l.block {
		switch ln.kind {
		case lineScalars:
			vals, err := r.ints(len(ln.vars), ln.vars[0].name)
			if err != nil {
				return err
			}
			for i, v := range ln.vars {
				r.env[v.name] = vals[i]
			}
			for i, v := range ln.vars {
				if err := r.checkRange(v, vals[i]); err != nil {
					return err
				}
			}
		case lineString:
			v := ln.vars[0]
			if r.row >= len(r.rows) || len(r.rows[r.row]) != 1 {
				return fmt.Errorf("line %d should hold the string %s", r.row+1, v.name)
			}
			n := big.NewInt(int64(len(r.rows[r.row][0])))
			r.row++
			if err := r.checkRange(v, n); err != nil {
				return err
			}
		case lineRow, lineColumns:
			n, err := ln.vars[0].length.eval(r.env)
			if err != nil {
				return err
			}
			if !n.IsInt64() || n.Int64() < 0 || n.Int64() > 1_000_000 {
				return fmt.Errorf("%s has %s elements", ln.vars[0].name, n)
			}
			count := int(n.Int64())
			if ln.kind == lineRow {
				if count == 0 {
					continue
				}
				vals, err := r.ints(count, ln.vars[0].name)
				if err != nil {
					return err
				}
				if err := r.checkValues(ln.vars[0], vals); err != nil {
					return err
				}
				continue
			}
			cols := make([][]*big.Int, len(ln.vars))
			for range count {
				vals, err := r.ints(len(ln.vars), ln.vars[0].name)
				if err != nil {
					return err
				}
				for c := range ln.vars {
					cols[c] = append(cols[c], vals[c])
				}
			}
			for c, v := range ln.vars {
				if err := r.checkValues(v, cols[c]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// sampleReader walks the lines of a sample input.
type sampleReader struct {
	rows [][]string
	row  int
	env  map[string]*big.Int
}

// ints reads one line of exactly n integers.
func (r *sampleReader) ints(n int, what string) ([]*big.Int, error) {
	if r.row >= len(r.rows) {
		return nil, fmt.Errorf("the sample ends where %s should be", what)
	}
	f := r.rows[r.row]
	if len(f) != n {
		return nil, fmt.Errorf("line %d has %d values where %s needs %d", r.row+1, len(f), what, n)
	}
	out := make([]*big.Int, n)
	for i, s := range f {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not an integer (%s)", r.row+1, s, what)
		}
		out[i] = v
	}
	r.row++
	return out, nil
}

func (r *sampleReader) checkRange(v *cvar, x *big.Int) error {
	lo, err := v.lo.eval(r.env)
	if err != nil {
		return err
	}
	hi, err := v.hi.eval(r.env)
	if err != nil {
		return err
	}
	if x.Cmp(lo) < 0 || x.Cmp(hi) > 0 {
		return fmt.Errorf("%s = %s is outside %s…%s", displayName(v), x, lo, hi)
	}
	return nil
}

func (r *sampleReader) checkValues(v *cvar, xs []*big.Int) error {
	for _, x := range xs {
		if err := r.checkRange(v, x); err != nil {
			return err
		}
	}
	return nil
}

// pyName is the Python variable of a constraint variable (prefixed so that
// names such as "in" or "sum" cannot clash with Python's).
func pyName(name string) string { return "v_" + name }

// pythonGenerator writes the generator program for a spec and layout: a
// header (usage, the constraints and layout as comments, the runtime), the
// function that builds one test, and main, which builds one or T tests
// within the size budget.
func pythonGenerator(sp *spec, l *layout, constraints string) (string, error) {
	order, err := sp.scalarOrder()
	if err != nil {
		return "", err
	}
	budget, capVars := sp.sizeBudget()
	w := &pyWriter{}
	w.header(l, constraints, budget)
	w.line("")
	w.line("")
	w.line("def block(rng, mode, cap):")
	w.line(`    """One test: its lines and size, or None when the choices missed a constraint."""`)
	sizeTerms := w.picks(sp, order, capVars)
	w.output(l, sizeTerms)
	w.line("")
	w.line("")
	w.main(sp)
	return w.b.String(), nil
}

// sizeBudget returns the budget of all tests' sizes (the cap on a sum over
// all tests, or defaultBudget) and the scalars it caps (the summed one, or
// the lengths).
func (sp *spec) sizeBudget() (string, map[string]bool) {
	budget := fmt.Sprint(defaultBudget)
	capVars := sp.lengthScalars()
	if sp.sumCap != nil {
		if v, err := sp.sumCap.eval(nil); err == nil && v.Sign() > 0 {
			budget = v.String()
			if sv := sp.byName[sp.sumVar]; sv != nil && sv.kind == scalarVar {
				capVars = map[string]bool{sp.sumVar: true}
			}
		}
	}
	return budget, capVars
}

// pyWriter accumulates a Python program line by line.
type pyWriter struct{ b strings.Builder }

// line writes one line; format is always a format (%% for a percent sign).
func (w *pyWriter) line(format string, args ...any) { fmt.Fprintf(&w.b, format+"\n", args...) }

// header writes the docstring, the constraints and layout as comments, the
// runtime and the budget.
func (w *pyWriter) header(l *layout, constraints, budget string) {
	w.line("#!/usr/bin/env python3")
	w.line(`"""Test-case generator written by AlgoItny's offline provider.`)
	w.line("")
	w.line("Usage: python3 gen.py SEED [INDEX]")
	w.line("INDEX (default: SEED) chooses the kind of test: 0 minimal, 1 maximal,")
	w.line("2 maximal sizes with random values, 3 and 4 small, then mostly random.")
	w.line("The same SEED and INDEX always print the same test.")
	w.line(`"""`)
	w.line("")
	// The constraints are user text: as comments, one per line, they
	// cannot end up as code.
	w.line("# Constraints:")
	for _, c := range pyCommentLines(constraints) {
		w.line("#     %s", c)
	}
	w.line("# Input layout:")
	for _, d := range l.describe() {
		w.line("#     %s", d)
	}
	w.b.WriteString(pythonRuntime)
	w.line("BUDGET = %s", budget)
}

// picks writes the choices of block(): scalars in dependency order, then
// strings and arrays. It returns the terms of the test's size.
func (w *pyWriter) picks(sp *spec, order []*cvar, capVars map[string]bool) []string {
	for _, v := range order {
		if v == sp.multi {
			continue
		}
		hi := v.hi.python()
		if capVars[v.name] {
			hi = fmt.Sprintf("min(%s, max(%s, cap))", hi, v.lo.python())
		}
		w.line("    %s = pick(rng, mode, %s, %s)", pyName(v.name), v.lo.python(), hi)
		w.line("    if %s is None:", pyName(v.name))
		w.line("        return None")
	}
	var sizeTerms []string
	for _, v := range sp.vars {
		switch v.kind {
		case stringVar:
			hi := v.hi.python()
			if sp.sumCap == nil || sp.sumVar == v.name {
				hi = fmt.Sprintf("min(%s, max(%s, cap))", hi, v.lo.python())
			}
			w.line("    %s = word(rng, mode, pick(rng, mode, %s, %s), %q)", pyName(v.name), v.lo.python(), hi, v.alphabet)
			w.line("    if %s is None:", pyName(v.name))
			w.line("        return None")
			if sp.sumCap == nil || sp.sumVar == v.name {
				sizeTerms = append(sizeTerms, fmt.Sprintf("len(%s)", pyName(v.name)))
			}
		case arrayVar:
			w.line("    %s = ints(rng, mode, %s, %s, %s, %s)", pyName(v.name), v.length.python(), v.lo.python(), v.hi.python(), pyBool(v.distinct))
			w.line("    if %s is None:", pyName(v.name))
			w.line("        return None")
			switch v.sorted {
			case 1:
				w.line("    %s.sort()", pyName(v.name))
			case -1:
				w.line("    %s.sort(reverse=True)", pyName(v.name))
			}
			if sp.sumCap == nil {
				sizeTerms = append(sizeTerms, fmt.Sprintf("len(%s)", pyName(v.name)))
			}
		}
	}
	if sv := sp.byName[sp.sumVar]; sp.sumCap != nil && sv != nil && sv.kind == scalarVar {
		sizeTerms = []string{pyName(sv.name)}
	}
	if len(sizeTerms) == 0 {
		sizeTerms = []string{"1"}
	}
	return sizeTerms
}

// output writes the end of block(): the test's lines in the layout's order
// and its size.
func (w *pyWriter) output(l *layout, sizeTerms []string) {
	w.line("    out = []")
	for _, ln := range l.block {
		switch ln.kind {
		case lineScalars:
			var names []string
			for _, v := range ln.vars {
				names = append(names, pyName(v.name))
			}
			w.line("    out.append(\" \".join(map(str, [%s])))", strings.Join(names, ", "))
		case lineString:
			w.line("    out.append(%s)", pyName(ln.vars[0].name))
		case lineRow:
			w.line("    out.append(\" \".join(map(str, %s)))", pyName(ln.vars[0].name))
		case lineColumns:
			var names []string
			for _, v := range ln.vars {
				names = append(names, pyName(v.name))
			}
			w.line("    for row in zip(%s):", strings.Join(names, ", "))
			w.line("        out.append(\" \".join(map(str, row)))")
		}
	}
	w.line("    return out, %s", strings.Join(sizeTerms, " + "))
}

// main writes main(): the seed and index, then one test, or T tests sharing
// the budget.
func (w *pyWriter) main(sp *spec) {
	w.line("def main():")
	w.line("    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0")
	w.line("    index = int(sys.argv[2]) if len(sys.argv) > 2 else seed")
	w.line("    rng = random.Random(seed * 1000003 + index)")
	w.line("    mode = MODES[index %% len(MODES)]")
	if m := sp.multi; m != nil {
		w.line("    tests = None")
		w.line("    for k in range(100):")
		w.line("        tests = pick(rng, mode if k == 0 else \"random\", %s, min(%s, max(%s, BUDGET)))", m.lo.python(), m.hi.python(), m.lo.python())
		w.line("        if tests is not None:")
		w.line("            break")
		w.line("    if tests is None:")
		w.line("        raise SystemExit(\"generator: no valid number of tests\")")
		w.line("    lines = [str(tests)]")
		w.line("    left = BUDGET")
		w.line("    for t in range(tests):")
		w.line("        out, size = attempt(rng, mode, max(1, left - (tests - t - 1)))")
		w.line("        left -= size")
		w.line("        lines.extend(out)")
	} else {
		w.line("    lines, _ = attempt(rng, mode, BUDGET)")
	}
	w.line("    sys.stdout.write(\"\\n\".join(lines) + \"\\n\")")
	w.line("")
	w.line("")
	w.line("if __name__ == \"__main__\":")
	w.line("    main()")
}

// pyCommentLines splits text into lines safe inside Python comments: no
// line breaks of any kind (Python also ends lines at "\r") and no control
// characters.
func pyCommentLines(text string) []string {
	text = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\f", "\n", "\v", "\n").Replace(text)
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.Map(func(r rune) rune {
			if r == '\t' {
				return ' '
			}
			if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
				return -1
			}
			return r
		}, l)
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pythonRuntime holds the helpers every generated program shares.
const pythonRuntime = `
import random
import sys

MODES = ["min", "max", "maxrand", "small", "small", "random", "random", "random", "small", "random"]


def small_range(lo, hi):
    a, b = max(lo, -10), min(hi, 10)
    if a > b:
        a, b = lo, min(hi, lo + 10)
    return a, b


def pick(rng, mode, lo, hi):
    """A value in [lo, hi] for the mode, or None if the range is empty."""
    if lo > hi:
        return None
    if mode == "min":
        return lo
    if mode in ("max", "maxrand"):
        return hi
    if mode == "small":
        a, b = small_range(lo, hi)
        return rng.randint(a, b)
    if hi - lo > 1000 and rng.random() < 0.5:
        # Spread sizes over every order of magnitude.
        span = hi - lo
        k = rng.randint(0, span.bit_length())
        return lo + rng.randint(0, min(span, (1 << k) - 1))
    return rng.randint(lo, hi)


def ints(rng, mode, n, lo, hi, distinct):
    """n values in [lo, hi] for the mode, or None if impossible."""
    if n < 0 or lo > hi:
        return None
    if distinct:
        if hi - lo + 1 < n:
            return None
        if mode == "min":
            return list(range(lo, lo + n))
        if mode == "max":
            return list(range(hi, hi - n, -1))
        return rng.sample(range(lo, hi + 1), n)
    if mode == "min":
        return [lo] * n
    if mode == "max":
        return [hi] * n
    if mode == "small":
        a, b = small_range(lo, hi)
        return [rng.randint(a, b) for _ in range(n)]
    return [rng.randint(lo, hi) for _ in range(n)]


def word(rng, mode, n, alphabet):
    """A string of length n over alphabet, or None."""
    if n is None or n < 0:
        return None
    if mode == "min":
        return alphabet[0] * n
    if mode == "small":
        alphabet = alphabet[:3]
    return "".join(rng.choice(alphabet) for _ in range(n))


def attempt(rng, mode, cap):
    """A test for the mode, retrying random choices that miss a constraint."""
    for k in range(300):
        m = mode
        if k > 0:
            m = "small" if k < 100 and mode in ("min", "small") else "random"
        r = block(rng, m, cap)
        if r is not None:
            return r
    raise SystemExit("generator: could not satisfy the constraints")

`
