package judge_test

import (
	"strings"
	"testing"

	"github.com/algoitny/api/internal/judge"
)

// The default output validator of the ICPC problem package format, case
// by case as its specification describes it.
func TestDefaultValidator(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, flags, answer, output string
		ok                          bool
	}{
		{"OK", "", "1 2\nthree\n", "1 2\nthree\n", true},
		{"AnyWhitespace", "", "1 2\nthree\n", "  1\t\t2 three", true},
		{"CaseInsensitiveByDefault", "", "Yes\n", "YES\n", true},
		{"CaseSensitive", "case_sensitive", "Yes\n", "YES\n", false},
		{"TrailingOutput", "", "42\n", "42 43\n", false},
		{"MissingToken", "", "1 2\n", "1\n", false},
		{"EmptyOutput", "", "1\n", "", false},
		{"EmptyBoth", "", "", "\n", true},
		{"NoToleranceIsString", "", "0.5\n", "0.50\n", false},
		{"AbsoluteTolerance", "float_absolute_tolerance 1e-6", "0.5\n", "0.5000001\n", true},
		{"AbsoluteToleranceExceeded", "float_absolute_tolerance 1e-6", "0.5\n", "0.50001\n", false},
		{"RelativeTolerance", "float_relative_tolerance 1e-3", "1000\n", "1000.9\n", true},
		{"RelativeToleranceExceeded", "float_relative_tolerance 1e-3", "1000\n", "1001.1\n", false},
		{"EitherTolerance", "float_tolerance 1e-6", "0\n", "1e-7\n", true},
		{"AnyFloatFormat", "float_tolerance 1e-9", "0.0314\n", "3.14000000e-2\n", true},
		{"IntegersAreNumbersToo", "float_tolerance 1e-9", "200\n", "2.0e2\n", true},
		{"NotANumber", "float_tolerance 1e-6", "1.5\n", "one\n", false},
		{"NaNIsNotANumber", "float_tolerance 1e-6", "2\n", "nan\n", false},
		{"InfinityAnswerIsAString", "float_tolerance 1e-6", "inf\n", "INF\n", true},
		{"StringsBesideNumbers", "float_tolerance 1e-6", "case 1: 0.5\n", "Case 1: 0.5000001\n", true},
		{"SpaceSensitiveSame", "space_change_sensitive", "1 2\n3\n", "1 2\n3\n", true},
		{"SpaceSensitiveDouble", "space_change_sensitive", "1 2\n", "1  2\n", false},
		{"SpaceSensitiveTab", "space_change_sensitive", "1 2\n", "1\t2\n", false},
		{"SpaceSensitiveMissingNewline", "space_change_sensitive", "1 2\n", "1 2", false},
		{"SpaceSensitiveTrailing", "space_change_sensitive", "1 2\n", "1 2\n\n", false},
		{"SpaceSensitiveLeading", "space_change_sensitive", "1\n", " 1\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			v, err := judge.ParseDefaultValidator(strings.Fields(c.flags))
			if err != nil {
				t.Fatal(err)
			}
			ok, msg, err := v.Compare(strings.NewReader(c.answer), strings.NewReader(c.output))
			if err != nil {
				t.Fatal(err)
			}
			if ok != c.ok {
				t.Fatalf("accepted = %v (%s), want %v", ok, msg, c.ok)
			}
			if !ok && msg == "" {
				t.Fatal("a rejection without a message")
			}
		})
	}
}

func TestParseDefaultValidator(t *testing.T) {
	t.Parallel()
	for _, flags := range []string{"float_tolerance", "float_tolerance x", "float_absolute_tolerance -1", "ignore_case"} {
		if _, err := judge.ParseDefaultValidator(strings.Fields(flags)); err == nil {
			t.Errorf("%q: no error", flags)
		}
	}
}
