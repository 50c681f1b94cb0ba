package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/jobs"
)

// startWorkers starts an API with in-process workers and fast job fetching.
func startWorkers(t testing.TB) *apiServer {
	t.Helper()
	return startAPITuned(t, func(c *Config) { c.Workers = true }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
}

const aPlusB = "a, b = map(int, input().split())\nprint(a + b)\n"

const jobUpdated = `subscription($id: ID!) { jobUpdated(id: $id) { job { status history { verdict passedCount } } progress { step } } }`
const executionProgress = `subscription($id: ID!) { executionProgress(jobId: $id) { index total result { verdict } } }`

type jobEventPayload struct {
	Data struct {
		JobUpdated struct {
			Job struct {
				Status  string
				History *struct {
					Verdict     string
					PassedCount int
				}
			}
			Progress *struct{ Step string }
		}
	}
}

func TestSubscriptionsFullFlow(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 5, true)
	alice := s.login(t, "alice@example.com")

	// Submit first, then subscribe: the subscription starts with the current state.
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, alice, executeMutation, executeInput(aPlusB, map[string]any{"isCodePublic": true})).decode(t, &out)
	jobID := out.ExecuteCode.ID

	ws := s.dialWS(t, "graphql-transport-ws", nil)
	ws.init(alice)
	ws.subscribe("job", jobUpdated, map[string]any{"id": jobID})
	ws.subscribe("exec", executionProgress, map[string]any{"id": jobID})
	var statuses []string
	var steps []string
	tests := map[int]bool{}
	deadline := time.Now().Add(90 * time.Second)
	done := map[string]bool{}
	var final jobEventPayload
	for !(done["job"] && done["exec"]) {
		m := ws.read(time.Until(deadline))
		switch {
		case m.Type == "ping":
			ws.send(map[string]any{"type": "pong"})
		case m.Type == "complete":
			done[m.ID] = true
		case m.Type == "next" && m.ID == "job":
			var ev jobEventPayload
			if err := json.Unmarshal(m.Payload, &ev); err != nil {
				t.Fatalf("event %s: %v", m.Payload, err)
			}
			if n := len(statuses); n == 0 || statuses[n-1] != ev.Data.JobUpdated.Job.Status {
				statuses = append(statuses, ev.Data.JobUpdated.Job.Status)
			}
			if p := ev.Data.JobUpdated.Progress; p != nil {
				steps = append(steps, p.Step)
			}
			final = ev
		case m.Type == "next" && m.ID == "exec":
			var ev struct {
				Data struct {
					ExecutionProgress struct {
						Index, Total int
						Result       struct{ Verdict string }
					}
				}
			}
			if err := json.Unmarshal(m.Payload, &ev); err != nil {
				t.Fatalf("event %s: %v", m.Payload, err)
			}
			e := ev.Data.ExecutionProgress
			if e.Total != 5 || e.Result.Verdict != "ACCEPTED" || tests[e.Index] {
				t.Fatalf("execution event %s", m.Payload)
			}
			tests[e.Index] = true
		case m.Type == "error":
			t.Fatalf("error: %s", m.Payload)
		}
	}
	// A job that ended before the subscription began is seen in its final
	// state, its tests' events all the same.
	if got := strings.Join(statuses, ","); got != "PENDING,PROCESSING,COMPLETED" && got != "PROCESSING,COMPLETED" && got != "COMPLETED" {
		t.Fatalf("statuses %s (steps %v)", got, steps)
	}
	if len(tests) != 5 {
		t.Fatalf("%d execution events, want 5", len(tests))
	}
	if h := final.Data.JobUpdated.Job.History; h == nil || h.Verdict != "ACCEPTED" || h.PassedCount != 5 {
		t.Fatalf("final job %+v", final)
	}
	var mine struct {
		MyHistory struct {
			Edges []struct {
				Node struct {
					Verdict     string
					PassedCount int
					TestResults []struct{ Verdict string }
					Code        string
				}
			}
		}
	}
	s.query(t, alice, `{ myHistory { edges { node { verdict passedCount testResults { verdict } code } } } }`, nil).decode(t, &mine)
	if len(mine.MyHistory.Edges) != 1 || mine.MyHistory.Edges[0].Node.PassedCount != 5 || len(mine.MyHistory.Edges[0].Node.TestResults) != 5 || mine.MyHistory.Edges[0].Node.Code != aPlusB {
		t.Fatalf("myHistory %+v", mine)
	}

	// A subscriber arriving after the end gets the final state at once.
	late := s.dialWS(t, "graphql-transport-ws", nil)
	late.init(alice)
	late.subscribe("1", jobUpdated, map[string]any{"id": jobID})
	evs := late.collect("1", 10*time.Second)
	if len(evs) != 1 || !strings.Contains(string(evs[0]), `"COMPLETED"`) {
		t.Fatalf("late subscriber got %s", evs)
	}
	late.subscribe("2", executionProgress, map[string]any{"id": jobID})
	if evs := late.collect("2", 10*time.Second); len(evs) != 5 {
		t.Fatalf("late execution subscriber got %d events", len(evs))
	}

	// Someone else's job is not yours to follow.
	bob := s.login(t, "bob@example.com")
	other := s.dialWS(t, "graphql-transport-ws", nil)
	other.init(bob)
	other.subscribe("x", jobUpdated, map[string]any{"id": jobID})
	// A resolver error is a "next" carrying errors, then "complete".
	m := other.read(10 * time.Second)
	if m.Type != "next" || !strings.Contains(string(m.Payload), "NOT_FOUND") || strings.Contains(string(m.Payload), "COMPLETED") {
		t.Fatalf("bob followed alice's job: %+v %s", m, m.Payload)
	}
	if m := other.read(10 * time.Second); m.Type != "complete" {
		t.Fatalf("after the error: %+v", m)
	}
}

func TestExecutionVerdicts(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 3, true)
	for _, tc := range []struct {
		name, lang, code, verdict string
	}{
		{"WrongAnswer", "PYTHON", "a, b = map(int, input().split())\nprint(a - b)\n", "WRONG_ANSWER"},
		{"CompilationError", "CPP", "int main( { return 0 }", "COMPILATION_ERROR"},
		{"AcceptedC", "C", "#include <stdio.h>\nint main(){long a,b;scanf(\"%ld %ld\",&a,&b);printf(\"%ld\\n\",a+b);}", "ACCEPTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := s.login(t, strings.ToLower(tc.name)+"@example.com")
			var out struct{ ExecuteCode struct{ ID string } }
			s.query(t, user, executeMutation, map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": "1000", "language": tc.lang, "code": tc.code}}).decode(t, &out)
			job := s.waitJob(t, user, out.ExecuteCode.ID, 90*time.Second)
			if job.Status != "COMPLETED" || job.History == nil || job.History.Verdict != tc.verdict {
				t.Fatalf("job %+v", job)
			}
		})
	}
}

type jobState struct {
	Status       string
	ErrorMessage string
	Result       string
	History      *struct {
		Verdict        string
		CompileMessage string
	}
}

// waitJob polls a job until it is final.
func (s *apiServer) waitJob(t testing.TB, token, id string, timeout time.Duration) jobState {
	t.Helper()
	var out struct{ Job jobState }
	if !algoitnytest.PollEvery(context.Background(), timeout, 50*time.Millisecond, func() bool {
		out.Job = jobState{}
		s.query(t, token, `query($id: ID!) { job(id: $id) { status errorMessage history { verdict compileMessage } } }`, map[string]any{"id": id}).decode(t, &out)
		switch out.Job.Status {
		case "COMPLETED", "FAILED", "CANCELLED":
			return true
		}
		return false
	}) {
		t.Fatalf("job %s still %s after %v", id, out.Job.Status, timeout)
	}
	return out.Job
}
