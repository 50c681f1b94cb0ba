package analysis_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/analysis"
)

// numbers returns n numbers on one line, and a first line with n.
func numbers(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", n)
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d", i%1000+1)
	}
	b.WriteByte('\n')
	return b.String()
}

// numberLines returns n lines of one number each.
func numberLines(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// failed is a one-test request with the given verdict and result.
func failed(lang algoitny.Language, code string, verdict algoitny.Verdict, in, expected string, r algoitny.TestResult) analysis.HintRequest {
	r.Verdict = verdict
	return analysis.HintRequest{
		Problem:  algoitny.Problem{Title: "Sum", TimeLimitMs: 1000, MemoryLimitMB: 256},
		Language: lang,
		Code:     code,
		Verdict:  verdict,
		Tests:    []analysis.HintTest{{Input: in, Expected: expected, Result: r, Number: 3}},
	}
}

const (
	pyCode   = "import sys\nn = int(input())\na = list(map(int, input().split()))\nprint(a[n])\n"
	cppCode  = "#include <bits/stdc++.h>\nusing namespace std;\nint a[100];\nint main() {\n  int n; cin >> n;\n  int s = 0;\n  for (int i = 0; i < n; i++) { cin >> a[i]; s += a[i]; }\n  cout << s << endl;\n}\n"
	javaCode = "import java.util.*;\npublic class Main {\n  public static void main(String[] args) {\n    Scanner sc = new Scanner(System.in);\n    int n = sc.nextInt();\n    int s = 0;\n    System.out.println(s);\n  }\n}\n"
	goCode   = "package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tw := bufio.NewWriter(os.Stdout)\n\tvar n int\n\tfmt.Scan(&n)\n\tfmt.Fprintln(w, n)\n}\n"
)

// hintCases are failed executions and what their hints must (and must not) say.
var hintCases = []struct {
	name string
	req  analysis.HintRequest
	want []string // every one must appear in the hints (case-insensitive)
	not  []string // none may appear
}{
	{"WrongAnswerFirstDifference", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictWrongAnswer, "3\n1 2 3\n", "1\n2\n3\n", algoitny.TestResult{Output: "1\n5\n3\n"}),
		[]string{"test 3", "line 2", "expected `2`", "you printed `5`"}, nil},
	{"EmptyOutputPython", failed(algoitny.LanguagePython, "def solve():\n    return 42\n", algoitny.VerdictWrongAnswer, "1\n", "42\n", algoitny.TestResult{Output: ""}),
		[]string{"printed nothing", "`42`", "print("}, nil},
	{"EmptyOutputGoWithoutFlush", failed(algoitny.LanguageGo, goCode, algoitny.VerdictWrongAnswer, "1\n", "1\n", algoitny.TestResult{Output: "\n"}),
		[]string{"printed nothing", "Flush"}, nil},
	{"WhitespaceOnlyLayout", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictWrongAnswer, "3\n", "1\n2\n3\n", algoitny.TestResult{Output: "1 2 3\n"}),
		[]string{"values are right", "3 lines are expected", "you printed 1"}, nil},
	{"WhitespaceOnlySpacing", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictWrongAnswer, "3\n", "1 2 3\n", algoitny.TestResult{Output: "1  2 3\n"}),
		[]string{"values are right", "spacing"}, nil},
	{"WrongCase", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "8\n", "YES\n", algoitny.TestResult{Output: "Yes\n"}),
		[]string{"`Yes`", "`YES`", "letter case"}, nil},
	{"OffByOne", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "10\n", "10\n", algoitny.TestResult{Output: "9\n"}),
		[]string{"off by exactly one", "printed 9", "10 is expected", "<="}, nil},
	{"OverflowCPP", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "2\n3000000000 2000000000\n", "5000000000\n", algoitny.TestResult{Output: "705032704\n"}),
		[]string{"5000000000", "32-bit", "long long"}, nil},
	{"OverflowWrappedJava", failed(algoitny.LanguageJava, javaCode, algoitny.VerdictWrongAnswer, "2\n2000000000 1000000000\n", "3000000000\n", algoitny.TestResult{Output: "-1294967296\n"}),
		[]string{"overflow", "long"}, nil},
	{"NoOverflowForGoInt", failed(algoitny.LanguageGo, goCode, algoitny.VerdictWrongAnswer, "1\n", "5000000000\n", algoitny.TestResult{Output: "5000000001\n"}),
		[]string{"off by exactly one"}, []string{"32-bit"}},
	{"OverflowGoInt32", failed(algoitny.LanguageGo, strings.Replace(goCode, "var n int", "var n int32", 1), algoitny.VerdictWrongAnswer, "1\n", "5000000000\n", algoitny.TestResult{Output: "705032704\n"}),
		[]string{"32-bit", "int64"}, nil},
	{"BeyondSixtyFourBits", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "1\n", "100000000000000000000\n", algoitny.TestResult{Output: "7766279631452241920\n"}),
		[]string{"64 bits", "modulo"}, nil},
	{"DebugOutput", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "2\n", "3\n", algoitny.TestResult{Output: "debug: i=1\ndebug: i=2\n3\n"}),
		[]string{"not part of the answer", "`debug: i=1`"}, nil},
	{"PythonInputPrompt", failed(algoitny.LanguagePython, "n = int(input(\"Enter N: \"))\nprint(n)\n", algoitny.VerdictWrongAnswer, "5\n", "5\n", algoitny.TestResult{Output: "Enter N: 5\n"}),
		[]string{"text there", "input(\"Enter N: \")", "without a prompt"}, nil},
	{"MissingLines", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictWrongAnswer, "3\n1\n2\n3\n", "1\n2\n3\n", algoitny.TestResult{Output: "1\n"}),
		[]string{"stops after 1 of 3 lines", "`2`"}, nil},
	{"CutOutputRightSoFar", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictWrongAnswer, "300\n", strings.Repeat("12345\n", 300), algoitny.TestResult{Output: strings.Repeat("12345\n", 300)[:1024]}),
		[]string{"first 170 lines of your output are right", "comes later"}, []string{"stops after"}},
	{"FloatPrecision", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "1 3\n", "0.333333333\n", algoitny.TestResult{Output: "0.333333\n"}),
		[]string{"rounding", "%.9f"}, nil},
	{"TimeLimitLargeInput", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictTimeLimitExceeded, numbers(100000), "1\n", algoitny.TestResult{TimeMs: 1000, Message: "CPU time limit 1s exceeded"}),
		[]string{"ran out of time", "limit 1000 ms", "10^5", "O(n log n)", "O(n²)"}, nil},
	{"TimeLimitHugeInput", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictTimeLimitExceeded, numbers(1000000), "1\n", algoitny.TestResult{}),
		[]string{"10^6", "only O(n) or O(n log n)", "sync_with_stdio"}, nil},
	{"TimeLimitHugeValue", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictTimeLimitExceeded, "1000000000000\n", "1\n", algoitny.TestResult{}),
		[]string{"tiny", "10^12", "O(√N) or O(log N)"}, nil},
	{"TimeLimitTinyInput", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictTimeLimitExceeded, "3\n1 2 3\n", "6\n", algoitny.TestResult{}),
		[]string{"only 4 values", "never ends"}, nil},
	{"TimeLimitPythonInput", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictTimeLimitExceeded, numberLines(100000), "1\n", algoitny.TestResult{}),
		[]string{"O(n log n)", "sys.stdin"}, nil},
	{"TimeLimitJavaScanner", failed(algoitny.LanguageJava, javaCode, algoitny.VerdictTimeLimitExceeded, numbers(50000), "1\n", algoitny.TestResult{}),
		[]string{"BufferedReader"}, nil},
	{"MemoryLimit", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictMemoryLimitExceeded, numbers(100000), "1\n", algoitny.TestResult{MemoryKB: 262144}),
		[]string{"memory limit", "limit 256 MB", "n×n", "10^10"}, nil},
	{"RuntimeIndexErrorPython", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictRuntimeError, "3\n1 2 3\n", "3\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"out of range"}, nil},
	{"RuntimeSegfaultSmallArray", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictRuntimeError, numbers(100000), "1\n", algoitny.TestResult{Message: "killed by SIGSEGV"}),
		[]string{"segmentation fault", "`a[100]`", "100 elements"}, nil},
	{"RuntimeRecursionPython", failed(algoitny.LanguagePython, "import sys\ndef f(n):\n    return f(n-1) + 1 if n else 0\nprint(f(int(input())))\n", algoitny.VerdictRuntimeError, "100000\n", "100000\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"recursion went too deep", "setrecursionlimit"}, nil},
	{"RuntimeStackOverflowJava", failed(algoitny.LanguageJava, javaCode, algoitny.VerdictRuntimeError, "100000\n", "1\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"recursion went too deep", "explicit stack"}, nil},
	{"RuntimeDivisionByZero", failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictRuntimeError, "0\n", "0\n", algoitny.TestResult{Message: "killed by SIGFPE"}),
		[]string{"by zero"}, nil},
	{"RuntimeValueErrorParsing", failed(algoitny.LanguagePython, "n = int(input())\n", algoitny.VerdictRuntimeError, "1 2\n", "3\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"failed to read a number", "split()"}, nil},
	{"RuntimeNumberFormatJava", failed(algoitny.LanguageJava, javaCode, algoitny.VerdictRuntimeError, "1 2\n", "3\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"failed to read a number", "NumberFormatException"}, nil},
	{"RuntimeArrayIndexJava", failed(algoitny.LanguageJava, javaCode, algoitny.VerdictRuntimeError, "5\n", "5\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"out of range", "line 7"}, nil},
	{"RuntimeExitCodeC", failed(algoitny.LanguageC, "#include <stdio.h>\nint main(){return 1;}\n", algoitny.VerdictRuntimeError, "1\n", "1\n", algoitny.TestResult{Message: "exit code 1"}),
		[]string{"status 1", "return 0"}, nil},
	{"OutputLimit", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictOutputLimitExceeded, "1\n", "1\n", algoitny.TestResult{Message: "output exceeded 64 MiB"}),
		[]string{"output limit"}, nil},
	{"InternalError", failed(algoitny.LanguagePython, pyCode, algoitny.VerdictInternalError, "1\n", "1\n", algoitny.TestResult{}),
		[]string{"not caused by your code"}, nil},
	{"CompileErrorCPP", analysis.HintRequest{Language: algoitny.LanguageCPP, Code: "#include <cstdio>\nint main() {\n  int x = 1\n  printf(\"%d\", x);\n}\n",
		Verdict:        algoitny.VerdictCompilationError,
		CompileMessage: "main.cpp: In function 'int main()':\nmain.cpp:3:12: error: expected ',' or ';' before 'printf'\n    3 |   int x = 1\n      |            ^\nmain.cpp:5:1: error: expected '}' at end of input\n"},
		[]string{"does not compile", "line 3", "expected ',' or ';' before 'printf'", "`int x = 1`", "semicolon", "first error first"}, nil},
	{"CompileErrorPython", analysis.HintRequest{Language: algoitny.LanguagePython, Code: "n = int(input())\nif n > 0\n    print(n)\n",
		Verdict:        algoitny.VerdictCompilationError,
		CompileMessage: "  File \"main.py\", line 2\n    if n > 0\n            ^\nSyntaxError: expected ':'\n"},
		[]string{"line 2", "SyntaxError: expected ':'", "`if n > 0`"}, nil},
	{"CompileErrorGoUnused", analysis.HintRequest{Language: algoitny.LanguageGo, Code: goCode,
		Verdict:        algoitny.VerdictCompilationError,
		CompileMessage: "# command-line-arguments\n./main.go:11:6: declared and not used: x\n"},
		[]string{"line 11", "declared and not used", "unused"}, nil},
	{"CompileErrorJavaClassName", analysis.HintRequest{Language: algoitny.LanguageJava, Code: strings.Replace(javaCode, "class Main", "class Solution", 1),
		Verdict:        algoitny.VerdictCompilationError,
		CompileMessage: "Main.java:2: error: class Solution is public, should be declared in a file named Solution.java\npublic class Solution {\n       ^\n1 error\n"},
		[]string{"line 2", "name your public class Main"}, nil},
	{"CompileErrorWrongLanguage", analysis.HintRequest{Language: algoitny.LanguagePython, Code: cppCode,
		Verdict:        algoitny.VerdictCompilationError,
		CompileMessage: "  File \"main.py\", line 1\n    #include <bits/stdc++.h>\nSyntaxError: invalid syntax\n"},
		[]string{"looks like C++ code", "submitted as Python"}, nil},
}

func TestHints(t *testing.T) {
	t.Parallel()
	// Runtime errors carry their evidence on stderr.
	stderrs := map[string]string{
		"RuntimeIndexErrorPython":  "Traceback (most recent call last):\n  File \"/sandbox/main.py\", line 4, in <module>\n    print(a[n])\n          ~^^^\nIndexError: list index out of range\n",
		"RuntimeRecursionPython":   "Traceback (most recent call last):\n  File \"main.py\", line 3, in f\n  [Previous line repeated 996 more times]\nRecursionError: maximum recursion depth exceeded in comparison\n",
		"RuntimeStackOverflowJava": "Exception in thread \"main\" java.lang.StackOverflowError\n\tat Main.dfs(Main.java:12)\n",
		"RuntimeValueErrorParsing": "Traceback (most recent call last):\n  File \"main.py\", line 1, in <module>\nValueError: invalid literal for int() with base 10: '1 2'\n",
		"RuntimeNumberFormatJava":  "Exception in thread \"main\" java.lang.NumberFormatException: For input string: \"1 2\"\n\tat java.base/java.lang.Integer.parseInt(Integer.java:652)\n\tat Main.main(Main.java:5)\n",
		"RuntimeArrayIndexJava":    "Exception in thread \"main\" java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 5\n\tat Main.main(Main.java:7)\n",
	}
	for _, c := range hintCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := c.req
			if s, ok := stderrs[c.name]; ok {
				req.Tests[0].Stderr = s
			}
			hints := analysis.Hints(req)
			if len(hints) < 1 || len(hints) > analysis.MaxHints {
				t.Fatalf("got %d hints, want 1 to %d", len(hints), analysis.MaxHints)
			}
			all := strings.Join(hints, "\n")
			requireContains(t, all, c.want...)
			for _, n := range c.not {
				if strings.Contains(strings.ToLower(all), strings.ToLower(n)) {
					t.Fatalf("hints mention %q:\n%s", n, all)
				}
			}
		})
	}
}

func TestHintsOfSeveralTests(t *testing.T) {
	t.Parallel()
	req := failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "2\n3000000000 2000000000\n", "5000000000\n", algoitny.TestResult{Output: "705032704\n"})
	req.Tests = append(req.Tests,
		analysis.HintTest{Input: numbers(100000), Expected: "1\n", Result: algoitny.TestResult{Verdict: algoitny.VerdictTimeLimitExceeded}, Number: 4},
		analysis.HintTest{Input: "1\n", Expected: "1\n", Result: algoitny.TestResult{Verdict: algoitny.VerdictAccepted, Output: "1\n"}, Number: 1},
	)

	t.Run("Deterministic", func(t *testing.T) {
		t.Parallel()
		a, b := analysis.Hints(req), analysis.Hints(req)
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Fatalf("two runs differ:\n%q\n%q", a, b)
		}
	})

	t.Run("AtMostFiveHints", func(t *testing.T) {
		t.Parallel()
		r := req
		r.Tests = nil
		verdicts := []algoitny.Verdict{algoitny.VerdictWrongAnswer, algoitny.VerdictTimeLimitExceeded, algoitny.VerdictMemoryLimitExceeded,
			algoitny.VerdictRuntimeError, algoitny.VerdictOutputLimitExceeded, algoitny.VerdictInternalError, algoitny.VerdictRuntimeError}
		for i, v := range verdicts {
			r.Tests = append(r.Tests, analysis.HintTest{Input: numbers(10 + i), Expected: "1\n", Result: algoitny.TestResult{Verdict: v, Output: "2\n", Message: "killed by SIGFPE"}})
		}
		hints := analysis.Hints(r)
		if len(hints) != analysis.MaxHints {
			t.Fatalf("got %d hints, want %d", len(hints), analysis.MaxHints)
		}
	})
}

// A counterexample comes first, with its data (it is no hidden test), and
// is analysed like a failed test: here an overflow.
func TestHintsCounterexample(t *testing.T) {
	t.Parallel()
	req := failed(algoitny.LanguageCPP, cppCode, algoitny.VerdictWrongAnswer, "3\n1 2 3\n", "6\n", algoitny.TestResult{Output: "7\n"})
	req.Counterexample = &algoitny.Counterexample{Input: "2\n2000000000 2000000000\n", ExpectedOutput: "4000000000\n",
		ActualOutput: "-294967296\n", Verdict: algoitny.VerdictWrongAnswer}
	hints := analysis.Hints(req)
	if len(hints) < 2 || !strings.Contains(hints[0], "A counterexample") || !strings.Contains(hints[0], `"2\n2000000000 2000000000\n"`) ||
		!strings.Contains(hints[0], "-294967296") {
		t.Fatalf("hints %q", hints)
	}
	if !strings.Contains(strings.Join(hints, "\n"), "the counterexample") {
		t.Fatalf("no finding on the counterexample: %q", hints)
	}
	req.Counterexample = nil
	for _, h := range analysis.Hints(req) {
		if strings.Contains(h, "counterexample") {
			t.Fatalf("a counterexample hint without one: %q", h)
		}
	}
}
