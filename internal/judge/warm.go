package judge

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// warmPrograms read two numbers and print their sum, with what contest
// programs commonly use: the first build of a Go program on a fresh
// machine compiles the standard packages it imports into the build cache
// (CacheDir: tens of seconds on a loaded machine, COMPILATION_ERROR at the
// compile time limit in the worst case), and every other toolchain loads
// its compiler, runtime and libraries from disk once.
var warmPrograms = map[string]string{
	"python": "import sys, math, collections, heapq, itertools, functools, bisect\n" +
		"a, b = map(int, sys.stdin.read().split())\nprint(a + b)\n",
	"c": "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n" +
		"int main(void) { long long a, b; if (scanf(\"%lld %lld\", &a, &b) != 2) return 1; printf(\"%lld\\n\", a + b); return 0; }\n",
	"cpp": "#include <bits/stdc++.h>\nusing namespace std;\n" +
		"int main() { ios::sync_with_stdio(false); long long a, b; cin >> a >> b; vector<long long> v{a, b}; " +
		"sort(v.begin(), v.end()); map<int, int> m; cout << accumulate(v.begin(), v.end(), 0LL) << \"\\n\"; }\n",
	"java": "import java.util.*;\nimport java.io.*;\n" +
		"public class Main { public static void main(String[] args) throws IOException { " +
		"BufferedReader r = new BufferedReader(new InputStreamReader(System.in)); StringTokenizer t = new StringTokenizer(r.readLine()); " +
		"long a = Long.parseLong(t.nextToken()), b = Long.parseLong(t.nextToken()); List<Long> l = new ArrayList<>(List.of(a, b)); " +
		"Collections.sort(l); Map<Long, Long> m = new HashMap<>(); System.out.println(a + b); } }\n",
	"go": "package main\n\nimport (\n\t\"bufio\"\n\t\"bytes\"\n\t\"container/heap\"\n\t\"fmt\"\n\t\"math\"\n\t\"math/big\"\n\t\"os\"\n\t\"sort\"\n\t\"strconv\"\n\t\"strings\"\n)\n\n" +
		"var _ = heap.Init\nvar _ = math.MaxInt64\nvar _ = sort.Ints\nvar _ = strconv.Itoa\nvar _ = strings.Fields\nvar _ = bytes.Fields\nvar _ = big.NewInt\n\n" +
		"func main() {\n\tr := bufio.NewReader(os.Stdin)\n\tvar a, b int64\n\tfmt.Fscan(r, &a, &b)\n\tfmt.Println(a + b)\n}\n",
	"javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\nconsole.log(String(a + b));\n",
	"rust": "use std::collections::{BTreeMap, HashMap, VecDeque};\nuse std::io::{self, Read};\n\n" +
		"fn main() {\n    let mut s = String::new();\n    io::stdin().read_to_string(&mut s).unwrap();\n" +
		"    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n" +
		"    let _m: (HashMap<i64, i64>, BTreeMap<i64, i64>, VecDeque<i64>) = Default::default();\n" +
		"    println!(\"{}\", v[0] + v[1]);\n}\n",
	"kotlin": "import java.io.*\nimport java.util.*\n\n" +
		"fun main() {\n    val t = StringTokenizer(BufferedReader(InputStreamReader(System.`in`)).readLine())\n" +
		"    val a = t.nextToken().toLong()\n    val b = t.nextToken().toLong()\n" +
		"    val l = mutableListOf(a, b).sorted()\n    println(l.sum())\n}\n",
}

// WarmResult is what warming one language's toolchain took.
type WarmResult struct {
	Language string
	// Duration is the compile and one run of a small program.
	Duration time.Duration
	// Err is set when the program did not compile or run as expected.
	Err error
}

// Warm compiles and runs a small program in every available language, so
// that the first submission in each does not pay for a cold toolchain: Go's
// build cache of the standard packages (CacheDir, shared by the engines of
// the machine), the compilers', runtimes' and libraries' files in the page
// cache, Java's class data sharing archive (the JDK's, used with
// -Xshare:auto). Languages are warmed concurrently, within Config.Workers.
// A worker calls it at start, in the background; ctx stops it.
func (e *Engine) Warm(ctx context.Context) []WarmResult {
	var (
		mu  sync.Mutex
		out []WarmResult
		wg  sync.WaitGroup
	)
	for _, l := range e.Languages() {
		if !l.Available {
			continue
		}
		src, ok := warmPrograms[l.ID]
		if !ok {
			continue // a language of Config.Languages the engine does not know
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := e.warmOne(ctx, l.ID, src)
			mu.Lock()
			out = append(out, WarmResult{Language: l.ID, Duration: time.Since(start), Err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (e *Engine) warmOne(ctx context.Context, lang, src string) error {
	p, err := e.Compile(ctx, lang, src)
	if err != nil {
		return err
	}
	defer p.Close()
	var out strings.Builder
	rr, err := p.Run(ctx, RunOptions{Stdin: strings.NewReader("20 22\n"), Stdout: &out,
		Limits: Limits{CPUTime: 5 * time.Second}})
	if err != nil {
		return err
	}
	if rr.Verdict != Accepted || strings.TrimSpace(out.String()) != "42" {
		return fmt.Errorf("%w: %s warm-up run: %s %s (output %q)", ErrSandboxFailed, lang, rr.Verdict, rr.Message, out.String())
	}
	return nil
}
