package main

import (
	"context"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

const languagesQuery = `{ languages { id name version } }`

type languagesResult struct {
	Languages []struct{ ID, Name, Version string }
}

// TestAPILanguages: a worker announces the languages its judge runs, the
// `languages` query lists them, and executeCode refuses a language no
// live worker runs — BAD_USER_INPUT on `language` — before charging the
// quota.
func TestAPILanguages(t *testing.T) {
	t.Parallel()

	t.Run("WorkerAnnounces", func(t *testing.T) {
		t.Parallel()
		s := startWorkers(t)
		workers, err := s.DB.ListWorkers(context.Background())
		if err != nil || len(workers) != 1 || len(workers[0].Languages) == 0 {
			t.Fatalf("worker records %+v (%v), want this worker's", workers, err)
		}
		var out languagesResult
		s.query(t, "", languagesQuery, nil).decode(t, &out)
		if len(out.Languages) != len(workers[0].Languages) || out.Languages[0].ID != "PYTHON" || out.Languages[0].Version == "" {
			t.Fatalf("languages %+v, want the worker's %+v", out.Languages, workers[0].Languages)
		}
	})

	t.Run("ErrBadUserInput_NotOffered", func(t *testing.T) {
		t.Parallel()
		s := startAPI(t, nil) // no worker of its own
		now := time.Now()
		if err := s.DB.PutWorker(context.Background(), &algoitny.Worker{ID: "python-only", StartedAt: now, SeenAt: now,
			ExpiresAt: now.Add(algoitny.WorkerExpiry),
			Languages: []algoitny.LanguageOffer{{Language: algoitny.LanguagePython, Name: "Python 3", Version: "Python 3.11"}}}); err != nil {
			t.Fatal(err)
		}
		admin := s.staff(t, "admin@example.com")
		s.createProblem(t, admin, "BAEKJOON", "1000", 2, true)
		alice := s.login(t, "alice@example.com")

		r := s.query(t, alice, executeMutation, executeInput("fn main() {}", map[string]any{"language": "RUST"}))
		if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "language" {
			t.Fatalf("executeCode in RUST: %s, want BAD_USER_INPUT on language", r.Raw)
		}
		var usage struct {
			MyUsage []struct {
				Action string
				Used   int
			}
		}
		s.query(t, alice, `{ myUsage { action used } }`, nil).decode(t, &usage)
		for _, u := range usage.MyUsage {
			if u.Action == "EXECUTION" && u.Used != 0 {
				t.Fatalf("charged %d executions for a refused language", u.Used)
			}
		}
		var out languagesResult
		s.query(t, alice, languagesQuery, nil).decode(t, &out)
		if len(out.Languages) != 1 || out.Languages[0].ID != "PYTHON" || out.Languages[0].Version != "Python 3.11" {
			t.Fatalf("languages %+v, want PYTHON alone", out.Languages)
		}
		s.query(t, alice, executeMutation, executeInput("print(1)", nil)).decode(t, &struct{}{})
	})
}
