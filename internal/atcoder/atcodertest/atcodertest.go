// Package atcodertest is a local stand-in for the AtCoder Problems API
// (kenkoooo.com) for tests: it serves the same JSON for user submissions
// (500 a page, from_second, oldest first) and the static resources (the
// contest list, contest–problem pairs, problems, problem models), records every
// request, and fails on demand (429 with Retry-After, 5xx) so that retries,
// rate limiting and resumable syncs can be tested against a real HTTP server.
package atcodertest

import (
	"cmp"
	"compress/gzip"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/atcoder"
)

// Request is one request the server received.
type Request struct {
	Path       string
	User       string
	FromSecond int64
	UserAgent  string
	At         time.Time
	// Status is what the server answered.
	Status int
}

// failure is a queued error answer.
type failure struct {
	status     int
	retryAfter string
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	subs     map[string][]atcoder.Submission // by lower-case user, sorted by (epoch_second, id)
	contests []atcoder.Contest
	// The other static resources.
	contestProblems []atcoder.ContestProblem
	problems        []atcoder.Problem
	models          map[string]atcoder.ProblemModel
	requests        []Request
	// next answers queued by FailNext, consumed one per request.
	next []failure
	// failFrom makes every submissions call after the first failFrom fail
	// with failStatus (0: off).
	failFrom, failStatus, calls int
	// reversed serves each page of submissions newest first.
	reversed bool
}

// NewServer starts a server, closed when the test ends.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{subs: map[string][]atcoder.Submission{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /atcoder/atcoder-api/v3/user/submissions", s.submissions)
	// The real paths only (kenkoooo.com/atcoder/…): a client that calls
	// another path gets a 404, as it would in production.
	mux.HandleFunc("GET "+atcoder.ContestsPath, s.resource(func() any {
		if s.contests == nil {
			return []atcoder.Contest{}
		}
		return slices.Clone(s.contests)
	}))
	mux.HandleFunc("GET "+atcoder.ContestProblemsPath, s.resource(func() any {
		if s.contestProblems == nil {
			return []atcoder.ContestProblem{}
		}
		return slices.Clone(s.contestProblems)
	}))
	mux.HandleFunc("GET "+atcoder.ProblemsPath, s.resource(func() any {
		if s.problems == nil {
			return []atcoder.Problem{}
		}
		return slices.Clone(s.problems)
	}))
	mux.HandleFunc("GET "+atcoder.ProblemModelsPath, s.resource(func() any {
		if s.models == nil {
			return map[string]atcoder.ProblemModel{}
		}
		return maps.Clone(s.models)
	}))
	s.Server = httptest.NewServer(mux)
	tb.Cleanup(s.Close)
	return s
}

// Sub builds a submission with plausible values for the fields a sync ignores.
func Sub(id, epochSecond int64, user, contestID, problemID, result string) atcoder.Submission {
	t := 12
	return atcoder.Submission{
		ID: id, EpochSecond: epochSecond, ProblemID: problemID, ContestID: contestID, UserID: user,
		Language: "C++ 20 (gcc 12.2)", Point: 100, Length: 321, Result: result, ExecutionTime: &t,
	}
}

// AddSubmissions adds submissions (each to its UserID).
func (s *Server) AddSubmissions(subs ...atcoder.Submission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range subs {
		u := strings.ToLower(sub.UserID)
		s.subs[u] = append(s.subs[u], sub)
	}
	for u := range s.subs {
		slices.SortStableFunc(s.subs[u], func(a, b atcoder.Submission) int {
			return cmp.Or(cmp.Compare(a.EpochSecond, b.EpochSecond), cmp.Compare(a.ID, b.ID))
		})
	}
}

// SetContests replaces the contest list.
func (s *Server) SetContests(cs ...atcoder.Contest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contests = slices.Clone(cs)
}

// ReversePages makes the server answer each page of submissions in reverse
// order (the same submissions, newest first), so that a client relying on
// the order within a page is caught.
func (s *Server) ReversePages(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reversed = on
}

// SetContestProblems replaces the contest–problem pairs
// (contest-problem.json).
func (s *Server) SetContestProblems(ps ...atcoder.ContestProblem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contestProblems = slices.Clone(ps)
}

// SetProblems replaces the problem list (problems.json).
func (s *Server) SetProblems(ps ...atcoder.Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = slices.Clone(ps)
}

// SetProblemModels replaces the problem models (problem-models.json).
func (s *Server) SetProblemModels(models map[string]atcoder.ProblemModel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = maps.Clone(models)
}

// Model returns a problem model with the given raw difficulty and plausible
// values for the rest, as problem-models.json has them.
func Model(difficulty float64, experimental bool) atcoder.ProblemModel {
	slope, intercept, variance, disc := -0.0005, 8.5, 0.3, 0.0045
	return atcoder.ProblemModel{Slope: &slope, Intercept: &intercept, Variance: &variance, Difficulty: &difficulty, Discrimination: &disc, IsExperimental: experimental}
}

// FailNext makes the next n requests (any path) answer status, with a
// Retry-After header when retryAfter is not empty.
func (s *Server) FailNext(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.next = append(s.next, failure{status, retryAfter})
	}
}

// FailSubmissionsAfter makes every submissions call after the next `calls`
// answer status, until Heal.
func (s *Server) FailSubmissionsAfter(calls, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failFrom, s.failStatus, s.calls = calls, status, 0
}

// Heal ends FailSubmissionsAfter and drops queued failures.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStatus, s.next = 0, nil
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// SubmissionRequests returns the submissions requests received so far.
func (s *Server) SubmissionRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/submissions") {
			out = append(out, r)
		}
	}
	return out
}

// injected returns the failure to answer, if any; callers hold s.mu.
func (s *Server) injected(submissions bool) (failure, bool) {
	if len(s.next) > 0 {
		f := s.next[0]
		s.next = s.next[1:]
		return f, true
	}
	if submissions && s.failStatus != 0 {
		s.calls++
		if s.calls > s.failFrom {
			return failure{status: s.failStatus}, true
		}
	}
	return failure{}, false
}

func (s *Server) submissions(w http.ResponseWriter, r *http.Request) {
	user := r.URL.Query().Get("user")
	from, err := strconv.ParseInt(r.URL.Query().Get("from_second"), 10, 64)
	req := Request{Path: r.URL.Path, User: user, FromSecond: from, UserAgent: r.UserAgent(), At: time.Now()}
	s.mu.Lock()
	f, fail := s.injected(true)
	var page []atcoder.Submission
	if !fail && err == nil && user != "" {
		for _, sub := range s.subs[strings.ToLower(user)] {
			if sub.EpochSecond >= from {
				page = append(page, sub)
				if len(page) == atcoder.SubmissionsPageSize {
					break
				}
			}
		}
	}
	if s.reversed {
		slices.Reverse(page)
	}
	switch {
	case fail:
		req.Status = f.status
	case err != nil || user == "":
		req.Status = http.StatusBadRequest
	default:
		req.Status = http.StatusOK
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if fail {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, http.StatusText(f.status), f.status)
		return
	}
	if req.Status != http.StatusOK {
		http.Error(w, "bad request", req.Status)
		return
	}
	if page == nil {
		page = []atcoder.Submission{}
	}
	writeJSON(w, r, page)
}

// resource serves a static resource: the value get returns (called with
// s.mu held), or a queued failure.
func (s *Server) resource(get func() any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := Request{Path: r.URL.Path, UserAgent: r.UserAgent(), At: time.Now(), Status: http.StatusOK}
		s.mu.Lock()
		f, fail := s.injected(false)
		var v any
		if fail {
			req.Status = f.status
		} else {
			v = get()
		}
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		if fail {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			http.Error(w, http.StatusText(f.status), f.status)
			return
		}
		writeJSON(w, r, v)
	}
}

// writeJSON answers v, gzip-compressed when the client accepts it (as the
// real API does).
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer func() { _ = zw.Close() }()
		_ = json.NewEncoder(zw).Encode(v)
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}
