package analysis_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/analysis"
)

// python is the Python 3 interpreter itself: version managers such as pyenv
// put a slow shell script in front of it, which would dominate these tests.
var python = sync.OnceValues(func() (string, error) {
	if _, err := exec.LookPath("python3"); err != nil {
		return "", err
	}
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return "python3", nil
	}
	return strings.TrimSpace(string(out)), nil
})

// pythonPath returns the interpreter, skipping the test without one.
func pythonPath(t *testing.T) string {
	t.Helper()
	p, err := python()
	if err != nil {
		t.Skipf("python3 is needed to run generated generators: %v", err)
	}
	return p
}

// runGenerator runs a generated Python program for one seed and index.
func runGenerator(t *testing.T, path string, seed, index int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, pythonPath(t), path, strconv.Itoa(seed), strconv.Itoa(index))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 %s %d %d: %v\n%s", filepath.Base(path), seed, index, err, stderr.String())
	}
	return stdout.String()
}

// input is a generated test input, read line by line.
type input struct {
	t     *testing.T
	lines []string
	pos   int
	desc  string
}

func newInput(t *testing.T, s, desc string) *input {
	t.Helper()
	if !strings.HasSuffix(s, "\n") {
		t.Fatalf("%s: output does not end with a newline: %q", desc, s)
	}
	return &input{t: t, lines: strings.Split(strings.TrimSuffix(s, "\n"), "\n"), desc: desc}
}

// ints reads a line of exactly n integers (n < 0: any number).
func (in *input) ints(n int) []int64 {
	in.t.Helper()
	if in.pos >= len(in.lines) {
		in.t.Fatalf("%s: input ends at line %d", in.desc, in.pos+1)
	}
	f := strings.Fields(in.lines[in.pos])
	if n >= 0 && len(f) != n {
		in.t.Fatalf("%s: line %d has %d values, want %d: %q", in.desc, in.pos+1, len(f), n, truncate(in.lines[in.pos]))
	}
	out := make([]int64, len(f))
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			in.t.Fatalf("%s: line %d: %v", in.desc, in.pos+1, err)
		}
		out[i] = v
	}
	in.pos++
	return out
}

func (in *input) line() string {
	in.t.Helper()
	if in.pos >= len(in.lines) {
		in.t.Fatalf("%s: input ends at line %d", in.desc, in.pos+1)
	}
	in.pos++
	return in.lines[in.pos-1]
}

func (in *input) end() {
	in.t.Helper()
	if in.pos != len(in.lines) {
		in.t.Fatalf("%s: %d extra lines, first %q", in.desc, len(in.lines)-in.pos, truncate(in.lines[in.pos]))
	}
}

func (in *input) within(what string, v, lo, hi int64) {
	in.t.Helper()
	if v < lo || v > hi {
		in.t.Fatalf("%s: %s = %d is outside [%d, %d]", in.desc, what, v, lo, hi)
	}
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// generateCases are constraints (with samples) and what every generated test must satisfy.
var generateCases = []struct {
	name        string
	constraints string
	samples     []analysis.Sample
	check       func(in *input)
}{
	{"OneScalar", "1 ≤ N ≤ 100000", nil, func(in *input) {
		in.within("N", in.ints(1)[0], 1, 100000)
	}},
	{"SharedRangeWithASCIIRelations", "1 <= a, b <= 10", nil, func(in *input) {
		v := in.ints(2)
		in.within("a", v[0], 1, 10)
		in.within("b", v[1], 1, 10)
	}},
	{"ArrayWithNegativeValues", "1 ≤ N ≤ 1000\n-10^9 ≤ A_i ≤ 10^9", nil, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 1000)
		for _, a := range in.ints(int(n)) {
			in.within("A_i", a, -1e9, 1e9)
		}
	}},
	{"DependentBounds", "1 ≤ N ≤ 2×10^5\n2 ≤ K ≤ N\n1 ≤ A_i ≤ N", nil, func(in *input) {
		v := in.ints(2)
		n, k := v[0], v[1]
		in.within("N", n, 2, 200000) // K ≥ 2 forces N ≥ 2
		in.within("K", k, 2, n)
		for _, a := range in.ints(int(n)) {
			in.within("A_i", a, 1, n)
		}
	}},
	{"LaTeXWithElementList", `$1 \le N \le 100$, $1 \le A_1, A_2, \ldots, A_N \le 10^{9}$`, nil, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 100)
		for _, a := range in.ints(int(n)) {
			in.within("A_i", a, 1, 1e9)
		}
	}},
	{"String", "1 ≤ |S| ≤ 100\nS consists of lowercase English letters.", nil, func(in *input) {
		s := in.line()
		in.within("|S|", int64(len(s)), 1, 100)
		if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") != "" {
			in.t.Fatalf("%s: S = %q is not lowercase letters", in.desc, s)
		}
	}},
	{"StrictBoundsCheckedAgainstSample", "0 < A, B < 10", []analysis.Sample{{Input: "1 2\n", Output: "3\n"}}, func(in *input) {
		v := in.ints(2)
		in.within("A", v[0], 1, 9)
		in.within("B", v[1], 1, 9)
	}},
	{"LengthFromIndexRange", "1 ≤ N, M ≤ 50\n1 ≤ A_i ≤ 100 (1 ≤ i ≤ M)", nil, func(in *input) {
		v := in.ints(2)
		in.within("N", v[0], 1, 50)
		in.within("M", v[1], 1, 50)
		for _, a := range in.ints(int(v[1])) {
			in.within("A_i", a, 1, 100)
		}
	}},
	{"OneValuePerLineFromSample", "1 ≤ N ≤ 100\n1 ≤ X_i ≤ 1000", []analysis.Sample{{Input: "3\n5\n7\n9\n"}}, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 100)
		for range n {
			in.within("X_i", in.ints(1)[0], 1, 1000)
		}
	}},
	{"Permutation", "1 ≤ N ≤ 8\n1 ≤ P_i ≤ N\nP_i ≠ P_j (i ≠ j)", nil, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 8)
		p := in.ints(int(n))
		slices.Sort(p)
		for i, v := range p {
			if v != int64(i+1) {
				in.t.Fatalf("%s: P is not a permutation: %v", in.desc, p)
			}
		}
	}},
	{"MultiTestColumnsDistinctFromSample", "1 ≤ t ≤ 100\n1 ≤ n ≤ 50\n1 ≤ a_i, b_i ≤ 50\nAdditional constraints on the input: in each test case, at least one value of i satisfies a_i ≤ 10, and all values of b_i are distinct",
		[]analysis.Sample{{Input: "3\n5\n7 2\n12 5\n9 3\n9 4\n10 1\n3\n1 2\n3 4\n5 6\n1\n1 43\n", Output: "4\n3\n1\n"}}, func(in *input) {
			tc := in.ints(1)[0]
			in.within("t", tc, 1, 100)
			for range tc {
				n := in.ints(1)[0]
				in.within("n", n, 1, 50)
				seen := map[int64]bool{}
				for range n {
					v := in.ints(2)
					in.within("a_i", v[0], 1, 50)
					in.within("b_i", v[1], 1, 50)
					if seen[v[1]] {
						in.t.Fatalf("%s: b_i = %d repeats", in.desc, v[1])
					}
					seen[v[1]] = true
				}
			}
		}},
	{"StringOfLengthN", "1 ≤ N ≤ 100\nS is a string of length N consisting of uppercase English letters.", nil, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 100)
		s := in.line()
		if int64(len(s)) != n || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			in.t.Fatalf("%s: S = %q, want %d uppercase letters", in.desc, s, n)
		}
	}},
	{"JapaneseStringLength", "1 \\leq N \\leq 10\nS は長さ N の文字列\nS は英小文字のみからなる", []analysis.Sample{{Input: "3\nabc\n"}}, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 10)
		if s := in.line(); int64(len(s)) != n || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") != "" {
			in.t.Fatalf("%s: S = %q, want %d lowercase letters", in.desc, s, n)
		}
	}},
	{"EdgeCountFromSample", "2 ≤ N ≤ 100\n1 ≤ M ≤ 100\n1 ≤ u_i, v_i ≤ N\nThe given graph is connected.", []analysis.Sample{{Input: "3 2\n1 2\n2 3\n"}}, func(in *input) {
		v := in.ints(2)
		n, m := v[0], v[1]
		in.within("N", n, 2, 100)
		in.within("M", m, 1, 100)
		for range m {
			e := in.ints(2)
			in.within("u_i", e[0], 1, n)
			in.within("v_i", e[1], 1, n)
		}
	}},
	{"ConstraintTextCannotBecomeCode", "1 ≤ N ≤ 10\n\"\"\"\rimport os; os._exit(3) #\u2028print('x')", nil, func(in *input) {
		in.within("N", in.ints(1)[0], 1, 10)
		in.end()
	}},
	{"SortedDistinctArray", "1 ≤ N ≤ 20\n1 ≤ A_1 < A_2 < \\cdots < A_N ≤ 30", nil, func(in *input) {
		n := in.ints(1)[0]
		in.within("N", n, 1, 20)
		a := in.ints(int(n))
		for i, v := range a {
			in.within("A_i", v, 1, 30)
			if i > 0 && a[i-1] >= v {
				in.t.Fatalf("%s: A is not strictly increasing: %v", in.desc, a)
			}
		}
	}},
	{"SumOverTestCases", "1 ≤ T ≤ 10^4\n1 ≤ N ≤ 2·10^5\n1 ≤ A_i ≤ 10^9\nThe sum of N over all test cases does not exceed 2·10^5.", nil, func(in *input) {
		tc := in.ints(1)[0]
		in.within("T", tc, 1, 10000)
		sum := int64(0)
		for range tc {
			n := in.ints(1)[0]
			in.within("N", n, 1, 200000)
			sum += n
			for _, a := range in.ints(int(n)) {
				in.within("A_i", a, 1, 1e9)
			}
		}
		in.within("sum of N", sum, 1, 200000)
	}},
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	for _, c := range generateCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, err := analysis.Generate(analysis.GeneratorRequest{
				Problem: algoitny.Problem{Title: c.name, Constraints: c.constraints},
				Samples: c.samples,
			})
			algoitnytest.OK(t, err)
			if g.Language != algoitny.LanguagePython {
				t.Fatalf("Language = %s, want python", g.Language)
			}
			if g.Notes == "" {
				t.Fatal("Notes is empty")
			}
			path := filepath.Join(t.TempDir(), "gen.py")
			algoitnytest.OK(t, os.WriteFile(path, []byte(g.Code), 0o644))
			outputs := map[string]bool{}
			for seed := 1; seed <= 2; seed++ {
				for index := range 6 {
					out := runGenerator(t, path, seed, index)
					in := newInput(t, out, fmt.Sprintf("seed %d index %d", seed, index))
					c.check(in)
					in.end()
					if seed == 1 {
						if again := runGenerator(t, path, seed, index); again != out {
							t.Fatalf("seed %d index %d: two runs printed different tests", seed, index)
						}
					}
					outputs[out] = true
				}
			}
			if len(outputs) < 3 {
				t.Fatalf("only %d distinct tests from 12 runs", len(outputs))
			}
		})
	}
}

func TestGenerateEdgeCases(t *testing.T) {
	t.Parallel()
	generate := func(t *testing.T, constraints string) string {
		t.Helper()
		g, err := analysis.Generate(analysis.GeneratorRequest{Problem: algoitny.Problem{Constraints: constraints}})
		algoitnytest.OK(t, err)
		path := filepath.Join(t.TempDir(), "gen.py")
		algoitnytest.OK(t, os.WriteFile(path, []byte(g.Code), 0o644))
		return path
	}

	t.Run("MinAndMax", func(t *testing.T) {
		t.Parallel()
		path := generate(t, "1 ≤ N ≤ 10^5\n-10^9 ≤ A_i ≤ 10^9")
		if got := runGenerator(t, path, 5, 0); got != "1\n-1000000000\n" {
			t.Fatalf("index 0 = %q, want the minimal case", got)
		}
		in := newInput(t, runGenerator(t, path, 5, 1), "index 1")
		if n := in.ints(1)[0]; n != 100000 {
			t.Fatalf("index 1: N = %d, want the maximum 100000", n)
		}
		for _, a := range in.ints(100000) {
			if a != 1e9 {
				t.Fatalf("index 1: A_i = %d, want the maximum", a)
			}
		}
	})

	t.Run("NotesSayWhatIsNotEnforced", func(t *testing.T) {
		t.Parallel()
		g, err := analysis.Generate(analysis.GeneratorRequest{Problem: algoitny.Problem{
			Constraints: "2 ≤ N ≤ 10^5\n1 ≤ a_i ≤ N\nThe given graph is a tree.\nA_1 + A_2 ≤ 10",
		}})
		algoitnytest.OK(t, err)
		requireContains(t, g.Notes, "N in [2, 100000]", "a_i in [1, N] with N elements (assumed)", "Not enforced: The given graph is a tree.", "Not enforced: A_1 + A_2 ≤ 10")
	})

	t.Run("IndexDefaultsToSeed", func(t *testing.T) {
		t.Parallel()
		path := generate(t, "1 ≤ N ≤ 1000")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, pythonPath(t), path, "7").Output()
		algoitnytest.OK(t, err)
		if want := runGenerator(t, path, 7, 7); string(out) != want {
			t.Fatalf("seed only = %q, want the same as index = seed (%q)", out, want)
		}
	})
}

func TestGenerateErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		constraints string
		samples     []analysis.Sample
		want        string
	}{
		{"ErrNoConstraints", "", nil, "cannot parse constraints"},
		{"ErrNoRanges", "The input describes a tree.", nil, "no ranges"},
		{"ErrRealNumbers", "0.5 ≤ x ≤ 1.5", nil, "no ranges"},
		{"ErrArrayWithoutLength", "1 ≤ A_i ≤ 10", nil, "no length"},
		{"ErrUnknownVariable", "1 ≤ K ≤ X", nil, "X"},
		{"ErrNoUpperBound", "N ≥ 1", nil, "no upper bound for N"},
		{"ErrCircularBounds", "1 ≤ N ≤ M, 1 ≤ M ≤ N", nil, "depend on each other"},
		{"ErrEmptyRange", "5 ≤ N ≤ 3", nil, "empty"},
		{"ErrGrid", "1 ≤ H, W ≤ 10\n0 ≤ A_{i,j} ≤ 9", nil, "grids"},
		{"ErrSampleDoesNotFit", "1 ≤ N ≤ 10", []analysis.Sample{{Input: "3\n1 2 3\n"}}, "sample input does not fit"},
		{"ErrSampleOutOfRange", "1 ≤ N ≤ 10", []analysis.Sample{{Input: "11\n"}}, "sample input does not fit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := analysis.Generate(analysis.GeneratorRequest{
				Problem: algoitny.Problem{Constraints: c.constraints},
				Samples: c.samples,
			})
			e := algoitnytest.ErrCode(t, err, algoitny.EINVALID)
			requireContains(t, e.Message, "cannot parse constraints: ", c.want)
		})
	}
}

func TestGenerateConstraintSpellings(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, constraints, want string }{
		{"Unicode", "1 ≤ N ≤ 100000", "N in [1, 100000]"},
		{"BracedExponent", "1 ≤ N ≤ 10^{5}", "N in [1, 100000]"},
		{"PythonPower", "1 <= N <= 10**5", "N in [1, 100000]"},
		{"ENotation", "1 <= N <= 1e5", "N in [1, 100000]"},
		{"JapaneseRelations", "1 ≦ N ≦ 10⁵", "N in [1, 100000]"},
		{"SpaceThousands", "1 ≤ n ≤ 100 000", "n in [1, 100000]"},
		{"CommaThousands", "1 ≤ N ≤ 100,000", "N in [1, 100000]"},
		{"LaTeX", `$1 \leq N \leq 10^5$`, "N in [1, 100000]"},
		{"CentreDot", "1 ≤ N ≤ 2·10^5", "N in [1, 200000]"},
		{"LaTeXTimes", `\(1 \le N \le 2 \times 10^5\)`, "N in [1, 200000]"},
		{"Strict", "0 < N < 100001", "N in [1, 100000]"},
		{"Descending", "100000 ≥ N ≥ 1", "N in [1, 100000]"},
		{"UpperOnly", "N ≤ 100000", "N in [1, 100000]"},
		{"AbsoluteValue", "1 ≤ N ≤ 10^5\n|A_i| ≤ 10^9", "A_i in [-1000000000, 1000000000] with N elements"},
		{"Arithmetic", "2 ≤ N ≤ 10, 1 ≤ K ≤ N-1", "K in [1, (N-1)]"},
		{"ImplicitProduct", "2 ≤ N ≤ 50, 1 ≤ M ≤ N(N-1)/2", "M in [1, ((N*(N-1))/2)]"},
		{"MinFunction", "1 ≤ N ≤ 10^5, 1 ≤ K ≤ min(N, 10)", "K in [1, min(N, 10)]"},
		{"IndexRange", "1 ≤ N ≤ 100\n1 ≤ A_i ≤ 10^9 (1 ≤ i ≤ N)", "A_i in [1, 1000000000] with N elements."},
		{"SortedChain", "1 ≤ A_1 < A_2 < … < A_N ≤ 10^9, 1 ≤ N ≤ 10", "A_i in [1, 1000000000] with N elements, distinct, ascending"},
		{"SortedChainNonStrict", "0 ≤ A_1 ≤ A_2 ≤ ... ≤ A_N ≤ 100, 1 ≤ N ≤ 10", "A_i in [0, 100] with N elements, ascending"},
		{"MultiTest", "The input has T test cases.\n1 ≤ T ≤ 10\n1 ≤ N ≤ 10", "T / then T tests, each: / N"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, err := analysis.Generate(analysis.GeneratorRequest{Problem: algoitny.Problem{Constraints: c.constraints}})
			algoitnytest.OK(t, err)
			requireContains(t, g.Notes, c.want)
		})
	}
}
