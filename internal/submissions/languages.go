package submissions

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// offersFresh bounds how old the live workers' offers Execute checks may
// be: one Query of the workers' partition per second and process at most,
// and a worker that starts or stops is seen within a second.
const offersFresh = time.Second

// offerCache holds the last read of the live workers' offers.
type offerCache struct {
	mu      sync.Mutex
	at      time.Time
	offered []algoitny.LanguageOffer
	known   bool // at least one live worker announced itself
}

// Languages returns the languages the live judge workers run, each once
// with its name and version, in the order of algoitny.Languages: what a
// front-end offers its users. Empty when no worker has announced itself
// (Workers unset, or none live). Returns EINTERNAL when the records cannot
// be read.
func (s *Service) Languages(ctx context.Context) ([]*algoitny.LanguageOffer, error) {
	offered, _, err := s.offers(ctx)
	out := make([]*algoitny.LanguageOffer, len(offered))
	for i := range offered {
		out[i] = &offered[i]
	}
	return out, err
}

// offers reads the live workers' offers, at most offersFresh old; known is
// false when no live worker announced itself.
func (s *Service) offers(ctx context.Context) (offered []algoitny.LanguageOffer, known bool, err error) {
	if s.Workers == nil {
		return nil, false, nil
	}
	c := &s.offerCache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if !c.at.IsZero() && now.Sub(c.at) < offersFresh {
		return c.offered, c.known, nil
	}
	workers, err := s.Workers.ListWorkers(ctx)
	if err != nil {
		return nil, false, err
	}
	c.offered = algoitny.OfferedLanguages(workers, now)
	c.known, c.at = len(c.offered) > 0, now
	return c.offered, c.known, nil
}

// requireOffered refuses lang when the live workers announced what they
// run and none runs it: EINVALID on "language", before anything is
// charged (a job no worker can run would fail after it was paid for).
// While no worker has announced itself (the first one starting, every
// record expired) nothing is known and the job queues as before.
func (s *Service) requireOffered(ctx context.Context, lang algoitny.Language) error {
	offered, known, err := s.offers(ctx)
	if err != nil || !known {
		return err
	}
	names := make([]string, 0, len(offered))
	for _, o := range offered {
		if o.Language == lang {
			return nil
		}
		names = append(names, string(o.Language))
	}
	return algoitny.Invalid("language", "%s is not available: no judge worker runs it (available: %s)",
		lang, strings.Join(names, ", "))
}
