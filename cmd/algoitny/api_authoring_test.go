package main

import (
	"strings"
	"testing"
)

const saveProblemMutation = `mutation($in: SaveProblemInput!) { saveProblem(input: $in) { isCompleted testCaseCount testCases(first: 100) { edges { node { input output generator seed } } } } }`

// A generator that prints "a b" from its seed.
const seededGenerator = `import random, sys
seed = int(sys.argv[1])
r = random.Random(seed)
print(r.randint(1, 100), r.randint(1, 100))
`

func TestSaveProblem(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	newDraft := func(id, solution string) {
		t.Helper()
		var out struct{ CreateProblem struct{ ID string } }
		s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "title": "Sum " + id, "language": "PYTHON", "solutionCode": solution,
		}}).decode(t, &out)
	}
	save := func(token, id, gen string, extra map[string]any) *gqlResult {
		in := map[string]any{"platform": "CUSTOM", "problemId": id, "generatorCode": gen, "testCount": 12}
		for k, v := range extra {
			in[k] = v
		}
		return s.query(t, token, saveProblemMutation, map[string]any{"in": in})
	}

	t.Run("ProducesSeededTests", func(t *testing.T) {
		newDraft("ok", aPlusB)
		var out struct {
			SaveProblem struct {
				IsCompleted   bool
				TestCaseCount int
				TestCases     struct {
					Edges []struct {
						Node struct {
							Input, Output, Generator string
							Seed                     int
						}
					}
				}
			}
		}
		save(admin, "ok", seededGenerator, nil).decode(t, &out)
		p := out.SaveProblem
		if !p.IsCompleted || p.TestCaseCount < 10 || len(p.TestCases.Edges) != p.TestCaseCount {
			t.Fatalf("problem %+v", p)
		}
		for _, e := range p.TestCases.Edges {
			var a, b, sum int
			fmtSscan(t, e.Node.Input, &a, &b)
			fmtSscan(t, e.Node.Output, &sum)
			if sum != a+b || !strings.HasPrefix(e.Node.Generator, "generator:python@") || e.Node.Seed < 1 || e.Node.Seed > 12 {
				t.Fatalf("test %+v", e.Node)
			}
		}
		// The problem can now be executed against.
		if r := s.query(t, admin, executeMutation, map[string]any{"in": map[string]any{"platform": "CUSTOM", "problemId": "ok", "language": "PYTHON", "code": aPlusB}}); len(r.Errors) != 0 {
			t.Fatalf("execute: %s", r.Raw)
		}
	})

	t.Run("CppReferenceSolution", func(t *testing.T) {
		var out struct{ CreateProblem struct{ ID string } }
		s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": "cpp", "title": "Sum in C++", "language": "CPP",
			"solutionCode": "#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<\"\\n\";}\n",
		}}).decode(t, &out)
		var saved struct {
			SaveProblem struct {
				IsCompleted   bool
				TestCaseCount int
				TestCases     struct {
					Edges []struct {
						Node struct{ Input, Output string }
					}
				}
			}
		}
		save(admin, "cpp", seededGenerator, nil).decode(t, &saved)
		if !saved.SaveProblem.IsCompleted || saved.SaveProblem.TestCaseCount < 10 {
			t.Fatalf("%+v", saved)
		}
		for _, e := range saved.SaveProblem.TestCases.Edges {
			var a, b, sum int
			fmtSscan(t, e.Node.Input, &a, &b)
			fmtSscan(t, e.Node.Output, &sum)
			if a+b != sum {
				t.Fatalf("C++ reference: %q → %q", e.Node.Input, e.Node.Output)
			}
		}
	})

	for _, tc := range []struct {
		name, solution, gen string
		extra               map[string]any
		field, mention      string
	}{
		{"NotDeterministic", aPlusB, "import random\nprint(random.randint(1, 10**9), 1)\n", nil, "generatorCode", "not deterministic"},
		{"GeneratorCrashes", aPlusB, "import sys\nif int(sys.argv[1]) == 5: raise SystemExit(3)\nprint(1, 2)\n", nil, "generatorCode", "seed 5"},
		{"GeneratorDoesNotCompile", aPlusB, "print(", map[string]any{"generatorLanguage": "CPP"}, "generatorCode", "does not compile"},
		{"SolutionFails", "a, b = map(int, input().split())\nassert a + b < 120\nprint(a + b)\n", seededGenerator, nil, "solutionCode", "seed 9"},
		{"ValidatorRejects", aPlusB, seededGenerator, map[string]any{"validatorCode": "a, b = map(int, input().split())\nassert a <= 50\n"}, "validatorCode", "seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := strings.ToLower(tc.name)
			newDraft(id, tc.solution)
			r := save(admin, id, tc.gen, tc.extra)
			if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != tc.field || !strings.Contains(r.Errors[0].Message, tc.mention) {
				t.Fatalf("%s", r.Raw)
			}
			// Nothing was stored.
			var p struct {
				Problem struct {
					TestCaseCount int
					IsCompleted   bool
				}
			}
			s.query(t, admin, `query($id: String!) { problem(platform: CUSTOM, problemId: $id) { testCaseCount isCompleted } }`, map[string]any{"id": id}).decode(t, &p)
			if p.Problem.TestCaseCount != 0 || p.Problem.IsCompleted {
				t.Fatalf("stored after a failure: %+v", p)
			}
		})
	}

	t.Run("DuplicateInputsAreDropped", func(t *testing.T) {
		newDraft("dup", aPlusB)
		var out struct{ SaveProblem struct{ TestCaseCount int } }
		save(admin, "dup", "import sys\nprint(1, int(sys.argv[1]) % 3)\n", nil).decode(t, &out)
		if out.SaveProblem.TestCaseCount != 3 {
			t.Fatalf("%d tests from 3 distinct inputs", out.SaveProblem.TestCaseCount)
		}
	})

	t.Run("NeedsThePlan", func(t *testing.T) {
		free := s.login(t, "free@example.com")
		if r := save(free, "ok", seededGenerator, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("Free plan: %s", r.Raw)
		}
	})
}

func fmtSscan(t testing.TB, s string, v ...any) {
	t.Helper()
	if _, err := fmtSscanImpl(s, v...); err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
}
