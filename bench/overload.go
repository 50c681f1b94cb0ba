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
	reads := []func(r *rand.Rand) (string, string, []byte){
		func(r *rand.Rand) (string, string, []byte) {
			p := b.ds.problems[r.IntN(len(b.ds.problems))]
			return "problem", "", encodeQuery(problemQuery, map[string]any{"p": "BAEKJOON", "id": p.ProblemID})
		},
		func(r *rand.Rand) (string, string, []byte) {
			return "publicHistory", "", encodeQuery(historyQuery, map[string]any{"n": 20})
		},
		func(r *rand.Rand) (string, string, []byte) {
			return "problems", "", encodeQuery(problemsQuery, nil)
		},
		func(r *rand.Rand) (string, string, []byte) {
			return "myUsage", b.tokens[r.IntN(len(b.tokens))], encodeQuery(`{ myUsage { action used limit remaining } }`, nil)
		},
	}
	// A client of its own with a connection per load client: the shared
	// one keeps fewer alive.
	a := &api{url: b.api.url, client: newHTTPClient(clients)}
	var mu sync.Mutex
	byKind := map[string]*samples{}
	all := &samples{}
	var busy, failed, other atomic.Int64
	codes := map[int]int{}
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
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for lctx.Err() == nil {
				kind, token, body := reads[r.IntN(len(reads))](r)
				t := time.Now()
				resp, err := a.do(lctx, token, body)
				elapsed := time.Since(t)
				switch {
				case lctx.Err() != nil:
					return
				case err != nil:
					failed.Add(1)
					continue
				case resp.Status == http.StatusServiceUnavailable:
					busy.Add(1)
					sleepCtx(lctx, time.Second) // Retry-After: 1
					continue
				case resp.err() != nil:
					other.Add(1)
					mu.Lock()
					codes[resp.Status]++
					mu.Unlock()
					continue
				}
				all.add(elapsed)
				mu.Lock()
				s := byKind[kind]
				if s == nil {
					s = &samples{}
					byKind[kind] = s
				}
				mu.Unlock()
				s.add(elapsed)
			}
		}()
	}
	wg.Wait()
	all.dur = time.Since(start)
	var cpuParts []string
	for i, c := range cpuOf(procs) {
		cpuParts = append(cpuParts, fmt.Sprintf("%s %.0f%%", procs[i].name, 100*(c-cpu0[i]).Seconds()/all.dur.Seconds()))
	}

	p50, p99 := all.quantile(0.5), all.quantile(0.99)
	ratio := ratioOf(p99, p50)
	pass := all.ops > 0 && ratio <= 10 && failed.Load() == 0 && other.Load() == 0
	var kinds []string
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		s := byKind[k]
		parts = append(parts, fmt.Sprintf("%s %d p50 %s p99 %s", k, s.ops, ms(s.quantile(0.5)), ms(s.quantile(0.99))))
	}
	total := all.ops + int(busy.Load())
	b.rows = append(b.rows, row{
		scenario: name,
		p50:      ms(p50), p99: ms(p99),
		thr:    fmt.Sprintf("%.0f answered/s; 503 %d of %d (%.1f%%)", all.throughput(), busy.Load(), total, 100*float64(busy.Load())/float64(max(total, 1))),
		ratio:  fmt.Sprintf("p99 = %.1f× p50", ratio),
		target: "p99 ≤ 10× p50 of the reads answered; no other errors",
		pass:   &pass,
		note: fmt.Sprintf("%s; transport errors %d, other errors %d %v; p90 %s, max %s; CPU (of one core): %s", strings.Join(parts, "; "),
			failed.Load(), other.Load(), codes, ms(all.quantile(0.9)), ms(all.quantile(1)), strings.Join(cpuParts, ", ")),
	})
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
