package analysis

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads the free-text constraints of a problem ("1 ≤ N ≤ 10^5,
// 1 ≤ A_i ≤ 10^9", "1 <= a, b <= 10", "-10^9 ≤ A_i ≤ 10^9", "2 ≤ K ≤ N",
// "1 ≤ |S| ≤ 100", LaTeX or Unicode) into variables with ranges, for the
// offline generator. It recognises chains of relations and ignores the
// prose around them; what it cannot use is reported, not guessed.

// tokKind is the kind of a constraint token.
type tokKind int

const (
	tNum tokKind = iota
	tIdent
	tRel
	tComma
	tLParen
	tRParen
	tPipe
	tOp
	tEllipsis
	tOther
)

// token is one token of constraint text.
type token struct {
	kind  tokKind
	text  string   // identifier name, operator, relation
	num   *big.Int // tNum
	sub   string   // subscript of an identifier ("i", "1", "N"); "" if none
	space bool     // whitespace before the token
}

var bracedPowerRE = regexp.MustCompile(`\^\{([^{}]*)\}`)

var superscripts = strings.NewReplacer("⁰", "0", "¹", "1", "²", "2", "³", "3", "⁴", "4", "⁵", "5", "⁶", "6", "⁷", "7", "⁸", "8", "⁹", "9")

// normalizeConstraints maps the many spellings of relations, products and
// ellipses onto one each.
func normalizeConstraints(s string) string {
	s = LatexToText(s)
	// Superscript digits: 10⁵ → 10^5.
	var b strings.Builder
	prevSup := false
	for _, r := range s {
		sup := strings.ContainsRune("⁰¹²³⁴⁵⁶⁷⁸⁹", r)
		if sup && !prevSup {
			b.WriteByte('^')
		}
		b.WriteRune(r)
		prevSup = sup
	}
	s = superscripts.Replace(b.String())
	// Braced exponents that were not LaTeX math: 10^{5} → 10^(5).
	s = bracedPowerRE.ReplaceAllString(s, "^($1)")
	s = strings.ReplaceAll(s, "**", "^")
	return strings.NewReplacer(
		"<=", "≤", ">=", "≥", "!=", "≠", "=<", "≤", "=>", "≥",
		"≦", "≤", "⩽", "≤", "≧", "≥", "⩾", "≥", "＜", "<", "＞", ">", "＝", "=",
		"−", "-", "–", "-", "×", "*", "·", "*", "⋅", "*", "∙", "*",
		"...", "…", "⋯", "…", "．．．", "…",
		"，", ",", "、", ",", "（", "(", "）", ")", "｜", "|", "\u00a0", " ",
	).Replace(s)
}

// tokenize splits one line of normalized constraint text into tokens.
func tokenize(s string) []token {
	var toks []token
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			space = true
			i += size
			continue
		case r >= '0' && r <= '9':
			t, n := scanNumber(s[i:])
			t.space = space
			toks = append(toks, t)
			i += n
		case r < utf8.RuneSelf && (unicode.IsLetter(r)):
			j := i
			for j < len(s) && (isASCIILetter(s[j]) || isDigit(s[j])) {
				j++
			}
			t := token{kind: tIdent, text: s[i:j], space: space}
			// A subscript: A_i, A_{i}, A_1, A[i].
			if j < len(s) && (s[j] == '_' || s[j] == '[') {
				if sub, n := scanSubscript(s[j:]); n > 0 {
					t.sub = sub
					j += n
				}
			}
			toks = append(toks, t)
			i = j
		case strings.ContainsRune("≤<≥>≠=", r):
			toks = append(toks, token{kind: tRel, text: string(r), space: space})
			i += size
		case r == ',':
			toks = append(toks, token{kind: tComma, text: ",", space: space})
			i += size
		case r == '(':
			toks = append(toks, token{kind: tLParen, text: "(", space: space})
			i += size
		case r == ')':
			toks = append(toks, token{kind: tRParen, text: ")", space: space})
			i += size
		case r == '|':
			toks = append(toks, token{kind: tPipe, text: "|", space: space})
			i += size
		case strings.ContainsRune("+-*/^", r):
			toks = append(toks, token{kind: tOp, text: string(r), space: space})
			i += size
		case r == '…':
			toks = append(toks, token{kind: tEllipsis, text: "…", space: space})
			i += size
		default:
			toks = append(toks, token{kind: tOther, text: string(r), space: space})
			i += size
		}
		space = false
	}
	return toks
}

// scanNumber reads an integer at the start of s, with thousands separators
// ("100,000", "100 000") and exponent notation ("1e5"). A decimal point
// makes the token tOther: real-valued constraints are not supported.
func scanNumber(s string) (token, int) {
	j := 0
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	digits := s[:j]
	// Thousands groups: "100,000" or "100 000", a separator followed by
	// exactly three digits, after a group of at most three.
	for j+4 <= len(s) && (s[j] == ',' || s[j] == ' ') && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) &&
		(j+4 == len(s) || !isDigit(s[j+4])) && groupedBySpaces(s[:j]) {
		digits += s[j+1 : j+4]
		j += 4
	}
	if j < len(s) && s[j] == '.' && j+1 < len(s) && isDigit(s[j+1]) {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		return token{kind: tOther, text: s[:k]}, k
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') && isDigit(s[j+1]) {
		k := j + 1
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == len(s) || !isASCIILetter(s[k]) {
			exp, _ := new(big.Int).SetString(s[j+1:k], 10)
			if exp.IsInt64() && exp.Int64() <= 100 {
				n.Mul(n, new(big.Int).Exp(big.NewInt(10), exp, nil))
				return token{kind: tNum, text: s[:k], num: n}, k
			}
		}
	}
	return token{kind: tNum, text: s[:j], num: n}, j
}

// groupedBySpaces reports whether the number ending s may continue with a
// group of three digits ("100 000", "100,000"): its own last group has at
// most three digits.
func groupedBySpaces(s string) bool {
	k := len(s)
	for k > 0 && isDigit(s[k-1]) {
		k--
	}
	return len(s)-k <= 3
}

// scanSubscript reads "_i", "_{i}", "_{i,j}", "_1", "[i]" at the start of s.
func scanSubscript(s string) (string, int) {
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 2 {
			return "", 0
		}
		return strings.TrimSpace(s[1:end]), end + 1
	}
	if len(s) < 2 {
		return "", 0
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 {
			return "", 0
		}
		return strings.ReplaceAll(s[2:end], " ", ""), end + 1
	}
	j := 1
	for j < len(s) && (isASCIILetter(s[j]) || isDigit(s[j])) {
		j++
	}
	if j == 1 {
		return "", 0
	}
	return s[1:j], j
}

// expr is a bound: a number, a variable, or arithmetic on them.
type expr struct {
	op   string // "num", "ref", "+", "-", "*", "/", "^", "neg", "min", "max"
	num  *big.Int
	name string
	args []*expr
}

func numExpr(v int64) *expr { return &expr{op: "num", num: big.NewInt(v)} }

// binary builds a op b, folding constants.
func binary(op string, a, b *expr) *expr {
	e := &expr{op: op, args: []*expr{a, b}}
	if a.op == "num" && b.op == "num" {
		if v, err := e.eval(nil); err == nil {
			return &expr{op: "num", num: v}
		}
	}
	return e
}

func (e *expr) refs(out map[string]bool) {
	if e == nil {
		return
	}
	if e.op == "ref" {
		out[e.name] = true
	}
	for _, a := range e.args {
		a.refs(out)
	}
}

// String renders e for notes and errors.
func (e *expr) String() string {
	switch e.op {
	case "num":
		return e.num.String()
	case "ref":
		return e.name
	case "neg":
		return "-" + e.args[0].String()
	case "min", "max":
		return e.op + "(" + e.args[0].String() + ", " + e.args[1].String() + ")"
	}
	return "(" + e.args[0].String() + e.op + e.args[1].String() + ")"
}

// python renders e as a Python expression over the variables v_NAME.
func (e *expr) python() string {
	switch e.op {
	case "num":
		return e.num.String()
	case "ref":
		return pyName(e.name)
	case "neg":
		return "(-" + e.args[0].python() + ")"
	case "min", "max":
		return e.op + "(" + e.args[0].python() + ", " + e.args[1].python() + ")"
	case "/":
		return "(" + e.args[0].python() + " // " + e.args[1].python() + ")"
	case "^":
		return "(" + e.args[0].python() + " ** " + e.args[1].python() + ")"
	}
	return "(" + e.args[0].python() + " " + e.op + " " + e.args[1].python() + ")"
}

var errUnbound = errors.New("unbound variable")

// eval computes e with the variables of env.
func (e *expr) eval(env map[string]*big.Int) (*big.Int, error) {
	switch e.op {
	case "num":
		return new(big.Int).Set(e.num), nil
	case "ref":
		v, ok := env[e.name]
		if !ok {
			return nil, fmt.Errorf("%w %s", errUnbound, e.name)
		}
		return new(big.Int).Set(v), nil
	}
	var vs []*big.Int
	for _, a := range e.args {
		v, err := a.eval(env)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	switch e.op {
	case "neg":
		return vs[0].Neg(vs[0]), nil
	case "+":
		return vs[0].Add(vs[0], vs[1]), nil
	case "-":
		return vs[0].Sub(vs[0], vs[1]), nil
	case "*":
		return vs[0].Mul(vs[0], vs[1]), nil
	case "/":
		if vs[1].Sign() == 0 {
			return nil, errors.New("division by zero")
		}
		return vs[0].Div(vs[0], vs[1]), nil
	case "^":
		if vs[1].Sign() < 0 || vs[1].Cmp(big.NewInt(1000)) > 0 {
			return nil, errors.New("exponent out of range")
		}
		return vs[0].Exp(vs[0], vs[1], nil), nil
	case "min":
		if vs[0].Cmp(vs[1]) <= 0 {
			return vs[0], nil
		}
		return vs[1], nil
	case "max":
		if vs[0].Cmp(vs[1]) >= 0 {
			return vs[0], nil
		}
		return vs[1], nil
	}
	return nil, fmt.Errorf("unknown operator %q", e.op)
}

// exprParser parses bounds from a token slice, with backtracking by index.
type exprParser struct{ toks []token }

func (p *exprParser) at(i int, k tokKind, text string) bool {
	return i < len(p.toks) && p.toks[i].kind == k && (text == "" || p.toks[i].text == text)
}

// expr := term (('+'|'-') term)*
func (p *exprParser) expr(i int) (*expr, int, bool) {
	e, i, ok := p.term(i)
	if !ok {
		return nil, i, false
	}
	for p.at(i, tOp, "+") || p.at(i, tOp, "-") {
		op := p.toks[i].text
		r, j, ok := p.term(i + 1)
		if !ok {
			break
		}
		e, i = binary(op, e, r), j
	}
	return e, i, true
}

// term := unary (('*'|'/'|implicit) unary)*
func (p *exprParser) term(i int) (*expr, int, bool) {
	e, i, ok := p.unary(i)
	if !ok {
		return nil, i, false
	}
	for {
		switch {
		case p.at(i, tOp, "*") || p.at(i, tOp, "/"):
			op := p.toks[i].text
			r, j, ok := p.unary(i + 1)
			if !ok {
				return e, i, true
			}
			e, i = binary(op, e, r), j
		case i < len(p.toks) && !p.toks[i].space && (p.toks[i].kind == tIdent || p.toks[i].kind == tLParen):
			// Implicit product: 2N, N(N-1).
			r, j, ok := p.unary(i)
			if !ok {
				return e, i, true
			}
			e, i = binary("*", e, r), j
		default:
			return e, i, true
		}
	}
}

// unary := '-' unary | power
func (p *exprParser) unary(i int) (*expr, int, bool) {
	if p.at(i, tOp, "-") {
		e, j, ok := p.unary(i + 1)
		if !ok {
			return nil, i, false
		}
		if e.op == "num" {
			return &expr{op: "num", num: new(big.Int).Neg(e.num)}, j, true
		}
		return &expr{op: "neg", args: []*expr{e}}, j, true
	}
	return p.power(i)
}

// power := atom ('^' unary)?
func (p *exprParser) power(i int) (*expr, int, bool) {
	e, i, ok := p.atom(i)
	if !ok {
		return nil, i, false
	}
	if p.at(i, tOp, "^") {
		r, j, ok := p.unary(i + 1)
		if ok {
			if e.op == "num" && r.op == "num" && r.num.Sign() >= 0 && r.num.Cmp(big.NewInt(1000)) <= 0 {
				return &expr{op: "num", num: new(big.Int).Exp(e.num, r.num, nil)}, j, true
			}
			return &expr{op: "^", args: []*expr{e, r}}, j, true
		}
	}
	return e, i, true
}

// atom := NUM | IDENT | '(' expr ')' | min/max '(' expr ',' expr ')'
func (p *exprParser) atom(i int) (*expr, int, bool) {
	if i >= len(p.toks) {
		return nil, i, false
	}
	t := p.toks[i]
	switch t.kind {
	case tNum:
		return &expr{op: "num", num: t.num}, i + 1, true
	case tIdent:
		if (t.text == "min" || t.text == "max") && p.at(i+1, tLParen, "") {
			a, j, ok := p.expr(i + 2)
			if ok && p.at(j, tComma, "") {
				b, k, ok := p.expr(j + 1)
				if ok && p.at(k, tRParen, "") {
					return &expr{op: t.text, args: []*expr{a, b}}, k + 1, true
				}
			}
			return nil, i, false
		}
		if t.sub != "" || !isVarName(t.text) {
			return nil, i, false
		}
		return &expr{op: "ref", name: t.text}, i + 1, true
	case tLParen:
		e, j, ok := p.expr(i + 1)
		if ok && p.at(j, tRParen, "") {
			return e, j + 1, true
		}
	}
	return nil, i, false
}

// notVarNames are words that look like short identifiers in prose.
var notVarNames = set("an", "and", "are", "as", "at", "be", "by", "for", "if", "in", "is", "it", "of", "on", "or",
	"the", "to", "all", "any", "min", "max", "sum", "mod", "log", "each", "case", "line", "than", "that", "with", "not")

// isVarName reports whether an identifier can name a variable: at most four
// characters and not an English word of the prose around constraints.
func isVarName(s string) bool {
	return s != "" && len(s) <= 4 && !notVarNames[strings.ToLower(s)]
}

// varRef is one item of the middle of a chain: "N", "A_i", "|S|".
type varRef struct {
	name   string
	sub    string // the subscript of an element ("i", "1", "N")
	pipe   bool   // |X|: a string length (or an absolute value)
	length string // A_1, …, A_N: the length named by the last subscript
}

// varList := item (',' (item | '…'))*
func (p *exprParser) varList(i int) ([]varRef, int, bool) {
	var refs []varRef
	for {
		var r varRef
		switch {
		case p.at(i, tPipe, "") && p.at(i+1, tIdent, "") && p.at(i+2, tPipe, ""):
			t := p.toks[i+1]
			if !isVarName(t.text) {
				return nil, i, false
			}
			r = varRef{name: t.text, sub: t.sub, pipe: true}
			i += 3
		case p.at(i, tIdent, "") && isVarName(p.toks[i].text):
			t := p.toks[i]
			r = varRef{name: t.text, sub: t.sub}
			i++
		default:
			return nil, i, false
		}
		refs = append(refs, r)
		// ", …," and ", …" between items
		j := i
		for p.at(j, tComma, "") && p.at(j+1, tEllipsis, "") {
			j += 2
		}
		if p.at(j, tEllipsis, "") {
			j++
		}
		if !p.at(j, tComma, "") {
			if j != i && p.at(j, tIdent, "") {
				i = j // "A_1 … A_N"
				continue
			}
			break
		}
		if !(p.at(j+1, tIdent, "") || p.at(j+1, tPipe, "")) {
			break
		}
		i = j + 1
	}
	return collapseList(refs), i, true
}

// collapseList turns "A_1, A_2, …, A_N" into one element reference with
// length N.
func collapseList(refs []varRef) []varRef {
	var out []varRef
	for _, r := range refs {
		if n := len(out); n > 0 && r.sub != "" && out[n-1].name == r.name && out[n-1].sub != "" {
			if !isAllDigits(r.sub) {
				out[n-1].length = r.sub
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func isAllDigits(s string) bool {
	return s != "" && strings.TrimFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }) == ""
}

// clause is one parsed relation chain: lo ≤ vars ≤ hi (either may be nil
// for a one-sided relation).
type clause struct {
	vars   []varRef
	lo, hi *expr
	// abs marks |x| ≤ E, a bound on an absolute value.
	abs bool
	// order is +1 for a sorted chain "1 ≤ A_1 ≤ A_2 ≤ … ≤ A_N ≤ 10^9",
	// -1 for a descending one; strict says the elements also differ.
	order  int
	strict bool
}

func isLess(t token) bool    { return t.kind == tRel && (t.text == "≤" || t.text == "<") }
func isGreater(t token) bool { return t.kind == tRel && (t.text == "≥" || t.text == ">") }

// adjust turns a strict bound into an inclusive one for integers.
func adjust(e *expr, strict bool, delta int64) *expr {
	if !strict {
		return e
	}
	if e.op == "num" {
		return &expr{op: "num", num: new(big.Int).Add(e.num, big.NewInt(delta))}
	}
	return &expr{op: "+", args: []*expr{e, numExpr(delta)}}
}

// clauseEnds reports whether a clause may end before token i: not inside an
// expression or a longer chain.
func (p *exprParser) clauseEnds(i int) bool {
	if i >= len(p.toks) {
		return true
	}
	t := p.toks[i]
	return t.kind != tRel && t.kind != tOp && !(t.kind == tIdent && !t.space) && !(t.kind == tNum && !t.space)
}

// parseClauses finds the relation chains of one line.
func parseClauses(toks []token) (clauses []clause, used bool) {
	p := &exprParser{toks: toks}
	for i := 0; i < len(toks); {
		if c, j, ok := p.clauseAt(i); ok {
			clauses = append(clauses, c)
			i = j
			continue
		}
		i++
	}
	return clauses, len(clauses) > 0
}

// sortedChain reads "lo ≤ A_1 < A_2 < … < A_N ≤ hi" (or with ≥): the
// elements of one array between two bounds, in order.
func (p *exprParser) sortedChain(i int) (clause, int, bool) {
	lo, j, ok := p.expr(i)
	if !ok || j >= len(p.toks) || !(isLess(p.toks[j]) || isGreater(p.toks[j])) {
		return clause{}, i, false
	}
	less := isLess(p.toks[j])
	sameDir := func(k int) bool {
		return k < len(p.toks) && (less && isLess(p.toks[k]) || !less && isGreater(p.toks[k]))
	}
	first := p.toks[j]
	j++
	var name, last string
	elems, strict := 0, true
	for {
		if !p.at(j, tIdent, "") || p.toks[j].sub == "" || (name != "" && p.toks[j].text != name) {
			return clause{}, i, false
		}
		name, last = p.toks[j].text, p.toks[j].sub
		elems++
		j++
		if !sameDir(j) {
			return clause{}, i, false
		}
		rel := p.toks[j]
		if p.at(j+1, tEllipsis, "") && sameDir(j+2) {
			j += 2 // "< … <"
		}
		// The last relation is followed by the upper bound, not an element.
		if hi, k, ok := p.expr(j + 1); ok && (!p.at(j+1, tIdent, "") || p.toks[j+1].sub == "") && p.clauseEnds(k) {
			if elems < 2 {
				return clause{}, i, false
			}
			c := clause{vars: []varRef{{name: name, sub: "i"}}, order: 1, strict: strict}
			if !isAllDigits(last) && !isIndexName(last) {
				c.vars[0].length = last
			}
			if less {
				c.lo, c.hi = adjust(lo, first.text == "<", 1), adjust(hi, rel.text == "<", -1)
			} else {
				c.order = -1
				c.hi, c.lo = adjust(lo, first.text == ">", -1), adjust(hi, rel.text == ">", 1)
			}
			return c, k, true
		}
		if rel.text == "≤" || rel.text == "≥" {
			strict = false
		}
		j++
	}
}

// startsClause reports whether a clause may start at token i: not in the
// middle of an expression or after a relation (so that "A_i + B_i ≤ 10" is
// not read as "B_i ≤ 10").
func (p *exprParser) startsClause(i int) bool {
	if i == 0 {
		return true
	}
	prev, t := p.toks[i-1], p.toks[i]
	switch prev.kind {
	case tOp, tRel:
		return false
	case tNum, tIdent:
		return t.space
	}
	return true
}

// clauseAt tries the clause forms at token i.
func (p *exprParser) clauseAt(i int) (clause, int, bool) {
	if !p.startsClause(i) {
		return clause{}, i, false
	}
	// lo ≤ A_1 < A_2 < … < A_N ≤ hi: a sorted array
	if c, j, ok := p.sortedChain(i); ok {
		return c, j, true
	}
	// lo ≤ vars ≤ hi, hi ≥ vars ≥ lo
	if e1, j, ok := p.expr(i); ok && j < len(p.toks) && (isLess(p.toks[j]) || isGreater(p.toks[j])) {
		r1 := p.toks[j]
		if vars, k, ok := p.varList(j + 1); ok && k < len(p.toks) && (isLess(r1) && isLess(p.toks[k]) || isGreater(r1) && isGreater(p.toks[k])) {
			r2 := p.toks[k]
			if e2, m, ok := p.expr(k + 1); ok && p.clauseEnds(m) {
				if isLess(r1) {
					return clause{vars: vars, lo: adjust(e1, r1.text == "<", 1), hi: adjust(e2, r2.text == "<", -1)}, m, true
				}
				return clause{vars: vars, hi: adjust(e1, r1.text == ">", -1), lo: adjust(e2, r2.text == ">", 1)}, m, true
			}
		}
		// lo ≤ vars (one-sided)
		{
			if vars, k, ok := p.varList(j + 1); ok && p.clauseEnds(k) {
				if isLess(r1) {
					return clause{vars: vars, lo: adjust(e1, r1.text == "<", 1)}, k, true
				}
				return clause{vars: vars, hi: adjust(e1, r1.text == ">", -1)}, k, true
			}
		}
	}
	// vars ≤ hi, vars ≥ lo, vars = e, |x| ≤ e
	if vars, j, ok := p.varList(i); ok && j < len(p.toks) && p.toks[j].kind == tRel && p.toks[j].text != "≠" {
		r := p.toks[j]
		if e, k, ok := p.expr(j + 1); ok && p.clauseEnds(k) {
			c := clause{vars: vars}
			switch {
			case r.text == "=":
				c.lo, c.hi = e, e
			case isLess(r):
				c.hi = adjust(e, r.text == "<", -1)
				if len(vars) == 1 && vars[0].pipe && !stringLike(vars[0]) {
					c.abs = true
					c.lo = &expr{op: "neg", args: []*expr{c.hi}}
					if c.hi.op == "num" {
						c.lo = &expr{op: "num", num: new(big.Int).Neg(c.hi.num)}
					}
				}
			default:
				c.lo = adjust(e, r.text == ">", 1)
			}
			return c, k, true
		}
	}
	return clause{}, i, false
}

// stringLike guesses whether |X| is the length of a string (S, T, …) rather
// than an absolute value.
func stringLike(r varRef) bool {
	return r.sub == "" && strings.ContainsAny(r.name[:1], "STUWPX") && len(r.name) == 1
}

// varKind says what a constraint variable is.
type varKind int

const (
	scalarVar varKind = iota
	arrayVar
	stringVar
)

// cvar is one variable of the input.
type cvar struct {
	name     string
	kind     varKind
	lo, hi   *expr // value range; for a string, its length range
	length   *expr // array element count
	index    string
	group    int // clause the variable was declared in (arrays declared together share lines)
	order    int
	distinct bool
	alphabet string
	// guessedLen marks an array length taken from a default (N), which a
	// sample input may correct.
	guessedLen bool
	// sorted is +1 for an ascending array, -1 for a descending one.
	sorted int
}

// spec is what the constraints say about a problem's input.
type spec struct {
	vars    []*cvar // in order of first appearance
	byName  map[string]*cvar
	multi   *cvar // the test-case count T of a multi-test input, if any
	sumVar  string
	sumCap  *expr
	notes   []string
	ignored []string
}

var (
	guaranteeRE    = regexp.MustCompile(`(?i)guarantee|\btree\b|connected|graph|sorted|increasing|decreasing|palindrome|保証|木|連結|グラフ|트리|연결|그래프|보장`)
	stringLenRE    = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]?)\s+is\s+a\s+string\s+(?:of\s+length|with\s+length|whose\s+length\s+is)\s+`)
	jaStringLenRE  = regexp.MustCompile(`([A-Z][A-Za-z0-9]?)\s*は\s*長さ\s*(.+?)\s*(?:以上\s*(.+?)\s*以下\s*)?の\s*文字列`)
	sentencePartRE = regexp.MustCompile(`,\s+(?:and\s+)?|\s+and\s+|\s+but\s+`)
	distinctRE     = regexp.MustCompile(`(?i)distinct|pairwise different|all different|相異なる|互いに異なる|서로 다른|permutation|順列|순열`)
	permutationRE  = regexp.MustCompile(`(?i)permutation|順列|순열`)
	testCasesRE    = regexp.MustCompile(`(?i)test\s*cases?|testcases?|テストケース|테스트\s*케이스`)
	sumRE          = regexp.MustCompile(`(?i)(?:sum|total)\s+of\s+(?:all\s+)?(?:the\s+)?(?:values\s+of\s+)?\|?([A-Za-z]\w?)\|?\b[^≤.]*?(?:does\s+not\s+exceed|doesn't\s+exceed|do\s+not\s+exceed|is\s+at\s+most|not\s+exceeding|≤)\s*`)
	sumSymbolRE    = regexp.MustCompile(`(?:∑|Σ)\s*\|?([A-Za-z]\w?)(?:_\w+)?\|?\s*≤\s*`)
	upperAlphaRE   = regexp.MustCompile(`(?i)uppercase|upper-case|capital|英大文字|대문자`)
	lowerAlphaRE   = regexp.MustCompile(`(?i)lowercase|lower-case|英小文字|소문자`)
	digitAlphaRE   = regexp.MustCompile(`(?i)consists? of digits|only digits|数字のみ|숫자로만`)
	binaryAlphaRE  = regexp.MustCompile("(?i)(?:consists? of|only)\\s+(?:the\\s+)?(?:characters?\\s+)?`?0`?\\s+and\\s+`?1`?|0 と 1|0과 1")
)

// parseConstraints reads the constraint text (and the problem text around
// it, for words such as "distinct" and "test cases") into a spec. Its error
// says what could not be parsed. It works in three steps: tokenise every
// line, apply each line's clauses to the variables (with the sentences that
// say "distinct" and the sums over all tests), then resolve the ranges.
func parseConstraints(text string) (*spec, error) {
	norm := normalizeConstraints(text)
	lines := splitConstraintLines(norm)
	toksOf, subscripts := tokenizeLines(lines)
	r := &constraintReader{sp: &spec{byName: map[string]*cvar{}}, subscripts: subscripts, indexBounds: map[string][2]*expr{}}
	for n, line := range lines {
		if err := r.applyLine(line, toksOf[n]); err != nil {
			return nil, err
		}
	}
	r.sp.markUnequalElements(toksOf)
	if len(r.sp.vars) == 0 {
		return nil, errors.New("no ranges such as \"1 ≤ N ≤ 10^5\" found")
	}
	if err := r.sp.resolve(norm, r.indexBounds); err != nil {
		return nil, err
	}
	return r.sp, nil
}

// tokenizeLines tokenises each line and collects the subscripts that are
// index letters (A_i): they make "1 ≤ i ≤ N" the length of those arrays
// rather than a variable of the input.
func tokenizeLines(lines []string) ([][]token, map[string]bool) {
	toksOf := make([][]token, len(lines))
	subscripts := map[string]bool{}
	for n, line := range lines {
		toksOf[n] = tokenize(line)
		for _, t := range toksOf[n] {
			if t.kind == tIdent && isIndexName(t.sub) {
				subscripts[t.sub] = true
			}
		}
	}
	return toksOf, subscripts
}

// constraintReader applies constraint lines to a spec, clause by clause.
type constraintReader struct {
	sp *spec
	// subscripts are the index letters used as subscripts (see
	// tokenizeLines); indexBounds collects their ranges.
	subscripts  map[string]bool
	indexBounds map[string][2]*expr
	// order numbers the variables by first appearance; group numbers the
	// clauses (arrays declared together share input lines).
	order, group int
}

// applyLine applies one line: its clauses (a line with relations but no
// clause is noted as ignored), the arrays it calls distinct and the sum it
// bounds.
func (r *constraintReader) applyLine(line string, toks []token) error {
	sp := r.sp
	clauses, ok := parseClauses(toks)
	if c, found := stringLengthClause(line); found {
		clauses, ok = append(clauses, c), true
	}
	switch {
	case ok:
	case hasRelation(toks) && !sumRE.MatchString(line) && !sumSymbolRE.MatchString(line):
		sp.ignored = append(sp.ignored, strings.TrimSpace(line))
	case guaranteeRE.MatchString(line) && !distinctRE.MatchString(line):
		sp.ignored = append(sp.ignored, strings.TrimSpace(line))
	}
	for _, c := range clauses {
		r.group++
		for _, ref := range c.vars {
			if err := r.applyClause(c, ref); err != nil {
				return err
			}
		}
	}
	sp.markDistinct(line)
	sp.detectSum(line)
	return nil
}

// applyClause applies clause c to the variable ref names: an index letter's
// range goes to indexBounds; any other variable is declared on first sight
// (an array when subscripted, a string when between pipes) and takes the
// clause's bounds, order and subscript.
func (r *constraintReader) applyClause(c clause, ref varRef) error {
	if r.subscripts[ref.name] && ref.sub == "" && !ref.pipe {
		b := r.indexBounds[ref.name]
		b[0], b[1] = cmpExpr(c.lo, b[0]), cmpExpr(c.hi, b[1])
		r.indexBounds[ref.name] = b
		return nil
	}
	v := r.declare(c, ref)
	if c.order != 0 && v.kind == arrayVar {
		v.sorted, v.distinct = c.order, v.distinct || c.strict
	}
	if ref.sub != "" && v.kind == arrayVar {
		if err := v.applySubscript(ref); err != nil {
			return err
		}
	}
	if c.lo != nil && (v.lo == nil || c.hi != nil) {
		v.lo = c.lo
	}
	if c.hi != nil && (v.hi == nil || c.lo != nil) {
		v.hi = c.hi
	}
	return nil
}

// declare returns the variable ref names, declaring it in the current
// clause group when it is new.
func (r *constraintReader) declare(c clause, ref varRef) *cvar {
	if v := r.sp.byName[ref.name]; v != nil {
		return v
	}
	v := &cvar{name: ref.name, order: r.order, group: r.group}
	r.order++
	r.sp.byName[ref.name] = v
	r.sp.vars = append(r.sp.vars, v)
	switch {
	case ref.sub != "":
		v.kind = arrayVar
	case ref.pipe && !c.abs:
		v.kind = stringVar
	}
	return v
}

// applySubscript reads an array's length or index letter from a subscript:
// "A_1, …, A_N" or A_N give the length, A_i the index letter.
func (v *cvar) applySubscript(ref varRef) error {
	if strings.Contains(ref.sub, ",") {
		return fmt.Errorf("%s has two subscripts: grids are not supported", ref.name)
	}
	switch {
	case ref.length != "" && v.length == nil:
		v.length = &expr{op: "ref", name: ref.length}
	case isIndexName(ref.sub):
		v.index = ref.sub
	case !isAllDigits(ref.sub) && v.length == nil && ref.sub == strings.ToUpper(ref.sub):
		v.length = &expr{op: "ref", name: ref.sub}
	}
	return nil
}

// markDistinct reads "… and all values of b_i are distinct": the arrays
// named in the part of the sentence that says so are distinct.
func (sp *spec) markDistinct(line string) {
	for _, part := range sentencePartRE.Split(line, -1) {
		if !distinctRE.MatchString(part) {
			continue
		}
		for _, t := range tokenize(part) {
			if v := sp.byName[t.text]; t.kind == tIdent && v != nil && v.kind == arrayVar {
				v.distinct = true
			}
		}
	}
}

// detectSum reads a bound on the sum of a variable over all tests ("the sum
// of N over all test cases does not exceed 2·10^5", "∑N ≤ 2·10^5").
func (sp *spec) detectSum(line string) {
	if m := sumRE.FindStringSubmatchIndex(line); m != nil {
		sp.setSum(line[m[2]:m[3]], line[m[1]:])
	} else if m := sumSymbolRE.FindStringSubmatchIndex(line); m != nil {
		sp.setSum(line[m[2]:m[3]], line[m[1]:])
	}
}

// markUnequalElements reads ≠ between elements of one array (A_i ≠ A_j),
// which also means distinct.
func (sp *spec) markUnequalElements(toksOf [][]token) {
	for _, toks := range toksOf {
		for i := 1; i+1 < len(toks); i++ {
			if toks[i].kind == tRel && toks[i].text == "≠" && toks[i-1].kind == tIdent && toks[i+1].kind == tIdent &&
				toks[i-1].text == toks[i+1].text && toks[i-1].sub != "" {
				if v := sp.byName[toks[i-1].text]; v != nil {
					v.distinct = true
				}
			}
		}
	}
}

// stringLengthClause reads "S is a string of length N", "… of length
// between 1 and 100", "… of length at most 100" and "S は長さ N の文字列"
// as a clause on |S|.
func stringLengthClause(line string) (clause, bool) {
	parse := func(s string) *expr {
		p := &exprParser{toks: tokenize(s)}
		if e, _, ok := p.expr(0); ok {
			return e
		}
		return nil
	}
	if m := jaStringLenRE.FindStringSubmatch(line); m != nil {
		lo, hi := parse(m[2]), parse(m[2])
		if m[3] != "" {
			hi = parse(m[3])
		}
		if lo != nil && hi != nil {
			return clause{vars: []varRef{{name: m[1], pipe: true}}, lo: lo, hi: hi}, true
		}
		return clause{}, false
	}
	m := stringLenRE.FindStringSubmatchIndex(line)
	if m == nil {
		return clause{}, false
	}
	name := line[m[2]:m[3]]
	p := &exprParser{toks: tokenize(line[m[1]:])}
	c := clause{vars: []varRef{{name: name, pipe: true}}}
	switch {
	case p.at(0, tIdent, "between"):
		lo, i, ok := p.expr(1)
		if !ok || !p.at(i, tIdent, "and") {
			return clause{}, false
		}
		hi, _, ok := p.expr(i + 1)
		if !ok {
			return clause{}, false
		}
		c.lo, c.hi = lo, hi
	case p.at(0, tIdent, "at") && p.at(1, tIdent, "most"):
		hi, _, ok := p.expr(2)
		if !ok {
			return clause{}, false
		}
		c.lo, c.hi = numExpr(1), hi
	default:
		e, _, ok := p.expr(0)
		if !ok {
			return clause{}, false
		}
		c.lo, c.hi = e, e
	}
	return c, true
}

// setSum records "the sum of N over all test cases does not exceed E".
func (sp *spec) setSum(name, rest string) {
	p := &exprParser{toks: tokenize(rest)}
	if e, _, ok := p.expr(0); ok && sp.sumCap == nil {
		sp.sumVar, sp.sumCap = name, e
	}
}

// cmpExpr returns a if it is set, else b.
func cmpExpr(a, b *expr) *expr {
	if a != nil {
		return a
	}
	return b
}

func hasRelation(toks []token) bool {
	return slices.ContainsFunc(toks, func(t token) bool { return t.kind == tRel })
}

// isIndexName reports whether a name is an index (i, j, k), not a value.
func isIndexName(s string) bool { return s == "i" || s == "j" || s == "k" }

// splitConstraintLines splits constraint text into lines and sentences.
func splitConstraintLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		for part := range strings.SplitSeq(l, ";") {
			for sent := range strings.SplitSeq(part, "。") {
				if strings.TrimSpace(sent) != "" {
					out = append(out, sent)
				}
			}
		}
	}
	return out
}

// resolve completes the spec: array lengths, default bounds, dependency
// order, multi-test detection, string alphabets. Its error says which
// variable is incomplete or inconsistent.
func (sp *spec) resolve(text string, indexBounds map[string][2]*expr) error {
	if err := sp.resolveLengths(indexBounds); err != nil {
		return err
	}
	if err := sp.defaultBounds(); err != nil {
		return err
	}
	if err := sp.checkRefs(); err != nil {
		return err
	}
	if _, err := sp.scalarOrder(); err != nil {
		return err
	}
	sp.detectMulti(text)
	sp.chooseAlphabets(text)
	return sp.checkNonEmpty()
}

// resolveLengths gives every array without a length one: the range of its
// index letter (1 ≤ i ≤ N), else N (or n, or the first scalar), which a
// sample may correct (guessedLen).
func (sp *spec) resolveLengths(indexBounds map[string][2]*expr) error {
	var scalars []*cvar
	for _, v := range sp.vars {
		if v.kind == scalarVar {
			scalars = append(scalars, v)
		}
	}
	defaultLen := func() *cvar {
		for _, n := range []string{"N", "n"} {
			if v := sp.byName[n]; v != nil && v.kind == scalarVar {
				return v
			}
		}
		if len(scalars) > 0 {
			return scalars[0]
		}
		return nil
	}
	for _, v := range sp.vars {
		if v.kind != arrayVar || v.length != nil {
			continue
		}
		if b, ok := indexBounds[v.index]; ok && b[1] != nil {
			lo := b[0]
			if lo == nil {
				lo = numExpr(1)
			}
			v.length = simplify(&expr{op: "+", args: []*expr{&expr{op: "-", args: []*expr{b[1], lo}}, numExpr(1)}})
			continue
		}
		d := defaultLen()
		if d == nil {
			return fmt.Errorf("no length is given for %s (e.g. \"1 ≤ N ≤ 10^5\")", v.name)
		}
		v.length = &expr{op: "ref", name: d.name}
		v.guessedLen = true
	}
	return nil
}

// defaultBounds requires an upper bound of every variable and assumes 1 as
// the lower bound where none is given (noted for scalars).
func (sp *spec) defaultBounds() error {
	for _, v := range sp.vars {
		if v.hi == nil {
			return fmt.Errorf("no upper bound for %s", displayName(v))
		}
		if v.lo == nil {
			v.lo = numExpr(1)
			if v.kind == scalarVar {
				sp.notes = append(sp.notes, fmt.Sprintf("%s ≥ 1", v.name))
			}
		}
	}
	return nil
}

// checkRefs requires every reference in a bound or length to be a scalar
// with a range.
func (sp *spec) checkRefs() error {
	for _, v := range sp.vars {
		refs := map[string]bool{}
		v.lo.refs(refs)
		v.hi.refs(refs)
		v.length.refs(refs)
		for _, name := range slices.Sorted(mapKeys(refs)) {
			r := sp.byName[name]
			if r == nil || r.kind != scalarVar {
				return fmt.Errorf("the bounds of %s refer to %s, which has no range of its own", displayName(v), name)
			}
		}
	}
	return nil
}

// detectMulti recognises a multi-test input: T test cases, each described
// by the rest, when the text speaks of test cases and T (or t) is a scalar
// nothing else refers to.
func (sp *spec) detectMulti(text string) {
	if !testCasesRE.MatchString(text) || len(sp.vars) <= 1 {
		return
	}
	for _, name := range []string{"T", "t"} {
		if v := sp.byName[name]; v != nil && v.kind == scalarVar && !sp.referenced(name) {
			sp.multi = v
			return
		}
	}
}

// chooseAlphabets picks the letters of string variables from the text
// (binary, digits, upper case; lower case otherwise) and notes the arrays of
// a permutation as distinct.
func (sp *spec) chooseAlphabets(text string) {
	for _, v := range sp.vars {
		if v.kind == stringVar {
			v.alphabet = "abcdefghijklmnopqrstuvwxyz"
			switch {
			case binaryAlphaRE.MatchString(text):
				v.alphabet = "01"
			case digitAlphaRE.MatchString(text):
				v.alphabet = "0123456789"
			case upperAlphaRE.MatchString(text) && !lowerAlphaRE.MatchString(text):
				v.alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			}
		}
		if v.kind == arrayVar && permutationRE.MatchString(text) && v.distinct {
			sp.notes = append(sp.notes, fmt.Sprintf("%s holds distinct values", v.name))
		}
	}
}

// checkNonEmpty refuses a constant range that is empty.
func (sp *spec) checkNonEmpty() error {
	for _, v := range sp.vars {
		lo, err1 := v.lo.eval(nil)
		hi, err2 := v.hi.eval(nil)
		if err1 == nil && err2 == nil && lo.Cmp(hi) > 0 {
			return fmt.Errorf("the range of %s is empty (%s > %s)", displayName(v), lo, hi)
		}
	}
	return nil
}

// referenced reports whether any bound or length refers to name.
func (sp *spec) referenced(name string) bool {
	refs := map[string]bool{}
	for _, v := range sp.vars {
		v.lo.refs(refs)
		v.hi.refs(refs)
		v.length.refs(refs)
	}
	return refs[name]
}

// lengthScalars are the scalars that size arrays and strings.
func (sp *spec) lengthScalars() map[string]bool {
	refs := map[string]bool{}
	for _, v := range sp.vars {
		switch v.kind {
		case arrayVar:
			v.length.refs(refs)
		case stringVar:
			v.hi.refs(refs)
		}
	}
	return refs
}

// scalarOrder returns the scalars in an order in which every bound refers
// only to scalars before it, or an error naming a cycle.
func (sp *spec) scalarOrder() ([]*cvar, error) {
	var out []*cvar
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(v *cvar) error
	visit = func(v *cvar) error {
		switch state[v.name] {
		case 1:
			return fmt.Errorf("the bounds of %s depend on each other", v.name)
		case 2:
			return nil
		}
		state[v.name] = 1
		refs := map[string]bool{}
		v.lo.refs(refs)
		v.hi.refs(refs)
		for _, name := range slices.Sorted(mapKeys(refs)) {
			if r := sp.byName[name]; r != nil && r.kind == scalarVar {
				if err := visit(r); err != nil {
					return err
				}
			}
		}
		state[v.name] = 2
		out = append(out, v)
		return nil
	}
	for _, v := range sp.vars {
		if v.kind == scalarVar {
			if err := visit(v); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// simplify folds constant arithmetic and "x - 1 + 1".
func simplify(e *expr) *expr {
	if e == nil || len(e.args) == 0 {
		return e
	}
	for i, a := range e.args {
		e.args[i] = simplify(a)
	}
	if v, err := e.eval(nil); err == nil {
		return &expr{op: "num", num: v}
	}
	// (X - 1) + 1 → X
	if e.op == "+" && e.args[1].op == "num" && e.args[0].op == "-" && e.args[0].args[1].op == "num" &&
		new(big.Int).Sub(e.args[1].num, e.args[0].args[1].num).Sign() == 0 {
		return e.args[0].args[0]
	}
	return e
}

// displayName names a variable in messages: N, A_i, |S|.
func displayName(v *cvar) string {
	switch v.kind {
	case arrayVar:
		return v.name + "_i"
	case stringVar:
		return "|" + v.name + "|"
	}
	return v.name
}
