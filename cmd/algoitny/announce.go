package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// A worker announces the languages its judge runs in a record of its own
// (algoitny.Worker, in DynamoDB), renewed every algoitny.WorkerHeartbeat
// while it runs, so that the API refuses, before charging anything, a
// submission no worker can judge (submissions.Service.Workers) and lists
// what the workers run (the `languages` query). The record is not deleted
// when the worker stops: it expires, and a worker restarted within
// algoitny.WorkerExpiry leaves no gap in which every language would be
// refused.

// newWorkerRecord is the record of this process's worker: the languages
// of its judge that work here and that the API names.
func (m *Main) newWorkerRecord() *algoitny.Worker {
	b := make([]byte, 6)
	rand.Read(b)
	host, _ := os.Hostname()
	w := &algoitny.Worker{ID: host + "-" + hex.EncodeToString(b), Host: host, StartedAt: time.Now()}
	for _, l := range m.Judge.Languages() {
		lang, err := algoitny.ParseLanguage(l.ID)
		if err != nil || !l.Available {
			continue // not installed here, or a language the API does not name
		}
		w.Languages = append(w.Languages, algoitny.LanguageOffer{Language: lang, Name: l.Name, Version: l.Version})
	}
	return w
}

// announceWorker stores (or renews) the worker's record; a failure is
// logged, and the next heartbeat tries again.
func (m *Main) announceWorker(ctx context.Context) {
	w := *m.worker
	w.SeenAt = time.Now()
	w.ExpiresAt = w.SeenAt.Add(algoitny.WorkerExpiry)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.Work.PutWorker(actx, &w); err != nil {
		m.Logger.Warn("cannot announce the worker's languages", "worker", w.ID, "err", err)
	}
}

// heartbeat renews the worker's record every algoitny.WorkerHeartbeat
// until ctx ends.
func (m *Main) heartbeat(ctx context.Context) {
	t := time.NewTicker(algoitny.WorkerHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.announceWorker(ctx)
		}
	}
}
