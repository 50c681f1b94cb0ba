package judge_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// The testlib corpus (testlib/testdata): checkers, validators, generators
// and an interactor written in the style of testlib's standard programs,
// compiled with the project's testlib.h through Engine.CompileAuthor, as a
// problem's programs are.

// corpusLimits are generous: the programs are tiny, the machine may be busy.
var corpusLimits = judge.Limits{CPUTime: 5 * time.Second, WallTime: 60 * time.Second}

// corpus compiles the corpus's programs once each, on demand.
var corpus struct {
	mu    sync.Mutex
	progs map[string]*corpusProgram
}

type corpusProgram struct {
	once sync.Once
	p    *judge.Program
	err  error
}

// corpusProgramFor compiles testlib/testdata/<path> as C++ (once per run).
func corpusProgramFor(t *testing.T, e *judge.Engine, path string) *judge.Program {
	t.Helper()
	corpus.mu.Lock()
	if corpus.progs == nil {
		corpus.progs = map[string]*corpusProgram{}
	}
	cp := corpus.progs[path]
	if cp == nil {
		cp = &corpusProgram{}
		corpus.progs[path] = cp
	}
	corpus.mu.Unlock()
	cp.once.Do(func() {
		src, err := os.ReadFile(filepath.Join("testlib", "testdata", path))
		if err != nil {
			cp.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cp.p, cp.err = e.CompileAuthor(ctx, "cpp", "", string(src), nil)
	})
	if cp.err != nil {
		t.Fatalf("compile %s: %v", path, cp.err)
	}
	return cp.p
}

// printer is a Python submission that prints out exactly.
func printer(out string) string {
	return "import sys\nsys.stdout.write(" + strconv.Quote(out) + ")\n"
}

// TestTestlibCheckers: the corpus's checkers judge as testlib's would —
// strict number formats (no '+', leading zeros, "-0", nan, inf, hex), extra
// output after the checked tokens is a presentation error (never ACCEPTED),
// ranges and names in messages, quitp's points and its FAIL beyond 1E6.
func TestTestlibCheckers(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	pe := "presentation error: wrong output format "
	for _, tc := range []struct {
		name, checker      string
		input, out, answer string
		want               judge.Verdict
		points             *float64
		message            string // the test's message starts with it
	}{
		{"icmp/OK", "icmp", "1\n", "42\n", "42\n", judge.Accepted, nil, "ok the answer is 42"},
		{"icmp/Differs", "icmp", "1\n", "43\n", "42\n", judge.WrongAnswer, nil, "wrong answer expected 42, found 43"},
		{"icmp/TrailingToken", "icmp", "1\n", "42 43\n", "42\n", judge.WrongAnswer, nil, pe + "Extra information in the output file"},
		{"icmp/TrailingBlanks", "icmp", "1\n", "42 \n\n\t\n", "42\n", judge.Accepted, nil, "ok the answer is 42"},
		{"icmp/LeadingZero", "icmp", "1\n", "042\n", "42\n", judge.WrongAnswer, nil, pe + `Expected integer, but "042" found`},
		{"icmp/PlusSign", "icmp", "1\n", "+42\n", "42\n", judge.WrongAnswer, nil, pe + `Expected integer, but "+42" found`},
		{"icmp/MinusZero", "icmp", "1\n", "-0\n", "0\n", judge.WrongAnswer, nil, pe + `Expected integer, but "-0" found`},
		{"icmp/Overflow", "icmp", "1\n", "2147483648\n", "42\n", judge.WrongAnswer, nil, pe + `Expected int32, but "2147483648" found`},
		{"icmp/Empty", "icmp", "1\n", "", "42\n", judge.WrongAnswer, nil, pe + "Unexpected end of file - int32 expected"},
		{"icmp/BadAnswer", "icmp", "1\n", "42\n", "x\n", judge.InternalError, nil, `checker failed (FAIL, exit code 3): FAIL Expected integer, but "x" found (`},
		{"rcmp6/Close", "rcmp6", "1\n", "2.0000001\n", "2\n", judge.Accepted, nil, "ok 1 number(s)"},
		{"rcmp6/Exponent", "rcmp6", "1\n", "1.5e0\n", "1.5\n", judge.Accepted, nil, "ok 1 number(s)"},
		{"rcmp6/Far", "rcmp6", "1\n", "2.1\n", "2\n", judge.WrongAnswer, nil, "wrong answer 1st numbers differ - expected: '2.0000000', found: '2.1000000'"},
		{"rcmp6/NaN", "rcmp6", "1\n", "nan\n", "2\n", judge.WrongAnswer, nil, pe + `Expected double, but "nan" found`},
		{"rcmp6/Inf", "rcmp6", "1\n", "inf\n", "2\n", judge.WrongAnswer, nil, pe + `Expected double, but "inf" found`},
		{"rcmp6/Hex", "rcmp6", "1\n", "0x1p1\n", "2\n", judge.WrongAnswer, nil, pe + `Expected double, but "0x1p1" found`},
		{"rcmp6/TrailingToken", "rcmp6", "1\n", "2 7\n", "2\n", judge.WrongAnswer, nil, pe + "Extra information in the output file"},
		{"ncmp/OK", "ncmp", "3\n", "1 2\n3\n", "1 2 3\n", judge.Accepted, nil, `ok 3 number(s): "1 2 3"`},
		{"ncmp/Shorter", "ncmp", "3\n", "1 2\n", "1 2 3\n", judge.WrongAnswer, nil, "wrong answer answer contains longer sequence [length = 3], but output contains 2 elements"},
		{"ncmp/Longer", "ncmp", "3\n", "1 2 3 4\n", "1 2 3\n", judge.WrongAnswer, nil, "wrong answer output contains longer sequence [length = 4], but answer contains 3 elements"},
		{"ncmp/Third", "ncmp", "3\n", "1 2 4\n", "1 2 3\n", judge.WrongAnswer, nil, "wrong answer 3rd numbers differ - expected: '3', found: '4'"},
		{"wcmp/Spaces", "wcmp", "1\n", "hello  world\n\n", "hello world\n", judge.Accepted, nil, "ok 2 token(s)"},
		{"wcmp/Differs", "wcmp", "1\n", "hello word\n", "hello world\n", judge.WrongAnswer, nil, "wrong answer 2nd token: expected 'world', but found 'word'"},
		{"wcmp/TrailingToken", "wcmp", "1\n", "hello world x\n", "hello world\n", judge.WrongAnswer, nil, pe + "Extra information in the output file"},
		{"lcmp/OK", "lcmp", "1\n", "1  2\n3\n", "1 2\n3\n", judge.Accepted, nil, "ok 2 line(s)"},
		{"lcmp/Joined", "lcmp", "1\n", "1 2 3\n", "1 2\n3\n", judge.WrongAnswer, nil, "wrong answer line 1 differs - expected: '1 2', found: '1 2 3'"},
		{"fcmp/CRLF", "fcmp", "1\n", "a b\r\nc\r\n", "a b\nc\n", judge.Accepted, nil, "ok 2 line(s)"},
		{"fcmp/Space", "fcmp", "1\n", "a b \nc\n", "a b\nc\n", judge.WrongAnswer, nil, "wrong answer 1st lines differ - expected: 'a b', found: 'a b '"},
		{"yesno/Case", "yesno", "1\n", "yEs\n", "YES\n", judge.Accepted, nil, "ok answer is YES"},
		{"yesno/Pattern", "yesno", "1\n", "maybe\n", "YES\n", judge.WrongAnswer, nil,
			`wrong answer Token parameter [name=verdict] equals to "maybe", doesn't correspond to pattern "[yY][eE][sS]|[nN][oO]"`},
		{"yesno/Twice", "yesno", "1\n", "YES NO\n", "YES\n", judge.WrongAnswer, nil, pe + "Extra information in the output file"},
		{"hcmp/Huge", "hcmp", "1\n", "-123456789012345678901234567890\n", "-123456789012345678901234567890\n", judge.Accepted, nil, "ok the answer is -123456789012345678901234567890"},
		{"hcmp/LeadingZero", "hcmp", "1\n", "0123\n", "123\n", judge.WrongAnswer, nil, pe + "expected an integer, found '0123'"},
		{"points/Half", "points", "1\n", "7.50\n", "POINTS 0.5\n", judge.WrongAnswer, ptr(0.5), "points 0.5 score 7.50"},
		{"points/Full", "points", "1\n", "7.50\n", "POINTS 1\n", judge.Accepted, ptr(1), "points 1.0 score 7.50"},
		{"points/Int", "points", "1\n", "0.00\n", "SCORE 0\n", judge.WrongAnswer, ptr(0), "points 0 score 0.00"},
		{"points/Trailing", "points", "1\n", "7.50 1\n", "POINTS 0.5\n", judge.WrongAnswer, nil, pe + "Extra information in the output file"},
		{"points/Digits", "points", "1\n", "7.5\n", "POINTS 0.5\n", judge.WrongAnswer, nil,
			pe + `Expected strict double with number of digits after point in range [2,2], but "7.5" found`},
		{"points/Range", "points", "1\n", "11.00\n", "POINTS 0.5\n", judge.WrongAnswer, nil,
			"wrong answer Strict double parameter [name=score] equals to 11, violates the range [0, 10]"},
		{"points/TooMany", "points", "1\n", "7.50\n", "POINTS 5000000\n", judge.InternalError, nil,
			"checker failed (FAIL, exit code 3): FAIL Parameter 'points' can't be greater than 1E6"},
		{"points/Negative", "points", "1\n", "7.50\n", "POINTS -1\n", judge.InternalError, nil,
			"checker failed (FAIL, exit code 3): FAIL Parameter 'points' can't be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checker := corpusProgramFor(t, e, "checkers/"+tc.checker+".cpp")
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: printer(tc.out), Limits: corpusLimits,
				Tests:   []judge.TestCase{{Input: []byte(tc.input), Expected: []byte(tc.answer)}},
				Checker: judge.Checker{Kind: judge.CheckCustom, Program: checker}})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			tr := res.Tests[0]
			if !strings.HasPrefix(tr.Message, tc.message) {
				t.Fatalf("message %q, want it to start with %q", tr.Message, tc.message)
			}
			if (tr.Points == nil) != (tc.points == nil) || (tr.Points != nil && *tr.Points != *tc.points) {
				t.Fatalf("points %v, want %v", show(tr.Points), show(tc.points))
			}
		})
	}
}

// runCorpus runs a corpus program once with stdin and args.
func runCorpus(t *testing.T, p *judge.Program, stdin string, args ...string) (judge.RunResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rr, err := p.Run(ctx, judge.RunOptions{Stdin: strings.NewReader(stdin), Stdout: &out, Args: args, Limits: corpusLimits})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return rr, out.String()
}

// TestTestlibValidators: a validator reads strictly (one space, LF line
// ends, EOF right after the last line) and FAILs (exit 3) naming the
// variable, its range, the test case and the line.
func TestTestlibValidators(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	for _, tc := range []struct {
		name, validator, input string
		args                   []string
		exit                   int
		stderr, stdout         string // stderr starts with it; stdout is it
	}{
		{"pairs/OK", "pairs", "2 4\n-5 7\nhello\n", nil, 0, "", ""},
		{"pairs/NoFinalEOLN", "pairs", "2 4\n-5 7\nhello", nil, 3, "FAIL Expected EOLN (stdin, line 3)", ""},
		{"pairs/TwoSpaces", "pairs", "2 4\n-5  7\nhello\n", nil, 3, "FAIL Unexpected white-space - token expected (stdin, line 2)", ""},
		{"pairs/LeadingSpace", "pairs", " 2 4\n-5 7\nhello\n", nil, 3, "FAIL Unexpected white-space - token expected (stdin, line 1)", ""},
		{"pairs/CRLF", "pairs", "2 4\r\n-5 7\r\nhello\r\n", nil, 3, "FAIL Expected EOLN (stdin, line 1)", ""},
		{"pairs/BlankLineAtEnd", "pairs", "2 4\n-5 7\nhello\n\n", nil, 3, "FAIL Expected EOF (stdin, line 4)", ""},
		{"pairs/Range", "pairs", "0 4\n\nhello\n", nil, 3, "FAIL Integer parameter [name=n] equals to 0, violates the range [1, 100] (stdin, line 1)", ""},
		{"pairs/Element", "pairs", "2 4\n-5 1000000001\nhello\n", nil, 3,
			"FAIL Integer element a[2] equals to 1000000001, violates the range [-10^9, 10^9] (stdin, line 2)", ""},
		{"pairs/PlusSign", "pairs", "2 4\n+5 7\nhello\n", nil, 3, `FAIL Expected integer, but "+5" found (stdin, line 2)`, ""},
		{"pairs/LeadingZero", "pairs", "2 4\n05 7\nhello\n", nil, 3, `FAIL Expected integer, but "05" found (stdin, line 2)`, ""},
		{"pairs/MinusZero", "pairs", "2 4\n-0 7\nhello\n", nil, 3, `FAIL Expected integer, but "-0" found (stdin, line 2)`, ""},
		{"pairs/Word", "pairs", "2 4\n-5 7\nHello\n", nil, 3,
			`FAIL Token parameter [name=word] equals to "Hello", doesn't correspond to pattern "[a-z]{1,10}" (stdin, line 3)`, ""},
		{"pairs/Testset", "pairs", "12 4\n", []string{"--testset", "pretests"}, 3,
			"FAIL Integer parameter [name=n] equals to 12, violates the range [1, 10] (stdin, line 1)", ""},
		{"pairs/Group", "pairs", "3 4\n1 2 3\nab\n", []string{"--group", "even"}, 3, "FAIL n and m must be even in group even", ""},
		{"pairs/Overview", "pairs", "1 100\n1000000000\nz\n", []string{"--testOverviewLogFileName", "stdout"}, 0, "",
			"\"a\": max-value-hit\n\"m\": max-value-hit\n\"n\": min-value-hit\n" +
				"constant-bounds \"a\": -1000000000 1000000000\nconstant-bounds \"m\": 1 100\nconstant-bounds \"n\": 1 100\n" +
				"variable \"a\"\nvariable \"m\"\nvariable \"n\"\nvariable \"word\"\n"},
		{"cases/OK", "cases", "2\n0.5\nHello world\n1.000\nA\n", nil, 0, "", ""},
		{"cases/Digits", "cases", "2\n0.5\nHello world\n1.0001\nA\n", nil, 3,
			`FAIL Expected strict double with number of digits after point in range [1,3], but "1.0001" found (test case 2, stdin, line 4)`, ""},
		{"cases/NoDigitBeforePoint", "cases", "1\n.5\nA\n", nil, 3, `FAIL Expected strict double, but ".5" found (test case 1, stdin, line 2)`, ""},
		{"cases/RedundantMinus", "cases", "1\n-0.0\nA\n", nil, 3, `FAIL Redundant minus in "-0.0" found (test case 1, stdin, line 2)`, ""},
		{"cases/Line", "cases", "1\n0.5\nhello\n", nil, 3,
			`FAIL Line [name=text] equals to "hello", doesn't correspond to pattern "[A-Z][a-z\ ]*" (test case 1, stdin, line 3)`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := corpusProgramFor(t, e, "validators/"+tc.validator+".cpp")
			rr, out := runCorpus(t, v, tc.input, tc.args...)
			if rr.ExitCode != tc.exit || !strings.HasPrefix(rr.Stderr, tc.stderr) || out != tc.stdout {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit %d, stderr starting %q, stdout %q",
					rr.ExitCode, rr.Stderr, out, tc.exit, tc.stderr, tc.stdout)
			}
		})
	}
}

// TestTestlibGenerators: rnd gives testlib's sequence for the same command
// line — the golden files were printed by the same generators built with
// testlib itself — and opt refuses unknown and unused keys (FAIL).
func TestTestlibGenerators(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	for _, tc := range []struct {
		generator string
		args      []string
		golden    string // testdata/generators/<golden>; empty: FAIL expected
		stderr    string
	}{
		{"pairs", []string{"-n", "5"}, "pairs-n5.out", ""},
		{"pairs", []string{"-n", "3", "-max", "10", "-bias", "3"}, "pairs-n3-max10-bias3.out", ""},
		{"pairs", []string{"-n=4", "-bias=-30", "-max=1e3"}, "pairs-n4-bias-30.out", ""},
		{"words", []string{"5"}, "words-5.out", ""},
		{"words", []string{"12"}, "words-12.out", ""},
		{"words", []string{"30"}, "words-30.out", ""},
		{"pairs", []string{"-max", "10"}, "", "FAIL Opts: unknown key 'n'"},
		{"pairs", []string{"-n", "2", "-typo", "1"}, "", "FAIL Opts: unused key 'typo'"},
	} {
		name := tc.generator + "/" + strings.Join(tc.args, "_")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := corpusProgramFor(t, e, "generators/"+tc.generator+".cpp")
			rr, out := runCorpus(t, g, "", tc.args...)
			if tc.golden == "" {
				if rr.ExitCode != 3 || !strings.HasPrefix(rr.Stderr, tc.stderr) {
					t.Fatalf("exit %d, stderr %q; want exit 3, stderr starting %q", rr.ExitCode, rr.Stderr, tc.stderr)
				}
				return
			}
			want, err := os.ReadFile(filepath.Join("testlib", "testdata", "generators", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			if rr.ExitCode != 0 || out != string(want) {
				t.Fatalf("exit %d (%s), output\n%s\nwant\n%s", rr.ExitCode, rr.Stderr, out, want)
			}
		})
	}
}

// TestTestlibInteractor: a testlib interactor reads the contestant as
// strictly as a checker reads an output file.
func TestTestlibInteractor(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	const bisect = "lo, hi = 1, 100\nwhile True:\n    m = (lo + hi) // 2\n    print(m, flush=True)\n    r = input()\n" +
		"    if r == '=':\n        break\n    if r == '<':\n        lo = m + 1\n    else:\n        hi = m - 1\n"
	for _, tc := range []struct {
		name, solution string
		want           judge.Verdict
		message        string
	}{
		{"Bisect", bisect, judge.Accepted, "ok guessed 37 in"},
		{"LeadingZero", "print('037', flush=True)\ninput()\n", judge.WrongAnswer, `Expected integer, but "037" found`},
		{"OutOfRange", "print(101, flush=True)\ninput()\n", judge.WrongAnswer,
			"Integer parameter [name=guess] equals to 101, violates the range [1, 100]"},
		{"Linear", "i = 1\nwhile True:\n    print(i, flush=True)\n    if input() == '=':\n        break\n    i += 1\n",
			judge.WrongAnswer, "the secret 37 was not guessed in 7 tries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it := corpusProgramFor(t, e, "interactors/guess.cpp")
			res := judgeSub(t, e, judge.Submission{Language: "python", Source: tc.solution, Limits: corpusLimits,
				Tests:      []judge.TestCase{{Input: []byte("37\n")}},
				Interactor: &judge.Interactor{Program: it}})
			requireVerdict(t, tc.name, res.Verdict, tc.want, res)
			if !strings.Contains(res.Tests[0].Message, tc.message) {
				t.Fatalf("message %q, want it to contain %q", res.Tests[0].Message, tc.message)
			}
		})
	}
}
