package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHintCategories runs real failing programs through the judge and the
// hint worker (offline provider) and checks each category of hint appears.
func TestHintCategories(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.query(t, admin, `mutation { updatePlan(name: "Free", input: {maxExecutionsPerDay: -1, maxHintsPerDay: -1}) { name } }`, nil)

	// "sum": n, then n integers; print their sum. Tests: small, beyond 32 bits, large.
	var big strings.Builder
	fmt.Fprintln(&big, 100000)
	for i := range 100000 {
		fmt.Fprint(&big, i%1000+1, " ")
	}
	bigSum := 0
	for i := range 100000 {
		bigSum += i%1000 + 1
	}
	createWithTests := func(id string, tests []map[string]any) {
		t.Helper()
		var out struct{ CreateProblem struct{ ID string } }
		s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "title": id, "language": "PYTHON", "timeLimitMs": 1000,
			"testCases": tests, "isCompleted": true,
		}}).decode(t, &out)
	}
	createWithTests("sum", []map[string]any{
		{"input": "3\n1 2 3\n", "output": "6\n"},
		{"input": "2\n3000000000 2000000000\n", "output": "5000000000\n"},
		{"input": big.String(), "output": fmt.Sprint(bigSum, "\n")},
	})
	createWithTests("lines", []map[string]any{{"input": "3\n1\n2\n3\n", "output": "1\n2\n3\n"}})

	for _, tc := range []struct {
		name, problem, lang, code string
		want                      []string
	}{
		{"WrongAnswer", "sum", "PYTHON", "n = int(input())\nprint(sum(map(int, input().split())) + 2)\n", []string{"expected `6`", "you printed `8`"}},
		{"OffByOne", "sum", "PYTHON", "n = int(input())\nprint(sum(map(int, input().split())) - 1)\n", []string{"off by exactly one"}},
		{"EmptyOutput", "sum", "PYTHON", "n = int(input())\ns = sum(map(int, input().split()))\n", []string{"printed nothing"}},
		{"WhitespaceOnly", "lines", "PYTHON", "n = int(input())\nprint(*[input() for _ in range(n)])\n", []string{"values are right"}},
		{"Overflow", "sum", "CPP", "#include <cstdio>\nint main(){int n;scanf(\"%d\",&n);int s=0;for(int i=0;i<n;i++){long long x;scanf(\"%lld\",&x);s+=x;}printf(\"%d\\n\",s);}\n", []string{"32-bit", "long long"}},
		{"TimeLimit", "sum", "PYTHON", "n = int(input())\na = list(map(int, input().split()))\nt = 0\nfor i in range(n):\n    for j in range(i + 1):\n        t += a[j] if j == i else 0\nprint(t)\n", []string{"ran out of time", "10^5"}},
		{"IndexOutOfRange", "sum", "PYTHON", "n = int(input())\na = list(map(int, input().split()))\nprint(sum(a[i] for i in range(n + 1)))\n", []string{"out of range"}},
		{"RecursionDepth", "sum", "PYTHON", "def f(a, i):\n    return a[i] + f(a, i + 1) if i < len(a) else 0\nn = int(input())\nprint(f(list(map(int, input().split())), 0))\n", []string{"recursion went too deep"}},
		{"CompilationError", "sum", "CPP", "int main( { return 0 }\n", []string{"compil"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := s.login(t, strings.ToLower(tc.name)+"@example.com")
			var out struct{ ExecuteCode struct{ ID string } }
			s.query(t, user, executeMutation, map[string]any{"in": map[string]any{"platform": "CUSTOM", "problemId": tc.problem, "language": tc.lang, "code": tc.code}}).decode(t, &out)
			s.waitJob(t, user, out.ExecuteCode.ID, 90*time.Second)
			var j struct {
				Job struct{ History struct{ ID, Verdict string } }
			}
			s.query(t, user, `query($id: ID!) { job(id: $id) { history { id verdict } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &j)
			var h struct{ GenerateHints struct{ ID string } }
			s.query(t, user, `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": j.Job.History.ID}).decode(t, &h)
			if job := s.waitJob(t, user, h.GenerateHints.ID, 60*time.Second); job.Status != "COMPLETED" {
				t.Fatalf("hint job %+v", job)
			}
			var hs struct{ SearchHistory struct{ Hints []string } }
			s.query(t, user, `query($id: ID!) { searchHistory(id: $id) { hints } }`, map[string]any{"id": j.Job.History.ID}).decode(t, &hs)
			all := strings.ToLower(strings.Join(hs.SearchHistory.Hints, "\n"))
			for _, w := range tc.want {
				if !strings.Contains(all, strings.ToLower(w)) {
					t.Fatalf("verdict %s: hints lack %q:\n%s", j.Job.History.Verdict, w, strings.Join(hs.SearchHistory.Hints, "\n"))
				}
			}
		})
	}
}
