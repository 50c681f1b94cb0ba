package judge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// modal is one program per language whose behaviour is chosen by the first
// word of its input: "sum a b" prints a+b, "loop" spins forever, "hog"
// allocates and touches memory forever, "crash" dies, "flood" prints forever.
// One program per language keeps compilation (slow for Java and C++) to one
// per language.
var modal = map[string]string{
	"c": `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
	char mode[16];
	if (scanf("%15s", mode) != 1) return 2;
	if (!strcmp(mode, "sum")) { long long a, b; if (scanf("%lld %lld", &a, &b) != 2) return 2; printf("%lld\n", a + b); return 0; }
	if (!strcmp(mode, "loop")) { volatile unsigned long x = 0; for (;;) x++; }
	if (!strcmp(mode, "hog")) { for (;;) { char *p = malloc(1 << 20); memset(p, 1, 1 << 20); } }
	if (!strcmp(mode, "crash")) { volatile int *p = NULL; *p = 1; }
	if (!strcmp(mode, "flood")) { for (;;) puts("flood flood flood flood flood flood flood"); }
	return 3;
}
`,
	"cpp": `#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
int main() {
	std::string mode;
	std::cin >> mode;
	if (mode == "sum") { long long a, b; std::cin >> a >> b; std::cout << a + b << "\n"; return 0; }
	if (mode == "loop") { volatile unsigned long x = 0; for (;;) x++; }
	if (mode == "hog") { std::vector<std::vector<char>> v; for (;;) v.emplace_back(1 << 20, 'x'); }
	if (mode == "crash") throw std::runtime_error("boom");
	if (mode == "flood") for (;;) std::cout << "flood flood flood flood flood flood flood\n";
	return 3;
}
`,
	"python": `import sys
data = sys.stdin.read().split()
mode = data[0]
if mode == "sum":
    print(int(data[1]) + int(data[2]))
elif mode == "loop":
    x = 0
    while True:
        x += 1
elif mode == "hog":
    hog = []
    while True:
        hog.append(b"x" * (1 << 20))
elif mode == "crash":
    raise ValueError("boom")
elif mode == "flood":
    while True:
        print("flood flood flood flood flood flood flood")
`,
	"java": `import java.io.*;
import java.util.*;

public class Main {
	static long counter;

	public static void main(String[] args) throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		StringTokenizer st = new StringTokenizer(in.readLine());
		String mode = st.nextToken();
		if (mode.equals("sum")) {
			System.out.println(Long.parseLong(st.nextToken()) + Long.parseLong(st.nextToken()));
		} else if (mode.equals("loop")) {
			while (counter >= 0) counter++;
		} else if (mode.equals("hog")) {
			List<long[]> hog = new ArrayList<>();
			while (true) hog.add(new long[1 << 17]);
		} else if (mode.equals("crash")) {
			throw new IllegalStateException("boom");
		} else if (mode.equals("flood")) {
			PrintWriter w = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
			while (true) w.println("flood flood flood flood flood flood flood");
		}
	}
}
`,
	"go": `package main

import (
	"bufio"
	"fmt"
	"os"
)

var counter uint64

func main() {
	in := bufio.NewReader(os.Stdin)
	var mode string
	fmt.Fscan(in, &mode)
	switch mode {
	case "sum":
		var a, b int64
		fmt.Fscan(in, &a, &b)
		fmt.Println(a + b)
	case "loop":
		for counter != 1<<63 {
			counter++
		}
	case "hog":
		var hog [][]byte
		for {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			hog = append(hog, b)
		}
	case "crash":
		panic("boom")
	case "flood":
		w := bufio.NewWriter(os.Stdout)
		for {
			fmt.Fprintln(w, "flood flood flood flood flood flood flood")
		}
	}
}
`,
	"javascript": `const data = require('fs').readFileSync(0, 'utf8').trim().split(/\s+/);
const mode = data[0];
if (mode === 'sum') {
  console.log((BigInt(data[1]) + BigInt(data[2])).toString());
} else if (mode === 'loop') {
  let x = 0;
  for (;;) x++;
} else if (mode === 'hog') {
  const hog = [];
  for (;;) hog.push(new Array(1 << 17).fill(7));
} else if (mode === 'crash') {
  throw new Error('boom');
} else if (mode === 'flood') {
  // process.stdout.write to a pipe is asynchronous in Node: a busy loop would
  // only queue output in memory. Judged JavaScript writes synchronously.
  const fs = require('fs');
  for (;;) fs.writeSync(1, 'flood flood flood flood flood flood flood\n');
}
`,
	"rust": `use std::io::{self, Read, Write};

fn main() {
    let mut s = String::new();
    io::stdin().read_to_string(&mut s).unwrap();
    let v: Vec<&str> = s.split_whitespace().collect();
    match v[0] {
        "sum" => {
            let a: i64 = v[1].parse().unwrap();
            let b: i64 = v[2].parse().unwrap();
            println!("{}", a + b);
        }
        "loop" => {
            let mut x: u64 = 0;
            loop {
                unsafe { std::ptr::write_volatile(&mut x, std::ptr::read_volatile(&x).wrapping_add(1)) }
            }
        }
        "hog" => {
            let mut hog: Vec<Vec<u8>> = Vec::new();
            loop {
                hog.push(vec![1u8; 1 << 20]);
            }
        }
        "crash" => panic!("boom"),
        "flood" => {
            let out = io::stdout();
            let mut w = io::BufWriter::new(out.lock());
            loop {
                writeln!(w, "flood flood flood flood flood flood flood").unwrap();
            }
        }
        _ => std::process::exit(3),
    }
}
`,
	"kotlin": `import java.io.*

var counter = 0L

fun main() {
    val data = System.` + "`in`" + `.bufferedReader().readText().trim().split(Regex("\\s+"))
    when (data[0]) {
        "sum" -> println(data[1].toLong() + data[2].toLong())
        "loop" -> while (counter >= 0) counter++
        "hog" -> {
            val hog = ArrayList<LongArray>()
            while (true) hog.add(LongArray(1 shl 17))
        }
        "crash" -> throw IllegalStateException("boom")
        "flood" -> {
            val w = PrintWriter(BufferedWriter(OutputStreamWriter(System.out)))
            while (true) w.println("flood flood flood flood flood flood flood")
        }
    }
}
`,
}

// syntaxError is a source per language that does not compile.
// The languages that share another's program: the same source, another
// compiler or interpreter.
func init() {
	modal["cpp20"] = modal["cpp"]
	modal["pypy3"] = modal["python"]
}

// modalMore are the modal programs of C#, Ruby, PHP and Haskell.
var modalMore = map[string]string{
	"csharp": `using System;
using System.Collections.Generic;
class P {
    static int Main() {
        var t = Console.In.ReadToEnd().Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
        string mode = t[0];
        if (mode == "sum") { Console.WriteLine(long.Parse(t[1]) + long.Parse(t[2])); return 0; }
        if (mode == "loop") { long x = 0; while (true) x++; }
        if (mode == "hog") {
            var l = new List<byte[]>();
            while (true) { var b = new byte[1 << 20]; for (int i = 0; i < b.Length; i += 4096) b[i] = 1; l.Add(b); }
        }
        if (mode == "crash") throw new Exception("boom");
        if (mode == "flood") while (true) Console.WriteLine("flood flood flood flood flood flood flood");
        return 3;
    }
}
`,
	"ruby": `t = STDIN.read.split
case t[0]
when "sum" then puts t[1].to_i + t[2].to_i
when "loop" then x = 0; loop { x += 1 }
when "hog" then a = []; loop { a << ("x" * (1 << 20)) }
when "crash" then raise "boom"
when "flood" then loop { puts "flood flood flood flood flood flood flood" }
else exit 3
end
`,
	"php": `<?php
$t = preg_split('/\s+/', trim(stream_get_contents(STDIN)));
switch ($t[0]) {
case "sum": echo intval($t[1]) + intval($t[2]), "\n"; exit(0);
case "loop": $x = 0; while (true) { $x++; }
case "hog": $a = []; while (true) { $a[] = str_repeat("x", 1 << 20); }
case "crash": throw new Exception("boom");
case "flood": while (true) { echo "flood flood flood flood flood flood flood\n"; }
}
exit(3);
`,
	"haskell": `import Control.Monad (forever)
import System.Exit

spin :: Int -> Int
spin x = if x < 0 then x else spin (x + 1)

main :: IO ()
main = do
  s <- getContents
  case words s of
    ["sum", a, b] -> print (read a + read b :: Integer)
    ["loop"] -> print (spin 0)
    ["hog"] -> let xs = [1 :: Integer .. 100000000] in print (fromIntegral (length xs) + sum xs)
    ["crash"] -> error "boom"
    ["flood"] -> forever (putStrLn "flood flood flood flood flood flood flood")
    _ -> exitWith (ExitFailure 3)
`,
}

func init() {
	for lang, src := range modalMore {
		modal[lang] = src
	}
}

var syntaxError = map[string]string{
	"c":          "int main(void) { return 0 }\n",
	"cpp":        "int main() { int x = ; }\n",
	"python":     "def main(:\n    pass\n",
	"java":       "public class Main { public static void main(String[] a) { int x = ; } }\n",
	"go":         "package main\n\nfunc main() { x := }\n",
	"javascript": "function main( {\n",
	"rust":       "fn main() { let x = ; }\n",
	"kotlin":     "fun main() { val x = }\n",
	"cpp20":      "int main() { int x = ; }\n",
	"pypy3":      "def main(:\n    pass\n",
	"csharp":     "class P { static void Main() { int x = ; } }\n",
	"ruby":       "def main(\n",
	"php":        "<?php echo ;\n",
	"haskell":    "main = print (1 +\n",
}

// TestLanguages judges, for every language, one submission whose tests cover
// ACCEPTED (A+B), WRONG_ANSWER, TIME_LIMIT_EXCEEDED (infinite loop),
// MEMORY_LIMIT_EXCEEDED (memory hog), RUNTIME_ERROR (crash) and
// OUTPUT_LIMIT_EXCEEDED (output flood), run concurrently, plus a
// COMPILATION_ERROR submission.
func TestLanguages(t *testing.T) {
	t.Parallel()
	e := sharedEngine(t)
	// A generous wall limit: on a loaded machine the infinite loop must still be
	// stopped by its CPU time (SleepForever covers the wall limit).
	limits := judge.Limits{CPUTime: time.Second, WallTime: 30 * time.Second, MemoryBytes: 64 << 20, OutputBytes: 1 << 20}
	for _, lang := range []string{"c", "cpp", "python", "java", "go", "javascript", "rust", "kotlin",
		"cpp20", "pypy3", "csharp", "ruby", "php", "haskell"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			requireLanguage(t, e, lang)
			t.Run("Verdicts", func(t *testing.T) {
				tests := []struct {
					input, expected string
					want            judge.Verdict
				}{
					{"sum 3 4", "7", judge.Accepted},
					{"sum 1000000000000 2", "1000000000002\n", judge.Accepted},
					{"sum 3 4", "8", judge.WrongAnswer},
					{"loop", "", judge.TimeLimitExceeded},
					{"hog", "", judge.MemoryLimitExceeded},
					{"crash", "", judge.RuntimeError},
					{"flood", "", judge.OutputLimitExceeded},
				}
				sub := judge.Submission{Language: lang, Source: modal[lang], Limits: limits}
				for _, tc := range tests {
					sub.Tests = append(sub.Tests, judge.TestCase{ID: tc.input, Input: []byte(tc.input + "\n"), Expected: []byte(tc.expected)})
				}
				res := judgeSub(t, e, sub)
				if res.Total != len(tests) || len(res.Tests) != len(tests) {
					t.Fatalf("judged %d of %d tests: %+v", len(res.Tests), len(tests), res)
				}
				for i, tc := range tests {
					tr := res.Tests[i]
					requireVerdict(t, tc.input, tr.Verdict, tc.want, tr)
				}
				if res.Verdict != judge.WrongAnswer || res.Passed != 2 || res.Failed != 5 {
					t.Fatalf("summary: %s passed %d failed %d, want WRONG_ANSWER 2/5", res.Verdict, res.Passed, res.Failed)
				}
				if res.MaxCPUTime < time.Second || res.MaxMemoryBytes <= 0 {
					t.Fatalf("summary maxima: cpu %v memory %d", res.MaxCPUTime, res.MaxMemoryBytes)
				}
				tle, crash, wa := res.Tests[3], res.Tests[5], res.Tests[2]
				if tle.CPUTime < time.Second || !strings.Contains(tle.Message, "CPU time") {
					t.Errorf("TLE not decided by CPU time: %+v", tle)
				}
				if crash.ExitCode == 0 && crash.Signal == "" {
					t.Errorf("crash without exit code or signal: %+v", crash)
				}
				if lang == "c" && crash.Signal != "SIGSEGV" {
					t.Errorf("C null dereference: signal %q, want SIGSEGV", crash.Signal)
				}
				if (lang == "cpp" || lang == "cpp20") && crash.Signal != "SIGABRT" {
					t.Errorf("C++ uncaught exception: signal %q, want SIGABRT", crash.Signal)
				}
				if !strings.Contains(wa.Message, "expected \"8\", found \"7\"") || wa.Output != "7\n" {
					t.Errorf("wrong answer message %q, output %q", wa.Message, wa.Output)
				}
			})
			t.Run("CompilationError", func(t *testing.T) {
				res := judgeSub(t, e, judge.Submission{Language: lang, Source: syntaxError[lang],
					Tests: []judge.TestCase{{Input: []byte("sum 1 2\n"), Expected: []byte("3")}}})
				requireVerdict(t, "syntax error", res.Verdict, judge.CompilationError, res)
				if strings.TrimSpace(res.CompileOutput) == "" || len(res.Tests) != 0 {
					t.Fatalf("compile output %q, tests %d", res.CompileOutput, len(res.Tests))
				}
			})
		})
	}
}
