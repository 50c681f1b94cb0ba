package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/judge"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gorilla/websocket"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// run is one bench run: the started stack and server, the data set, and the
// rows measured so far.
type run struct {
	opts   options
	c      *cleanups
	stack  *stack
	server *proc
	base   string // http://ADDR of the API server
	api    *api
	wsURL  string
	db     *dynamo.DB
	sdk    *sdkClient
	ds     *dataset
	tokens []string // session token of each user, by index
	self   string   // this binary, for the baselines
	// bin and serverEnv start more servers (the stale scenario's replica B)
	// and tools the way the bench started its server.
	bin       string
	serverEnv []string
	// staleJobs are the jobs the stale scenario started (token, id).
	staleJobs [][2]string
	logDir    string
	rows      []row
	logf      func(string, ...any)

	profiling

	engineOnce sync.Once
	engine     *judge.Engine
	engineErr  error
}

// op is one measured operation of a closed-loop client.
type op func(ctx context.Context, worker int, r *rand.Rand) error

// load runs clients closed-loop copies of f for d (and at most maxOps
// operations in all) and returns their latencies.
func load(ctx context.Context, clients int, d time.Duration, maxOps int64, f op) *samples {
	s := &samples{}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil && n.Add(1) <= maxOps {
				t := time.Now()
				if err := f(ctx, w, r); err != nil {
					if ctx.Err() == nil {
						s.fail()
					}
					continue
				}
				s.add(time.Since(t))
			}
		}()
	}
	wg.Wait()
	s.dur = time.Since(start)
	return s
}

// compare alternates the baseline and the target in rounds (so that both
// see the same background noise) after a short warm-up of each, and
// returns the merged samples.
func (b *run) compare(ctx context.Context, clients int, base, target op, procs ...cpuProc) (*samples, *samples, cpuUse) {
	const rounds = 4
	load(ctx, clients, 500*time.Millisecond, 2000, base)
	load(ctx, clients, 500*time.Millisecond, 2000, target)
	bs, ts := &samples{}, &samples{}
	use := cpuUse{procs: append([]cpuProc{{"the server", b.server.pid()}, {"DynamoDB Local", b.stack.dynamoPid}, {"the bench (clients)", 0}}, procs...)}
	use.base, use.target = make([]time.Duration, len(use.procs)), make([]time.Duration, len(use.procs))
	cpu := func(into []time.Duration, f func()) {
		before := cpuOf(use.procs)
		f()
		for i, v := range cpuOf(use.procs) {
			into[i] += v - before[i]
		}
	}
	per := max(b.opts.duration/rounds, 250*time.Millisecond)
	for range rounds {
		cpu(use.base, func() { bs.merge(load(ctx, clients, per, b.opts.maxOps, base)) })
		cpu(use.target, func() { ts.merge(load(ctx, clients, per, b.opts.maxOps, target)) })
	}
	use.baseOps, use.targetOps = bs.ops, ts.ops
	return bs, ts, use
}

// cpuUse is the CPU time each process spent during a comparison's target
// and baseline rounds (read from /proc around each round).
type cpuUse struct {
	procs              []cpuProc
	base, target       []time.Duration
	baseOps, targetOps int
}

// perOp is the CPU time of process name per operation of the target (or
// baseline) rounds; 0 when it is not accounted or nothing ran.
func (c cpuUse) perOp(name string, target bool) time.Duration {
	use, ops := c.base, c.baseOps
	if target {
		use, ops = c.target, c.targetOps
	}
	for i, p := range c.procs {
		if p.name == name && ops > 0 {
			return use[i] / time.Duration(ops)
		}
	}
	return 0
}

// String is the note of a comparison's row: every process's CPU time per
// operation, target and baseline.
func (c cpuUse) String() string {
	perOp := func(target bool) string {
		var parts []string
		for _, p := range c.procs {
			if d := c.perOp(p.name, target); d > 0 {
				parts = append(parts, fmt.Sprintf("%s %.0f µs", p.name, float64(d.Nanoseconds())/1e3))
			}
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("CPU per operation — target: %s; baseline: %s", perOp(true), perOp(false))
}

// cpuProc names a process whose CPU time a comparison accounts (pid 0: the
// bench itself).
type cpuProc struct {
	name string
	pid  int
}

func cpuOf(procs []cpuProc) []time.Duration {
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		if p.pid == 0 {
			out[i] = selfCPU()
		} else {
			out[i] = procCPU(p.pid)
		}
	}
	return out
}

// gql returns an op that posts body (built per call by mk) and fails on
// any error.
func (b *run) gql(mk func(r *rand.Rand) (token string, body []byte)) op {
	return func(ctx context.Context, _ int, r *rand.Rand) error {
		token, body := mk(r)
		resp, err := b.api.do(ctx, token, body)
		if err != nil {
			return err
		}
		return resp.err()
	}
}

func (b *run) errNote(base, target *samples) string {
	if base.err == 0 && target.err == 0 {
		return ""
	}
	return fmt.Sprintf("errors: baseline %d, target %d", base.err, target.err)
}

func latencyRow(name, baseName string, base, target *samples, p50Max, p99Max float64) row {
	r50 := ratioOf(target.quantile(0.5), base.quantile(0.5))
	r99 := ratioOf(target.quantile(0.99), base.quantile(0.99))
	rw := row{
		scenario: name,
		baseline: fmt.Sprintf("%s: p50 %s, p99 %s", baseName, ms(base.quantile(0.5)), ms(base.quantile(0.99))),
		p50:      ms(target.quantile(0.5)), p99: ms(target.quantile(0.99)),
		thr:   fmt.Sprintf("%.0f/s (baseline %.0f/s)", target.throughput(), base.throughput()),
		ratio: fmt.Sprintf("p50 %.2f×, p99 %.2f×", r50, r99),
	}
	pass := r50 <= p50Max
	rw.target = fmt.Sprintf("p50 ≤ %.1f×", p50Max)
	if p99Max > 0 {
		rw.target += fmt.Sprintf(", p99 ≤ %.1f×", p99Max)
		pass = pass && r99 <= p99Max
	}
	pass = pass && target.err == 0 && base.err == 0 && len(target.d) > 0
	rw.pass = &pass
	return rw
}

const problemQuery = `query($p: Platform!, $id: String!) { problem(platform: $p, problemId: $id) { title testCases(first: 20) { totalCount edges { node { input output } } } } }`

// scenarioProblem: problem(platform, problemId){ testCases } against the
// same Query of the problem's test cases issued directly.
func (b *run) scenarioProblem(ctx context.Context) {
	main := b.db.Tables().Main
	base := func(ctx context.Context, _ int, r *rand.Rand) error {
		p := b.ds.problems[r.IntN(len(b.ds.problems))]
		// A page of test cases as internal/dynamo reads one with its
		// problem's partition: TESTCASE# keys, first+1+8 items, strongly
		// consistent.
		out, err := b.sdk.Query(ctx, &dynamodb.QueryInput{
			TableName:                aws.String(main),
			KeyConditionExpression:   aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
			ExpressionAttributeNames: map[string]string{"#pk": "PK", "#sk": "SK"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: "PROBLEM#" + string(p.Platform) + "#" + p.ProblemID},
				":sk": &types.AttributeValueMemberS{Value: "TESTCASE#"},
			},
			Limit: aws.Int32(29), ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(true),
		})
		if err == nil && len(out.Items) != 20 {
			err = fmt.Errorf("%d test cases", len(out.Items))
		}
		return err
	}
	target := b.gql(func(r *rand.Rand) (string, []byte) {
		p := b.ds.problems[r.IntN(len(b.ds.problems))]
		return "", encodeQuery(problemQuery, map[string]any{"p": "BAEKJOON", "id": p.ProblemID})
	})
	bs, ts, cpu := b.compare(ctx, b.opts.clients, base, b.profiled(ctx, "problem", target))
	rw := latencyRow("`problem(platform, problemId){ testCases }`", "SDK Query", bs, ts, 1.3, 1.6)
	rw.note = strings.TrimPrefix(b.errNote(bs, ts)+"; "+cpu.String(), "; ")
	if n := b.requestsOf(ctx, "", encodeQuery(problemQuery, map[string]any{"p": "BAEKJOON", "id": b.ds.problems[0].ProblemID})); n >= 0 {
		rw.note = strings.TrimPrefix(rw.note+fmt.Sprintf("; %d DynamoDB requests per GraphQL request", n), "; ")
	}
	b.rows = append(b.rows, rw)
}

// requestsOf returns the DynamoDB requests the server counted for one request.
func (b *run) requestsOf(ctx context.Context, token string, body []byte) int {
	resp, err := b.api.do(ctx, token, body)
	if err != nil || resp.err() != nil {
		return -1
	}
	return resp.dynamoRequests()
}

// scenarioTypename: the server CPU time per `{ __typename }` against stock
// gqlgen with its own query cache (`bench -baseline gqlgen`, the same
// executable schema): within 1.25× of it, with everything a request goes
// through on (the access log, metrics, request ids, the admission, limits,
// budgets and the timeout); and, for information, throughput against a
// plain net/http JSON handler. Both baselines run as processes of their own.
func (b *run) scenarioTypename(ctx context.Context) {
	const name = "`{ __typename }` server CPU per request"
	replica, prod, restore, err := b.startProductionReplica()
	if err != nil {
		b.failRow(name, err)
		return
	}
	defer replica.stop()
	defer restore()
	stock, err := b.startBaseline("gqlgen")
	if err != nil {
		b.failRow(name, err)
		return
	}
	defer stock.stop()
	target := b.profiled(ctx, "typename", typenameOp(prod))
	bs, ts, cpu := b.compare(ctx, b.opts.clients, typenameOp(stock.api), target, cpuProc{"the API replica", replica.pid()}, cpuProc{"stock gqlgen", stock.pid()})
	ours, theirs := typenameCPU(cpu)
	rssOurs, _ := rssBytes(replica.pid())
	rssTheirs, _ := rssBytes(stock.pid())
	ratio := float64(ours) / max(float64(theirs), 1)
	pass := ratio <= 1.25 && ts.err == 0 && bs.err == 0 && ours > 0 && theirs > 0
	b.rows = append(b.rows, row{
		scenario: name,
		baseline: fmt.Sprintf("stock gqlgen (handler.New + POST + LRU query cache + APQ, same schema): %s per request, %.0f req/s, p50 %s", us(theirs), bs.throughput(), ms(bs.quantile(0.5))),
		p50:      ms(ts.quantile(0.5)), p99: ms(ts.quantile(0.99)),
		thr:   fmt.Sprintf("%.0f req/s; %s per request", ts.throughput(), us(ours)),
		ratio: fmt.Sprintf("%.2f× (our CPU ÷ stock's)", ratio), target: "≤ 1.25×",
		pass: &pass, note: strings.TrimPrefix(b.errNote(bs, ts)+"; "+cpu.String()+"; per request: each process's CPU in its own rounds less its idle rate in the other's"+
			fmt.Sprintf("; VmRSS at the end: the API replica %.0f MB, stock gqlgen %.0f MB", float64(rssOurs)/(1<<20), float64(rssTheirs)/(1<<20)), "; "),
	})
	b.typenameVsPlain(ctx, replica, prod)
}

// startProductionReplica starts an API replica as production runs it
// (`serve --no-workers`, dev mode off: no devLogin, no per-request
// DynamoDB count in the extensions), beside the bench's server. When the
// typename scenario is profiled, b.pprofAddr is the replica's until
// restore is called.
func (b *run) startProductionReplica() (replica *proc, prod *api, restore func(), err error) {
	env := append(slices.Clone(b.serverEnv), "ALGOITNY_DEV=false")
	var pprofAddr string
	if b.opts.profile == "typename" {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, nil, nil, err
		}
		env = append(env, "ALGOITNY_PPROF_ADDR="+pprofAddr)
	}
	replica, err = startProc(b.c, "algoitny serve (production API replica)", env, filepath.Join(b.logDir, "replica-typename.log"), b.bin, "serve", "--no-workers")
	if err != nil {
		return nil, nil, nil, err
	}
	addr, err := replica.waitAddr(60 * time.Second)
	if err != nil {
		replica.stop()
		return nil, nil, nil, err
	}
	prod = &api{url: "http://" + addr + "/query", client: b.api.client}
	restore = func() {}
	if pprofAddr != "" {
		saved := b.pprofAddr
		b.pprofAddr = pprofAddr
		restore = func() { b.pprofAddr = saved }
	}
	return replica, prod, restore, nil
}

// typenameOp sends `{ __typename }` to a.
func typenameOp(a *api) op {
	body := encodeQuery("{ __typename }", nil)
	return func(ctx context.Context, _ int, _ *rand.Rand) error {
		resp, err := a.do(ctx, "", body)
		if err != nil {
			return err
		}
		if !bytes.Contains(resp.Data, []byte(`"Query"`)) {
			return fmt.Errorf("unexpected response (HTTP %d)", resp.Status)
		}
		return nil
	}
}

// typenameVsPlain adds the information row: the replica's `{ __typename }`
// throughput against a plain net/http JSON handler's.
func (b *run) typenameVsPlain(ctx context.Context, replica *proc, prod *api) {
	plain, err := b.startBaseline("http")
	if err != nil {
		b.failRow("`{ __typename }` throughput", err)
		return
	}
	defer plain.stop()
	bs, ts, cpu := b.compare(ctx, b.opts.clients, typenameOp(plain.api), typenameOp(prod), cpuProc{"the API replica", replica.pid()}, cpuProc{"the plain handler", plain.pid()})
	b.rows = append(b.rows, row{
		scenario: "`{ __typename }` throughput",
		baseline: fmt.Sprintf("plain net/http JSON handler: %.0f req/s, p50 %s", bs.throughput(), ms(bs.quantile(0.5))),
		p50:      ms(ts.quantile(0.5)), p99: ms(ts.quantile(0.99)),
		thr: fmt.Sprintf("%.0f req/s", ts.throughput()), ratio: fmt.Sprintf("%.2f×", ts.throughput()/max(bs.throughput(), 1e-9)), target: "— (information)",
		note: strings.TrimPrefix(b.errNote(bs, ts)+"; "+cpu.String(), "; "),
	})
}

// typenameCPU is the CPU time per request of the API replica (ours) and of
// stock gqlgen (theirs), each less what it spends idle: a process's CPU
// in the other's rounds (same length) is its background work, which the
// rounds of its own also contain.
func typenameCPU(c cpuUse) (ours, theirs time.Duration) {
	net := func(name string, own bool) time.Duration {
		i := slices.IndexFunc(c.procs, func(p cpuProc) bool { return p.name == name })
		use, idle, ops := c.target, c.base, c.targetOps
		if !own {
			use, idle, ops = c.base, c.target, c.baseOps
		}
		if i < 0 || ops == 0 {
			return 0
		}
		return max(use[i]-idle[i], 0) / time.Duration(ops)
	}
	return net("the API replica", true), net("stock gqlgen", false)
}

// baselineProc is a baseline server (`bench -baseline KIND`) and a client of it.
type baselineProc struct {
	*proc
	api *api
}

// startBaseline starts `bench -baseline kind` and waits for its address.
func (b *run) startBaseline(kind string) (*baselineProc, error) {
	p, err := startProc(b.c, "baseline "+kind, os.Environ(), filepath.Join(b.logDir, "baseline-"+kind+".log"), b.self, "-baseline", kind)
	if err != nil {
		return nil, err
	}
	addr, err := p.waitAddr(30 * time.Second)
	if err != nil {
		p.stop()
		return nil, err
	}
	return &baselineProc{proc: p, api: &api{url: "http://" + addr + "/query", client: b.api.client}}, nil
}

const historyQuery = `query($n: Int!) { publicHistory(first: $n) { edges { node { id verdict problem { title } user { name plan { name } } } } } }`

// scenarioHistory: publicHistory(first: 50){ problem user plan }: DynamoDB
// requests per GraphQL request for several page sizes, and latency against
// a raw Query of the same 50 items.
func (b *run) scenarioHistory(ctx context.Context) {
	name := "`publicHistory(first: 50){ problem user plan }`"
	counts := map[int]int{}
	var countText []string
	for _, first := range []int{10, 50, 100} {
		// One request first: the first calls of a fresh process (cold
		// DynamoDB Local tables) are not what a steady state costs.
		b.requestsOf(ctx, "", encodeQuery(historyQuery, map[string]any{"n": first}))
		for range 10 {
			n := b.requestsOf(ctx, "", encodeQuery(historyQuery, map[string]any{"n": first}))
			if b.opts.verbose {
				b.logf("publicHistory(first: %d): %d DynamoDB requests", first, n)
			}
			counts[first] = max(counts[first], n)
			if n < 0 {
				counts[first] = -1
				break
			}
		}
		countText = append(countText, fmt.Sprintf("first %d: %d", first, counts[first]))
	}
	main := b.db.Tables().Main
	base := func(ctx context.Context, _ int, _ *rand.Rand) error {
		// internal/dynamo's ListPublicHistory: the sparse GSI1 partition,
		// newest first, first+1 items.
		out, err := b.sdk.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(main), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": "GSI1PK"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "PUBLIC#true"}},
			Limit:                     aws.Int32(51), ScanIndexForward: aws.Bool(false),
		})
		if err == nil && len(out.Items) < min(51, b.ds.nPublic) {
			err = fmt.Errorf("%d items", len(out.Items))
		}
		return err
	}
	body := encodeQuery(historyQuery, map[string]any{"n": 50})
	target := b.gql(func(*rand.Rand) (string, []byte) { return "", body })
	// Cross-check with the process's own counter, under concurrency.
	m0, _ := metric(ctx, b.api.client, b.base, "algoitny_dynamodb_requests_total")
	cross := load(ctx, b.opts.clients, time.Hour, 200, target)
	m1, _ := metric(ctx, b.api.client, b.base, "algoitny_dynamodb_requests_total")
	bs, ts, cpu := b.compare(ctx, b.opts.clients, base, b.profiled(ctx, "history", target))
	rw := latencyRow(name, "raw GSI1 Query of the 50 items", bs, ts, 1.6, 0)
	worst := max(counts[10], counts[50], counts[100])
	pass := *rw.pass && worst >= 0 && worst <= 4
	rw.pass = &pass
	rw.target = "≤ 4 DynamoDB requests per request at any `first`; " + rw.target
	rw.ratio = fmt.Sprintf("%s; requests/request %s", rw.ratio, strings.Join(countText, ", "))
	// Cross-check with the process's own counter (includes warm-up requests).
	if cross.ops > 0 {
		rw.note = fmt.Sprintf("server counter (algoitny_dynamodb_requests_total) over %d requests by %d concurrent clients: %.2f DynamoDB requests per GraphQL request", cross.ops+cross.err, b.opts.clients, (m1-m0)/float64(cross.ops+cross.err))
	}
	rw.note = strings.TrimPrefix(rw.note+"; "+cpu.String(), "; ")
	if e := b.errNote(bs, ts); e != "" {
		rw.note += "; " + e
	}
	b.rows = append(b.rows, rw)
}

// scenarioUsage: myUsage (which authenticates its session, too) against
// one direct GetItem of a quota counter: within 1.6× of it. A second row
// compares the same operation with the read it makes, issued directly (one
// strongly consistent BatchGetItem of the session's logout marker, the
// user, the plan and the day's counter), which is what the server adds to
// its storage.
func (b *run) scenarioUsage(ctx context.Context) {
	tables := b.db.Tables()
	day := algoitny.UsageDay(time.Now())
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
	}
	base := func(ctx context.Context, _ int, r *rand.Rand) error {
		u := b.ds.users[r.IntN(len(b.ds.users))]
		// internal/dynamo's quota counter item of the day (keys.go quotaSK).
		_, err := b.sdk.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(tables.Main), ConsistentRead: aws.Bool(true),
			Key: key("USER#"+u.ID, "QUOTA#"+day),
		})
		return err
	}
	// The keys of internal/dynamo's AuthLookup for each user's token
	// (keys.go: userEmailPK, sessionRevokedPK, planPK, quotaSK).
	sessions := make([]map[string]types.KeysAndAttributes, len(b.tokens))
	for i, t := range b.tokens {
		c, err := tokenClaims(t)
		if err != nil {
			b.failRow("`myUsage` (session and quota read)", err)
			return
		}
		u := b.ds.users[i]
		sessions[i] = map[string]types.KeysAndAttributes{
			tables.Users: {ConsistentRead: aws.Bool(true), Keys: []map[string]types.AttributeValue{
				key("USER#"+strings.ToLower(u.Email), "METADATA"), key("SESSION#"+c.Sid, "REVOKED")}},
			tables.Plans: {ConsistentRead: aws.Bool(true), Keys: []map[string]types.AttributeValue{key("PLAN#"+c.Plan, "METADATA")}},
			tables.Main:  {ConsistentRead: aws.Bool(true), Keys: []map[string]types.AttributeValue{key("USER#"+u.ID, "QUOTA#"+day)}},
		}
	}
	sameRead := func(ctx context.Context, _ int, r *rand.Rand) error {
		out, err := b.sdk.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: sessions[r.IntN(len(sessions))]})
		if err == nil && len(out.Responses[tables.Users]) == 0 {
			err = errors.New("the user was not read")
		}
		return err
	}
	body := encodeQuery(`{ myUsage { action used limit remaining resetAt } }`, nil)
	target := b.gql(func(r *rand.Rand) (string, []byte) { return b.tokens[r.IntN(len(b.tokens))], body })
	bs, ts, cpu := b.compare(ctx, b.opts.clients, base, b.profiled(ctx, "usage", target))
	rw := latencyRow("`myUsage` (session and quota read)", "one direct GetItem", bs, ts, 1.6, 0)
	rw.note = strings.TrimPrefix(b.errNote(bs, ts)+"; "+cpu.String(), "; ")
	if n := b.requestsOf(ctx, b.tokens[0], body); n >= 0 {
		rw.note += fmt.Sprintf("; %d DynamoDB requests in the operation (the session, its user and plan and the day's quota counter in one strongly consistent BatchGetItem)", n)
	}
	b.rows = append(b.rows, rw)
	bs, ts, cpu = b.compare(ctx, b.opts.clients, sameRead, target)
	rw = latencyRow("`myUsage` against its own read", "the same BatchGetItem issued directly", bs, ts, 1.6, 0)
	rw.note = strings.TrimPrefix(b.errNote(bs, ts)+"; "+cpu.String(), "; ")
	b.rows = append(b.rows, rw)
}

// tokenClaims reads the claims of a session token the bench's server
// issued (internal/auth's Claims), without checking its signature.
func tokenClaims(token string) (struct{ Sid, Plan string }, error) {
	var c struct{ Sid, Plan string }
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("not a JWS compact token: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(payload, &c)
}

func (b *run) judgeEngine() (*judge.Engine, error) {
	b.engineOnce.Do(func() {
		b.engine, b.engineErr = judge.New(judge.Config{})
		if b.engineErr == nil {
			b.c.add(func() { b.engine.Close() })
		}
	})
	return b.engine, b.engineErr
}

const aPlusBC = "#include <stdio.h>\nint main(void) { long long a, b; if (scanf(\"%lld %lld\", &a, &b) != 2) return 1; printf(\"%lld\\n\", a + b); return 0; }\n"

// scenarioJudge: one test of a trivial C program through the judge
// (the worker slot's held sandbox, supervisor, limits, cgroup accounting,
// checker) against the same binary run directly, alternating.
func (b *run) scenarioJudge(ctx context.Context) {
	name := "judge: trivial C program, one test"
	e, err := b.judgeEngine()
	if err != nil {
		b.failRow(name, err)
		return
	}
	prog, err := e.Compile(ctx, "c", aPlusBC)
	if err != nil {
		b.failRow(name, err)
		return
	}
	defer prog.Close()
	direct, err := compileDirect(ctx, b.logDir, "c", aPlusBC)
	if err != nil {
		b.failRow(name, err)
		return
	}
	in, want := []byte("20 22\n"), []byte("42\n")
	bare, sandboxed := &samples{}, &samples{}
	deadline := time.Now().Add(max(b.opts.duration, 5*time.Second))
	for i := 0; i < b.opts.judgeRuns && time.Now().Before(deadline); i++ {
		t := time.Now()
		cmd := exec.CommandContext(ctx, direct)
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, want) {
			bare.fail()
		} else {
			bare.add(time.Since(t))
		}
		t = time.Now()
		res, err := e.Judge(ctx, judge.Submission{Program: prog, Tests: []judge.TestCase{{Input: in, Expected: want}}}, nil)
		if err != nil || res.Verdict != judge.Accepted {
			sandboxed.fail()
		} else {
			sandboxed.add(time.Since(t))
		}
	}
	over := sandboxed.quantile(0.5) - bare.quantile(0.5)
	pass := over <= 3*time.Millisecond && sandboxed.err == 0 && bare.err == 0 && len(sandboxed.d) > 0
	b.rows = append(b.rows, row{
		scenario: name,
		baseline: fmt.Sprintf("same binary via os/exec: p50 %s, p99 %s", ms(bare.quantile(0.5)), ms(bare.quantile(0.99))),
		p50:      ms(sandboxed.quantile(0.5)), p99: ms(sandboxed.quantile(0.99)),
		thr:    fmt.Sprintf("%d runs, one at a time", len(sandboxed.d)),
		ratio:  fmt.Sprintf("bare + %s (p50), + %s (p99)", ms(over), ms(sandboxed.quantile(0.99)-bare.quantile(0.99))),
		target: "≤ bare + 3 ms", pass: &pass, note: b.errNote(bare, sandboxed),
	})
}

// compileDirect builds source on the host with the language's own compile
// command (judge.DefaultLanguages) and returns the executable.
func compileDirect(ctx context.Context, dir, lang, source string) (string, error) {
	var l judge.Language
	for _, dl := range judge.DefaultLanguages() {
		if dl.ID == lang {
			l = dl
		}
	}
	if len(l.Compile) == 0 {
		return "", fmt.Errorf("language %s has no compile command", lang)
	}
	d, err := os.MkdirTemp(dir, "direct-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(d, l.SourceFile), []byte(source), 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, l.Compile[0], l.Compile[1:]...)
	cmd.Dir = d
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return filepath.Join(d, "main"), nil
}

// benchArgs is the trivial River job of the insert→start scenario; it
// carries its insert time.
type benchArgs struct {
	InsertedAt int64 `json:"inserted_at"`
}

func (benchArgs) Kind() string { return "bench_noop" }

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	started chan time.Duration
}

func (w *benchWorker) Work(ctx context.Context, job *river.Job[benchArgs]) error {
	select {
	case w.started <- time.Since(time.Unix(0, job.Args.InsertedAt)):
	default:
	}
	return nil
}

// scenarioRiver: River job insert → worker start with a configured
// FetchCooldown, through LISTEN/NOTIFY and (for information) polling only.
func (b *run) scenarioRiver(ctx context.Context) {
	schema := b.stack.riverSchema + "_direct"
	if _, err := jobs.Migrate(ctx, b.stack.pool, schema); err != nil {
		b.failRow("River insert → worker start", err)
		return
	}
	const cooldown = 50 * time.Millisecond
	variants := []struct {
		name             string
		gapMin, gapMax   time.Duration
		poll             time.Duration
		pollOnly, target bool
		jobs             int
	}{
		// Inserts at least a cooldown apart: every insert notifies (River
		// limits insert notifications to one per FetchCooldown), and the 5 s
		// poll never is what starts a job.
		{"LISTEN/NOTIFY, inserts ≥ 1 cooldown apart", cooldown, 2 * cooldown, 5 * time.Second, false, true, b.opts.riverJobs},
		// Inserts closer than the cooldown: River drops the notification of
		// the second insert, which then waits for a poll (1 s, River's and
		// the server's default FetchPollInterval).
		{"LISTEN/NOTIFY, bursts (inserts 0–1 cooldown apart), 1 s poll", 0, cooldown, time.Second, false, false, min(b.opts.riverJobs, 40)},
		{"poll only, 200 ms interval", cooldown, 2 * cooldown, 200 * time.Millisecond, true, false, min(b.opts.riverJobs, 40)},
	}
	for _, v := range variants {
		name := "River job insert → worker start (" + v.name + ")"
		s, err := b.riverLatency(ctx, schema, cooldown, v.poll, v.pollOnly, v.gapMin, v.gapMax, v.jobs)
		if err != nil {
			b.failRow(name, err)
			continue
		}
		p95 := s.quantile(0.95)
		rw := row{
			scenario: name, baseline: fmt.Sprintf("FetchCooldown %s", cooldown),
			p50: ms(s.quantile(0.5)), p99: ms(s.quantile(0.99)),
			thr:   fmt.Sprintf("%d jobs, one at a time", len(s.d)),
			ratio: fmt.Sprintf("p95 %s = %.2f× cooldown", ms(p95), ratioOf(p95, cooldown)),
		}
		if v.target {
			pass := ratioOf(p95, cooldown) <= 1.5 && s.err == 0 && len(s.d) > 0
			rw.target, rw.pass = "p95 ≤ 1.5× cooldown", &pass
		}
		if s.err > 0 {
			rw.note = fmt.Sprintf("%d jobs did not start within 10 s", s.err)
		}
		b.rows = append(b.rows, rw)
	}
}

func (b *run) riverLatency(ctx context.Context, schema string, cooldown, poll time.Duration, pollOnly bool, gapMin, gapMax time.Duration, jobs int) (*samples, error) {
	w := &benchWorker{started: make(chan time.Duration, 1)}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, err
	}
	client, err := river.NewClient(riverpgxv5.New(b.stack.pool), &river.Config{
		Schema: schema, Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		FetchCooldown: cooldown, FetchPollInterval: poll, PollOnly: pollOnly,
		Logger: discardLogger(),
	})
	if err != nil {
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	}()
	s := &samples{}
	r := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; i < jobs+5 && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		// A random gap, so that inserts do not line up with the fetch timers.
		time.Sleep(gapMin + time.Duration(r.Int64N(int64(gapMax-gapMin)+1)))
		if _, err := client.Insert(ctx, benchArgs{InsertedAt: time.Now().UnixNano()}, nil); err != nil {
			return nil, err
		}
		select {
		case d := <-w.started:
			if i >= 5 { // the first jobs warm up the producer
				s.add(d)
			}
		case <-time.After(10 * time.Second):
			s.fail()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s, nil
}

const executeMutation = `mutation($in: ExecuteCodeInput!) { executeCode(input: $in) { id status } }`
const jobUpdated = `subscription($id: ID!) { jobUpdated(id: $id) { job { id status history { verdict passedCount } } progress { step } } }`

// scenarioExecute: executeCode → the COMPLETED event of jobUpdated for a
// 10-test Python A+B, against judging the same 10 tests with the judge API.
func (b *run) scenarioExecute(ctx context.Context) {
	name := "`executeCode` → COMPLETED event (Python A+B, 10 tests)"
	e, err := b.judgeEngine()
	if err != nil {
		b.failRow(name, err)
		return
	}
	_, tests, err := b.db.GetProblemWithTestCases(ctx, b.ds.ab10)
	if err != nil {
		b.failRow(name, err)
		return
	}
	sub := judge.Submission{Language: "python", Source: aPlusBPython, Limits: judge.Limits{CPUTime: 2 * time.Second, MemoryBytes: 256 << 20}}
	for _, tc := range tests {
		sub.Tests = append(sub.Tests, judge.TestCase{ID: tc.ID, Input: []byte(tc.Input), Expected: []byte(tc.Output)})
	}
	token := b.tokens[1%len(b.tokens)]
	ws, err := dialWS(ctx, b.wsURL, token)
	if err != nil {
		b.failRow(name, err)
		return
	}
	defer ws.close()
	// Like with like: the server's judge warms every language when its
	// workers start (Go's standard packages on a fresh machine: tens of
	// seconds on two busy cores), holding judge slots and CPU that the
	// bench's own engine has to itself.
	b.waitJudgeWarm(ctx)
	direct, server, accept := &samples{}, &samples{}, &samples{}
	in := map[string]any{"in": map[string]any{"platform": "BAEKJOON", "problemId": b.ds.ab10.ProblemID, "language": "PYTHON", "code": aPlusBPython}}
	deadline := time.Now().Add(max(3*b.opts.duration, 30*time.Second))
	for i := 0; i < b.opts.executeRuns+1 && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		t := time.Now()
		res, err := e.Judge(ctx, sub, nil)
		if err != nil || res.Verdict != judge.Accepted {
			direct.fail()
		} else if i > 0 {
			direct.add(time.Since(t))
		}
		d, a, err := b.executeOnce(ctx, ws, token, fmt.Sprint("e", i), in)
		if err != nil {
			server.fail()
			b.logf("execute: %v", err)
		} else if i > 0 { // the first run warms up both
			server.add(d)
			accept.add(a)
		}
	}
	limit := time.Duration(float64(direct.quantile(0.5))*1.05) + 20*time.Millisecond
	pass := server.quantile(0.5) <= limit && server.err == 0 && direct.err == 0 && len(server.d) > 0
	b.rows = append(b.rows, row{
		scenario: name,
		baseline: fmt.Sprintf("judge API, same 10 tests (compile + run): p50 %s, p99 %s", ms(direct.quantile(0.5)), ms(direct.quantile(0.99))),
		p50:      ms(server.quantile(0.5)), p99: ms(server.quantile(0.99)),
		thr:    fmt.Sprintf("%d jobs, one at a time", len(server.d)),
		ratio:  fmt.Sprintf("p50 %.2f× (limit 1.05× + 20 ms = %s)", ratioOf(server.quantile(0.5), direct.quantile(0.5)), ms(limit)),
		target: "≤ 1.05× + 20 ms", pass: &pass,
		note: fmt.Sprintf("the executeCode mutation itself (quota transaction, job record, River insert): p50 %s, p99 %s%s",
			ms(accept.quantile(0.5)), ms(accept.quantile(0.99)), prefixed("; ", b.errNote(direct, server))),
	})
}

// waitJudgeWarm waits (up to 5 minutes) until the server's judge has
// warmed its languages (algoitny_judge_warming is 0).
func (b *run) waitJudgeWarm(ctx context.Context) {
	start := time.Now()
	for time.Since(start) < 5*time.Minute && ctx.Err() == nil {
		v, err := metric(ctx, b.api.client, b.base, "algoitny_judge_warming")
		if err != nil || v == 0 {
			break // an older server without the gauge: nothing to wait for
		}
		time.Sleep(200 * time.Millisecond)
	}
	if d := time.Since(start); d > time.Second {
		b.logf("  waited %s for the server's judge warm-up", d.Round(time.Millisecond))
	}
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// executeOnce submits an execution and waits for its final event; it
// returns the time to the final event and the mutation's own latency.
func (b *run) executeOnce(ctx context.Context, ws *wsClient, token, subID string, in map[string]any) (time.Duration, time.Duration, error) {
	t := time.Now()
	var out struct{ ExecuteCode struct{ ID, Status string } }
	if _, err := b.api.query(ctx, token, executeMutation, in, &out); err != nil {
		return 0, 0, err
	}
	accepted := time.Since(t)
	ch, err := ws.subscribe(subID, jobUpdated, map[string]any{"id": out.ExecuteCode.ID})
	if err != nil {
		return 0, 0, err
	}
	defer ws.forget(subID)
	for {
		m, err := ws.next(ch, 60*time.Second)
		if err != nil {
			return 0, 0, err
		}
		if m.Type == "complete" {
			return 0, 0, errors.New("the subscription completed without a final event")
		}
		var ev struct {
			Data struct {
				JobUpdated struct{ Job struct{ Status string } }
			}
		}
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			return 0, 0, fmt.Errorf("job event %s: %w", m.Payload, err)
		}
		switch st := ev.Data.JobUpdated.Job.Status; st {
		case "COMPLETED":
			return m.at.Sub(t), accepted, nil
		case "FAILED", "CANCELLED":
			return 0, 0, fmt.Errorf("job %s", st)
		}
	}
}

func (b *run) failRow(name string, err error) {
	b.logf("%s: %v", name, err)
	f := false
	b.rows = append(b.rows, row{scenario: name, pass: &f, note: "did not run: " + firstLine(err.Error())})
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// dialMany opens n sockets with bounded parallelism.
func dialMany(ctx context.Context, n int, dial func() (*websocket.Conn, *wsClient, error)) ([]*websocket.Conn, []*wsClient, error) {
	raws := make([]*websocket.Conn, n)
	clients := make([]*wsClient, n)
	err := parallel(ctx, 16, n, func(i int) error {
		var err error
		raws[i], clients[i], err = dial()
		return err
	})
	return raws, clients, err
}

// closeAll closes every socket.
func closeAll(raws []*websocket.Conn, clients []*wsClient) {
	for _, c := range raws {
		if c != nil {
			_ = c.Close()
		}
	}
	for _, c := range clients {
		if c != nil {
			c.close()
		}
	}
}

var _ = http.MethodGet
