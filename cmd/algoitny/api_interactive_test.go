package main

import (
	"strings"
	"testing"
	"time"
)

// guessInteractor is guess-the-number, testlib style: the secret and the
// query budget in the input file (argv[1]), "? x" answered by "<", ">" or
// "=", "! x" to answer; exit 0 accepted, 1 wrong answer.
const guessInteractor = `import sys
secret, budget = map(int, open(sys.argv[1]).read().split())
print(budget, flush=True)
q = 0
while True:
    line = sys.stdin.readline().split()
    if len(line) != 2:
        sys.stderr.write("unexpected end of the output")
        sys.exit(1)
    op, x = line[0], int(line[1])
    if op == "!":
        if x != secret:
            sys.stderr.write("answered %d, the number was %d" % (x, secret))
            sys.exit(1)
        sys.stderr.write("ok, %d queries" % q)
        sys.exit(0)
    if q >= budget:
        sys.stderr.write("more than %d queries" % budget)
        sys.exit(1)
    q += 1
    print(">" if x < secret else "<" if x > secret else "=", flush=True)
`

// guessSolution finds the number in [1, 1000] by bisection.
const guessSolution = `budget = int(input())
lo, hi = 1, 1000
while lo < hi:
    mid = (lo + hi) // 2
    print("?", mid, flush=True)
    r = input()
    if r == "=":
        lo = hi = mid
    elif r == ">":
        lo = mid + 1
    else:
        hi = mid - 1
print("!", lo, flush=True)
`

const interactiveProblemQuery = `query($p: Platform!, $id: String!) { problem(platform: $p, problemId: $id) { interactive interactorCode interactorLanguage } }`

type interactiveProblem struct {
	Problem struct {
		Interactive        bool
		InteractorCode     *string
		InteractorLanguage *string
	}
}

// TestAPIInteractive registers an interactive problem and judges
// submissions to it end to end: executeCode, the judge running the
// solution beside the interactor, the verdict in the history.
func TestAPIInteractive(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	var created struct{ CreateProblem struct{ ID string } }
	s.query(t, admin, createProblemMutation, map[string]any{"in": map[string]any{
		"platform": "CODEFORCES", "problemId": "1A", "title": "Guess the number", "language": "PYTHON",
		"solutionCode": guessSolution, "timeLimitMs": 1000,
		"interactor":  map[string]any{"language": "PYTHON", "code": guessInteractor},
		"testCases":   []map[string]any{{"input": "437 10\n", "output": ""}, {"input": "1000 10\n", "output": ""}},
		"isCompleted": true,
	}}).decode(t, &created)
	vars := map[string]any{"p": "CODEFORCES", "id": "1A"}

	t.Run("InteractorOnlyForEditors", func(t *testing.T) {
		var p interactiveProblem
		s.query(t, admin, interactiveProblemQuery, vars).decode(t, &p)
		if !p.Problem.Interactive || p.Problem.InteractorCode == nil || *p.Problem.InteractorCode != guessInteractor ||
			p.Problem.InteractorLanguage == nil || *p.Problem.InteractorLanguage != "PYTHON" {
			t.Fatalf("staff reads %+v", p.Problem)
		}
		s.query(t, s.login(t, "reader@example.com"), interactiveProblemQuery, vars).decode(t, &p)
		if !p.Problem.Interactive || p.Problem.InteractorCode != nil || p.Problem.InteractorLanguage != nil {
			t.Fatalf("a user reads %+v", p.Problem)
		}
	})

	t.Run("JudgedThroughExecuteCode", func(t *testing.T) {
		alice := s.login(t, "alice@example.com")
		for _, tc := range []struct {
			name, code, verdict, message string
			passed                       int
		}{
			{"Accepted", guessSolution, "ACCEPTED", "ok, ", 2},
			{"WrongAnswer", "input()\nprint('! 437', flush=True)\n", "WRONG_ANSWER", "the number was 1000", 1},
			{"NeverAnswers", "import sys\ninput()\nsys.stdin.read()\n", "TIME_LIMIT_EXCEEDED", "wall time", 0},
		} {
			var out struct{ ExecuteCode struct{ ID string } }
			s.query(t, alice, executeMutation, map[string]any{"in": map[string]any{
				"platform": "CODEFORCES", "problemId": "1A", "language": "PYTHON", "code": tc.code}}).decode(t, &out)
			if j := s.waitJob(t, alice, out.ExecuteCode.ID, 90*time.Second); j.Status != "COMPLETED" {
				t.Fatalf("%s: job %+v", tc.name, j)
			}
			var got struct {
				Job struct {
					History struct {
						Verdict     string
						PassedCount int
						TestResults []struct{ Verdict, Message string }
					}
				}
			}
			s.query(t, alice, `query($id: ID!) { job(id: $id) { history { verdict passedCount testResults { verdict message } } } }`,
				map[string]any{"id": out.ExecuteCode.ID}).decode(t, &got)
			h := got.Job.History
			if h.Verdict != tc.verdict || h.PassedCount != tc.passed || len(h.TestResults) != 2 {
				t.Fatalf("%s: history %+v", tc.name, h)
			}
			if msgs := h.TestResults[0].Message + " | " + h.TestResults[1].Message; !strings.Contains(msgs, tc.message) {
				t.Fatalf("%s: messages %q, want %q", tc.name, msgs, tc.message)
			}
		}
	})

	t.Run("UpdateAndValidation", func(t *testing.T) {
		const update = `mutation($p: Platform!, $id: String!, $in: UpdateProblemInput!) { updateProblem(platform: $p, problemId: $id, input: $in) { interactive } }`
		for field, it := range map[string]map[string]any{
			"interactor.code": {"language": "PYTHON", "code": strings.Repeat("x", 64<<10+1)},
		} {
			r := s.query(t, admin, update, map[string]any{"p": "CODEFORCES", "id": "1A", "in": map[string]any{"interactor": it}})
			if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != field {
				t.Fatalf("%s: %s", field, r.Raw)
			}
		}
		s.createProblem(t, admin, "CODEFORCES", "2B", 1, false)
		var out struct{ UpdateProblem struct{ Interactive bool } }
		in := map[string]any{"interactor": map[string]any{"language": "C", "code": "int main(void) { return 0; }"}}
		s.query(t, admin, update, map[string]any{"p": "CODEFORCES", "id": "2B", "in": in}).decode(t, &out)
		if !out.UpdateProblem.Interactive {
			t.Fatal("the interactor was not set")
		}
		in = map[string]any{"interactor": map[string]any{"language": "C", "code": ""}}
		s.query(t, admin, update, map[string]any{"p": "CODEFORCES", "id": "2B", "in": in}).decode(t, &out)
		var p interactiveProblem
		s.query(t, admin, interactiveProblemQuery, map[string]any{"p": "CODEFORCES", "id": "2B"}).decode(t, &p)
		if out.UpdateProblem.Interactive || p.Problem.Interactive || p.Problem.InteractorLanguage != nil {
			t.Fatalf("an empty interactor leaves %+v", p.Problem)
		}
	})
}
