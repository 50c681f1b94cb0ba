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
// of data a writer makes a change on A while a reader on B reads it in a
// tight loop, with the bench's clients loading both replicas; a read on B
// that began after A's mutation returned and still shows the old value is
// stale. Security state (read from DynamoDB on use) must show none;
// display data (kept per replica) at most ALGOITNY_CACHE_BOUND, 1 s.

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
		_, _ = b.api.query(ctx, j[0], `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": j[1]}, nil)
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
		note:  fmt.Sprintf("%s: the p50/p99 columns are the mutation's own latency on A", k.name),
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
	env, err := b.newStaleEnv(ctx, apiB)
	if err != nil {
		return nil, err
	}
	kinds := []staleKind{env.logoutKind(), env.deactivateKind()}
	plan, err := env.planKind(ctx)
	if err != nil {
		return nil, err
	}
	kinds = append(kinds, plan)
	if private, ok := env.privateKind(); ok {
		kinds = append(kinds, private)
	}
	return append(kinds, env.titleKind(), env.quotaKind()), nil
}

// staleEnv is what the kinds share: the run (server A), replica B and an
// admin's token.
type staleEnv struct {
	b     *run
	apiB  *api
	admin string
}

// The queries the kinds read on B.
const (
	staleMe    = `{ me { email isActive plan { name maxExecutionsPerDay } } }`
	staleUsage = `{ myUsage { action used limit } }`
	staleCode  = `query($id: ID!) { searchHistory(id: $id) { code } }`
	staleTitle = `query($id: String!) { problem(platform: BAEKJOON, problemId: $id) { title } }`
)

// newStaleEnv makes users[0] an admin with unlimited executions (for the
// quota kind) and signs it in.
func (b *run) newStaleEnv(ctx context.Context, apiB *api) (*staleEnv, error) {
	adminEmail := b.ds.users[0].Email
	if err := runTool(ctx, b.bin, b.serverEnv, "admin", "grant", adminEmail); err != nil {
		return nil, err
	}
	admin, err := b.api.login(ctx, adminEmail)
	if err != nil {
		return nil, err
	}
	if _, err := b.api.query(ctx, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Admin") { id } }`,
		map[string]any{"id": globalID("User", b.ds.users[0].ID)}, nil); err != nil {
		return nil, err
	}
	return &staleEnv{b: b, apiB: apiB, admin: admin}, nil
}

// seen reads q on B once: B has acted on the value the trial changes
// (security state is read from DynamoDB on every request; nothing of it
// stays behind on B).
func (env *staleEnv) seen(ctx context.Context, token, q string, vars map[string]any) error {
	r, err := env.apiB.do(ctx, token, encodeQuery(q, vars))
	if err != nil {
		return err
	}
	return r.err()
}

// warm reads q (display data) on B until B answers it without a DynamoDB
// request: the old value is in B's memory.
func (env *staleEnv) warm(ctx context.Context, token, q string, vars map[string]any) error {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r, err := env.apiB.do(ctx, token, encodeQuery(q, vars))
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

// mutateA runs a mutation on A.
func (env *staleEnv) mutateA(ctx context.Context, token, q string, vars map[string]any) error {
	_, err := env.b.api.query(ctx, token, q, vars, nil)
	return err
}

// user returns a user of the data set (not the admin, users[0]) for a
// kind's trial; kinds that use a user up sign in fresh ones instead.
func (env *staleEnv) user(kind, i int) *algoitny.User {
	users := env.b.ds.users
	return users[1+(kind*37+i)%(len(users)-1)]
}

// fresh returns the email of a new user for a kind's trial.
func fresh(kind string, i int) string {
	return fmt.Sprintf("stale-%s-%d-%d@example.com", kind, i, time.Now().UnixNano())
}

// userID returns the global id of the token's user.
func (env *staleEnv) userID(ctx context.Context, token string) (string, error) {
	var out struct{ Me struct{ ID string } }
	_, err := env.b.api.query(ctx, token, `{ me { id } }`, nil, &out)
	return out.Me.ID, err
}

// executionsOnB returns what B says of the token's EXECUTION quota: used
// and limit.
func (env *staleEnv) executionsOnB(ctx context.Context, token string) (int, int, error) {
	var out struct {
		MyUsage []struct {
			Action      string
			Used, Limit int
		}
	}
	r, err := env.apiB.query(ctx, token, staleUsage, nil, nil)
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

// signedInOnB reports whether B still answers staleMe for token.
func (env *staleEnv) signedInOnB(ctx context.Context, token string) (bool, error) {
	r, err := env.apiB.do(ctx, token, encodeQuery(staleMe, nil))
	if err != nil {
		return false, err
	}
	return len(r.Errors) == 0, nil
}

// logoutKind: a fresh user's session per trial, logged out on A.
func (env *staleEnv) logoutKind() staleKind {
	var tokens []string
	return staleKind{
		name: "session logged out", strict: true,
		prepare: func(ctx context.Context, i int) error {
			token, err := env.b.api.login(ctx, fresh("logout", i))
			if err != nil {
				return err
			}
			tokens = append(tokens, token)
			return env.seen(ctx, token, staleMe, nil)
		},
		mutate: func(ctx context.Context, i int) error {
			return env.mutateA(ctx, tokens[i], `mutation { logout }`, nil)
		},
		stale: func(ctx context.Context, i int) (bool, error) { return env.signedInOnB(ctx, tokens[i]) },
	}
}

// deactivateKind: a fresh user per trial, deactivated on A by the admin.
func (env *staleEnv) deactivateKind() staleKind {
	deactivated := map[int][2]string{} // token, global user id
	return staleKind{
		name: "user deactivated", strict: true,
		prepare: func(ctx context.Context, i int) error {
			token, err := env.b.api.login(ctx, fresh("deactivate", i))
			if err != nil {
				return err
			}
			id, err := env.userID(ctx, token)
			if err != nil {
				return err
			}
			deactivated[i] = [2]string{token, id}
			return env.seen(ctx, token, staleMe, nil)
		},
		mutate: func(ctx context.Context, i int) error {
			return env.mutateA(ctx, env.admin, `mutation($id: ID!) { setUserActive(userId: $id, active: false) { id } }`, map[string]any{"id": deactivated[i][1]})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			return env.signedInOnB(ctx, deactivated[i][0]) // each trial deactivates a user of its own
		},
	}
}

// planKind: a user on the Pro plan, whose limit the admin changes on A.
func (env *staleEnv) planKind(ctx context.Context) (staleKind, error) {
	planUser := env.user(2, 0)
	planToken, err := env.b.api.login(ctx, planUser.Email)
	if err != nil {
		return staleKind{}, err
	}
	if err := env.mutateA(ctx, env.admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Pro") { id } }`, map[string]any{"id": globalID("User", planUser.ID)}); err != nil {
		return staleKind{}, err
	}
	return staleKind{
		name: "plan limit lowered", strict: true,
		prepare: func(ctx context.Context, i int) error { return env.seen(ctx, planToken, staleUsage, nil) },
		mutate: func(ctx context.Context, i int) error {
			return env.mutateA(ctx, env.admin, `mutation($n: Int!) { updatePlan(name: "Pro", input: {maxExecutionsPerDay: $n}) { name } }`, map[string]any{"n": 1000 + i})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			_, limit, err := env.executionsOnB(ctx, planToken)
			return limit != 1000+i, err
		},
	}, nil
}

// privateKind: a public execution of a user per trial, made private on A
// by its owner; ok is false when the data set has no public execution.
func (env *staleEnv) privateKind() (staleKind, bool) {
	type exec struct{ owner, id string }
	var execs []exec
	for i := range 30 {
		u := env.user(3, i)
		for _, h := range env.b.ds.histories[slices.Index(env.b.ds.users, u)] {
			if h.IsCodePublic {
				execs = append(execs, exec{u.Email, globalID("SearchHistory", h.UserID, h.ID)})
				break
			}
		}
	}
	if len(execs) == 0 {
		return staleKind{}, false
	}
	ownerTokens := map[string]string{}
	return staleKind{
		name: "execution made private", strict: true,
		prepare: func(ctx context.Context, i int) error {
			e := execs[i%len(execs)]
			if ownerTokens[e.owner] == "" {
				t, err := env.b.api.login(ctx, e.owner)
				if err != nil {
					return err
				}
				ownerTokens[e.owner] = t
			}
			if err := env.mutateA(ctx, ownerTokens[e.owner], `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: true) { id } }`, map[string]any{"id": e.id}); err != nil {
				return err
			}
			return env.seen(ctx, "", staleCode, map[string]any{"id": e.id})
		},
		mutate: func(ctx context.Context, i int) error {
			e := execs[i%len(execs)]
			return env.mutateA(ctx, ownerTokens[e.owner], `mutation($id: ID!) { setHistoryVisibility(id: $id, isCodePublic: false) { id } }`, map[string]any{"id": e.id})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			r, err := env.apiB.do(ctx, "", encodeQuery(staleCode, map[string]any{"id": execs[i%len(execs)].id}))
			if err != nil {
				return false, err
			}
			return strings.Contains(string(r.Data), `"code":"`), nil
		},
	}, true
}

// titleKind: the last problem's title, changed on A by the admin.
func (env *staleEnv) titleKind() staleKind {
	p := env.b.ds.problems[len(env.b.ds.problems)-1]
	return staleKind{
		name: "problem title",
		prepare: func(ctx context.Context, i int) error {
			return env.warm(ctx, "", staleTitle, map[string]any{"id": p.ProblemID})
		},
		mutate: func(ctx context.Context, i int) error {
			return env.mutateA(ctx, env.admin, `mutation($id: String!, $t: String!) { updateProblem(platform: BAEKJOON, problemId: $id, input: {title: $t}) { title } }`,
				map[string]any{"id": p.ProblemID, "t": fmt.Sprintf("Title %d", i)})
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			r, err := env.apiB.do(ctx, "", encodeQuery(staleTitle, map[string]any{"id": p.ProblemID}))
			if err != nil {
				return false, err
			}
			return !strings.Contains(string(r.Data), fmt.Sprintf(`"Title %d"`, i)), nil
		},
	}
}

// quotaKind: the admin's quota counter, charged by an executeCode on A.
func (env *staleEnv) quotaKind() staleKind {
	p := env.b.ds.problems[len(env.b.ds.problems)-1]
	var used int
	return staleKind{
		name: "quota used (executeCode)",
		prepare: func(ctx context.Context, i int) error {
			if err := env.seen(ctx, env.admin, staleUsage, nil); err != nil {
				return err
			}
			var err error
			used, _, err = env.executionsOnB(ctx, env.admin)
			return err
		},
		mutate: func(ctx context.Context, i int) error {
			var out struct{ ExecuteCode struct{ ID string } }
			_, err := env.b.api.query(ctx, env.admin, `mutation($in: ExecuteCodeInput!) { executeCode(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": p.ProblemID, "language": "PYTHON", "code": aPlusBPython}}, &out)
			env.b.staleJobs = append(env.b.staleJobs, [2]string{env.admin, out.ExecuteCode.ID})
			return err
		},
		stale: func(ctx context.Context, i int) (bool, error) {
			n, _, err := env.executionsOnB(ctx, env.admin)
			return n == used, err
		},
	}
}
