package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// mixedStats counts what happened in the sustained mixed load.
type mixedStats struct {
	mu        sync.Mutex
	byKind    map[string]*samples
	status5xx int
	transport int            // requests that got no HTTP response
	gqlErrors map[string]int // by extensions.code
	jobs      []acceptedJob
	shed      int // arrivals not sent because maxInFlight requests were pending
}

type acceptedJob struct{ id, token, kind string }

func (m *mixedStats) record(kind string, d time.Duration, resp *gqlResponse, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.byKind[kind]
	if s == nil {
		s = &samples{}
		m.byKind[kind] = s
	}
	switch {
	case err != nil:
		m.transport++
		s.err++
	case resp.Status >= 500:
		m.status5xx++
		s.err++
	case len(resp.Errors) > 0:
		code, _ := resp.Errors[0].Extensions["code"].(string)
		m.gqlErrors[code]++
		s.err++
	default:
		s.d = append(s.d, d)
		s.ops++
	}
}

const (
	hintsMutation = `mutation($id: ID!) { generateHints(historyId: $id) { id status } }`
	jobQuery      = `query($id: ID!) { job(id: $id) { status } }`
	problemsQuery = `{ problems(first: 20) { edges { node { platform problemId title } } } }`
)

// scenarioMixed: an open-loop arrival rate of 80% reads, 15% executions and
// 5% hint requests for the configured time, then every accepted job must
// reach a final state; no request may get a 5xx.
func (b *run) scenarioMixed(ctx context.Context) {
	name := fmt.Sprintf("sustained mixed load (80%% reads, 15%% executes, 5%% hints), %s at %d req/s", b.opts.mixedDuration, b.opts.mixedRPS)
	st := &mixedStats{byKind: map[string]*samples{}, gqlErrors: map[string]int{}}
	sent, loadTime := b.mixedLoad(ctx, st, b.newMixedPicker())

	// Every accepted job must reach a final state.
	drainStart := time.Now()
	final, pending, lost := b.drainJobs(ctx, st.jobs)
	drain := time.Since(drainStart)

	var all samples
	parts := st.perKind(&all)
	var codes []string
	for c, n := range st.gqlErrors {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	sort.Strings(codes)
	pass := st.status5xx == 0 && pending == 0 && lost == 0 && st.transport == 0
	b.rows = append(b.rows, row{
		scenario: name,
		p50:      ms(all.quantile(0.5)), p99: ms(all.quantile(0.99)),
		thr:    fmt.Sprintf("%.1f req/s sent (%d)", float64(sent)/loadTime.Seconds(), sent),
		ratio:  fmt.Sprintf("%d× 5xx, %d jobs accepted, %d final, %d not final after %s", st.status5xx, len(st.jobs), final, pending+lost, drain.Round(time.Second)),
		target: "zero 5xx, zero lost jobs", pass: &pass,
		note: fmt.Sprintf("%s; GraphQL errors: %s; transport errors %d; shed %d",
			strings.Join(parts, "; "), orNone(strings.Join(codes, ", ")), st.transport, st.shed),
	})
}

// mixedRequest builds one request of the mixed load: its kind, the token
// it is sent with ("" signed out) and its body.
type mixedRequest func(r *rand.Rand) (kind, token string, body []byte)

// mixedPicker chooses the requests of the mixed load.
type mixedPicker struct {
	b        *run
	reads    []mixedRequest
	hintable []int // users with a failed execution to ask hints for
}

// newMixedPicker returns the picker over the bench's data set.
func (b *run) newMixedPicker() *mixedPicker {
	m := &mixedPicker{b: b, reads: b.readRequests("read ")}
	for ui, hs := range b.ds.failed {
		if len(hs) > 0 {
			m.hintable = append(m.hintable, ui)
		}
	}
	sort.Ints(m.hintable)
	return m
}

// readRequests returns the reads of the mixed and overload loads: a
// problem page, publicHistory, a user's myUsage, the problem list; their
// kinds are named with prefix.
func (b *run) readRequests(prefix string) []mixedRequest {
	return []mixedRequest{
		func(r *rand.Rand) (string, string, []byte) {
			p := b.ds.problems[r.IntN(len(b.ds.problems))]
			return prefix + "problem", "", encodeQuery(problemQuery, map[string]any{"p": "BAEKJOON", "id": p.ProblemID})
		},
		func(r *rand.Rand) (string, string, []byte) {
			return prefix + "publicHistory", "", encodeQuery(historyQuery, map[string]any{"n": 20})
		},
		func(r *rand.Rand) (string, string, []byte) {
			return prefix + "myUsage", b.tokens[r.IntN(len(b.tokens))], encodeQuery(`{ myUsage { action used limit remaining } }`, nil)
		},
		func(r *rand.Rand) (string, string, []byte) {
			return prefix + "problems", "", encodeQuery(problemsQuery, nil)
		},
	}
}

// pick chooses a read 80% of the time, an execution 15% and a hint
// request 5% (an execution when no user has a failed one).
func (m *mixedPicker) pick(r *rand.Rand) (kind, token string, body []byte) {
	b := m.b
	switch x := r.IntN(100); {
	case x < 80:
		return m.reads[r.IntN(len(m.reads))](r)
	case x < 95 || len(m.hintable) == 0:
		ui := r.IntN(len(b.ds.users))
		p := b.ds.problems[r.IntN(len(b.ds.problems))]
		return "executeCode", b.tokens[ui], encodeQuery(executeMutation, map[string]any{"in": map[string]any{
			"platform": "BAEKJOON", "problemId": p.ProblemID, "language": "PYTHON", "code": aPlusBPython}})
	default:
		ui := m.hintable[r.IntN(len(m.hintable))]
		h := b.ds.failed[ui][r.IntN(len(b.ds.failed[ui]))]
		return "generateHints", b.tokens[ui], encodeQuery(hintsMutation, map[string]any{"id": globalID("SearchHistory", h.UserID, h.ID)})
	}
}

// mixedLoad sends picked requests at the configured rate for the
// configured time (shedding them past 256 in flight) and waits for the
// answers; it returns how many were sent and how long it took.
func (b *run) mixedLoad(ctx context.Context, st *mixedStats, m *mixedPicker) (sent int, loadTime time.Duration) {
	const maxInFlight = 256
	var inflight atomic.Int64
	r := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	interval := time.Second / time.Duration(max(b.opts.mixedRPS, 1))
	lctx, cancel := context.WithTimeout(ctx, b.opts.mixedDuration)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	tick := time.NewTicker(interval)
	for lctx.Err() == nil {
		select {
		case <-lctx.Done():
		case <-tick.C:
			kind, token, body := m.pick(r)
			if inflight.Load() >= maxInFlight {
				st.mu.Lock()
				st.shed++
				st.mu.Unlock()
				continue
			}
			sent++
			inflight.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer inflight.Add(-1)
				b.mixedSend(ctx, st, kind, token, body)
			}()
		}
	}
	tick.Stop()
	wg.Wait()
	return sent, time.Since(start)
}

// mixedSend sends one request and records its answer, and the job it
// started (executions and hints).
func (b *run) mixedSend(ctx context.Context, st *mixedStats, kind, token string, body []byte) {
	t := time.Now()
	resp, err := b.api.do(ctx, token, body)
	st.record(kind, time.Since(t), resp, err)
	if err == nil && resp.err() == nil && (kind == "executeCode" || kind == "generateHints") {
		id := jobIDOf(resp)
		st.mu.Lock()
		st.jobs = append(st.jobs, acceptedJob{id: id, token: token, kind: kind})
		st.mu.Unlock()
	}
}

// perKind returns a summary of each kind of request, by name, and adds
// every latency to all.
func (m *mixedStats) perKind(all *samples) []string {
	var parts []string
	kinds := make([]string, 0, len(m.byKind))
	for k := range m.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		s := m.byKind[k]
		all.d = append(all.d, s.d...)
		parts = append(parts, fmt.Sprintf("%s %d ok/%d err p50 %s p99 %s", k, s.ops, s.err, ms(s.quantile(0.5)), ms(s.quantile(0.99))))
	}
	return parts
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func jobIDOf(resp *gqlResponse) string {
	var out map[string]struct{ ID string }
	if err := jsonUnmarshal(resp.Data, &out); err != nil {
		return ""
	}
	for _, v := range out {
		return v.ID
	}
	return ""
}

// drainJobs polls the accepted jobs until every one is final or the drain
// timeout passes; it returns how many are final, still pending, and gone
// (unreadable).
func (b *run) drainJobs(ctx context.Context, jobs []acceptedJob) (final, pending, lost int) {
	left := jobs
	deadline := time.Now().Add(b.opts.drainTimeout)
	lastLog := time.Now()
	for len(left) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		var mu sync.Mutex
		var next []acceptedJob
		_ = parallel(ctx, 8, len(left), func(i int) error { // f never fails
			j := left[i]
			var out struct{ Job *struct{ Status string } }
			_, err := b.api.query(ctx, j.token, jobQuery, map[string]any{"id": j.id}, &out)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && out.Job == nil:
				lost++
			case err == nil && (out.Job.Status == "COMPLETED" || out.Job.Status == "FAILED" || out.Job.Status == "CANCELLED"):
				final++
			default:
				next = append(next, j)
			}
			return nil
		})
		left = next
		if len(left) > 0 {
			if time.Since(lastLog) > 15*time.Second {
				b.logf("mixed: %d jobs not final yet", len(left))
				lastLog = time.Now()
			}
			time.Sleep(time.Second)
		}
	}
	return final, len(left), lost
}
