package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// The stale scenario: a second API replica B (serve --no-workers) beside
// the bench's server A, over the same tables and PostgreSQL. For each kind
// of cached data a writer makes a change on A while a reader on B reads it
// in a tight loop, with the bench's clients loading both replicas; a read
// on B that began after A's mutation returned and still shows the old
// value is stale. Security state must show none; display data at most the
// feed's bound (ALGOITNY_CACHE_BOUND, 1 s).

// staleKind is one kind of data the scenario changes.
type staleKind struct {
	name   string
	strict bool
	// prepare readies trial i (and has B cache the old value); mutate
	// makes the change on A; stale reads B and reports whether it shows
	// the value from before the change.
	prepare func(ctx context.Context, i int) error
	mutate  func(ctx context.Context, i int) error
	stale   func(ctx context.Context, i int) (bool, error)
}

// staleResult is what the reader saw over a kind's trials.
type staleResult struct {
	trials, reads, staleAfter int
	maxStale                  time.Duration // latest stale read after the mutation returned
	mutations                 []time.Duration
}

const staleBound = time.Second // the default ALGOITNY_CACHE_BOUND

func (b *run) scenarioStale(ctx context.Context) {
	bProc, err := startProc(b.c, "algoitny serve (replica B)", b.serverEnv, filepath.Join(b.logDir, "replica-b.log"), b.bin, "serve", "--no-workers")
	if err != nil {
		b.failRow("stale reads", err)
		return
	}
	addr, err := bProc.waitAddr(60 * time.Second)
	if err != nil {
		b.failRow("stale reads", err)
		return
	}
	apiB := &api{url: "http://" + addr + "/query", client: newHTTPClient(max(b.opts.clients, 64))}
	kinds, err := b.staleKinds(ctx, apiB)
	if err != nil {
		b.failRow("stale reads", err)
		return
	}
	// The bench's load on both replicas while the kinds are measured.
	lctx, stopLoad := context.WithCancel(ctx)
	var loading sync.WaitGroup
	for _, target := range []*api{b.api, apiB} {
		loading.Go(func() {
			load(lctx, max(1, b.opts.clients/2), time.Hour, b.opts.maxOps, func(ctx context.Context, _ int, r *rand.Rand) error {
				p := b.ds.problems[r.IntN(len(b.ds.problems))]
				resp, err := target.do(ctx, "", encodeQuery(problemQuery, map[string]any{"p": "BAEKJOON", "id": p.ProblemID}))
				if err == nil {
					err = resp.err()
				}
				return err
			})
		})
	}
	trials := b.opts.staleTrials
	if trials <= 0 {
		trials = max(5, min(30, int(b.opts.duration/(300*time.Millisecond))))
	}
	for _, k := range kinds {
		res, err := b.staleTrials(ctx, k, trials)
		name := fmt.Sprintf("stale reads on B after a change on A: %s (%s)", k.name, map[bool]string{true: "security state", false: "display data"}[k.strict])
		if err != nil {
			b.failRow(name, err)
			continue
		}
		b.rows = append(b.rows, staleRow(name, k, res))
	}
	stopLoad()
	loading.Wait()
	// The executions the quota kind started would compete with the next
	// scenarios for the CPUs: cancel those still running.
	for _, j := range b.staleJobs {
		b.api.query(ctx, j[0], `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": j[1]}, nil)
	}
}

// staleTrials runs k's trials: a reader loops on B from before the
// mutation until well past the bound after it.
func (b *run) staleTrials(ctx context.Context, k staleKind, trials int) (staleResult, error) {
	res := staleResult{trials: trials}
	for i := range trials {
		if err := k.prepare(ctx, i); err != nil {
			return res, fmt.Errorf("prepare: %w", err)
		}
		type read struct {
			start time.Time
			stale bool
		}
		var mu sync.Mutex
		var reads []read
		var readErr error
		rctx, stop := context.WithCancel(ctx)
		var reading sync.WaitGroup
		reading.Go(func() {
			for rctx.Err() == nil {
				start := time.Now()
				s, err := k.stale(rctx, i)
				if err != nil {
					if rctx.Err() == nil {
						mu.Lock()
						readErr = err
						mu.Unlock()
					}
					return
				}
				mu.Lock()
				reads = append(reads, read{start, s})
				mu.Unlock()
			}
		})
		time.Sleep(20 * time.Millisecond)
		began := time.Now()
		if err := k.mutate(ctx, i); err != nil {
			stop()
			reading.Wait()
			return res, fmt.Errorf("mutate: %w", err)
		}
		returned := time.Now()
		res.mutations = append(res.mutations, returned.Sub(began))
		time.Sleep(staleBound + 500*time.Millisecond)
		stop()
		reading.Wait()
		if readErr != nil {
			return res, fmt.Errorf("read: %w", readErr)
		}
		for _, r := range reads {
			if !r.start.After(returned) {
				continue
			}
			res.reads++
			if r.stale {
				res.staleAfter++
				res.maxStale = max(res.maxStale, r.start.Sub(returned))
			}
		}
	}
	return res, nil
}

func staleRow(name string, k staleKind, res staleResult) row {
	slices.Sort(res.mutations)
	q := func(p float64) time.Duration {
		return res.mutations[min(len(res.mutations)-1, int(p*float64(len(res.mutations))))]
	}
	rw := row{
		scenario: name,
		baseline: "—",
		p50:      ms(q(0.5)), p99: ms(q(0.99)),
		thr:   fmt.Sprintf("%d trials, %d reads on B after the mutation returned", res.trials, res.reads),
		ratio: fmt.Sprintf("%d stale reads, latest %s after the mutation returned", res.staleAfter, ms(res.maxStale)),
		note:  fmt.Sprintf("%s: the mutation's own latency on A (p50/p99 columns) includes waiting for every replica to apply it", k.name),
	}
	var pass bool
	if k.strict {
		rw.target = "0 stale reads"
		pass = res.staleAfter == 0
	} else {
		rw.target = fmt.Sprintf("stale ≤ %s after the mutation", ms(staleBound))
		pass = res.maxStale <= staleBound
		rw.note = ""
	}
	pass = pass && res.reads > 0
	rw.pass = &pass
	return rw
}

// staleKinds builds the kinds: a session's logout, a user's deactivation,
// a plan's limit and an execution's visibility (security state), a
// problem's title and a user's quota counter (display data).
func (b *run) staleKinds(ctx context.Context, apiB *api) ([]staleKind, error) {
	adminEmail := b.ds.users[0].Email
	if err := runTool(ctx, b.bin, b.serverEnv, "admin", "grant", adminEmail); err != nil {
		return nil, err
	}
	admin, err := b.api.login(ctx, adminEmail)
	if err != nil {
		return nil, err
	}
	// Unlimited executions, for the quota kind.
	if _, err := b.api.query(ctx, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Admin") { id } }`,
		map[string]any{"id": globalID("User", b.ds.users[0].ID)}, nil); err != nil {
		return nil, err
	}
	// warm reads q on B until B answers it without a DynamoDB request.
	warm := func(ctx context.Context, token, q string, vars map[string]any) error {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			r, err := apiB.do(ctx, token, encodeQuery(q, vars))
			if err != nil {
				return err
			}
			if err := r.err(); err != nil {
				return err
			}
			if r.dynamoRequests() == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("B never answered %s from its cache", q)
			}
		}
	}
	mutateA := func(ctx context.Context, token, q string, vars map[string]any) error {
		_, err := b.api.query(ctx, token, q, vars, nil)
		return err
	}
	const me = `{ me { email isActive plan { name maxExecutionsPerDay } } }`
	// Users of the data set (not the admin, users[0]) by kind and trial;
	// kinds that use a user up sign in fresh ones instead.
	user := func(kind, i int) *algoitny.User { return b.ds.users[1+(kind*37+i)%(len(b.ds.users)-1)] }
	fresh := func(kind string, i int) string {
		return fmt.Sprintf("stale-%s-%d-%d@example.com", kind, i, time.Now().UnixNano())
	}
	userID := func(ctx context.Context, token string) (string, error) {
		var out struct{ Me struct{ ID string } }
		_, err := b.api.query(ctx, token, `{ me { id } }`, nil, &out)
		return out.Me.ID, err
	}

	var logoutTokens []string
	deactivated := map[int][2]string{} // token, global user id
	var kinds []staleKind
	kinds = append(kinds, staleKind{
		name: "session logged out", strict: true,
		prepare: func(ctx context.Context, i int) error {
			token, err := b.api.login(ctx, fresh("logout", i))
			if err != nil {
				return err
			}
			logoutTokens = append(logoutTokens, token)
			return warm(ctx, token, me, nil)
		},
		mutate: func(ctx context.Context, i int) error {
			return mutateA(ctx, logoutTokens[i], `mutation { logout }`, nil)
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			r, err := apiB.do(ctx, logoutTokens[i], encodeQuery(me, nil))
			if err != nil {
				return false, err
			}
			return len(r.Errors) == 0, nil
		},
	})
	kinds = append(kinds, staleKind{
		name: "user deactivated", strict: true,
		prepare: func(ctx context.Context, i int) error {
			token, err := b.api.login(ctx, fresh("deactivate", i))
			if err != nil {
				return err
			}
			id, err := userID(ctx, token)
			if err != nil {
				return err
			}
			deactivated[i] = [2]string{token, id}
			return warm(ctx, token, me, nil)
		},
		mutate: func(ctx context.Context, i int) error {
			return mutateA(ctx, admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": deactivated[i][1]})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			r, err := apiB.do(ctx, deactivated[i][0], encodeQuery(me, nil))
			if err != nil {
				return false, err
			}
			return len(r.Errors) == 0, nil // each trial deactivates a user of its own
		},
	})
	planUser := user(2, 0)
	planToken, err := b.api.login(ctx, planUser.Email)
	if err != nil {
		return nil, err
	}
	if err := mutateA(ctx, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`, map[string]any{"id": globalID("User", planUser.ID)}); err != nil {
		return nil, err
	}
	const usage = `{ myUsage { action used limit } }`
	limitOnB := func(ctx context.Context, token string) (int, int, error) {
		var out struct {
			MyUsage []struct {
				Action      string
				Used, Limit int
			}
		}
		r, err := apiB.query(ctx, token, usage, nil, nil)
		if err != nil {
			return 0, 0, err
		}
		if err := json.Unmarshal(r.Data, &out); err != nil {
			return 0, 0, err
		}
		for _, u := range out.MyUsage {
			if u.Action == "EXECUTION" {
				return u.Used, u.Limit, nil
			}
		}
		return 0, 0, fmt.Errorf("no EXECUTION usage in %s", r.Data)
	}
	kinds = append(kinds, staleKind{
		name: "plan limit lowered", strict: true,
		prepare: func(ctx context.Context, i int) error { return warm(ctx, planToken, usage, nil) },
		mutate: func(ctx context.Context, i int) error {
			return mutateA(ctx, admin, `mutation($n: Int!) { updatePlan(name: "Pro", input: {maxExecutionsPerDay: $n}) { name } }`, map[string]any{"n": 1000 + i})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			_, limit, err := limitOnB(ctx, planToken)
			return limit != 1000+i, err
		},
	})
	// Executions: a public one of a user per trial, made private on A.
	type exec struct{ owner, id string }
	var execs []exec
	for i := range 30 {
		u := user(3, i)
		for _, h := range b.ds.histories[slices.Index(b.ds.users, u)] {
			if h.IsCodePublic {
				execs = append(execs, exec{u.Email, globalID("SearchHistory", h.UserID, h.ID)})
				break
			}
		}
	}
	ownerTokens := map[string]string{}
	const code = `query($id: ID!) { searchHistory(id: $id) { code } }`
	if len(execs) > 0 {
		kinds = append(kinds, staleKind{
			name: "execution made private", strict: true,
			prepare: func(ctx context.Context, i int) error {
				e := execs[i%len(execs)]
				if ownerTokens[e.owner] == "" {
					t, err := b.api.login(ctx, e.owner)
					if err != nil {
						return err
					}
					ownerTokens[e.owner] = t
				}
				if err := mutateA(ctx, ownerTokens[e.owner], `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: true) { id } }`, map[string]any{"id": e.id}); err != nil {
					return err
				}
				return warm(ctx, "", code, map[string]any{"id": e.id})
			},
			mutate: func(ctx context.Context, i int) error {
				e := execs[i%len(execs)]
				return mutateA(ctx, ownerTokens[e.owner], `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { id } }`, map[string]any{"id": e.id})
			},
			stale: func(ctx context.Context, i int) (bool, error) {
				r, err := apiB.do(ctx, "", encodeQuery(code, map[string]any{"id": execs[i%len(execs)].id}))
				if err != nil {
					return false, err
				}
				return strings.Contains(string(r.Data), `"code":"`), nil
			},
		})
	}
	p := b.ds.problems[len(b.ds.problems)-1]
	const title = `query($id: String!) { problem(platform: BAEKJOON, problemId: $id) { title } }`
	kinds = append(kinds, staleKind{
		name: "problem title",
		prepare: func(ctx context.Context, i int) error {
			return warm(ctx, "", title, map[string]any{"id": p.ProblemID})
		},
		mutate: func(ctx context.Context, i int) error {
			return mutateA(ctx, admin, `mutation($id: String!, $t: String!) { updateProblem(platform: BAEKJOON, problemId: $id, input: {title: $t}) { title } }`,
				map[string]any{"id": p.ProblemID, "t": fmt.Sprintf("Title %d", i)})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			r, err := apiB.do(ctx, "", encodeQuery(title, map[string]any{"id": p.ProblemID}))
			if err != nil {
				return false, err
			}
			return !strings.Contains(string(r.Data), fmt.Sprintf(`"Title %d"`, i)), nil
		},
	})
	var used int
	kinds = append(kinds, staleKind{
		name: "quota used (executeCode)",
		prepare: func(ctx context.Context, i int) error {
			if err := warm(ctx, admin, usage, nil); err != nil {
				return err
			}
			var err error
			used, _, err = limitOnB(ctx, admin)
			return err
		},
		mutate: func(ctx context.Context, i int) error {
			var out struct{ ExecuteCode struct{ ID string } }
			_, err := b.api.query(ctx, admin, `mutation($in: ExecuteCodeInput!) { executeCode(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": p.ProblemID, "language": "PYTHON", "code": aPlusBPython}}, &out)
			b.staleJobs = append(b.staleJobs, [2]string{admin, out.ExecuteCode.ID})
			return err
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			n, _, err := limitOnB(ctx, admin)
			return n == used, err
		},
	})
	return kinds, nil
}
