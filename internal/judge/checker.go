package judge

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// CheckerKind selects how a test's output is judged. The built-in kinds mirror
// testlib's standard checkers; custom runs a problem-specific checker program.
type CheckerKind string

const (
	// CheckLines (the default) compares line by line, ignoring whitespace at the
	// end of each line (so CRLF equals LF), trailing blank lines and a missing
	// final newline. Whitespace inside a line is significant.
	CheckLines CheckerKind = "lines"
	// CheckTokens compares whitespace-separated tokens; any amount and kind of
	// whitespace is equal (testlib wcmp).
	CheckTokens CheckerKind = "tokens"
	// CheckExact compares bytes.
	CheckExact CheckerKind = "exact"
	// CheckFloat compares tokens; where the expected token is a number, the
	// output's token must be a number within AbsEps absolute or RelEps relative
	// error (either suffices; testlib rcmp). Other tokens compare exactly.
	CheckFloat CheckerKind = "float"
	// CheckYesNo compares YES/NO answers case-insensitively (testlib yesno); the
	// expected output must consist of YES/NO tokens only.
	CheckYesNo CheckerKind = "yesno"
	// CheckCustom runs a checker program for problems with several valid
	// answers. It is run in the sandbox as `checker input output answer` (the
	// testlib argument order: input, the contestant's output, the expected
	// answer) with the three paths read-only, and its exit status means what
	// it means to testlib: 0 OK, 1 WA, 2 PE (judged WRONG_ANSWER), 3 FAIL
	// (INTERNAL_ERROR), 7 points (TestResult.Points, read from its message as
	// testlib's quitp writes it, with Checker.Points); any other outcome (other exit codes,
	// crashes, limits) is INTERNAL_ERROR. What it prints becomes the test's
	// message.
	CheckCustom CheckerKind = "custom"
)

// DefaultEpsilon is the tolerance CheckFloat uses when AbsEps and RelEps are
// both zero.
const DefaultEpsilon = 1e-6

// Checker says how outputs are judged.
type Checker struct {
	// Kind is the comparison; empty means CheckLines.
	Kind CheckerKind
	// AbsEps and RelEps are CheckFloat's tolerances; a token passes if it is
	// within either. Both zero means DefaultEpsilon for each.
	AbsEps, RelEps float64
	// Language and Source are a CheckCustom checker's program, compiled once
	// per Judge call.
	Language, Source string
	// Program is a CheckCustom checker compiled beforehand with
	// Engine.CompileAuthor (C++ checkers get testlib.h) or Engine.Compile
	// (it then takes precedence over Language/Source), so a server can compile
	// a problem's checker once for all submissions.
	Program *Program
	// Args are passed to an ICPC output validator (CheckICPC) before the
	// test's own CheckerArgs; for CheckDefaultValidator they are its flags
	// (the test's own follow them).
	Args []string
	// Files are further source files a checker program compiles with
	// (headers), by name.
	Files map[string][]byte
	// Points is how a CheckCustom checker's points (quitp, exit 7) are
	// read; TestResult.Points is always the fraction of the test.
	Points PointsScale
	// Passes makes a CheckICPC problem multi-pass (the ICPC format's
	// limits.validation_passes): while the validator accepts and leaves
	// nextpass.in in its feedback directory, the program runs again with
	// that file as its input, at most Passes times in all. 0 or 1: one.
	Passes int
}

// maxToken bounds a single token for CheckFloat and CheckYesNo.
const maxToken = 1 << 20

func (c Checker) validate() error {
	if err := c.Points.validate(); err != nil {
		return err
	}
	switch c.Kind {
	case "", CheckLines, CheckTokens, CheckExact, CheckYesNo:
	case CheckFloat:
		if c.AbsEps < 0 || c.RelEps < 0 || math.IsNaN(c.AbsEps) || math.IsNaN(c.RelEps) {
			return fmt.Errorf("%w: negative or NaN epsilon", ErrInvalidInput)
		}
	case CheckDefaultValidator:
	case CheckCustom, CheckICPC:
		if c.Program == nil && (c.Language == "" || c.Source == "") {
			return fmt.Errorf("%w: custom checker needs a Program or Language and Source", ErrInvalidInput)
		}
	default:
		return fmt.Errorf("%w: unknown checker kind %q", ErrInvalidInput, c.Kind)
	}
	if c.Passes < 0 || c.Passes > maxPasses {
		return fmt.Errorf("%w: passes %d: at most %d", ErrInvalidInput, c.Passes, maxPasses)
	}
	return nil
}

// Compare judges actual output against the expected output with a built-in
// checker, reading both as streams: memory stays small however large they are.
// It returns whether the output is accepted and, if not, a message locating the
// first difference (which hints are built from).
//
// The error is ErrInvalidInput for CheckCustom (which needs a program; use
// Engine.Judge) or an unknown kind, an error for malformed expected output
// (CheckYesNo answers that are not YES/NO), or a read error.
func (c Checker) Compare(expected, actual io.Reader) (bool, string, error) {
	if err := c.validate(); err != nil {
		return false, "", err
	}
	exp, act := getReader(expected), getReader(actual)
	defer putReader(exp)
	defer putReader(act)
	switch c.Kind {
	case "", CheckLines:
		return compareStreams(&lineCanon{r: exp}, &lineCanon{r: act}, '\n', "line")
	case CheckTokens:
		return compareStreams(&tokenCanon{r: exp}, &tokenCanon{r: act}, ' ', "token")
	case CheckExact:
		return compareStreams(exp, act, '\n', "line")
	case CheckFloat:
		abs, rel := c.AbsEps, c.RelEps
		if abs == 0 && rel == 0 {
			abs, rel = DefaultEpsilon, DefaultEpsilon
		}
		return compareFloats(exp, act, abs, rel)
	case CheckYesNo:
		return compareYesNo(exp, act)
	case CheckDefaultValidator:
		v, err := ParseDefaultValidator(c.Args)
		if err != nil {
			return false, "", err
		}
		return v.Compare(exp, act)
	}
	return false, "", fmt.Errorf("%w: checker kind %q cannot compare streams", ErrInvalidInput, c.Kind)
}

func isLineSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

func isSpace(b byte) bool { return b == '\n' || isLineSpace(b) }

// lineCanon reads the output with whitespace at the end of every line and
// blank lines at the end of the output removed, and no final newline. Only
// whitespace runs are buffered (dropped at a line end, or flushed when the line
// goes on); blank lines are counted, not stored.
type lineCanon struct {
	r       *bufio.Reader
	ws      []byte
	wsPos   int
	nl      int
	flush   bool
	pending byte
	eof     bool
}

// Read implements io.Reader over the canonical form.
func (c *lineCanon) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if c.flush {
			switch {
			case c.nl > 0:
				p[n] = '\n'
				c.nl--
				n++
			case c.wsPos < len(c.ws):
				k := copy(p[n:], c.ws[c.wsPos:])
				c.wsPos += k
				n += k
			default:
				c.flush, c.ws, c.wsPos = false, c.ws[:0], 0
				p[n] = c.pending
				n++
			}
			continue
		}
		if c.eof {
			break
		}
		b, err := c.r.ReadByte()
		if err != nil {
			if err != io.EOF {
				return n, err
			}
			c.eof = true // pending whitespace and blank lines are dropped
			break
		}
		switch {
		case b == '\n':
			c.ws = c.ws[:0]
			c.nl++
		case isLineSpace(b):
			c.ws = append(c.ws, b)
		case c.nl == 0 && len(c.ws) == 0:
			p[n] = b
			n++
		default:
			c.flush, c.pending = true, b
		}
	}
	if n == 0 && c.eof {
		return 0, io.EOF
	}
	return n, nil
}

// tokenCanon reads the tokens of the output separated by single spaces.
type tokenCanon struct {
	r       *bufio.Reader
	started bool
	sep     bool
	eof     bool
}

// Read implements io.Reader over the canonical form.
func (c *tokenCanon) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !c.eof {
		b, err := c.r.ReadByte()
		if err != nil {
			if err != io.EOF {
				return n, err
			}
			c.eof = true
			break
		}
		if isSpace(b) {
			c.sep = c.started
			continue
		}
		if c.sep {
			if n+1 == len(p) {
				_ = c.r.UnreadByte()
				break
			}
			p[n] = ' '
			n++
			c.sep = false
		}
		c.started = true
		p[n] = b
		n++
	}
	if n == 0 && c.eof {
		return 0, io.EOF
	}
	return n, nil
}

// side is one stream under comparison: a block buffer over a reader.
type side struct {
	r    io.Reader
	buf  []byte
	pos  int
	end  int
	eof  bool
	err  error
	name string
}

// fill makes sure some bytes are buffered unless the stream ended.
func (s *side) fill() {
	for s.pos == s.end && !s.eof {
		n, err := s.r.Read(s.buf)
		s.pos, s.end = 0, n
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.eof, s.err = true, fmt.Errorf("reading %s: %w", s.name, err)
		}
	}
}

func (s *side) next() (byte, bool) {
	s.fill()
	if s.pos == s.end {
		return 0, false
	}
	s.pos++
	return s.buf[s.pos-1], true
}

// snippetLen bounds each side of a difference shown in messages.
const snippetLen = 40

// compareStreams compares two canonical streams block by block; sep delimits
// the units (lines or tokens) that messages count.
func compareStreams(expR, actR io.Reader, sep byte, unit string) (bool, string, error) {
	exp := &side{r: expR, buf: getBuf(), name: "expected output"}
	act := &side{r: actR, buf: getBuf(), name: "output"}
	defer putBuf(exp.buf)
	defer putBuf(act.buf)
	var (
		prefix []byte // the current unit so far (its last snippetLen bytes)
		cut    bool   // prefix lost its beginning
		n      = 1
	)
	advance := func(b []byte) {
		if i := bytes.LastIndexByte(b, sep); i >= 0 {
			n += bytes.Count(b, []byte{sep})
			b, prefix, cut = b[i+1:], prefix[:0], false
		}
		if len(prefix)+len(b) > snippetLen {
			keep := max(snippetLen-len(b), 0)
			prefix = append(prefix[:0], prefix[len(prefix)-keep:]...)
			if len(b) > snippetLen {
				b = b[len(b)-snippetLen:]
			}
			cut = true
		}
		prefix = append(prefix, b...)
	}
	for {
		exp.fill()
		act.fill()
		if exp.err != nil {
			return false, "", exp.err
		}
		if act.err != nil {
			return false, "", act.err
		}
		eb, ab := exp.buf[exp.pos:exp.end], act.buf[act.pos:act.end]
		m := min(len(eb), len(ab))
		i := 0
		if !bytes.Equal(eb[:m], ab[:m]) {
			for i < m && eb[i] == ab[i] {
				i++
			}
		} else {
			i = m
		}
		advance(eb[:i])
		exp.pos += i
		act.pos += i
		if i == m && len(eb) > 0 && len(ab) > 0 {
			continue // both blocks matched so far
		}
		return mismatch(exp, act, prefix, cut, n, sep, unit)
	}
}

// mismatch describes the first difference: both streams are positioned on it
// (or at their end).
func mismatch(exp, act *side, prefix []byte, cut bool, n int, sep byte, unit string) (bool, string, error) {
	eb, eok := exp.next()
	ab, aok := act.next()
	switch {
	case !eok && !aok:
		return true, "", nil
	case !eok && ab == sep:
		return false, fmt.Sprintf("extra output after %s %d: %s", unit, n, restOfUnit(nil, false, act, sep)), nil
	case !eok:
		return false, fmt.Sprintf("%s %d: expected %s, found %s", unit, n,
			quoteSnippet(prefix, cut, false), restOfUnit(append(prefix, ab), cut, act, sep)), nil
	case !aok && eb == sep:
		return false, fmt.Sprintf("output ends after %s %d, expected more: %s", unit, n, restOfUnit(nil, false, exp, sep)), nil
	case !aok:
		return false, fmt.Sprintf("%s %d: expected %s, found %s", unit, n,
			restOfUnit(append(prefix, eb), cut, exp, sep), quoteSnippet(prefix, cut, false)), nil
	}
	e, a := quoteSnippet(prefix, cut, false), quoteSnippet(prefix, cut, false)
	if eb != sep {
		e = restOfUnit(append(append([]byte{}, prefix...), eb), cut, exp, sep)
	}
	if ab != sep {
		a = restOfUnit(append(append([]byte{}, prefix...), ab), cut, act, sep)
	}
	return false, fmt.Sprintf("%s %d: expected %s, found %s", unit, n, e, a), nil
}

// restOfUnit renders head followed by the rest of the current unit of s (up to
// snippetLen more bytes).
func restOfUnit(head []byte, cut bool, s *side, sep byte) string {
	buf := append([]byte{}, head...)
	for i := 0; ; i++ {
		b, ok := s.next()
		if !ok || b == sep {
			return quoteSnippet(buf, cut, false)
		}
		if i >= snippetLen {
			return quoteSnippet(buf, cut, true)
		}
		buf = append(buf, b)
	}
}

func quoteSnippet(b []byte, cut, more bool) string {
	s := strconv.Quote(string(b))
	if cut {
		s = "…" + s
	}
	if more {
		s += "…"
	}
	return s
}

func readByte(r *bufio.Reader) (byte, bool, error) {
	b, err := r.ReadByte()
	if err == io.EOF {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return b, true, nil
}

// tokenReader reads whitespace-separated tokens of bounded length.
type tokenReader struct{ r *bufio.Reader }

var errTokenTooLong = errors.New("token too long")

func (t tokenReader) next() ([]byte, bool, error) {
	var tok []byte
	for {
		b, ok, err := readByte(t.r)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return tok, len(tok) > 0, nil
		}
		if isSpace(b) {
			if len(tok) > 0 {
				return tok, true, nil
			}
			continue
		}
		if len(tok) >= maxToken {
			return tok, true, errTokenTooLong
		}
		tok = append(tok, b)
	}
}

// nextTokens reads one token from each side, sorting errors by side.
func nextTokens(exp, act tokenReader) (et, at []byte, eok, aok bool, msg string, err error) {
	et, eok, err = exp.next()
	if err != nil {
		return nil, nil, false, false, "", fmt.Errorf("reading expected output: %w", err)
	}
	at, aok, err = act.next()
	if errors.Is(err, errTokenTooLong) {
		return nil, nil, false, false, fmt.Sprintf("a token of the output is longer than %d bytes", maxToken), nil
	}
	if err != nil {
		return nil, nil, false, false, "", fmt.Errorf("reading output: %w", err)
	}
	return et, at, eok, aok, "", nil
}

func shortToken(b []byte) string {
	if len(b) > snippetLen {
		return strconv.Quote(string(b[:snippetLen])) + "…"
	}
	return strconv.Quote(string(b))
}

// compareFloats implements CheckFloat.
func compareFloats(expR, actR *bufio.Reader, abs, rel float64) (bool, string, error) {
	exp, act := tokenReader{expR}, tokenReader{actR}
	for i := 1; ; i++ {
		et, at, eok, aok, msg, err := nextTokens(exp, act)
		if err != nil || msg != "" {
			return false, msg, err
		}
		switch {
		case !eok && !aok:
			return true, "", nil
		case !eok:
			return false, fmt.Sprintf("token %d: expected end of output, found %s", i, shortToken(at)), nil
		case !aok:
			return false, fmt.Sprintf("token %d: output ends early, expected %s", i, shortToken(et)), nil
		}
		ev, eerr := strconv.ParseFloat(string(et), 64)
		if eerr != nil && !errors.Is(eerr, strconv.ErrRange) {
			if !bytes.Equal(et, at) {
				return false, fmt.Sprintf("token %d: expected %s, found %s", i, shortToken(et), shortToken(at)), nil
			}
			continue
		}
		av, aerr := strconv.ParseFloat(string(at), 64)
		if aerr != nil && !errors.Is(aerr, strconv.ErrRange) {
			return false, fmt.Sprintf("token %d: expected a number %s, found %s", i, shortToken(et), shortToken(at)), nil
		}
		if !withinTolerance(ev, av, abs, rel) {
			return false, fmt.Sprintf("token %d: expected %s, found %s (error %.3g, allowed absolute %g or relative %g)",
				i, et, shortToken(at), math.Abs(ev-av), abs, rel), nil
		}
	}
}

// withinTolerance is testlib's doubleCompare: absolute or relative error.
func withinTolerance(exp, act, abs, rel float64) bool {
	switch {
	case math.IsNaN(exp):
		return math.IsNaN(act)
	case math.IsNaN(act):
		return false
	case math.IsInf(exp, 0) || math.IsInf(act, 0):
		return exp == act
	}
	const slack = 1e-15
	d := math.Abs(exp - act)
	return d <= abs+slack || d <= rel*math.Abs(exp)+slack
}

// compareYesNo implements CheckYesNo.
func compareYesNo(expR, actR *bufio.Reader) (bool, string, error) {
	exp, act := tokenReader{expR}, tokenReader{actR}
	isYesNo := func(b []byte) bool {
		return strings.EqualFold(string(b), "yes") || strings.EqualFold(string(b), "no")
	}
	for i := 1; ; i++ {
		et, at, eok, aok, msg, err := nextTokens(exp, act)
		if err != nil || msg != "" {
			return false, msg, err
		}
		if eok && !isYesNo(et) {
			return false, "", fmt.Errorf("yesno checker: expected answer %d is %s, not YES or NO", i, shortToken(et))
		}
		switch {
		case !eok && !aok:
			return true, "", nil
		case !eok:
			return false, fmt.Sprintf("answer %d: expected end of output, found %s", i, shortToken(at)), nil
		case !aok:
			return false, fmt.Sprintf("answer %d: output ends early, expected %s", i, strings.ToUpper(string(et))), nil
		case !isYesNo(at):
			return false, fmt.Sprintf("answer %d: expected YES or NO, found %s", i, shortToken(at)), nil
		case !strings.EqualFold(string(et), string(at)):
			return false, fmt.Sprintf("answer %d: expected %s, found %s", i, strings.ToUpper(string(et)), strings.ToUpper(string(at))), nil
		}
	}
}

// Every test streams its output through a few 64 KiB buffers (the copy
// from the program, the checker's readers): pooled, not garbage.
var (
	bufPool    = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
)

func getBuf() []byte { return *bufPool.Get().(*[]byte) }

func putBuf(b []byte) {
	if cap(b) == 64<<10 {
		b = b[:cap(b)]
		bufPool.Put(&b)
	}
}

func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}
