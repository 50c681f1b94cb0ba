package judge_test

import (
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

func TestCheckerCompare(t *testing.T) {
	t.Parallel()
	lines := judge.Checker{}
	tokens := judge.Checker{Kind: judge.CheckTokens}
	exact := judge.Checker{Kind: judge.CheckExact}
	float := judge.Checker{Kind: judge.CheckFloat}
	yesno := judge.Checker{Kind: judge.CheckYesNo}
	tests := []struct {
		name             string
		checker          judge.Checker
		expected, actual string
		ok               bool
		message          string // substring of the message when !ok
	}{
		{"LinesEqual", lines, "1 2\n3\n", "1 2\n3\n", true, ""},
		{"LinesTrailingSpaces", lines, "1 2\n3\n", "1 2   \n3\t\n", true, ""},
		{"LinesCRLF", lines, "1 2\n3\n", "1 2\r\n3\r\n", true, ""},
		{"LinesCRLFExpected", lines, "1 2\r\n3\r\n", "1 2\n3", true, ""},
		{"LinesMissingFinalNewline", lines, "1 2\n3\n", "1 2\n3", true, ""},
		{"LinesTrailingBlankLines", lines, "1 2\n3\n", "1 2\n3\n\n\n  \n", true, ""},
		{"LinesExpectedTrailingBlankLines", lines, "1 2\n3\n\n\n", "1 2\n3\n", true, ""},
		{"LinesEmpty", lines, "", "\n\n", true, ""},
		{"LinesInnerSpacesMatter", lines, "1 2\n", "1  2\n", false, `line 1: expected "1 2", found "1  2"`},
		{"LinesLeadingSpacesMatter", lines, "1\n", " 1\n", false, "line 1"},
		{"LinesLeadingBlankLineMatters", lines, "1\n", "\n1\n", false, "line 1"},
		{"LinesMissingLine", lines, "1\n2\n3\n", "1\n2\n", false, `output ends after line 2, expected more: "3"`},
		{"LinesExtraLine", lines, "1\n2\n", "1\n2\n3\n", false, `extra output after line 2: "3"`},
		{"LinesWrongSecondLine", lines, "10 20\n30 40\n", "10 20\n30 41\n", false, `line 2: expected "30 40", found "30 41"`},
		{"LinesLineTooShort", lines, "abc\n", "ab\n", false, `line 1: expected "abc", found "ab"`},
		{"LinesLongLineSnippet", lines, strings.Repeat("x", 100) + "a\n", strings.Repeat("x", 100) + "b\n", false, `found …"` + strings.Repeat("x", 40) + `b"`},
		{"TokensAnyWhitespace", tokens, "1 2\n3\n", "  1\n\n2\t3  ", true, ""},
		{"TokensDifferent", tokens, "1 2 3", "1 2 4", false, `token 3: expected "3", found "4"`},
		{"TokensMissing", tokens, "1 2 3", "1 2", false, "output ends after token 2"},
		{"ExactEqual", exact, "a b\n", "a b\n", true, ""},
		{"ExactTrailingSpace", exact, "a b\n", "a b \n", false, "line 1"},
		{"ExactMissingNewline", exact, "a b\n", "a b", false, "line 1"},
		{"FloatAbsolute", float, "0.3333333", "0.33333", false, "token 1"},
		{"FloatWithinDefault", float, "0.333333333", "0.3333330", true, ""},
		{"FloatRelative", judge.Checker{Kind: judge.CheckFloat, RelEps: 1e-6}, "1000000000", "1000000500", true, ""},
		{"FloatRelativeTooFar", judge.Checker{Kind: judge.CheckFloat, RelEps: 1e-6}, "1000000000", "1000002000", false, "token 1"},
		{"FloatAbsoluteOrRelative", judge.Checker{Kind: judge.CheckFloat, AbsEps: 1e-3, RelEps: 1e-9}, "0.5 1e12", "0.5009 1000000000001", true, ""},
		{"FloatExponentForms", float, "1e-7 2.5", "0.0000001 2.50000000", true, ""},
		{"FloatNotANumber", float, "1.5", "abc", false, `expected a number "1.5", found "abc"`},
		{"FloatWordsCompareExactly", float, "Case 1: 0.5", "Case 1: 0.5000001", true, ""},
		{"FloatWordsDiffer", float, "Case 1: 0.5", "case 1: 0.5", false, "token 1"},
		{"FloatNaN", float, "nan", "NaN", true, ""},
		{"FloatInf", float, "inf", "1e308", false, "token 1"},
		{"FloatCount", float, "1 2", "1", false, "output ends early"},
		{"FloatCRLF", float, "1.0\n2.0\n", "1.0000001\r\n2\r\n", true, ""},
		{"YesNoCaseInsensitive", yesno, "YES\nNO\n", "yes\nNo", true, ""},
		{"YesNoWrong", yesno, "YES", "NO", false, "answer 1: expected YES, found NO"},
		{"YesNoNotAnAnswer", yesno, "YES", "maybe", false, `expected YES or NO, found "maybe"`},
		{"YesNoMissing", yesno, "YES\nYES", "YES", false, "answer 2: output ends early"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ok, msg, err := tc.checker.Compare(strings.NewReader(tc.expected), strings.NewReader(tc.actual))
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			if ok != tc.ok {
				t.Fatalf("Compare(%q, %q) = %v (%s), want %v", tc.expected, tc.actual, ok, msg, tc.ok)
			}
			if !ok && !strings.Contains(msg, tc.message) {
				t.Fatalf("message %q does not contain %q", msg, tc.message)
			}
		})
	}
}

func TestCheckerCompareErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		checker judge.Checker
		want    error
	}{
		{"ErrInvalidInput_UnknownKind", judge.Checker{Kind: "fuzzy"}, judge.ErrInvalidInput},
		{"ErrInvalidInput_Custom", judge.Checker{Kind: judge.CheckCustom}, judge.ErrInvalidInput},
		{"ErrInvalidInput_NegativeEpsilon", judge.Checker{Kind: judge.CheckFloat, AbsEps: -1}, judge.ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := tc.checker.Compare(strings.NewReader("1"), strings.NewReader("1"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("YesNoExpectedNotAnAnswer", func(t *testing.T) {
		t.Parallel()
		_, _, err := judge.Checker{Kind: judge.CheckYesNo}.Compare(strings.NewReader("PERHAPS"), strings.NewReader("YES"))
		if err == nil {
			t.Fatal("a yes/no answer key with other words must be an error (the problem is broken)")
		}
	})
}

// numbers generates "1\n2\n...n\n" (with a different last line when last != 0)
// without ever holding it in memory.
type numbers struct {
	n, i, last int
	buf        []byte
}

func (r *numbers) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.i < r.n {
		r.i++
		v := r.i
		if r.i == r.n && r.last != 0 {
			v = r.last
		}
		r.buf = strconv.AppendInt(r.buf, int64(v), 10)
		r.buf = append(r.buf, '\n')
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}

// TestCheckerStreaming compares ~24 MB outputs (3× the allocation bound) and checks that memory use does
// not grow with their size. It measures the process's allocations, so it is
// deliberately not parallel: Go runs it before the parallel tests resume.
func TestCheckerStreaming(t *testing.T) {
	const n = 3_000_000
	for _, kind := range []judge.CheckerKind{judge.CheckLines, judge.CheckTokens, judge.CheckExact, judge.CheckFloat} {
		t.Run(string(kind), func(t *testing.T) {
			c := judge.Checker{Kind: kind}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ok, msg, err := c.Compare(&numbers{n: n}, &numbers{n: n})
			runtime.ReadMemStats(&after)
			if err != nil || !ok {
				t.Fatalf("equal streams: ok=%v %q %v", ok, msg, err)
			}
			// Tokens of the float checker are allocated per token; everything
			// else must stay within a few buffers.
			if kind != judge.CheckFloat {
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
					t.Fatalf("comparing allocated %d MiB for a %d-line stream", grew>>20, n)
				}
			}
			ok, msg, err = c.Compare(&numbers{n: n}, &numbers{n: n, last: 7})
			if err != nil || ok || !strings.Contains(msg, "3000000") {
				t.Fatalf("different last line: ok=%v %q %v", ok, msg, err)
			}
		})
	}
}
