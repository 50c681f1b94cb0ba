package judge

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// DefaultValidator is the ICPC problem package format's default output
// validator with its flags: outputs are compared token by token, strings
// case-insensitively unless CaseSensitive, whitespace only as a separator
// unless SpaceSensitive (then every whitespace character must match), and,
// when a tolerance is set, an answer token that is a floating-point number
// accepts an output number within AbsTolerance or RelTolerance of it
// (either suffices). A negative tolerance is unset.
type DefaultValidator struct {
	CaseSensitive, SpaceSensitive bool
	AbsTolerance, RelTolerance    float64
}

// ParseDefaultValidator reads the default validator's flags: case_sensitive,
// space_change_sensitive, float_relative_tolerance ε, float_absolute_tolerance
// ε, float_tolerance ε. Errors: ErrInvalidInput for an unknown flag or a
// missing or malformed tolerance.
func ParseDefaultValidator(flags []string) (DefaultValidator, error) {
	v := DefaultValidator{AbsTolerance: -1, RelTolerance: -1}
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; f {
		case "case_sensitive":
			v.CaseSensitive = true
		case "space_change_sensitive":
			v.SpaceSensitive = true
		case "float_relative_tolerance", "float_absolute_tolerance", "float_tolerance":
			if i+1 == len(flags) {
				return v, fmt.Errorf("%w: %s needs a value", ErrInvalidInput, f)
			}
			eps, ok := floatToken(flags[i+1])
			if !ok || eps < 0 {
				return v, fmt.Errorf("%w: %s: not a tolerance: %q", ErrInvalidInput, f, flags[i+1])
			}
			i++
			if f != "float_absolute_tolerance" {
				v.RelTolerance = eps
			}
			if f != "float_relative_tolerance" {
				v.AbsTolerance = eps
			}
		default:
			return v, fmt.Errorf("%w: unknown flag %q of the default output validator", ErrInvalidInput, f)
		}
	}
	return v, nil
}

// floatToken reads a token as the default validator does (C's %lf of the
// whole token): decimal and hexadecimal floating-point numbers and
// integers; infinities and NaN are not numbers to it.
func floatToken(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "_") { // strconv allows '_' in some bases; C does not
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if !(asNumError(err, &ne) && ne.Err == strconv.ErrRange) {
			return 0, false
		}
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

func asNumError(err error, target **strconv.NumError) bool {
	ne, ok := err.(*strconv.NumError)
	if ok {
		*target = ne
	}
	return ok
}

// isICPCSpace is C's isspace: space, \t, \n, \v, \f, \r.
func isICPCSpace(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

// Compare judges output against the answer as the default validator does,
// reading both as streams. It returns whether the output is accepted and,
// if not, why; the error is a read error.
func (v DefaultValidator) Compare(answer, output io.Reader) (bool, string, error) {
	ans, out := bufio.NewReaderSize(answer, 64<<10), bufio.NewReaderSize(output, 64<<10)
	for n := 1; ; n++ {
		if ok, msg, err := v.spaces(ans, out); !ok || err != nil {
			return ok, msg, err
		}
		want, err := token(ans)
		if err != nil {
			return false, "", err
		}
		if want == "" {
			break
		}
		got, err := token(out)
		if err != nil {
			return false, "", err
		}
		if got == "" {
			return false, fmt.Sprintf("the output ended at token %d; expected %q", n, shortToken([]byte(want))), nil
		}
		if ok, msg := v.tokensMatch(want, got); !ok {
			return false, fmt.Sprintf("token %d: %s", n, msg), nil
		}
	}
	extra, err := token(out)
	if err != nil {
		return false, "", err
	}
	if extra != "" {
		return false, fmt.Sprintf("trailing output: %q", shortToken([]byte(extra))), nil
	}
	return true, "", nil
}

// spaces consumes the whitespace before the next token of both streams;
// when SpaceSensitive, the output's must be the answer's, character for
// character.
func (v DefaultValidator) spaces(ans, out *bufio.Reader) (bool, string, error) {
	for {
		c, ok, err := peekSpace(ans)
		if err != nil || !ok {
			break
		}
		_, _ = ans.ReadByte()
		if v.SpaceSensitive {
			d, err := out.ReadByte()
			if err != nil && err != io.EOF {
				return false, "", err
			}
			if err == io.EOF || d != c {
				return false, fmt.Sprintf("whitespace differs: expected %q", rune(c)), nil
			}
		}
	}
	for {
		_, ok, err := peekSpace(out)
		if err != nil {
			return false, "", err
		}
		if !ok {
			return true, "", nil
		}
		if v.SpaceSensitive {
			return false, "whitespace differs: extra whitespace in the output", nil
		}
		_, _ = out.ReadByte()
	}
}

// peekSpace returns the next byte when it is whitespace.
func peekSpace(r *bufio.Reader) (byte, bool, error) {
	b, err := r.Peek(1)
	if err == io.EOF {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return b[0], isICPCSpace(b[0]), nil
}

// token reads the next token ("" at the end); whitespace before it must
// have been consumed. Tokens longer than maxToken are cut (they compare as
// different from anything shorter anyway).
func token(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return string(b), nil
		}
		if err != nil {
			return "", err
		}
		if isICPCSpace(c) {
			return string(b), r.UnreadByte()
		}
		if len(b) < maxToken {
			b = append(b, c)
		}
	}
}

// tokensMatch compares an answer token with an output token.
func (v DefaultValidator) tokensMatch(want, got string) (bool, string) {
	if v.AbsTolerance >= 0 || v.RelTolerance >= 0 {
		if w, ok := floatToken(want); ok {
			g, ok := floatToken(got)
			if !ok {
				return false, fmt.Sprintf("expected a number, got %q", shortToken([]byte(got)))
			}
			diff := math.Abs(w - g)
			if diff <= v.AbsTolerance || diff <= v.RelTolerance*math.Abs(w) {
				return true, ""
			}
			return false, fmt.Sprintf("expected %s, got %s: too large a difference", want, shortToken([]byte(got)))
		}
	}
	if want == got || (!v.CaseSensitive && asciiLower(want) == asciiLower(got)) {
		return true, ""
	}
	return false, fmt.Sprintf("expected %q, got %q", shortToken([]byte(want)), shortToken([]byte(got)))
}

// asciiLower lowers A–Z only, as C's strcasecmp in the C locale does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
