package main

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
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
		{"ValidatorTooLarge", aPlusB, seededGenerator, map[string]any{"validatorCode": "#" + strings.Repeat("x", 64<<10)}, "validatorCode", "at most 64 KB"},
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

// A seeded generator of inputs "n / n numbers": every fourth seed a large
// one (more than a list's 4096-byte preview), mixing in the index argument
// so that the recorded arguments matter.
const reproGenerator = `import random, sys
seed, index = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed * 1000003 + index)
n = 3000 if seed % 4 == 0 else r.randint(1, 20)
print(n)
print(*(r.randint(-10**6, 10**6) for _ in range(n)))
`

// Its validator, and a reference solution whose output is large too.
const (
	reproValidator = `import sys
t = sys.stdin.read().split()
n = int(t[0])
assert 1 <= n <= 3000 and len(t) == n + 1
assert all(abs(int(x)) <= 10**6 for x in t[1:])
`
	reproSolution = `import sys
t = list(map(int, sys.stdin.read().split()))[1:]
print(sum(t))
print(*sorted(t))
`
)

type reproTest struct {
	ID, Generator string
	Seed          *int
	Args          []string
	Production    *int
	Input, Output string
}

type reproProblem struct {
	TestCaseCount                        int
	IsCompleted                          bool
	GeneratorCode, ValidatorCode         *string
	GeneratorLanguage, ValidatorLanguage *string
	TestCases                            struct{ Edges []struct{ Node reproTest } }
}

const reproProblemFields = `testCaseCount isCompleted generatorCode generatorLanguage validatorCode validatorLanguage
	testCases(first: 100) { edges { node { id generator seed args production input output } } }`

// TestRegenerateTests: saveProblem keeps the generator and validator with
// the problem and every test's (program, seed, args); regenerateTests
// rebuilds every test byte for byte (input and output, read whole through
// node(id:)) and replaces them; a second saveProblem replaces the generated
// tests instead of adding to them, hand-written ones stay; a stored
// generator that is not deterministic, or a changed reference solution,
// makes regenerateTests refuse with nothing changed.
func TestRegenerateTests(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	author, other := s.login(t, "author@example.com"), s.login(t, "other@example.com")
	for _, email := range []string{"author@example.com", "other@example.com"} {
		s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`, map[string]any{"id": globalIDOf("User", s.user(t, email).ID)}).decode(t, new(any))
	}
	newDraft := func(id, solution string) {
		t.Helper()
		s.query(t, author, createProblemMutation, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "title": "Repro " + id, "language": "PYTHON", "solutionCode": solution,
		}}).decode(t, new(any))
	}
	read := func(token, id string) reproProblem {
		t.Helper()
		var out struct{ Problem reproProblem }
		s.query(t, token, `query($id: String!) { problem(platform: CUSTOM, problemId: $id) { `+reproProblemFields+` } }`, map[string]any{"id": id}).decode(t, &out)
		return out.Problem
	}
	// whole reads every test case through node(id:), one request each (a
	// request reads one large test case in full), keyed by id.
	whole := func(p reproProblem) map[string]reproTest {
		t.Helper()
		out := map[string]reproTest{}
		for _, e := range p.TestCases.Edges {
			var n struct{ Node *reproTest }
			s.query(t, author, `query($id: ID!) { node(id: $id) { ... on TestCase { id generator seed args production input output } } }`, map[string]any{"id": e.Node.ID}).decode(t, &n)
			if n.Node == nil {
				t.Fatalf("test case %s not found", e.Node.ID)
			}
			out[e.Node.ID] = *n.Node
		}
		return out
	}
	// generated returns the generated tests of p read whole, by seed, and
	// the hand-written ones' ids.
	generated := func(p reproProblem) (map[int]reproTest, []string) {
		t.Helper()
		bySeed := map[int]reproTest{}
		var hand []string
		for _, tc := range whole(p) {
			if tc.Generator == "" {
				hand = append(hand, tc.ID)
				continue
			}
			if _, dup := bySeed[*tc.Seed]; dup {
				t.Fatalf("seed %d twice", *tc.Seed)
			}
			bySeed[*tc.Seed] = tc
		}
		slices.Sort(hand)
		return bySeed, hand
	}
	save := func(token, id, gen string, count int) *gqlResult {
		return s.query(t, token, `mutation($in: SaveProblemInput!) { saveProblem(input: $in) { testCaseCount } }`, map[string]any{"in": map[string]any{
			"platform": "CUSTOM", "problemId": id, "generatorCode": gen, "testCount": count, "validatorCode": reproValidator,
		}})
	}
	regenerate := func(token, id string) *gqlResult {
		return s.query(t, token, `mutation($id: String!) { regenerateTests(platform: CUSTOM, problemId: $id) { `+reproProblemFields+` } }`, map[string]any{"id": id})
	}

	newDraft("repro", reproSolution)
	s.query(t, author, `mutation { addTestCases(platform: CUSTOM, problemId: "repro", testCases: [{input: "1\n5\n", output: "5\n5\n"}, {input: "2\n1 2\n", output: "3\n1 2\n"}]) { id } }`, nil).decode(t, new(any))
	save(author, "repro", reproGenerator, 12).decode(t, new(any))
	before := read(author, "repro")
	gen1, hand := generated(before)
	if before.TestCaseCount != 14 || len(gen1) != 12 || len(hand) != 2 || !before.IsCompleted {
		t.Fatalf("saved: %d tests, %d generated, %d hand-written", before.TestCaseCount, len(gen1), len(hand))
	}
	if before.GeneratorCode == nil || *before.GeneratorCode != reproGenerator || *before.GeneratorLanguage != "PYTHON" ||
		before.ValidatorCode == nil || *before.ValidatorCode != reproValidator || *before.ValidatorLanguage != "PYTHON" {
		t.Fatalf("programs not kept: %+v", before)
	}
	large := 0
	for seed, tc := range gen1 {
		want := strconv.Itoa(seed)
		if !strings.HasPrefix(tc.Generator, "generator:python@") || len(tc.Generator) != len("generator:python@")+12 ||
			!slices.Equal(tc.Args, []string{want, want}) || tc.Production == nil || *tc.Production != 1 {
			t.Fatalf("seed %d recorded %q %v %v", seed, tc.Generator, tc.Args, tc.Production)
		}
		if len(tc.Input) > 4096 && len(tc.Output) > 4096 {
			large++
		}
	}
	if large != 3 {
		t.Fatalf("%d large tests, want 3 (seeds 4, 8, 12)", large)
	}
	// The programs are the author's and staff's to see, like solutionCode.
	for _, token := range []string{"", other} {
		if p := read(token, "repro"); p.GeneratorCode != nil || p.GeneratorLanguage != nil || p.ValidatorCode != nil || p.ValidatorLanguage != nil {
			t.Fatalf("programs shown to someone else: %+v", p)
		}
	}
	if p := read(admin, "repro"); p.GeneratorCode == nil || p.ValidatorCode == nil {
		t.Fatal("programs hidden from staff")
	}

	t.Log("regenerateTests rebuilds every test byte for byte")
	if r := regenerate(other, "repro"); r.code() != "FORBIDDEN" {
		t.Fatalf("someone else regenerated: %s", r.Raw)
	}
	// What an interrupted replace leaves: generated tests of an older run
	// next to the current ones (here one from before runs were numbered).
	// The next run deletes them.
	ref := algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "repro"}
	if err := s.DB.AddTestCases(context.Background(), ref, []*algoitny.TestCase{{Input: "1\n1\n", Output: "1\n1\n", Generator: "generator:python", Seed: 99}}); err != nil {
		t.Fatal(err)
	}
	if p := read(author, "repro"); p.TestCaseCount != 15 {
		t.Fatalf("%d tests with the leftover", p.TestCaseCount)
	}
	var regen struct{ RegenerateTests reproProblem }
	regenerate(author, "repro").decode(t, &regen)
	gen2, hand2 := generated(regen.RegenerateTests)
	if regen.RegenerateTests.TestCaseCount != 14 || len(gen2) != 12 || !slices.Equal(hand, hand2) {
		t.Fatalf("regenerated: %d tests, %d generated, hand-written %v (was %v)", regen.RegenerateTests.TestCaseCount, len(gen2), hand2, hand)
	}
	for seed, old := range gen1 {
		now, ok := gen2[seed]
		if !ok {
			t.Fatalf("seed %d lost", seed)
		}
		if now.Input != old.Input || now.Output != old.Output {
			t.Fatalf("seed %d: input %d → %d bytes, output %d → %d bytes, or their bytes differ", seed, len(old.Input), len(now.Input), len(old.Output), len(now.Output))
		}
		if now.ID == old.ID || now.Generator != old.Generator || !slices.Equal(now.Args, old.Args) || *now.Production != 2 {
			t.Fatalf("seed %d: not replaced by a new run: %+v", seed, now)
		}
		if r := s.query(t, author, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": old.ID}); string(r.Data) != `{"node":null}` {
			t.Fatalf("the replaced test %s is still there: %s", old.ID, r.Raw)
		}
	}

	t.Log("a second saveProblem replaces the generated tests; hand-written ones stay")
	save(author, "repro", reproGenerator, 5).decode(t, new(any))
	after := read(author, "repro")
	gen3, hand3 := generated(after)
	if after.TestCaseCount != 5+2 || len(after.TestCases.Edges) != 7 || len(gen3) != 5 || !slices.Equal(hand, hand3) {
		t.Fatalf("after the second save: %d tests (%d listed), %d generated, hand-written %v", after.TestCaseCount, len(after.TestCases.Edges), len(gen3), hand3)
	}
	for seed := 1; seed <= 5; seed++ {
		if tc := gen3[seed]; *tc.Production != 3 || tc.Input != gen1[seed].Input || tc.Output != gen1[seed].Output {
			t.Fatalf("seed %d after the second save: %+v", seed, tc)
		}
	}

	t.Log("a changed reference solution: not reproducible, nothing changed")
	s.query(t, author, `mutation { updateProblem(platform: CUSTOM, problemId: "repro", input: {solutionCode: "import sys\nt = list(map(int, sys.stdin.read().split()))[1:]\nprint(sum(t) + 1)\nprint(*sorted(t))\n"}) { id } }`, nil).decode(t, new(any))
	r := regenerate(author, "repro")
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "solutionCode" || !strings.Contains(r.Errors[0].Message, "not reproducible") ||
		!strings.Contains(r.Errors[0].Message, "generated test 1 (seed 1)") {
		t.Fatalf("changed solution: %s", r.Raw)
	}
	if now := read(author, "repro"); !reflect.DeepEqual(now, after) {
		t.Fatalf("a refused regeneration changed the problem:\n%+v\nwas\n%+v", now, after)
	}

	t.Log("a stored generator that is not deterministic: not reproducible, nothing changed")
	// Seed 1, the one saveProblem runs twice, is deterministic; the others
	// are not, past the first 4096 bytes a list shows: only the whole
	// input tells.
	const sneaky = "import random, sys\nif sys.argv[1] == '1':\n    print(1)\n    print(7)\nelse:\n    print(2000)\n    print(*([int(sys.argv[1])] * 1999), random.randint(1, 10**6))\n"
	newDraft("sneaky", reproSolution)
	save(author, "sneaky", sneaky, 6).decode(t, new(any))
	was := read(author, "sneaky")
	wasWhole := whole(was)
	r = regenerate(author, "sneaky")
	if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "generatorCode" || !strings.Contains(r.Errors[0].Message, "not reproducible") ||
		!strings.Contains(r.Errors[0].Message, "generated test 2 (seed 2) differs from the stored one at byte 400") {
		t.Fatalf("non-deterministic generator: %s", r.Raw)
	}
	if now := read(author, "sneaky"); !reflect.DeepEqual(now, was) || !reflect.DeepEqual(whole(now), wasWhole) {
		t.Fatal("a refused regeneration changed the tests")
	}

	t.Log("no stored generator")
	newDraft("byhand", reproSolution)
	s.query(t, author, `mutation { addTestCases(platform: CUSTOM, problemId: "byhand", testCases: [{input: "1\n5\n", output: "5\n5\n"}]) { id } }`, nil).decode(t, new(any))
	if r := regenerate(author, "byhand"); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "generatorCode" {
		t.Fatalf("no generator: %s", r.Raw)
	}
	if r := regenerate(author, "none"); r.code() != "NOT_FOUND" {
		t.Fatalf("no problem: %s", r.Raw)
	}
	if r := regenerate("", "repro"); r.code() != "UNAUTHENTICATED" {
		t.Fatalf("anonymous: %s", r.Raw)
	}
}
