package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
)

const runCodeMutation = `mutation($in: RunCodeInput!) { runCode(input: $in) { id type status } }`

const codeRunQuery = `query($id: ID!) { job(id: $id) { status result errorMessage history { id }
  codeRun { verdict stdout stderr truncated exitCode signal timeMs memoryKb compileMessage message timeLimitMs memoryLimitMb } } }`

// codeRun is a CODE_RUN job as codeRunQuery reads it.
type codeRun struct {
	Status, Result, ErrorMessage string
	History                      *struct{ ID string }
	CodeRun                      *struct {
		Verdict, Stdout, Stderr, CompileMessage, Message string
		Truncated                                        bool
		ExitCode, TimeMs, MemoryKb                       int
		Signal                                           *string
		TimeLimitMs, MemoryLimitMb                       int
	}
}

// followJob subscribes to jobUpdated for job id and reads its events
// until the job is final (the subscription completes); it returns the
// statuses seen, in order, and the steps.
func (s *apiServer) followJob(t testing.TB, token, id string) (statuses, steps []string) {
	t.Helper()
	ws := s.dialWS(t, "graphql-transport-ws", nil)
	ws.init(token)
	ws.subscribe("job", `subscription($id: ID!) { jobUpdated(id: $id) { job { status } progress { step } } }`, map[string]any{"id": id})
	for _, raw := range ws.collect("job", 3*time.Minute) {
		var ev struct {
			Data struct {
				JobUpdated struct {
					Job      struct{ Status string }
					Progress *struct{ Step string }
				}
			}
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if n := len(statuses); n == 0 || statuses[n-1] != ev.Data.JobUpdated.Job.Status {
			statuses = append(statuses, ev.Data.JobUpdated.Job.Status)
		}
		if p := ev.Data.JobUpdated.Progress; p != nil {
			steps = append(steps, p.Step)
		}
	}
	return statuses, steps
}

// runCode starts a run, follows it live to its end and returns it.
func (s *apiServer) runCode(t testing.TB, token string, in map[string]any) codeRun {
	t.Helper()
	var out struct {
		RunCode struct{ ID, Type, Status string }
	}
	s.query(t, token, runCodeMutation, map[string]any{"in": in}).decode(t, &out)
	// A worker may take the run before the mutation's answer is written.
	if out.RunCode.Type != "CODE_RUN" || out.RunCode.Status != "PENDING" && out.RunCode.Status != "PROCESSING" {
		t.Fatalf("runCode %+v", out.RunCode)
	}
	statuses, _ := s.followJob(t, token, out.RunCode.ID)
	if statuses[len(statuses)-1] != "COMPLETED" {
		t.Fatalf("statuses %v", statuses)
	}
	var j struct{ Job codeRun }
	s.query(t, token, codeRunQuery, map[string]any{"id": out.RunCode.ID}).decode(t, &j)
	return j.Job
}

func TestRunCode(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	alice := s.login(t, "alice@example.com")
	var created struct{ CreateProblem struct{ ID string } }
	s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
		"platform": "CUSTOM", "problemId": "fast", "title": "Fast", "language": "PYTHON", "solutionCode": aPlusB,
		"timeLimitMs": 300, "testCases": []map[string]any{{"input": "1 2\n", "output": "3\n"}}, "isCompleted": true,
	}}).decode(t, &created)

	t.Run("OutputCapped", func(t *testing.T) {
		j := s.runCode(t, alice, map[string]any{"language": "PYTHON", "stdin": "20 22\n",
			"code": "a, b = map(int, input().split())\nprint(a + b)\nprint('x' * 40000)\n"})
		r := j.CodeRun
		if r == nil || r.Verdict != "OK" || !strings.HasPrefix(r.Stdout, "42\nxxx") || len(r.Stdout) != 16<<10 || !r.Truncated ||
			r.ExitCode != 0 || r.Signal != nil || r.TimeLimitMs != 2000 || r.MemoryLimitMb != 256 || r.MemoryKb == 0 || j.History != nil {
			t.Fatalf("run %+v", r)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(j.Result), &res); err != nil || res["verdict"] != "OK" || res["truncated"] != true {
			t.Fatalf("result %s", j.Result)
		}
	})

	t.Run("CompilationError", func(t *testing.T) {
		r := s.runCode(t, alice, map[string]any{"language": "PYTHON", "code": "print(\n"}).CodeRun
		if r == nil || r.Verdict != "COMPILATION_ERROR" || !strings.Contains(r.CompileMessage, "SyntaxError") || r.Stdout != "" {
			t.Fatalf("run %+v", r)
		}
	})

	t.Run("TimeLimitOfTheProblem", func(t *testing.T) {
		r := s.runCode(t, alice, map[string]any{"language": "PYTHON", "code": "while True:\n    pass\n",
			"platform": "CUSTOM", "problemId": "fast"}).CodeRun
		if r == nil || r.Verdict != "TIME_LIMIT_EXCEEDED" || r.TimeLimitMs != 300 || r.Signal == nil || *r.Signal != "SIGKILL" {
			t.Fatalf("run %+v", r)
		}
	})

	t.Run("RuntimeError", func(t *testing.T) {
		r := s.runCode(t, alice, map[string]any{"language": "PYTHON", "code": "import sys\nsys.stderr.write('boom')\nsys.exit(3)\n"}).CodeRun
		if r == nil || r.Verdict != "RUNTIME_ERROR" || r.ExitCode != 3 || r.Stderr != "boom" || !strings.Contains(r.Message, "exit code 3") {
			t.Fatalf("run %+v", r)
		}
	})

	t.Run("NothingInHistory", func(t *testing.T) {
		var h struct {
			MyHistory struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		s.query(t, alice, `{ myHistory { edges { node { id } } } }`, nil).decode(t, &h)
		if len(h.MyHistory.Edges) != 0 {
			t.Fatalf("history %+v", h)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for _, tc := range []struct {
			name, token string
			in          map[string]any
			code, field string
		}{
			{"Anonymous", "", map[string]any{"language": "PYTHON", "code": "print(1)"}, "UNAUTHENTICATED", ""},
			{"BlankCode", alice, map[string]any{"language": "PYTHON", "code": "  "}, "BAD_USER_INPUT", "code"},
			{"StdinTooLarge", alice, map[string]any{"language": "PYTHON", "code": "print(1)", "stdin": strings.Repeat("1", 64<<10+1)}, "BAD_USER_INPUT", "stdin"},
			{"ProblemWithoutPlatform", alice, map[string]any{"language": "PYTHON", "code": "print(1)", "problemId": "fast"}, "BAD_USER_INPUT", "problemId"},
			{"UnknownProblem", alice, map[string]any{"language": "PYTHON", "code": "print(1)", "platform": "CUSTOM", "problemId": "nope"}, "NOT_FOUND", ""},
		} {
			r := s.query(t, tc.token, runCodeMutation, map[string]any{"in": tc.in})
			if r.code() != tc.code || (tc.field != "" && r.Errors[0].Extensions["field"] != tc.field) {
				t.Fatalf("%s: %s", tc.name, r.Raw)
			}
		}
	})

	t.Run("Quota", func(t *testing.T) {
		// Four runs so far, charged to CODE_RUN alone.
		usage := s.usage(t, alice)
		if usage["CODE_RUN"] != [2]int{4, 50} || usage["EXECUTION"][0] != 0 {
			t.Fatalf("usage %v", usage)
		}
		limit := 4
		s.query(t, admin, `mutation($n: Int) { updatePlan(name: "Free", input: {maxCodeRunsPerDay: $n}) { maxCodeRunsPerDay } }`, map[string]any{"n": limit})
		r := s.query(t, alice, runCodeMutation, map[string]any{"in": map[string]any{"language": "PYTHON", "code": "print(1)"}})
		ext := r.Errors[0].Extensions
		if r.code() != "RATE_LIMITED" || ext["limit"] != float64(4) || ext["used"] != float64(4) || ext["resetAt"] == nil {
			t.Fatalf("fifth run: %s", r.Raw)
		}
	})
}

// usage is myUsage by action: used and limit.
func (s *apiServer) usage(t testing.TB, token string) map[string][2]int {
	t.Helper()
	var out struct {
		MyUsage []struct {
			Action      string
			Used, Limit int
		}
	}
	s.query(t, token, `{ myUsage { action used limit } }`, nil).decode(t, &out)
	m := map[string][2]int{}
	for _, u := range out.MyUsage {
		m[u.Action] = [2]int{u.Used, u.Limit}
	}
	return m
}

// The counterexample problem, internal/practice/testdata/sums: T lines of
// "a b", print each a+b. Its generator runs as saveProblem runs it, `gen
// SEED INDEX`: T = 3·INDEX, values up to 1000 below index 5 and up to 2·10⁹
// from it on; overflow.py adds as a 32-bit int would (wrong on large values
// only).
var (
	sumsGenerator   = sumsFile("gen.py")
	sumsValidator   = sumsFile("val.py")
	sumsReference   = sumsFile("ref.py")
	sumsOverflowing = sumsFile("overflow.py")
)

func sumsFile(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "practice", "testdata", "sums", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

const (
	// sumsMissesAnEdge is wrong on a hand-written edge case only, which
	// the generator never makes.
	sumsMissesAnEdge = `import sys
d = sys.stdin.read().split()
for i in range(int(d[0])):
    a, b = int(d[1 + 2*i]), int(d[2 + 2*i])
    print(0 if a == b == 2 * 10**9 else a + b)
`
)

const counterexampleQuery = `query($id: ID!) { job(id: $id) { status errorMessage result history { id }
  progress(first: 100) { edges { node { step message } } }
  counterexampleSearch { found tried shrinks message counterexample { input expectedOutput actualOutput verdict message seed args shrunk } } } }`

type counterexampleJob struct {
	Status, ErrorMessage, Result string
	History                      *struct{ ID string }
	Progress                     struct {
		Edges []struct {
			Node struct{ Step, Message string }
		}
	}
	CounterexampleSearch *struct {
		Found          bool
		Tried, Shrinks int
		Message        string
		Counterexample *counterexample
	}
}

type counterexample struct {
	Input, ExpectedOutput, ActualOutput, Verdict, Message string
	Seed                                                  int
	Args                                                  []string
	Shrunk                                                bool
}

// executeOn submits code to CUSTOM/sums publicly and waits for its
// execution; it returns the execution's id and the failed tests' ids.
func (s *apiServer) executeOn(t testing.TB, token, code string) (string, []string) {
	t.Helper()
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, token, executeMutation, map[string]any{"in": map[string]any{
		"platform": "CUSTOM", "problemId": "sums", "language": "PYTHON", "code": code, "isCodePublic": true}}).decode(t, &out)
	s.waitJob(t, token, out.ExecuteCode.ID, 90*time.Second)
	var j struct {
		Job struct {
			History struct {
				ID          string
				TestResults []struct{ TestCaseID, Verdict string }
			}
		}
	}
	s.query(t, token, `query($id: ID!) { job(id: $id) { history { id testResults { testCaseId verdict } } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &j)
	var failed []string
	for _, tr := range j.Job.History.TestResults {
		if tr.Verdict != "ACCEPTED" {
			failed = append(failed, tr.TestCaseID)
		}
	}
	return j.Job.History.ID, failed
}

// findCounterexample starts a search, follows it live to its end and
// returns the job.
func (s *apiServer) findCounterexample(t testing.TB, token, historyID string) counterexampleJob {
	t.Helper()
	var out struct{ FindCounterexample struct{ ID, Type string } }
	s.query(t, token, `mutation($id: ID!) { findCounterexample(historyId: $id) { id type } }`, map[string]any{"id": historyID}).decode(t, &out)
	if out.FindCounterexample.Type != "COUNTEREXAMPLE" {
		t.Fatalf("job %+v", out)
	}
	statuses, steps := s.followJob(t, token, out.FindCounterexample.ID)
	if statuses[len(statuses)-1] != "COMPLETED" || !slices.Contains(steps, "searching") {
		t.Fatalf("live statuses %v, steps %v", statuses, steps)
	}
	var j struct{ Job counterexampleJob }
	s.query(t, token, counterexampleQuery, map[string]any{"id": out.FindCounterexample.ID}).decode(t, &j)
	return j.Job
}

func TestCounterexample(t *testing.T) {
	t.Parallel()
	s := startAPITuned(t, func(c *Config) { c.Workers = true }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
		// The inputs bound the searches, not the time: a loaded machine
		// runs them as far.
		j.CounterexampleBudget, j.CounterexampleMaxInputs = 5*time.Minute, 60
	})
	admin := s.staff(t, "admin@example.com")
	alice := s.login(t, "alice@example.com")
	bob := s.login(t, "bob@example.com")
	// A hand-written edge case, then six generated tests (seeds 1…6).
	var created struct{ CreateProblem struct{ ID string } }
	s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
		"platform": "CUSTOM", "problemId": "sums", "title": "Sums", "language": "PYTHON", "solutionCode": sumsReference,
		"testCases": []map[string]any{{"input": "1\n2000000000 2000000000\n", "output": "4000000000\n"}},
	}}).decode(t, &created)
	var saved struct{ SaveProblem struct{ TestCaseCount int } }
	s.query(t, admin, saveProblemMutation, map[string]any{"in": map[string]any{"platform": "CUSTOM", "problemId": "sums",
		"generatorCode": sumsGenerator, "validatorCode": sumsValidator, "testCount": 6}}).decode(t, &saved)
	if saved.SaveProblem.TestCaseCount != 7 {
		t.Fatalf("problem %+v", saved)
	}
	var tests struct {
		Problem struct {
			TestCases struct {
				Edges []struct {
					Node struct {
						TestCaseID, Input string
						Generator         *string
					}
				}
			}
		}
	}
	s.query(t, admin, `{ problem(platform: CUSTOM, problemId: "sums") { testCases(first: 100) { edges { node { testCaseId input generator } } } } }`, nil).decode(t, &tests)
	stored, generated := map[string]string{}, map[string]bool{}
	for _, e := range tests.Problem.TestCases.Edges {
		stored[e.Node.TestCaseID] = e.Node.Input
		generated[e.Node.TestCaseID] = e.Node.Generator != nil
	}

	wrong, failed := s.executeOn(t, alice, sumsOverflowing)
	t.Run("ShrunkBelowTheFailedTest", func(t *testing.T) {
		j := s.findCounterexample(t, alice, wrong)
		r := j.CounterexampleSearch
		if j.Status != "COMPLETED" || r == nil || !r.Found || r.Counterexample == nil || j.History == nil || j.History.ID != wrong {
			t.Fatalf("job %+v", j)
		}
		c := r.Counterexample
		lines := strings.Split(strings.TrimSpace(c.Input), "\n")
		var a, b int64
		fmtSscan(t, lines[len(lines)-1], &a, &b)
		if c.Verdict != "WRONG_ANSWER" || lines[0] != fmt.Sprint(len(lines)-1) || a+b < 1<<31 ||
			strings.TrimSpace(c.ExpectedOutput) != fmt.Sprint(a+b) || c.ActualOutput == c.ExpectedOutput || c.Args[0] != fmt.Sprint(c.Seed) {
			t.Fatalf("counterexample %+v", c)
		}
		// Smaller than every generated test the code failed (it fails the
		// hand-written edge case too), and none of the stored tests.
		for _, id := range failed {
			if generated[id] && len(c.Input) >= len(stored[id]) {
				t.Fatalf("counterexample %q not smaller than failed test %s %q", c.Input, id, stored[id])
			}
		}
		for _, in := range stored {
			if in == c.Input {
				t.Fatal("a stored test was shown")
			}
		}
		var steps []string
		for _, e := range j.Progress.Edges {
			steps = append(steps, e.Node.Step)
		}
		if !slices.Contains(steps, "shrinking") || steps[len(steps)-1] != "found" {
			t.Fatalf("steps %v", steps)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(j.Result), &res); err != nil || res["found"] != true || res["counterexample"] == nil {
			t.Fatalf("result %s", j.Result)
		}
		t.Logf("%s: %q", r.Message, c.Input)
	})

	t.Run("OnlyTheOwnerSeesIt", func(t *testing.T) {
		q := `query($id: ID!) { searchHistory(id: $id) { id counterexample { input } } }`
		var own struct {
			SearchHistory struct{ Counterexample *struct{ Input string } }
		}
		s.query(t, alice, q, map[string]any{"id": wrong}).decode(t, &own)
		if own.SearchHistory.Counterexample == nil || own.SearchHistory.Counterexample.Input == "" {
			t.Fatalf("owner reads %+v", own)
		}
		for _, token := range []string{bob, admin, ""} {
			r := s.query(t, token, q, map[string]any{"id": wrong})
			if !strings.Contains(string(r.Data), `"counterexample":null`) {
				t.Fatalf("another reads %s", r.Raw)
			}
		}
		// And in a list.
		r := s.query(t, alice, `{ myHistory { edges { node { counterexample { input } } } } }`, nil)
		if !strings.Contains(string(r.Data), `"counterexample":{"input":"`) {
			t.Fatalf("list %s", r.Raw)
		}
	})

	t.Run("HintsMentionIt", func(t *testing.T) {
		var job struct{ GenerateHints struct{ ID string } }
		s.query(t, alice, `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": wrong}).decode(t, &job)
		s.waitJob(t, alice, job.GenerateHints.ID, 90*time.Second)
		var h struct{ SearchHistory struct{ Hints []string } }
		s.query(t, alice, `query($id: ID!) { searchHistory(id: $id) { hints } }`, map[string]any{"id": wrong}).decode(t, &h)
		if !strings.Contains(strings.Join(h.SearchHistory.Hints, "\n"), "counterexample") {
			t.Fatalf("hints %q", h.SearchHistory.Hints)
		}
	})

	t.Run("NoneFoundForCodeRightOnEveryGeneratedInput", func(t *testing.T) {
		history, failed := s.executeOn(t, alice, sumsMissesAnEdge)
		if len(failed) != 1 {
			t.Fatalf("failed tests %v", failed)
		}
		j := s.findCounterexample(t, alice, history)
		r := j.CounterexampleSearch
		if j.Status != "COMPLETED" || r == nil || r.Found || r.Counterexample != nil || r.Tried != 60 ||
			!strings.Contains(r.Message, "none found within the budget: 60 inputs tried") {
			t.Fatalf("job %+v", j)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		accepted, _ := s.executeOn(t, alice, sumsReference)
		for _, tc := range []struct {
			name, token, id, code string
		}{
			{"Anonymous", "", wrong, "UNAUTHENTICATED"},
			{"MalformedID", alice, "nope", "BAD_USER_INPUT"},
			{"NotYours", bob, wrong, "NOT_FOUND"},
			{"StaffNotYours", admin, wrong, "NOT_FOUND"},
			{"EveryTestPassed", alice, accepted, "BAD_USER_INPUT"},
		} {
			r := s.query(t, tc.token, `mutation($id: ID!) { findCounterexample(historyId: $id) { id } }`, map[string]any{"id": tc.id})
			if r.code() != tc.code {
				t.Fatalf("%s: %s", tc.name, r.Raw)
			}
		}
		// No generator kept: BAD_USER_INPUT before any charge.
		s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
		plain := s.executeAndWait(t, alice, wrongSum)
		if r := s.query(t, alice, `mutation($id: ID!) { findCounterexample(historyId: $id) { id } }`, map[string]any{"id": plain}); r.code() != "BAD_USER_INPUT" {
			t.Fatalf("no generator: %s", r.Raw)
		}
	})

	t.Run("Quota", func(t *testing.T) {
		if u := s.usage(t, alice); u["COUNTEREXAMPLE"] != [2]int{2, 3} {
			t.Fatalf("usage %v", u)
		}
		s.query(t, admin, `mutation { updatePlan(name: "Free", input: {maxCounterexamplesPerDay: 2}) { name } }`, nil)
		r := s.query(t, alice, `mutation($id: ID!) { findCounterexample(historyId: $id) { id } }`, map[string]any{"id": wrong})
		if r.code() != "RATE_LIMITED" || r.Errors[0].Extensions["limit"] != float64(2) || r.Errors[0].Extensions["used"] != float64(2) {
			t.Fatalf("third search: %s", r.Raw)
		}
	})
}
