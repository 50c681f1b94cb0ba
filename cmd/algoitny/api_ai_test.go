package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/llm"
)

const wrongSum = "a, b = map(int, input().split())\nprint(a - b)\n"

// executeAndWait submits code and waits for the job; it returns the execution's global id.
func (s *apiServer) executeAndWait(t testing.TB, token, code string) string {
	t.Helper()
	var out struct{ ExecuteCode struct{ ID string } }
	s.query(t, token, executeMutation, executeInput(code, nil)).decode(t, &out)
	s.waitJob(t, token, out.ExecuteCode.ID, 90*time.Second)
	var j struct {
		Job struct{ History struct{ ID string } }
	}
	s.query(t, token, `query($id: ID!) { job(id: $id) { history { id } } }`, map[string]any{"id": out.ExecuteCode.ID}).decode(t, &j)
	return j.Job.History.ID
}

func TestHints(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 3, true)
	alice := s.login(t, "alice@example.com")
	history := s.executeAndWait(t, alice, wrongSum)

	ws := s.dialWS(t, "graphql-transport-ws", nil)
	ws.init(alice)
	ws.subscribe("h", `subscription($id: ID!) { hintProgress(historyId: $id) { delta done hints } }`, map[string]any{"id": history})
	var job struct{ GenerateHints struct{ ID string } }
	s.query(t, alice, `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": history}).decode(t, &job)
	evs := ws.collect("h", 90*time.Second)
	var text strings.Builder
	var final struct {
		Data struct {
			HintProgress struct {
				Delta string
				Done  bool
				Hints []string
			}
		}
	}
	for _, e := range evs {
		if err := json.Unmarshal(e, &final); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		text.WriteString(final.Data.HintProgress.Delta)
	}
	if !final.Data.HintProgress.Done || len(final.Data.HintProgress.Hints) == 0 || len(evs) < 3 {
		t.Fatalf("%d hint events, final %+v", len(evs), final)
	}
	if !strings.Contains(text.String(), "1.") {
		t.Fatalf("streamed text %q", text.String())
	}
	if j := s.waitJob(t, alice, job.GenerateHints.ID, 30*time.Second); j.Status != "COMPLETED" {
		t.Fatalf("hint job %+v", j)
	}
	var h struct{ SearchHistory struct{ Hints []string } }
	s.query(t, alice, `query($id: ID!) { searchHistory(id: $id) { hints } }`, map[string]any{"id": history}).decode(t, &h)
	if len(h.SearchHistory.Hints) != len(final.Data.HintProgress.Hints) {
		t.Fatalf("stored hints %v", h.SearchHistory.Hints)
	}
	// Asking again costs nothing and returns the stored hints.
	var usage struct {
		MyUsage []struct {
			Action string
			Used   int
		}
	}
	s.query(t, alice, `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": history})
	s.query(t, alice, `{ myUsage { action used } }`, nil).decode(t, &usage)
	if usage.MyUsage[1].Action != "HINT" || usage.MyUsage[1].Used != 1 {
		t.Fatalf("hint usage %+v", usage)
	}
	late := s.dialWS(t, "graphql-transport-ws", nil)
	late.init(alice)
	late.subscribe("l", `subscription($id: ID!) { hintProgress(historyId: $id) { done hints } }`, map[string]any{"id": history})
	if evs := late.collect("l", 10*time.Second); len(evs) != 1 || !strings.Contains(string(evs[0]), `"done":true`) {
		t.Fatalf("late hint subscriber: %s", evs)
	}
}

func TestGeneratorScriptToSavedProblem(t *testing.T) {
	t.Parallel()
	s := startWorkers(t)
	admin := s.staff(t, "admin@example.com")
	var out struct{ GenerateTestCases struct{ ID string } }
	s.query(t, admin, `mutation { generateTestCases(input: {platform: CUSTOM, problemId: "sum", title: "Sum", solutionCode: "a, b = map(int, input().split())\nprint(a + b)\n", language: PYTHON, constraints: "1 ≤ A, B ≤ 1000"}) { id } }`, nil).decode(t, &out)
	j := s.waitJob(t, admin, out.GenerateTestCases.ID, 60*time.Second)
	if j.Status != "COMPLETED" {
		t.Fatalf("script job %+v", j)
	}
	var job struct {
		Job struct{ GeneratorCode, Result string }
	}
	s.query(t, admin, `query($id: ID!) { job(id: $id) { generatorCode result } }`, map[string]any{"id": out.GenerateTestCases.ID}).decode(t, &job)
	if !strings.Contains(job.Job.GeneratorCode, "sys.argv") || !strings.Contains(job.Job.Result, `"generatorLanguage":"python"`) {
		t.Fatalf("generator job %+v", job)
	}
	var saved struct {
		SaveProblem struct {
			Title         string
			IsCompleted   bool
			TestCaseCount int
		}
	}
	s.query(t, admin, `mutation($id: ID!) { saveProblem(input: {jobId: $id, testCount: 8}) { title isCompleted testCaseCount } }`, map[string]any{"id": out.GenerateTestCases.ID}).decode(t, &saved)
	if saved.SaveProblem.Title != "Sum" || !saved.SaveProblem.IsCompleted || saved.SaveProblem.TestCaseCount < 6 {
		t.Fatalf("saved %+v", saved)
	}
	// Unparseable constraints fail with a reason the author can act on.
	s.query(t, admin, `mutation { generateTestCases(input: {platform: CUSTOM, problemId: "vague", title: "Vague", solutionCode: "print(1)", language: PYTHON, constraints: "some numbers"}) { id } }`, nil).decode(t, &out)
	if j := s.waitJob(t, admin, out.GenerateTestCases.ID, 60*time.Second); j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "constraints") {
		t.Fatalf("vague constraints: %+v", j)
	}
}

func TestExtractProblem(t *testing.T) {
	t.Parallel()
	pages := map[string]string{ // path → fixture, laid out like each site
		"/problem/1920":                   "baekjoon_1920.html",
		"/problemset/problem/4/A":         "codeforces_4A.html",
		"/contests/abc086/tasks/abc086_a": "atcoder_abc086_a.html",
	}
	judgeSite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		page, err := os.ReadFile("../../internal/analysis/testdata/" + name)
		if err != nil {
			t.Error(err)
		}
		w.Write(page)
	}))
	defer judgeSite.Close()
	host := strings.TrimPrefix(judgeSite.URL, "http://")
	s := startAPITuned(t, func(c *Config) { c.Workers, c.FetchAllowHosts = true, []string{host} }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
	admin := s.staff(t, "admin@example.com")
	extract := func(url string) jobState {
		var out struct{ ExtractProblem struct{ ID string } }
		s.query(t, admin, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": url}).decode(t, &out)
		return s.waitJobResult(t, admin, out.ExtractProblem.ID)
	}
	for path := range pages {
		t.Run(path, func(t *testing.T) {
			j := extract(judgeSite.URL + path)
			var ex struct {
				Platform, ProblemID, Title string
				Samples                    []struct{ Input, Output string }
				ProblemCreated             bool
			}
			if err := json.Unmarshal([]byte(j.Result), &ex); err != nil {
				t.Fatalf("extraction result %q: %v", j.Result, err)
			}
			if j.Status != "COMPLETED" || ex.Title == "" || len(ex.Samples) == 0 || !ex.ProblemCreated {
				t.Fatalf("extraction %+v", j)
			}
			var p struct {
				Problem struct {
					Title         string
					IsCompleted   bool
					NeedsReview   bool
					TestCaseCount int
				}
			}
			s.query(t, admin, `query($p: Platform!, $id: String!) { problem(platform: $p, problemId: $id) { title isCompleted needsReview testCaseCount } }`,
				map[string]any{"p": strings.ToUpper(ex.Platform), "id": ex.ProblemID}).decode(t, &p)
			if p.Problem.Title != ex.Title || p.Problem.IsCompleted || !p.Problem.NeedsReview || p.Problem.TestCaseCount != len(ex.Samples) {
				t.Fatalf("draft %+v from %+v", p.Problem, ex)
			}
			// Extracting again leaves the stored problem alone.
			if again := extract(judgeSite.URL + path); again.Status != "COMPLETED" || !strings.Contains(again.Result, `"problemCreated":false`) {
				t.Fatalf("second extraction %+v", again)
			}
		})
	}
	t.Run("StaffReview", func(t *testing.T) {
		var list struct {
			Problems struct {
				Edges []struct{ Node struct{ ProblemID string } }
			}
		}
		s.query(t, admin, `{ problems(filter: {completed: false, needsReview: true}) { edges { node { problemId } } } }`, nil).decode(t, &list)
		if len(list.Problems.Edges) != 3 {
			t.Fatalf("needs review: %+v", list)
		}
		var rev struct {
			ReviewProblem struct {
				NeedsReview, VerifiedByAdmin bool
				ReviewNotes                  string
				ReviewedAt                   *string
			}
		}
		s.query(t, admin, `mutation { reviewProblem(platform: BAEKJOON, problemId: "1920", input: {verified: true, notes: "samples match"}) { needsReview verifiedByAdmin reviewNotes reviewedAt } }`, nil).decode(t, &rev)
		if rev.ReviewProblem.NeedsReview || !rev.ReviewProblem.VerifiedByAdmin || rev.ReviewProblem.ReviewedAt == nil {
			t.Fatalf("review %+v", rev)
		}
		user := s.login(t, "user@example.com")
		if r := s.query(t, user, `mutation { reviewProblem(platform: BAEKJOON, problemId: "1920", input: {verified: true}) { id } }`, nil); r.code() != "FORBIDDEN" {
			t.Fatalf("user review: %s", r.Raw)
		}
	})
	if j := extract(judgeSite.URL + "/problem/404"); j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "404") {
		t.Fatalf("missing page: %+v", j)
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "https://example.com/problem/1", "ftp://atcoder.jp/x"} {
		r := s.query(t, admin, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": u})
		if r.code() != "BAD_USER_INPUT" {
			t.Fatalf("%s: %s", u, r.Raw)
		}
	}
}

// waitJobResult waits for a job and returns its status, error and result.
func (s *apiServer) waitJobResult(t testing.TB, token, id string) jobState {
	t.Helper()
	s.waitJob(t, token, id, 60*time.Second)
	var out struct{ Job jobState }
	s.query(t, token, `query($id: ID!) { job(id: $id) { status errorMessage result } }`, map[string]any{"id": id}).decode(t, &out)
	return out.Job
}

// flakyProvider fails its first calls, then answers like the offline provider.
type flakyProvider struct {
	llm.Provider
	failures atomic.Int32
	panics   bool
	calls    atomic.Int32
}

func (f *flakyProvider) Hints(ctx context.Context, req llm.HintRequest, onDelta func(string)) ([]string, error) {
	f.calls.Add(1)
	if f.panics {
		panic("provider bug")
	}
	if f.failures.Add(-1) >= 0 {
		return nil, errors.New("upstream 503")
	}
	return f.Provider.Hints(ctx, req, onDelta)
}

func TestJobRetriesAndFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		provider  *flakyProvider
		status    string
		message   string
		wantCalls int32
	}{
		{"RetriedThenCompleted", &flakyProvider{Provider: llm.NewOffline()}, "COMPLETED", "", 3},
		{"PanicsUntilGivenUp", &flakyProvider{Provider: llm.NewOffline(), panics: true}, "FAILED", "failed 5 times", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.provider.failures.Store(2)
			s := startAPITuned(t, func(c *Config) { c.Workers = true }, func(j *jobs.Config) {
				j.FetchCooldown, j.FetchPollInterval, j.RetryBase, j.LLM = 20*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond, tc.provider
			})
			admin := s.staff(t, "admin@example.com")
			s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
			alice := s.login(t, "alice@example.com")
			history := s.executeAndWait(t, alice, wrongSum)
			var job struct{ GenerateHints struct{ ID string } }
			s.query(t, alice, `mutation($id: ID!) { generateHints(historyId: $id) { id } }`, map[string]any{"id": history}).decode(t, &job)
			j := s.waitJob(t, alice, job.GenerateHints.ID, 90*time.Second)
			if j.Status != tc.status || !strings.Contains(j.ErrorMessage, tc.message) || tc.provider.calls.Load() != tc.wantCalls {
				t.Fatalf("job %+v after %d calls", j, tc.provider.calls.Load())
			}
			// The retries left a trail of progress steps.
			var p struct {
				Job struct {
					Progress struct {
						Edges []struct{ Node struct{ Step string } }
					}
				}
			}
			s.query(t, alice, `query($id: ID!) { job(id: $id) { progress(first: 100) { edges { node { step } } } } }`, map[string]any{"id": job.GenerateHints.ID}).decode(t, &p)
			steps := ""
			for _, e := range p.Job.Progress.Edges {
				steps += e.Node.Step + ","
			}
			if !strings.Contains(steps, "retrying") {
				t.Fatalf("steps %s", steps)
			}
		})
	}
}
