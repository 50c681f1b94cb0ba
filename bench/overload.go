package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scenarioOverload: -overload-clients (default 200) closed-loop clients
// send reads as fast as they get answers for -overload-duration (default
// 30 s): problem pages, publicHistory, problems, myUsage, as in the mixed
// load. With more clients than the server can serve at once, latency is
// queueing: the target is that queueing is fair and bounded — the p99 of
// the reads answered stays within 10× their p50 — and the excess is turned
// away early with 503 + Retry-After (counted; clients honour Retry-After
// as a well-behaved client does) rather than served seconds late.
func (b *run) scenarioOverload(ctx context.Context) {
	clients, d := b.opts.overloadClients, b.opts.overloadDuration
	name := fmt.Sprintf("overload: %d closed-loop clients of reads for %s", clients, d)
	reads := b.readRequests("")
	// A client of its own with a connection per load client: the shared
	// one keeps fewer alive.
	a := &api{url: b.api.url, client: newHTTPClient(clients)}
	st := &overloadStats{byKind: map[string]*samples{}, all: &samples{}, codes: map[int]int{}}
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	b.overloadProfiles(ctx, d)
	procs := []cpuProc{{"the server", b.server.pid()}, {"DynamoDB Local", b.stack.dynamoPid}, {"the bench (clients)", 0}}
	cpu0 := cpuOf(procs)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.client(lctx, a, reads, w)
		}()
	}
	wg.Wait()
	all := st.all
	all.dur = time.Since(start)
	var cpuParts []string
	for i, c := range cpuOf(procs) {
		cpuParts = append(cpuParts, fmt.Sprintf("%s %.0f%%", procs[i].name, 100*(c-cpu0[i]).Seconds()/all.dur.Seconds()))
	}
	b.rows = append(b.rows, st.row(name, cpuParts))
}

// overloadStats is what the overload scenario's clients saw.
type overloadStats struct {
	mu                  sync.Mutex
	byKind              map[string]*samples
	all                 *samples
	busy, failed, other atomic.Int64
	codes               map[int]int // statuses of the other errors
}

// client is closed-loop client w: it sends reads until ctx ends, waiting
// a second after a 503 (Retry-After: 1), and records what it got.
func (st *overloadStats) client(ctx context.Context, a *api, reads []mixedRequest, w int) {
	r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		kind, token, body := reads[r.IntN(len(reads))](r)
		t := time.Now()
		resp, err := a.do(ctx, token, body)
		elapsed := time.Since(t)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			st.failed.Add(1)
			continue
		case resp.Status == http.StatusServiceUnavailable:
			st.busy.Add(1)
			sleepCtx(ctx, time.Second) // Retry-After: 1
			continue
		case resp.err() != nil:
			st.other.Add(1)
			st.mu.Lock()
			st.codes[resp.Status]++
			st.mu.Unlock()
			continue
		}
		st.all.add(elapsed)
		st.mu.Lock()
		s := st.byKind[kind]
		if s == nil {
			s = &samples{}
			st.byKind[kind] = s
		}
		st.mu.Unlock()
		s.add(elapsed)
	}
}

// row is the scenario's row: it passes when reads were answered, their
// p99 within 10× their p50, and nothing failed but 503s.
func (st *overloadStats) row(name string, cpuParts []string) row {
	all := st.all
	p50, p99 := all.quantile(0.5), all.quantile(0.99)
	ratio := ratioOf(p99, p50)
	pass := all.ops > 0 && ratio <= 10 && st.failed.Load() == 0 && st.other.Load() == 0
	var kinds []string
	for k := range st.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		s := st.byKind[k]
		parts = append(parts, fmt.Sprintf("%s %d p50 %s p99 %s", k, s.ops, ms(s.quantile(0.5)), ms(s.quantile(0.99))))
	}
	busy := st.busy.Load()
	total := all.ops + int(busy)
	return row{
		scenario: name,
		p50:      ms(p50), p99: ms(p99),
		thr:    fmt.Sprintf("%.0f answered/s; 503 %d of %d (%.1f%%)", all.throughput(), busy, total, 100*float64(busy)/float64(max(total, 1))),
		ratio:  fmt.Sprintf("p99 = %.1f× p50", ratio),
		target: "p99 ≤ 10× p50 of the reads answered; no other errors",
		pass:   &pass,
		note: fmt.Sprintf("%s; transport errors %d, other errors %d %v; p90 %s, max %s; CPU (of one core): %s", strings.Join(parts, "; "),
			st.failed.Load(), st.other.Load(), st.codes, ms(all.quantile(0.9)), ms(all.quantile(1)), strings.Join(cpuParts, ", ")),
	}
}

// overloadProfiles, when the overload scenario is profiled, takes a CPU
// profile of the server over its middle and its goroutines halfway (where
// the requests wait).
func (b *run) overloadProfiles(ctx context.Context, d time.Duration) {
	if b.opts.profile != "overload" || b.pprofAddr == "" {
		return
	}
	path := b.opts.profileOut
	if path == "" {
		path = filepath.Join(b.logDir, "bench-overload.pprof")
	}
	b.profileWG.Add(2)
	go func() {
		defer b.profileWG.Done()
		if err := fetchProfile(ctx, b.pprofAddr, max(1, int(d.Seconds())-2), path); err != nil {
			b.logf("profile: %v", err)
			return
		}
		b.profilePath = path
	}()
	go func() {
		defer b.profileWG.Done()
		sleepCtx(ctx, d/2)
		g := filepath.Join(b.logDir, "bench-overload-goroutine.txt")
		if err := fetchPprof(context.Background(), b.pprofAddr, "goroutine?debug=1", 30*time.Second, g); err != nil {
			b.logf("profile: %v", err)
			return
		}
		b.logf("goroutines of the server halfway written to %s", g)
	}()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
