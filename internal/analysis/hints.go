package analysis

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// The offline hint analysis: every hint is derived from the evidence of the
// failed tests (the first difference between expected and actual output,
// the verdict, the input size, the error message) and from simple patterns
// in the code. The same request always gives the same hints.

// Priorities order the findings; lower comes first.
const (
	prioMismatch = 1
	prioCompile  = 5
	prioRuntime  = 10
	prioTime     = 20
	prioMemory   = 25
	prioOutput   = 27
	prioWASpec   = 30 // a specific wrong-answer pattern
	prioWADiff   = 40 // the plain first difference
	prioFastIO   = 45
	prioScale    = 50
	prioInternal = 60
	prioGeneric  = 90
)

// maxAnalyzedTests bounds the failed tests looked at.
const maxAnalyzedTests = 8

// outputPreviewBytes is the judge's preview size of actual output; an output
// this long may have been cut.
const outputPreviewBytes = 1000

type finding struct {
	kind string // findings of one kind are reported once
	prio int
	text string
}

// Hints returns 1–MaxHints hints for req, most useful first, derived from
// the evidence of its failed tests and the compiler's output. req must have
// something to explain (a failed test, a failing verdict or compiler output;
// llm checks that before calling): for anything else the hints are generic.
func Hints(req HintRequest) []string {
	var fs []finding
	add := func(f finding) { fs = append(fs, f) }
	ranTests := false
	for _, t := range req.Tests {
		if t.Result.Verdict != "" && t.Result.Verdict != algoitny.VerdictCompilationError {
			ranTests = true
		}
	}
	if req.Verdict == algoitny.VerdictCompilationError || (strings.TrimSpace(req.CompileMessage) != "" && !ranTests) {
		for _, f := range compileFindings(req) {
			add(f)
		}
	}
	var passed []HintTest
	for _, t := range req.Tests {
		if t.Result.Verdict == algoitny.VerdictAccepted {
			passed = append(passed, t)
		}
	}
	for _, f := range counterexampleFindings(req, passed) {
		add(f)
	}
	analyzed := 0
	for i, t := range req.Tests {
		v := t.Result.Verdict
		if v == algoitny.VerdictAccepted || v == "" || v == algoitny.VerdictCompilationError {
			continue
		}
		if analyzed == maxAnalyzedTests {
			break
		}
		analyzed++
		name := fmt.Sprintf("test %d", t.NumberAt(i))
		switch v {
		case algoitny.VerdictWrongAnswer:
			for _, f := range wrongAnswerFindings(req, t, name, passed) {
				add(f)
			}
		case algoitny.VerdictTimeLimitExceeded:
			add(timeFinding(req, t, name))
			if f, ok := fastIOFinding(req, t); ok {
				add(f)
			}
		case algoitny.VerdictMemoryLimitExceeded:
			add(memoryFinding(req, t, name))
		case algoitny.VerdictRuntimeError:
			add(runtimeFinding(req, t, name))
		case algoitny.VerdictOutputLimitExceeded:
			add(finding{"ole", prioOutput, fmt.Sprintf("On %s the program printed more than the output limit allows: look for a loop that never ends around a print, or debug output left inside a loop.", name)})
		case algoitny.VerdictInternalError:
			add(finding{"internal", prioInternal, fmt.Sprintf("The judge itself failed on %s (internal error); this is not caused by your code. Run it again.", name)})
		}
	}
	if len(fs) == 0 {
		add(genericFinding(req))
	}
	slices.SortStableFunc(fs, func(a, b finding) int { return a.prio - b.prio })
	seen := map[string]bool{}
	var hints []string
	for _, f := range fs {
		if seen[f.kind] || f.text == "" {
			continue
		}
		seen[f.kind] = true
		hints = append(hints, f.text)
		if len(hints) == MaxHints {
			break
		}
	}
	return hints
}

// counterexampleFindings are the hints of the request's counterexample:
// the counterexample itself (its data may be shown: it is no stored test),
// and what the analysis of a failed test finds on it, which come before
// the same findings on hidden tests since the user can reproduce them.
func counterexampleFindings(req HintRequest, passed []HintTest) []finding {
	c := req.Counterexample
	if c == nil {
		return nil
	}
	text := fmt.Sprintf("A counterexample found by stress-testing your code against the reference solution on generated inputs: on the input %q the expected output is %q, but your code's verdict is %s",
		TruncateText(c.Input, 300), TruncateText(strings.TrimSpace(c.ExpectedOutput), 200), c.Verdict)
	if c.Verdict == algoitny.VerdictWrongAnswer {
		text += fmt.Sprintf(" (it printed %q)", TruncateText(strings.TrimSpace(c.ActualOutput), 200))
	}
	out := []finding{{"counterexample", prioMismatch + 1, text + ". Run your code on it by hand and trace where it goes wrong."}}
	t := HintTest{Input: c.Input, Expected: c.ExpectedOutput,
		Result: algoitny.TestResult{Verdict: c.Verdict, Output: c.ActualOutput, Message: c.Message}}
	const name = "the counterexample"
	switch c.Verdict {
	case algoitny.VerdictWrongAnswer:
		for _, f := range wrongAnswerFindings(req, t, name, passed) {
			if f.prio != prioWADiff { // the counterexample hint shows the difference already
				out = append(out, f)
			}
		}
	case algoitny.VerdictTimeLimitExceeded:
		out = append(out, timeFinding(req, t, name))
	case algoitny.VerdictRuntimeError:
		out = append(out, runtimeFinding(req, t, name))
	}
	return out
}

// genericFinding is the hint when the tests say nothing more specific.
func genericFinding(req HintRequest) finding {
	switch req.Verdict {
	case algoitny.VerdictWrongAnswer:
		return finding{"generic", prioGeneric, "Some answers are wrong. Re-read the output format and check the edge cases of the constraints: the smallest and largest N, equal values, and negative numbers."}
	case algoitny.VerdictTimeLimitExceeded:
		return finding{"generic", prioGeneric, "The program is too slow. Compare your algorithm's complexity with the largest inputs the constraints allow: about 10^8 simple steps fit in a second."}
	case algoitny.VerdictMemoryLimitExceeded:
		return finding{"generic", prioGeneric, "The program uses too much memory. Estimate the size of your largest arrays for the maximal input."}
	case algoitny.VerdictRuntimeError:
		return finding{"generic", prioGeneric, "The program crashed. Check array indexes at the boundaries, divisions by zero and recursion depth for the largest inputs."}
	}
	return finding{"generic", prioGeneric, fmt.Sprintf("The submission ended with %s. Check it against the smallest and the largest inputs the constraints allow.", req.Verdict)}
}

// diffResult is the first difference between expected and actual output.
type diffResult struct {
	line             int // 1-based; 0 when the outputs agree
	expLine, actLine string
	expTok, actTok   string
	tokIndex         int // 1-based index of the token within the line; 0 if none differs
	actEnded         bool
	expEnded         bool
}

// firstDiff compares outputs line by line (trailing spaces and trailing
// blank lines ignored), looking only at the first n actual lines when the
// actual output was cut.
func firstDiff(exp, act []string) diffResult {
	for i := 0; i < max(len(exp), len(act)); i++ {
		switch {
		case i >= len(act):
			return diffResult{line: i + 1, expLine: exp[i], actEnded: true}
		case i >= len(exp):
			return diffResult{line: i + 1, actLine: act[i], expEnded: true}
		case exp[i] != act[i]:
			d := diffResult{line: i + 1, expLine: exp[i], actLine: act[i]}
			ef, af := strings.Fields(exp[i]), strings.Fields(act[i])
			for k := 0; k < max(len(ef), len(af)); k++ {
				var e, a string
				if k < len(ef) {
					e = ef[k]
				}
				if k < len(af) {
					a = af[k]
				}
				if e != a {
					d.tokIndex, d.expTok, d.actTok = k+1, e, a
					break
				}
			}
			return d
		}
	}
	return diffResult{}
}

var (
	lettersRE   = regexp.MustCompile(`\p{L}`)
	pyPromptRE  = regexp.MustCompile(`\binput\(\s*[fFrR]?["'][^"']+["']`)
	intTypeRE   = regexp.MustCompile(`\bint\b`)
	int32TypeRE = regexp.MustCompile(`\bint32\b`)
	javaIntRE   = regexp.MustCompile(`\b(int|Integer)\b`)
)

// wrongAnswerFindings explains one WRONG_ANSWER test.
func wrongAnswerFindings(req HintRequest, t HintTest, name string, passed []HintTest) []finding {
	var fs []finding
	out := t.Result.Output
	exp := lines(t.Expected)
	act := lines(out)
	cut := len(out) >= outputPreviewBytes
	if cut && len(act) > 0 {
		act = act[:len(act)-1] // the last line may be partial
		if len(exp) > len(act) {
			exp = exp[:len(act)]
		}
	}
	specific := false
	if strings.TrimSpace(out) == "" && strings.TrimSpace(t.Expected) != "" {
		fs = append(fs, finding{"empty", prioWASpec, emptyOutputHint(req, t, name)})
		return fs
	}
	d := firstDiff(exp, act)
	if d.line == 0 {
		if cut {
			fs = append(fs, finding{"diff", prioWADiff, fmt.Sprintf("On %s the first %d lines of your output are right; the difference comes later than the part of the output the judge keeps. Check the last answers: the largest values and the end of the input.", name, len(act))})
		} else {
			fs = append(fs, finding{"same", prioWADiff, fmt.Sprintf("On %s your output matches the expected one line by line, so the difference is in characters the comparison sees but you do not (for example a carriage return, a BOM or non-ASCII spaces). Print plain ASCII with '\\n' line ends.", name)})
		}
		return fs
	}
	expToks, actToks := strings.Fields(strings.Join(exp, "\n")), strings.Fields(strings.Join(act, "\n"))
	switch {
	case slices.Equal(expToks, actToks):
		fs = append(fs, finding{"whitespace", prioWASpec, whitespaceHint(exp, act, d, name)})
		specific = true
	case len(expToks) == len(actToks) && slices.EqualFunc(expToks, actToks, strings.EqualFold):
		e, a := d.expTok, d.actTok
		if e == "" {
			e, a = d.expLine, d.actLine
		}
		fs = append(fs, finding{"case", prioWASpec, fmt.Sprintf("On %s you printed %s where %s is expected: only the letter case differs, and the output is compared case-sensitively. Print the words exactly as the statement writes them.", name, quote(a, 40), quote(e, 40))})
		specific = true
	}
	if !specific {
		if f, ok := debugOutputFinding(req, exp, act, d, name); ok {
			fs = append(fs, f)
			specific = true
		}
	}
	if f, ok := overflowFinding(req, t, d, name); ok {
		fs = append(fs, f)
		specific = true
	}
	if !specific && d.tokIndex > 0 {
		e, eok := new(big.Int).SetString(d.expTok, 10)
		a, aok := new(big.Int).SetString(d.actTok, 10)
		switch {
		case eok && aok && new(big.Int).Abs(new(big.Int).Sub(e, a)).Cmp(big.NewInt(1)) == 0:
			fs = append(fs, finding{"offbyone", prioWASpec, fmt.Sprintf("On %s (line %d) you printed %s but %s is expected: off by exactly one. Check loop bounds (< versus <=), whether both ends of a range are counted, and 0- versus 1-based indexing.", name, d.line, d.actTok, d.expTok)})
			specific = true
		case !eok && !aok && isFloat(d.expTok) && isFloat(d.actTok):
			ef, _ := strconv.ParseFloat(d.expTok, 64)
			af, _ := strconv.ParseFloat(d.actTok, 64)
			if rel := math.Abs(ef-af) / math.Max(math.Abs(ef), 1e-9); rel < 1e-2 {
				fs = append(fs, finding{"precision", prioWASpec, fmt.Sprintf("On %s you printed %s but %s is expected: the values are close, so this is rounding. Use double (not float), print enough decimals (e.g. %%.%df), and round only when printing.", name, d.actTok, d.expTok, max(decimals(d.expTok), 6))})
				specific = true
			}
		}
	}
	if !specific && d.actEnded && !cut && len(act) > 0 {
		fs = append(fs, finding{"missing", prioWASpec, fmt.Sprintf("On %s your output stops after %d of %d lines (the next expected line is %s). The program may leave a loop early (over queries or test cases), or stop reading before the input ends.", name, len(act), len(exp), quote(d.expLine, 40))})
		specific = true
	}
	if !specific {
		fs = append(fs, finding{"diff", prioWADiff, diffHint(d, name)})
	}
	if f, ok := scaleFinding(t, name, passed); ok {
		fs = append(fs, f)
	}
	return fs
}

// diffHint quotes the first difference.
func diffHint(d diffResult, name string) string {
	switch {
	case d.expEnded:
		return fmt.Sprintf("On %s the expected output ends but yours goes on with line %d: %s. Print exactly what the output format asks for.", name, d.line, quote(d.actLine, 60))
	case d.actEnded:
		return fmt.Sprintf("On %s your output ends before line %d; expected %s there.", name, d.line, quote(d.expLine, 60))
	case d.tokIndex > 0 && (len(d.expLine) > 40 || len(d.actLine) > 40):
		return fmt.Sprintf("On %s the first difference is value %d of line %d: expected %s, you printed %s. Work through this input by hand up to that value.", name, d.tokIndex, d.line, quote(d.expTok, 40), quote(d.actTok, 40))
	}
	return fmt.Sprintf("On %s line %d differs: expected %s, you printed %s. Work through this input by hand and compare with what your program does.", name, d.line, quote(d.expLine, 60), quote(d.actLine, 60))
}

// emptyOutputHint explains an empty output.
func emptyOutputHint(req HintRequest, t HintTest, name string) string {
	h := fmt.Sprintf("On %s your program printed nothing, but %s was expected.", name, quote(firstLine(t.Expected), 40))
	code := req.Code
	switch req.Language {
	case algoitny.LanguagePython:
		return h + " Make sure the answer is printed with print(...): returning it from a function, or leaving a bare expression, prints nothing. Check that the main function is actually called."
	case algoitny.LanguageJava:
		if (strings.Contains(code, "BufferedWriter") || strings.Contains(code, "PrintWriter")) && !strings.Contains(code, "flush") && !strings.Contains(code, "close") {
			return h + " Your BufferedWriter/PrintWriter is never flushed or closed, so its buffer is lost: call flush() (or close()) at the end."
		}
	case algoitny.LanguageGo:
		if strings.Contains(code, "bufio.NewWriter") && !strings.Contains(code, "Flush") {
			return h + " Your bufio.Writer is never flushed, so its buffer is lost: defer w.Flush() right after creating it."
		}
	case algoitny.LanguageC, algoitny.LanguageCPP:
		return h + " Check that the answer is printed to standard output (not stderr or a file) on every path, including early returns."
	}
	return h + " Check that the answer is printed to standard output on every path through the program."
}

// whitespaceHint explains outputs that differ only in layout.
func whitespaceHint(exp, act []string, d diffResult, name string) string {
	if len(exp) != len(act) {
		return fmt.Sprintf("On %s your values are right but the layout is not: %d lines are expected and you printed %d. Put each answer on its own line or on one line exactly as the output format says.", name, len(exp), len(act))
	}
	return fmt.Sprintf("On %s your values are right but the spacing differs on line %d: expected %s, you printed %s. Separate values with single spaces and do not print leading spaces.", name, d.line, quote(d.expLine, 40), quote(d.actLine, 40))
}

// debugOutputFinding recognises extra lines or text: debug prints, or input
// prompts such as input("Enter N: ").
func debugOutputFinding(req HintRequest, exp, act []string, d diffResult, name string) (finding, bool) {
	prompt := ""
	if req.Language == algoitny.LanguagePython {
		if m := pyPromptRE.FindString(req.Code); m != "" {
			prompt = fmt.Sprintf(" %s prints its prompt to standard output: call input() without a prompt.", quote(m+")", 40))
		}
	}
	if extra, ok := extraLines(exp, act); ok {
		return finding{"debug", prioWASpec, fmt.Sprintf("On %s your output has lines that are not part of the answer, starting with %s. Remove debug prints and input prompts (or write them to standard error).%s", name, quote(extra, 50), prompt)}, true
	}
	if d.actLine != "" && d.expLine != "" && lettersRE.MatchString(d.actLine) && !lettersRE.MatchString(d.expLine) {
		return finding{"debug", prioWASpec, fmt.Sprintf("On %s line %d should be %s but your output has text there: %s. Remove debug prints and input prompts (or write them to standard error).%s", name, d.line, quote(d.expLine, 40), quote(d.actLine, 50), prompt)}, true
	}
	if prompt != "" {
		return finding{"debug", prioWASpec, fmt.Sprintf("On %s the output differs from the first line on.%s", name, prompt)}, true
	}
	return finding{}, false
}

// extraLines reports whether the expected lines appear, in order, within
// more actual lines, and returns the first actual line that is extra.
func extraLines(exp, act []string) (string, bool) {
	if len(act) <= len(exp) || len(exp) == 0 {
		return "", false
	}
	j, firstExtra := 0, ""
	for _, a := range act {
		if j < len(exp) && strings.TrimSpace(a) == strings.TrimSpace(exp[j]) {
			j++
			continue
		}
		if firstExtra == "" {
			firstExtra = a
		}
	}
	return firstExtra, j == len(exp) && firstExtra != ""
}

var (
	maxInt32 = big.NewInt(math.MaxInt32)
	maxInt64 = big.NewInt(math.MaxInt64)
	maxSafe  = big.NewInt(1 << 53)
)

// overflowFinding recognises answers that do not fit the integer type the
// code uses, and negative answers where positive ones are expected (a sum
// that wrapped around).
func overflowFinding(req HintRequest, t HintTest, d diffResult, name string) (finding, bool) {
	if req.Language == algoitny.LanguagePython {
		return finding{}, false
	}
	var biggest *big.Int
	expected := t.Expected
	if len(expected) > 1<<20 {
		expected = expected[:1<<20] // enough to see the size of the answers
	}
	for _, tok := range strings.Fields(expected) {
		if v, ok := new(big.Int).SetString(tok, 10); ok {
			v.Abs(v)
			if biggest == nil || v.Cmp(biggest) > 0 {
				biggest = v
			}
		}
	}
	wrapped := false
	if e, ok := new(big.Int).SetString(d.expTok, 10); ok {
		if a, ok := new(big.Int).SetString(d.actTok, 10); ok && e.Sign() > 0 && a.Sign() < 0 {
			wrapped = true
		}
	}
	if biggest == nil {
		return finding{}, false
	}
	code := req.Code
	switch {
	case biggest.Cmp(maxInt64) > 0:
		fix := "use big integers (BigInteger in Java, math/big in Go) or check whether the answer is wanted modulo some number"
		return finding{"overflow", prioWASpec, fmt.Sprintf("On %s the expected answer %s does not even fit in 64 bits: %s.", name, TruncateText(biggest.String(), 30), fix)}, true
	case req.Language == algoitny.LanguageJavaScript && biggest.Cmp(maxSafe) > 0:
		return finding{"overflow", prioWASpec, fmt.Sprintf("On %s the expected answer %s is beyond 2^53, where JavaScript numbers lose precision: use BigInt for these values.", name, biggest)}, true
	}
	big32 := biggest.Cmp(maxInt32) > 0
	var usesNarrow bool
	var fix string
	switch req.Language {
	case algoitny.LanguageC, algoitny.LanguageCPP:
		usesNarrow = intTypeRE.MatchString(code)
		fix = "use long long for sums and products (and write 1LL * a * b so that the multiplication itself is done in 64 bits)"
	case algoitny.LanguageJava:
		usesNarrow = javaIntRE.MatchString(code)
		fix = "use long for sums and products (and multiply as (long) a * b)"
	case algoitny.LanguageGo:
		// Go's int is 64 bits on the judge; only explicit 32-bit types overflow.
		usesNarrow = int32TypeRE.MatchString(code)
		fix = "use int or int64 instead of int32"
	}
	switch {
	case big32 && usesNarrow:
		return finding{"overflow", prioWASpec, fmt.Sprintf("On %s the expected output contains %s, which does not fit in a 32-bit int (at most 2147483647), so an int overflows: %s.", name, biggest, fix)}, true
	case wrapped && fix != "":
		return finding{"overflow", prioWASpec, fmt.Sprintf("On %s you printed %s where %s is expected: a negative result instead of a positive one is the mark of integer overflow; %s.", name, d.actTok, d.expTok, fix)}, true
	}
	return finding{}, false
}

// scaleFinding notes a test that fails while much smaller ones pass.
func scaleFinding(t HintTest, name string, passed []HintTest) (finding, bool) {
	if len(passed) == 0 || len(t.Input) < 1000 {
		return finding{}, false
	}
	largest := 0
	for _, p := range passed {
		largest = max(largest, len(p.Input))
	}
	if largest*10 > len(t.Input) {
		return finding{}, false
	}
	return finding{"scale", prioScale, fmt.Sprintf("Your program passes the small tests (inputs up to %d bytes) but fails %s, whose input is %d bytes: suspect overflow, arrays sized too small, or a special case that only big inputs reach.", largest, name, len(t.Input))}, true
}

func isFloat(s string) bool {
	if !strings.ContainsAny(s, ".eE") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// inputStats describes the size of a test input.
type inputStats struct {
	tokens       int
	lines        int
	longestToken int
	firstMax     float64 // the largest number on the first line
}

func statsOf(input string) inputStats {
	var s inputStats
	s.lines = strings.Count(strings.TrimRight(input, "\n"), "\n") + 1
	if strings.TrimSpace(input) == "" {
		s.lines = 0
	}
	inTok, tokLen := false, 0
	for i := 0; i < len(input); i++ {
		c := input[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			if inTok {
				s.longestToken = max(s.longestToken, tokLen)
			}
			inTok = false
			continue
		}
		if !inTok {
			s.tokens++
			inTok, tokLen = true, 0
		}
		tokLen++
	}
	if inTok {
		s.longestToken = max(s.longestToken, tokLen)
	}
	for _, f := range strings.Fields(firstLine(input)) {
		if v, err := strconv.ParseFloat(f, 64); err == nil && math.Abs(v) > s.firstMax {
			s.firstMax = math.Abs(v)
		}
	}
	return s
}

// size is the n the input's size suggests: its count of values, or the
// length of its longest string.
func (s inputStats) size() int { return max(s.tokens, s.longestToken) }

// approx writes x as "4·10^10", "≈2·10^5" style, or plainly below 10^4.
func approx(x float64) string {
	if x < 10000 {
		return strconv.Itoa(int(math.Round(x)))
	}
	e := math.Floor(math.Log10(x))
	m := math.Round(x / math.Pow(10, e))
	if m >= 10 {
		m, e = 1, e+1
	}
	if m == 1 {
		return fmt.Sprintf("10^%d", int(e))
	}
	return fmt.Sprintf("%d·10^%d", int(m), int(e))
}

func limitText(ms int) string {
	if ms <= 0 {
		return ""
	}
	return fmt.Sprintf(" (limit %d ms)", ms)
}

// timeFinding suggests the complexity the input size demands.
func timeFinding(req HintRequest, t HintTest, name string) finding {
	st := statsOf(t.Input)
	n := float64(st.size())
	head := fmt.Sprintf("%s ran out of time%s", capitalize(name), limitText(req.Problem.TimeLimitMs))
	var body string
	switch {
	case n >= 5e5:
		body = fmt.Sprintf(" on an input of n ≈ %s values: only O(n) or O(n log n) fits (about %s steps); O(n²) would be %s. Read the input in bulk, too.", approx(n), approx(n*math.Log2(n)), approx(n*n))
	case n >= 5e3:
		body = fmt.Sprintf(" on an input of n ≈ %s values: aim for O(n log n) (about %s steps). An O(n²) algorithm needs %s steps, far more than the ~10^8 a second allows; look for nested loops over the input, repeated searches in a list, or copying inside a loop.", approx(n), approx(n*math.Log2(n)), approx(n*n))
	case n >= 500:
		body = fmt.Sprintf(" on an input of n ≈ %s values: O(n²) (%s steps) fits but O(n³) (%s) does not — remove the innermost loop with prefix sums, sorting or a hash map.", approx(n), approx(n*n), approx(n*n*n))
	case st.firstMax >= 1e7:
		body = fmt.Sprintf(" although the input is tiny: the first line holds %s, so a loop up to that value cannot finish. You need O(√N) or O(log N): a formula, binary search, or fast exponentiation.", approx(st.firstMax))
	case st.firstMax >= 1e5:
		body = fmt.Sprintf(" with N ≈ %s on the first line: a loop up to N is fine, but nothing more than O(N log N) in N — no nested loops up to N.", approx(st.firstMax))
	default:
		body = fmt.Sprintf(" although the input has only %d values, so this is not about speed: look for a loop that never ends (a loop variable that never changes, an exit condition that cannot be met), recursion without a base case, or reading more input than there is.", st.tokens)
	}
	return finding{"tle", prioTime, head + body}
}

var (
	pyInputRE   = regexp.MustCompile(`\binput\(`)
	cinRE       = regexp.MustCompile(`\bcin\s*>>`)
	endlRE      = regexp.MustCompile(`\bendl\b`)
	goFmtScanRE = regexp.MustCompile(`fmt\.Scan`)
)

// fastIOFinding points at slow input/output for big inputs.
func fastIOFinding(req HintRequest, t HintTest) (finding, bool) {
	st := statsOf(t.Input)
	outLines := len(lines(t.Expected))
	code := req.Code
	var text string
	switch req.Language {
	case algoitny.LanguagePython:
		switch {
		case (st.lines >= 1e4 || st.tokens >= 1e5) && pyInputRE.MatchString(code) && !strings.Contains(code, "sys.stdin"):
			text = fmt.Sprintf("Reading %s lines with input() is slow: use sys.stdin.readline, or read everything at once with sys.stdin.buffer.read().split().", approx(float64(st.lines)))
		case outLines >= 1e4 && strings.Count(code, "print(") > 0 && !strings.Contains(code, "join"):
			text = fmt.Sprintf("Printing %s lines one print() at a time is slow: collect the answers and print them once with \"\\n\".join(...).", approx(float64(outLines)))
		}
	case algoitny.LanguageJava:
		switch {
		case st.tokens >= 1e4 && strings.Contains(code, "Scanner"):
			text = fmt.Sprintf("java.util.Scanner is slow for %s values: use BufferedReader with StringTokenizer.", approx(float64(st.tokens)))
		case outLines >= 1e4 && strings.Contains(code, "System.out.println") && !strings.Contains(code, "StringBuilder") && !strings.Contains(code, "PrintWriter"):
			text = "System.out.println for every line is slow: append to a StringBuilder (or use a PrintWriter) and print once."
		}
	case algoitny.LanguageCPP:
		switch {
		case st.tokens >= 1e5 && cinRE.MatchString(code) && !strings.Contains(code, "sync_with_stdio"):
			text = fmt.Sprintf("cin is slow for %s values unless you add ios::sync_with_stdio(false); cin.tie(nullptr); at the start of main.", approx(float64(st.tokens)))
		case outLines >= 1e4 && endlRE.MatchString(code):
			text = "endl flushes the output on every line: print '\\n' instead."
		}
	case algoitny.LanguageGo:
		if st.tokens >= 1e4 && goFmtScanRE.MatchString(code) && !strings.Contains(code, "bufio") {
			text = fmt.Sprintf("fmt.Scan without buffering is slow for %s values: wrap os.Stdin in a bufio.Reader (and os.Stdout in a bufio.Writer).", approx(float64(st.tokens)))
		}
	case algoitny.LanguageJavaScript:
		if st.tokens >= 1e5 && !strings.Contains(code, "readFileSync") {
			text = "Read the whole input at once with require('fs').readFileSync(0, 'utf8') instead of line by line."
		}
	}
	if text == "" {
		return finding{}, false
	}
	return finding{"fastio", prioFastIO, text}, true
}

// memoryFinding explains MEMORY_LIMIT_EXCEEDED from the input size.
func memoryFinding(req HintRequest, t HintTest, name string) finding {
	st := statsOf(t.Input)
	n := float64(max(st.size(), int(math.Min(st.firstMax, 1e9))))
	limit := ""
	if req.Problem.MemoryLimitMB > 0 {
		limit = fmt.Sprintf(" (limit %d MB)", req.Problem.MemoryLimitMB)
	}
	h := fmt.Sprintf("%s went over the memory limit%s", capitalize(name), limit)
	switch {
	case n >= 3000:
		cells := n * n
		h += fmt.Sprintf(" with n ≈ %s: an n×n table needs %s cells (%s MB of 4-byte ints). Keep memory O(n) or O(n log n): a rolling one-dimensional DP array, adjacency lists instead of a matrix.", approx(n), approx(cells), approx(cells*4/(1<<20)))
	default:
		h += ": look for data that grows without bound — a BFS/DFS queue that re-adds visited nodes (mark them when you push), lists copied inside a loop, or recursion that never ends."
	}
	if req.Language == algoitny.LanguagePython && n >= 1e6 {
		h += " In Python every int in a list costs about 36 bytes: process the input as a stream or use the array module."
	}
	return finding{"mle", prioMemory, h}
}

// runtimePattern is a recognisable runtime error.
type runtimePattern struct {
	kind string
	re   *regexp.Regexp
	hint func(c runtimeContext) string
}

// runtimeContext is what a runtime hint may use.
type runtimeContext struct {
	name, quoted, where string
	lang                algoitny.Language
	stats               inputStats
	code                string
}

var runtimePatterns = []runtimePattern{
	{"recursion", regexp.MustCompile(`RecursionError|maximum recursion depth|StackOverflowError|stack overflow|goroutine stack exceeds|Maximum call stack size exceeded`), func(c runtimeContext) string {
		fix := "turn the recursion into a loop with an explicit stack, or make sure it has a base case"
		if c.lang == algoitny.LanguagePython {
			fix = "Python allows only about 1000 nested calls by default: call sys.setrecursionlimit(10**6) at the start, or better, turn the recursion into a loop with an explicit stack"
		}
		return fmt.Sprintf("On %s the recursion went too deep (%s)%s. With an input of ≈%s values it can nest that many calls: %s.", c.name, c.quoted, c.where, approx(float64(c.stats.size())), fix)
	}},
	{"index", regexp.MustCompile(`IndexError|index out of range|ArrayIndexOutOfBounds|StringIndexOutOfBounds|IndexOutOfBoundsException|out_of_range|_M_range_check|slice bounds out of range|Cannot read propert(?:y|ies) of undefined`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s an index went out of range (%s)%s. Check that arrays are sized for the largest n (n+1 when indexing from 1) and look at i-1 and i+1 at the ends of your loops.", c.name, c.quoted, c.where)
	}},
	{"segfault", regexp.MustCompile(`SIGSEGV|Segmentation fault|segfault|signal 11`), func(c runtimeContext) string {
		h := fmt.Sprintf("On %s the program crashed with a segmentation fault%s: it read or wrote outside an array, followed a bad pointer, or recursed so deep that the stack overflowed.", c.name, c.where)
		if small := smallArray(c.code, c.stats); small != "" {
			h += " " + small
		} else {
			h += " Check array sizes against the largest N the constraints allow."
		}
		return h
	}},
	{"divzero", regexp.MustCompile(`ZeroDivisionError|division by zero|divide by zero|/ by zero|SIGFPE|Floating point exception|integer divide by zero`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s the program divided (or took a remainder) by zero%s. Some value you divide by can be 0 for this input, such as a count of zero elements or n = 0: handle that case first.", c.name, c.where)
	}},
	{"parse", regexp.MustCompile(`ValueError: invalid literal|could not convert string|NumberFormatException|strconv\.\w+: parsing|InputMismatchException`), func(c runtimeContext) string {
		fix := "split the line and convert each value"
		if c.lang == algoitny.LanguagePython {
			fix = "a line with several values needs map(int, input().split())"
		}
		return fmt.Sprintf("On %s the program failed to read a number (%s)%s: it read a line holding several values, or a word, as one number. Follow the input format exactly: %s.", c.name, c.quoted, c.where, fix)
	}},
	{"eof", regexp.MustCompile(`EOFError|NoSuchElementException|unexpected EOF|EOF when reading`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s the program tried to read past the end of the input (%s)%s: it expects more lines or values than there are. Check how many values each line holds and how many times your loops read.", c.name, c.quoted, c.where)
	}},
	{"nomem", regexp.MustCompile(`MemoryError|bad_alloc|OutOfMemoryError|out of memory|cannot allocate`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s the program ran out of memory (%s)%s: estimate the size of your largest arrays for the maximal input and keep them O(n).", c.name, c.quoted, c.where)
	}},
	{"null", regexp.MustCompile(`NullPointerException|nil pointer dereference|NoneType|is not an object|undefined is not`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s a value was missing (%s)%s: something is null/None where an object was expected, for example an unset array element, a failed lookup, or a function that forgot to return.", c.name, c.quoted, c.where)
	}},
	{"key", regexp.MustCompile(`KeyError`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s a dictionary lookup failed (%s)%s: the key is missing. Use d.get(key, default) or check `key in d` first.", c.name, c.quoted, c.where)
	}},
	{"abort", regexp.MustCompile(`SIGABRT|Aborted|terminate called|[Aa]ssertion|AssertionError`), func(c runtimeContext) string {
		return fmt.Sprintf("On %s the program aborted (%s)%s: an assertion failed or an exception was not caught (for example vector::at out of range or bad_alloc).", c.name, c.quoted, c.where)
	}},
}

var (
	errorWordRE = regexp.MustCompile(`(Error|Exception|panic|fault|terminate|Aborted)`)
	exitCodeRE  = regexp.MustCompile(`exit (?:code|status) (\d+)`)
	pyLineRE    = regexp.MustCompile(`File "[^"]*", line (\d+)`)
	javaLineRE  = regexp.MustCompile(`\(\w+\.java:(\d+)\)`)
	goLineRE    = regexp.MustCompile(`\.go:(\d+)`)
	jsLineRE    = regexp.MustCompile(`\.js:(\d+)`)
	cArrayRE    = regexp.MustCompile(`\b(?:int|long long|long|char|double|bool|short)\s+(\w+)\s*\[\s*(\d+)\s*\]`)
)

// runtimeFinding explains a RUNTIME_ERROR from the message and stderr.
func runtimeFinding(req HintRequest, t HintTest, name string) finding {
	evidence := t.Result.Message + "\n" + t.Stderr
	c := runtimeContext{name: name, lang: req.Language, stats: statsOf(t.Input), code: req.Code}
	c.quoted = quote(errorLine(t.Stderr, t.Result.Message), 70)
	if n := errorLocation(req.Language, t.Stderr); n > 0 {
		if l := codeLine(req.Code, n); l != "" {
			c.where = fmt.Sprintf(" at line %d, %s", n, quote(l, 60))
		} else {
			c.where = fmt.Sprintf(" at line %d", n)
		}
	}
	for _, p := range runtimePatterns {
		if p.re.MatchString(evidence) {
			return finding{"re-" + p.kind, prioRuntime, p.hint(c)}
		}
	}
	if m := exitCodeRE.FindStringSubmatch(evidence); m != nil {
		switch req.Language {
		case algoitny.LanguageC, algoitny.LanguageCPP:
			return finding{"re-exit", prioRuntime, fmt.Sprintf("On %s the program exited with status %s: main must return 0 — a non-zero return or exit(%s) counts as a crash.", name, m[1], m[1])}
		case algoitny.LanguagePython:
			return finding{"re-exit", prioRuntime, fmt.Sprintf("On %s the program exited with status %s%s: an uncaught exception or a sys.exit/exit call with a non-zero status. Read the last line of the traceback.", name, m[1], c.where)}
		}
	}
	msg := strings.TrimSpace(errorLine(t.Stderr, t.Result.Message))
	if msg == "" {
		return finding{"re", prioRuntime, fmt.Sprintf("The program crashed on %s. Run it on that input locally to see where.", name)}
	}
	return finding{"re", prioRuntime, fmt.Sprintf("The program crashed on %s with %s%s. Run it on that input locally to see where.", name, quote(msg, 70), c.where)}
}

// errorLine picks the most telling line of a crash: the last line of a
// traceback, an exception name, or the judge's message.
func errorLine(stderr, message string) string {
	ls := lines(stderr)
	for i := len(ls) - 1; i >= 0; i-- {
		l := strings.TrimSpace(ls[i])
		if l == "" || strings.HasPrefix(l, "at ") || strings.HasPrefix(l, "File ") || strings.HasPrefix(l, "^") {
			continue
		}
		if errorWordRE.MatchString(l) {
			return l
		}
	}
	if l := firstLine(stderr); l != "" {
		return l
	}
	return firstLine(message)
}

// errorLocation finds the user's line number in a crash's stderr.
func errorLocation(lang algoitny.Language, stderr string) int {
	var re *regexp.Regexp
	last := false
	switch lang {
	case algoitny.LanguagePython:
		re, last = pyLineRE, true
	case algoitny.LanguageJava:
		re = javaLineRE
	case algoitny.LanguageGo:
		re = goLineRE
	case algoitny.LanguageJavaScript:
		re = jsLineRE
	default:
		return 0
	}
	ms := re.FindAllStringSubmatch(stderr, -1)
	if len(ms) == 0 {
		return 0
	}
	m := ms[0]
	if last {
		m = ms[len(ms)-1]
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// smallArray names a fixed-size C/C++ array smaller than the input's N.
func smallArray(code string, st inputStats) string {
	n := max(float64(st.tokens), st.firstMax)
	if st.firstMax > 1e8 {
		n = float64(st.tokens)
	}
	for _, m := range cArrayRE.FindAllStringSubmatch(code, -1) {
		size, err := strconv.Atoi(m[2])
		if err == nil && size > 0 && float64(size) < n {
			return fmt.Sprintf("Your array %s has %d elements, but this input has N ≈ %s.", quote(m[1]+"["+m[2]+"]", 30), size, approx(n))
		}
	}
	return ""
}

var (
	gccErrorRE = regexp.MustCompile(`(?i)^(?:.*?[/\\])?([\w.+-]+?):(\d+)(?::\d+)?:\s*(?:fatal\s+)?error:?\s*(.*)$`)
	goErrorRE  = regexp.MustCompile(`^(?:.*?[/\\])?([\w.-]+\.go):(\d+):\d+:\s*(.*)$`)
	pyErrorRE  = regexp.MustCompile(`^\s*(SyntaxError|IndentationError|TabError|NameError)\b:?\s*(.*)$`)
	jsErrorRE  = regexp.MustCompile(`^\s*(SyntaxError|ReferenceError|TypeError): (.*)$`)
	jsLocRE    = regexp.MustCompile(`\.js:(\d+)`)
)

// compileAdvice maps compiler messages to what usually causes them.
var compileAdvice = []struct {
	re     *regexp.Regexp
	advice string
}{
	{regexp.MustCompile(`expected .*['‘];['’]|';' expected`), "A semicolon is missing, usually at the end of the statement before this line."},
	{regexp.MustCompile(`declared and not used|imported and not used`), "Go refuses unused variables and imports: remove it, or assign it to _."},
	{regexp.MustCompile(`should be declared in a file named`), "The judge compiles Main.java: name your public class Main."},
	{regexp.MustCompile(`was not declared in this scope|undeclared|cannot find symbol|undefined:|is not defined|NameError|undefined reference`), "A name is used that was never declared: a typo, a missing #include or import, or a variable declared inside a block and used outside it."},
	{regexp.MustCompile(`IndentationError|unexpected indent|unindent|TabError`), "The indentation is inconsistent: do not mix tabs and spaces, and indent each block the same way."},
	{regexp.MustCompile(`incompatible types|cannot convert|invalid conversion|mismatched types|cannot use .* as`), "A value of one type is used where another is needed: convert it explicitly."},
	{regexp.MustCompile(`missing return`), "A function that returns a value can reach its end without a return statement."},
	{regexp.MustCompile(`SyntaxError|invalid syntax|expected|unexpected`), "Look at this line and the one before it for an unclosed bracket or quote, or a missing ':' or ';'."},
}

// compileFindings explains a compilation error: the first error line, the
// code it points at, and a language mismatch.
func compileFindings(req HintRequest) []finding {
	var fs []finding
	if guess := guessLanguage(req.Code); guess != "" && guess != req.Language &&
		!(req.Language == algoitny.LanguageCPP && guess == algoitny.LanguageC) {
		fs = append(fs, finding{"mismatch", prioMismatch, fmt.Sprintf("This looks like %s code, but it was submitted as %s: choose the matching language.", languageName(guess), languageName(req.Language))})
	}
	msg := strings.TrimSpace(req.CompileMessage)
	if msg == "" {
		fs = append(fs, finding{"compile", prioCompile, "The code did not compile, and the compiler said nothing more. Check that the selected language matches the code."})
		return fs
	}
	line, text := firstCompileError(msg)
	h := "The code does not compile"
	if line > 0 {
		h += fmt.Sprintf(": line %d: %s.", line, quote(text, 80))
		if l := codeLine(req.Code, line); l != "" {
			h += fmt.Sprintf(" That line reads %s.", quote(l, 60))
		}
	} else {
		h += fmt.Sprintf(": %s.", quote(text, 80))
	}
	for _, a := range compileAdvice {
		if a.re.MatchString(text) {
			h += " " + a.advice
			break
		}
	}
	if strings.Count(strings.ToLower(msg), "error") > 1 {
		h += " Fix this first error first: the later ones often follow from it."
	}
	fs = append(fs, finding{"compile", prioCompile, h})
	return fs
}

// firstCompileError finds the first error in compiler output.
func firstCompileError(msg string) (line int, text string) {
	ls := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	for i, l := range ls {
		if m := gccErrorRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			return n, "error: " + strings.TrimSpace(m[3])
		}
		if m := goErrorRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			return n, m[3]
		}
		if m := pyErrorRE.FindStringSubmatch(l); m != nil {
			n := 0
			for j := i - 1; j >= 0; j-- {
				if lm := pyLineRE.FindStringSubmatch(ls[j]); lm != nil {
					n, _ = strconv.Atoi(lm[1])
					break
				}
			}
			return n, strings.TrimSpace(l)
		}
		if m := jsErrorRE.FindStringSubmatch(l); m != nil {
			n := 0
			for j := i - 1; j >= 0; j-- {
				if lm := jsLocRE.FindStringSubmatch(ls[j]); lm != nil {
					n, _ = strconv.Atoi(lm[1])
					break
				}
			}
			return n, strings.TrimSpace(l)
		}
	}
	for _, l := range ls {
		if strings.Contains(strings.ToLower(l), "error") {
			return 0, strings.TrimSpace(l)
		}
	}
	return 0, firstLine(msg)
}

var (
	cppMarkRE    = regexp.MustCompile(`#include\s*<(?:iostream|bits/stdc\+\+\.h|vector|string|algorithm|map|set)>|\bstd::|using namespace std|\bcout\s*<<|\bcin\s*>>`)
	cMarkRE      = regexp.MustCompile(`#include\s*<stdio\.h>|\bprintf\s*\(|\bscanf\s*\(`)
	javaMarkRE   = regexp.MustCompile(`public\s+static\s+void\s+main|System\.out\.print|import\s+java\.`)
	goMarkRE     = regexp.MustCompile(`(?m)^package\s+main\b`)
	pythonMarkRE = regexp.MustCompile(`(?m)^\s*(?:def\s+\w+\(.*\)\s*:|import\s+(?:sys|math|collections|heapq|itertools)\b|from\s+\w+\s+import\s|if\s+__name__\s*==)|\binput\(\)`)
	jsMarkRE     = regexp.MustCompile(`console\.log|require\(['"]|process\.stdin`)
)

// guessLanguage recognises the language of code from unmistakable marks,
// or returns "".
func guessLanguage(code string) algoitny.Language {
	switch {
	case javaMarkRE.MatchString(code):
		return algoitny.LanguageJava
	case goMarkRE.MatchString(code):
		return algoitny.LanguageGo
	case cppMarkRE.MatchString(code):
		return algoitny.LanguageCPP
	case strings.Contains(code, "#include") && cMarkRE.MatchString(code):
		return algoitny.LanguageC
	case jsMarkRE.MatchString(code):
		return algoitny.LanguageJavaScript
	case pythonMarkRE.MatchString(code) && !strings.Contains(code, "#include"):
		return algoitny.LanguagePython
	}
	return ""
}

func languageName(l algoitny.Language) string {
	switch l {
	case algoitny.LanguagePython:
		return "Python"
	case algoitny.LanguageC:
		return "C"
	case algoitny.LanguageCPP:
		return "C++"
	case algoitny.LanguageJava:
		return "Java"
	case algoitny.LanguageGo:
		return "Go"
	case algoitny.LanguageJavaScript:
		return "JavaScript"
	case algoitny.LanguageRust:
		return "Rust"
	case algoitny.LanguageKotlin:
		return "Kotlin"
	}
	return string(l)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
