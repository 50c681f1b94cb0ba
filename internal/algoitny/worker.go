package algoitny

import (
	"slices"
	"time"
)

// Worker is a process that judges submissions, as it announces itself:
// the languages its judge runs. A worker stores its record when it starts
// and renews it every WorkerHeartbeat; a record not renewed by ExpiresAt
// is a worker that is gone (stopped, crashed, cut off from DynamoDB). The
// API reads the live ones so that it refuses, before charging anything,
// a submission in a language no worker can run.
type Worker struct {
	// ID is the worker's own, unique per process start.
	ID string
	// Host names the machine (its hostname), for operators.
	Host string
	// Languages are the languages the worker's judge runs, in its order.
	Languages []LanguageOffer
	// StartedAt is when the process started, SeenAt when it last renewed
	// its record, ExpiresAt when the record stops counting.
	StartedAt, SeenAt, ExpiresAt time.Time
}

// LanguageOffer is one language a worker runs: its toolchain's name and
// version as the worker's judge found them.
type LanguageOffer struct {
	Language Language
	// Name is human-readable, with the standard: "C++17 (g++ -O2)".
	Name string
	// Version is the first line the toolchain printed for its version.
	Version string
}

// Worker records' timing: a worker renews its record every
// WorkerHeartbeat, and a record counts until WorkerExpiry after its last
// renewal (three missed renewals).
const (
	WorkerHeartbeat = 30 * time.Second
	WorkerExpiry    = 3 * WorkerHeartbeat
)

// Live reports whether the worker's record still counts at now.
func (w *Worker) Live(now time.Time) bool { return now.Before(w.ExpiresAt) }

// OfferedLanguages merges the offers of the workers live at now: each
// language once (from the worker seen last), in the order of Languages,
// then any other in the order met. Empty when no worker is live.
func OfferedLanguages(workers []*Worker, now time.Time) []LanguageOffer {
	best := map[Language]LanguageOffer{}
	seen := map[Language]time.Time{}
	var order []Language
	for _, w := range workers {
		if !w.Live(now) {
			continue
		}
		for _, o := range w.Languages {
			at, ok := seen[o.Language]
			if !ok {
				order = append(order, o.Language)
			}
			if !ok || w.SeenAt.After(at) {
				best[o.Language], seen[o.Language] = o, w.SeenAt
			}
		}
	}
	rank := func(l Language) int {
		if i := slices.Index(Languages, l); i >= 0 {
			return i
		}
		return len(Languages) + slices.Index(order, l)
	}
	slices.SortStableFunc(order, func(a, b Language) int { return rank(a) - rank(b) })
	out := make([]LanguageOffer, 0, len(order))
	for _, l := range order {
		out = append(out, best[l])
	}
	return out
}
