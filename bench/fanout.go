package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/gorilla/websocket"
)

// fanQuery is what a user's page follows of its job.
const fanQuery = `subscription($id: ID!) { jobUpdated(id: $id) { job { id status type updatedAt } progress { step } } }`

// scenarioFanout: live events as they reach users. For each N of
// -subscribers, N websockets of about N/2 users, each user following a job
// of their own from 1, 2 or 3 sockets (a tab, a second tab, a phone: a job
// has 1–3 watchers), and a burst of events: every job ends at once, its
// CANCELLED state published on the server's channel as a worker publishes
// it (jobs.Events.PublishJob). Each socket's receipt of its job's event is
// timed from the event's publication; the server's CPU time over the
// rounds is divided by the deliveries.
//
// The baseline is a raw gorilla broadcast to N sockets of its own of the
// frames the server wrote (`bench -baseline broadcast`), timed from the
// arrival of its NOTIFY: the cost of writing the bytes alone. Rounds
// alternate (baseline, target, …). The largest N also measures the
// server's memory per idle subscriber (against a bare gorilla echo
// connection) and the DynamoDB requests of a burst.
func (b *run) scenarioFanout(ctx context.Context) {
	sizes := slices.Clone(b.opts.subscribers)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	fb, stop, err := b.startFanBase()
	if err != nil {
		b.failRow(fanName(sizes[0]), err)
		return
	}
	defer stop()
	broker, err := pubsub.NewPostgres(ctx, pubsub.PostgresConfig{Pool: b.stack.pool, Channel: b.stack.channel, Logger: discardLogger()})
	if err != nil {
		b.failRow(fanName(sizes[0]), err)
		return
	}
	defer broker.Close()
	events := &jobs.Events{Broker: broker, Store: b.db, Logger: discardLogger()}
	var phases []*fanPhase
	var mem *fanMemory
	for i, n := range slices.Backward(sizes) {
		ph, m, err := b.fanPhase(ctx, fb, events, n, i == len(sizes)-1)
		if err != nil {
			b.failRow(fanName(n), err)
			return
		}
		phases = append(phases, ph)
		if m != nil {
			mem = m
		}
	}
	b.mergeDeliveries("fanout")
	slices.Reverse(phases)
	for _, ph := range phases {
		b.rows = append(b.rows, b.fanRows(ph)...)
	}
	if mem != nil {
		b.fanMemoryRows(ctx, mem)
	}
}

// fanName names the rows of the fan-out to n subscribers.
func fanName(n int) string {
	return fmt.Sprintf("fan-out: a burst of job events to %d websockets of %d users", n, fanUsers(n))
}

// fanOwners returns the user of each of n sockets: user u follows its job
// from 1 + u mod 3 sockets.
func fanOwners(n int) []int {
	owners := make([]int, 0, n)
	for u := 0; len(owners) < n; u++ {
		for k := 0; k <= u%3 && len(owners) < n; k++ {
			owners = append(owners, u)
		}
	}
	return owners
}

// fanUsers returns the number of users of n sockets.
func fanUsers(n int) int { return fanOwners(n)[n-1] + 1 }

// fanout is one phase's sockets and their users.
type fanout struct {
	users   []fanUser
	clients []*wsClient
	owner   []int // each socket's user
}

type fanUser struct{ id, token string }

// fanRound is one burst delivered to every socket.
type fanRound struct {
	fromPublish *samples      // the event's publication → received, per socket
	cpu         time.Duration // the server's CPU time during the burst
	requests    float64       // DynamoDB requests of the server during the burst
	frames      [][]byte      // what the first socket received: the event, then its completion
}

// fanPhase is the fan-out to n sockets: the server's rounds and the
// baseline's, alternated.
type fanPhase struct {
	n, users, rounds   int
	server, base       *samples
	serverP95, baseP95 *samples // each round's p95
	serverCPU, baseCPU time.Duration
	deliveries         int
	baseDeliveries     int
}

// fanSockets signs in the users of n sockets (devLogin) and opens their
// sockets.
func (b *run) fanSockets(ctx context.Context, n int) (*fanout, error) {
	owner := fanOwners(n)
	f := &fanout{users: make([]fanUser, owner[n-1]+1), clients: make([]*wsClient, n), owner: owner}
	err := parallel(ctx, 8, len(f.users), func(u int) error {
		email := fmt.Sprintf("fan-%d@bench.local", u)
		token, err := b.api.login(ctx, email)
		if err != nil {
			return err
		}
		user, err := b.db.GetUserByEmail(ctx, email)
		if err != nil {
			return err
		}
		f.users[u] = fanUser{id: user.ID, token: token}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	err = parallel(ctx, 16, n, func(i int) error {
		var err error
		f.clients[i], err = dialWS(ctx, b.wsURL, f.users[owner[i]].token)
		return err
	})
	if err != nil {
		closeAll(nil, f.clients)
		return nil, fmt.Errorf("dial: %w", err)
	}
	return f, nil
}

// fanPhase opens n sockets to the server and n to the baseline, then
// alternates baseline and server rounds. With extra it also measures the
// idle server's memory per subscriber and the DynamoDB requests of a burst.
func (b *run) fanPhase(ctx context.Context, fb *fanBase, events *jobs.Events, n int, extra bool) (*fanPhase, *fanMemory, error) {
	mem0 := b.goMemory(ctx) // a forced GC first, then the process's RSS
	rss0, _ := rssBytes(b.server.pid())
	f, err := b.fanSockets(ctx, n)
	if err != nil {
		return nil, nil, err
	}
	defer closeAll(nil, f.clients)
	// First an unmeasured round that holds every socket subscribed and idle
	// (for the memory measurement) and shows what the server writes.
	var mem *fanMemory
	idle := func() {}
	if extra {
		mem = &fanMemory{n: n}
		idle = func() { b.measureIdle(ctx, mem, rss0, mem0) }
	}
	fr, err := b.fanRound(ctx, f, events, "idle", idle, false)
	if err != nil {
		return nil, nil, err
	}
	if err := fb.open(ctx, n, fr.frames); err != nil {
		return nil, nil, fmt.Errorf("baseline: %w", err)
	}
	defer fb.closeSockets()
	ph, err := b.fanMeasure(ctx, fb, f, events, mem)
	return ph, mem, err
}

// fanMeasure alternates baseline and server rounds and returns the phase;
// with mem it records the fewest DynamoDB requests of a burst.
func (b *run) fanMeasure(ctx context.Context, fb *fanBase, f *fanout, events *jobs.Events, mem *fanMemory) (*fanPhase, error) {
	n := len(f.clients)
	ph := &fanPhase{n: n, users: len(f.users), rounds: max(3, b.opts.fanRounds), server: &samples{}, base: &samples{},
		serverP95: &samples{}, baseP95: &samples{}}
	for r := range ph.rounds {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cpu0 := procCPU(fb.pid)
		base, err := fb.round(ctx, fmt.Sprintf("n%d-r%d", n, r))
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		ph.baseCPU += procCPU(fb.pid) - cpu0
		ph.baseDeliveries += base.ops
		ph.base.merge(base)
		ph.baseP95.add(base.quantile(0.95))
		fr, err := b.fanRound(ctx, f, events, fmt.Sprint("f", r), nil, true)
		if err != nil {
			return nil, err
		}
		d := fr.fromPublish
		b.logf("fan-out to %d, round %d: baseline p50 %s p95 %s; server p50 %s p95 %s last %s, %s CPU", n, r,
			ms(base.quantile(0.5)), ms(base.quantile(0.95)), ms(d.quantile(0.5)), ms(d.quantile(0.95)), ms(d.quantile(1)), ms(fr.cpu))
		ph.server.merge(d)
		ph.serverP95.add(d.quantile(0.95))
		ph.serverCPU += fr.cpu
		ph.deliveries += d.ops
		if mem != nil && (r == 0 || fr.requests < mem.requests) {
			// The fewest of the rounds: the server's periodic sweeps add
			// requests to whichever round they fall in.
			mem.requests = fr.requests
		}
	}
	if mem != nil {
		mem.events = len(f.users)
	}
	return ph, nil
}

// fanRound creates a pending job for every user, subscribes every socket
// to its user's job and waits for the initial events, runs idle (if set),
// then publishes every job's end at once and times each socket's receipt
// of its job's CANCELLED event from its publication. Only measured rounds
// are profiled (-profile fanout).
func (b *run) fanRound(ctx context.Context, f *fanout, events *jobs.Events, subID string, idle func(), measured bool) (*fanRound, error) {
	jobs, err := b.fanJobs(ctx, f)
	if err != nil {
		return nil, err
	}
	if err := parallel(ctx, 32, len(f.clients), func(i int) error {
		ch, err := f.clients[i].subscribe(subID, fanQuery, map[string]any{"id": globalID("Job", jobs[f.owner[i]].ID)})
		if err == nil {
			_, err = f.clients[i].next(ch, 60*time.Second) // the current state
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	if idle != nil {
		idle()
	}
	time.Sleep(200 * time.Millisecond)
	m0, err := metric(ctx, b.api.client, b.base, "algoitny_dynamodb_requests_total")
	if err != nil {
		return nil, err
	}
	col := listenAll(f.clients, subID)
	defer func() {
		for _, c := range f.clients {
			c.forget(subID)
		}
	}()
	go col.collect()
	stopProfile := b.deliveryProfile(ctx, "fanout", measured && len(f.clients) > 10)
	cpu0 := procCPU(b.server.pid())
	published := b.fanPublish(ctx, events, jobs)
	<-col.done
	cpu := procCPU(b.server.pid()) - cpu0
	stopProfile()
	m1, err := metric(ctx, b.api.client, b.base, "algoitny_dynamodb_requests_total")
	if err != nil {
		return nil, err
	}
	fr := &fanRound{fromPublish: &samples{}, cpu: cpu, requests: m1 - m0, frames: col.frames}
	for _, g := range col.got {
		fr.fromPublish.add(g.m.at.Sub(published[f.owner[g.i]]))
	}
	fr.fromPublish.err = len(f.clients) - len(col.got)
	time.Sleep(300 * time.Millisecond)
	return fr, nil
}

// fanJobs creates a pending job of every user.
func (b *run) fanJobs(ctx context.Context, f *fanout) ([]*algoitny.Job, error) {
	out := make([]*algoitny.Job, len(f.users))
	err := parallel(ctx, 16, len(f.users), func(u int) error {
		j, _, err := b.db.CreateJob(ctx, &algoitny.Job{Type: algoitny.JobCodeExecution, UserID: f.users[u].id,
			Platform: algoitny.PlatformBaekjoon, ProblemID: "1000", Title: "fan-out", Language: algoitny.LanguagePython, SolutionCode: aPlusBPython})
		out[u] = j
		return err
	})
	return out, err
}

// fanPublish publishes every job's end at once (8 publishers, as workers
// finishing together) and returns when each was published.
func (b *run) fanPublish(ctx context.Context, events *jobs.Events, all []*algoitny.Job) []time.Time {
	published := make([]time.Time, len(all))
	var mu sync.Mutex
	_ = parallel(ctx, 8, len(all), func(u int) error { // f never fails
		j := *all[u]
		j.Status, j.UpdatedAt = algoitny.JobCancelled, time.Now()
		mu.Lock()
		published[u] = time.Now()
		mu.Unlock()
		events.PublishJob(ctx, &j, nil)
		return nil
	})
	return published
}

// fanCollector gathers a round's deliveries: each client's reader records
// the event and the completion as the baseline's readers do (decoded, then
// one send to a collector).
type fanCollector struct {
	clients      int
	events, ends chan fanMessage
	done         chan struct{} // collect has returned
	got          []fanMessage  // receipts of the CANCELLED event
	frames       [][]byte      // what the first client received: the event, then its completion
}

// listenAll has every client's subscription subID report to a new
// collector.
func listenAll(clients []*wsClient, subID string) *fanCollector {
	col := &fanCollector{clients: len(clients), events: make(chan fanMessage, len(clients)),
		ends: make(chan fanMessage, len(clients)), done: make(chan struct{})}
	for i, c := range clients {
		c.onMessages(subID, func(m wsMessage) {
			switch {
			case m.Type == "next" && bytes.Contains(m.Payload, []byte(`"CANCELLED"`)):
				col.events <- fanMessage{m, i}
			case m.Type == "complete" || m.Type == "error":
				col.ends <- fanMessage{m, i}
			}
		})
	}
	return col
}

// collect waits (at most 60 s) for every client's event and completion;
// frames is set only when all came.
func (col *fanCollector) collect() {
	defer close(col.done)
	timeout := time.After(60 * time.Second)
	var first [2][]byte
	for range 2 * col.clients {
		select {
		case e := <-col.events:
			col.got = append(col.got, e)
			if e.i == 0 {
				first[0] = e.m.raw
			}
		case e := <-col.ends:
			if e.i == 0 {
				first[1] = e.m.raw
			}
		case <-timeout:
			return
		}
	}
	col.frames = first[:]
}

// fanMessage is a message of client i.
type fanMessage struct {
	m wsMessage
	i int
}

// sinceAll is each time of ts after ref.
func sinceAll(ts []time.Time, ref time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(ref)
	}
	return out
}

// fanRows are a phase's rows: its deliveries against the baseline's, and
// the CPU time per delivery.
func (b *run) fanRows(ph *fanPhase) []row {
	s95, b95 := ph.serverP95.quantile(0.5), ph.baseP95.quantile(0.5)
	r95 := ratioOf(s95, b95)
	perServer := ph.serverCPU / time.Duration(max(ph.deliveries, 1))
	perBase := ph.baseCPU / time.Duration(max(ph.baseDeliveries, 1))
	return []row{{
		scenario: fanName(ph.n) + " (delivery)",
		baseline: fmt.Sprintf("raw broadcast of the same frames to %d sockets (one write per socket): p50 %s, p95 %s (median round), p99 %s", ph.n, ms(ph.base.quantile(0.5)), ms(b95), ms(ph.base.quantile(0.99))),
		p50:      ms(ph.server.quantile(0.5)), p99: ms(ph.server.quantile(0.99)),
		thr:    fmt.Sprintf("%d rounds × %d events to %d sockets", ph.rounds, ph.users, ph.n),
		ratio:  fmt.Sprintf("p95 %s = %.2f× (median round); all rounds pooled %.2f×", ms(s95), r95, ratioOf(ph.server.quantile(0.95), ph.base.quantile(0.95))),
		target: "— (information)",
		note: fmt.Sprintf("%d users, each following a job of their own from 1, 2 or 3 sockets; every job's end published at once (8 publishers, as workers finishing together), "+
			"each socket's receipt timed from its event's publication; the baseline, which writes one event's frames to every socket from one NOTIFY's arrival, "+
			"is what writing the bytes costs, not a like-for-like server (it has one notification where the server has one per job); rounds alternate; "+
			"p95 is each side's median of its rounds' p95; %d deliveries missing", ph.users, ph.server.err) + prefixed("; ", b.errNote(ph.base, ph.server)),
	}, {
		scenario: fanName(ph.n) + " (server CPU per delivery)",
		baseline: fmt.Sprintf("the raw broadcast: %s per delivery", us(perBase)),
		p50:      us(perServer),
		ratio:    fmt.Sprintf("%.2f×", ratioOf(perServer, perBase)), target: "— (information)",
		note: "the server's CPU time (/proc) during the measured bursts ÷ the events delivered: the notification's decoding, the subscription's resolution and encoding per socket, the write",
	}}
}

// fanMemoryRows adds the rows of the largest phase's extra measures: the
// server's memory per idle subscriber against a bare echo connection's,
// and DynamoDB requests of a burst.
func (b *run) fanMemoryRows(ctx context.Context, mem *fanMemory) {
	// A server that has run other scenarios has heap to spare, which new
	// sockets fill without raising VmRSS: the runtime's own account of
	// what they hold (stacks + heap in use) counts too, whichever is larger.
	echoPer, err := b.echoBaseline(ctx, mem.n)
	if err != nil {
		b.failRow("server RSS per idle subscriber", err)
		return
	}
	perSub := max(mem.rssPer, mem.memPer.stack+mem.memPer.heap)
	rr := perSub / max(echoPer, 1)
	// Both runtime samples follow a forced GC: a negative heap difference
	// means they were not comparable, and nothing was measured. (VmRSS may
	// shrink when the runtime returns memory: that part only informs.)
	pass := rr <= 2 && perSub > 0 && mem.memPer.heap >= 0
	b.rows = append(b.rows, row{
		scenario: "server RSS per idle subscriber",
		baseline: fmt.Sprintf("bare gorilla echo connection: %.1f KB", echoPer/1024),
		p50:      fmt.Sprintf("%.1f KB", perSub/1024),
		ratio:    fmt.Sprintf("%.2f×", rr), target: "≤ 2×", pass: &pass,
		note: fmt.Sprintf("per subscriber, the larger of the VmRSS growth of the process (%.1f KB) and the Go runtime's goroutine stacks + heap in use (%.1f + %.1f KB) "+
			"from before to after %d authenticated sockets each with one jobUpdated subscription; goroutines %.1f",
			mem.rssPer/1024, mem.memPer.stack/1024, mem.memPer.heap/1024, mem.n, mem.memPer.goroutines),
	})
	b.rows = append(b.rows, row{
		scenario: "DynamoDB requests per fan-out event",
		p50:      fmt.Sprintf("%.0f requests for %d events to %d sockets", mem.requests, mem.events, mem.n),
		ratio:    fmt.Sprintf("%.2f per event", mem.requests/float64(max(mem.events, 1))), target: "— (information)",
		note: "server's algoitny_dynamodb_requests_total over a burst (the fewest of the rounds): events carry the job, so a delivery reads nothing",
	})
}

// fanMemory is what the largest phase measures besides deliveries.
type fanMemory struct {
	n        int
	rssPer   float64
	memPer   goMemory
	requests float64
	events   int
}

// measureIdle records the server's memory per subscriber while mem.n
// sockets are subscribed and idle, against rss0 and mem0 from before.
func (b *run) measureIdle(ctx context.Context, mem *fanMemory, rss0 int64, mem0 goMemory) {
	time.Sleep(2 * time.Second)
	mem.memPer = b.goMemory(ctx).minus(mem0).per(mem.n)
	rss1, _ := rssBytes(b.server.pid())
	mem.rssPer = float64(rss1-rss0) / float64(mem.n)
	b.idleProfiles(ctx, "fanout")
}

// startFanBase starts the baseline's broadcast process on a channel of its
// own; stop ends it.
func (b *run) startFanBase() (fb *fanBase, stop func(), err error) {
	baseChannel := b.stack.channel + "_base"
	env := append(os.Environ(), "BENCH_BROADCAST_DATABASE_URL="+b.stack.databaseURL, "BENCH_BROADCAST_CHANNEL="+baseChannel)
	bp, err := startProc(b.c, "baseline broadcast", env, filepath.Join(b.logDir, "baseline-broadcast.log"), b.self, "-baseline", "broadcast")
	if err != nil {
		return nil, nil, err
	}
	baseAddr, err := bp.waitAddr(30 * time.Second)
	if err != nil {
		bp.stop()
		return nil, nil, err
	}
	return &fanBase{b: b, addr: baseAddr, channel: baseChannel, pid: bp.pid()}, bp.stop, nil
}

// fanBase drives the baseline broadcast process (`bench -baseline
// broadcast`): its sockets, its frames, its rounds.
type fanBase struct {
	b       *run
	addr    string
	channel string // the baseline LISTENs on it
	pid     int

	raws []*websocket.Conn
	got  chan time.Time // events
	ends chan time.Time // completions
}

// open dials n sockets to the baseline and has it write frames.
func (f *fanBase) open(ctx context.Context, n int, frames [][]byte) error {
	if len(frames) != 2 || len(frames[0]) == 0 || len(frames[1]) == 0 {
		return fmt.Errorf("no sample of the server's frames")
	}
	body, _ := json.Marshal([]json.RawMessage{frames[0], frames[1]})
	resp, err := f.b.api.client.Post("http://"+f.addr+"/frames", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /frames: %s", resp.Status)
	}
	f.raws, _, err = dialMany(ctx, n, func() (*websocket.Conn, *wsClient, error) {
		c, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+f.addr+"/ws", nil)
		return c, nil, err
	})
	if err != nil {
		return err
	}
	f.got, f.ends = make(chan time.Time, n*2), make(chan time.Time, n*2)
	for _, c := range f.raws {
		go recvTimes(c, f.got, f.ends)
	}
	// The sockets of an earlier phase are gone once the baseline counts n.
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := f.b.api.client.Get("http://" + f.addr + "/count")
		if err != nil {
			return err
		}
		var have int
		_, _ = fmt.Fscan(resp.Body, &have)
		resp.Body.Close()
		if have == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the baseline has %d sockets, want %d", have, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *fanBase) closeSockets() { closeAll(f.raws, nil); f.raws = nil }

// round notifies the baseline and times each socket's event (`next`) from
// the NOTIFY's arrival at the baseline.
func (f *fanBase) round(ctx context.Context, topic string) (*samples, error) {
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if _, err := f.b.stack.pool.Exec(ctx, "SELECT pg_notify($1, $2)", f.channel, topic); err != nil {
		return nil, err
	}
	s := &samples{}
	var got []time.Time
	timeout := time.After(30 * time.Second)
collect:
	for range 2 * len(f.raws) {
		select {
		case t := <-f.got:
			got = append(got, t)
		case <-f.ends:
		case <-timeout:
			break collect
		}
	}
	s.err = len(f.raws) - len(got)
	resp, err := f.b.api.client.Get("http://" + f.addr + "/stamp")
	if err != nil {
		return nil, err
	}
	var nanos int64
	_, _ = fmt.Fscan(resp.Body, &nanos)
	resp.Body.Close()
	ref := time.Unix(0, nanos)
	if ref.Before(start) {
		return nil, fmt.Errorf("the baseline received no notification")
	}
	s.d, s.ops = sinceAll(got, ref), len(got)
	return s, nil
}

// recvTimes reads everything a raw socket receives and records when each
// event (`next`) and each completion arrives.
func recvTimes(c *websocket.Conn, got, ends chan<- time.Time) {
	for {
		_, data, err := c.ReadMessage()
		at := time.Now()
		if err != nil {
			return
		}
		// The work the subscribers' reader does with a message (wsClient):
		// the two sides' clients take the same CPU from the server.
		var m wsMessage
		_ = json.Unmarshal(data, &m)
		switch {
		case m.Type == "next" && bytes.Contains(m.Payload, []byte(`"CANCELLED"`)):
			got <- at
		case m.Type == "complete":
			ends <- at
		}
	}
}

// echoBaseline measures the RSS of n bare gorilla echo connections.
func (b *run) echoBaseline(ctx context.Context, n int) (float64, error) {
	ep, err := startProc(b.c, "baseline echo", os.Environ(), filepath.Join(b.logDir, "baseline-echo.log"), b.self, "-baseline", "echo")
	if err != nil {
		return 0, err
	}
	defer ep.stop()
	eaddr, err := ep.waitAddr(30 * time.Second)
	if err != nil {
		return 0, err
	}
	time.Sleep(200 * time.Millisecond)
	rss0, _ := rssBytes(ep.pid())
	echoes, _, err := dialMany(ctx, n, func() (*websocket.Conn, *wsClient, error) {
		c, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+eaddr+"/ws", nil)
		if err == nil { // one round trip, as the subscribers had theirs
			_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`))
			_, _, _ = c.ReadMessage()
		}
		return c, nil, err
	})
	defer closeAll(echoes, nil)
	if err != nil {
		return 0, err
	}
	time.Sleep(2 * time.Second)
	rss1, _ := rssBytes(ep.pid())
	return float64(rss1-rss0) / float64(n), nil
}

// goMemory is what the server's Go runtime reports through /metrics.
type goMemory struct{ stack, heap, goroutines float64 }

// goMemory reads the server's memory after a forced garbage collection
// (through its pprof endpoint), so that garbage of earlier scenarios, which
// GOGC=400 leaves for long, is neither counted nor collected between two
// samples (that once made a difference negative and the row pass on
// nothing).
func (b *run) goMemory(ctx context.Context) goMemory {
	var m goMemory
	if b.pprofAddr != "" {
		if err := fetchPprof(ctx, b.pprofAddr, "heap?gc=1", 30*time.Second, os.DevNull); err != nil {
			b.logf("forced GC before a memory sample: %v", err)
		}
	}
	m.stack, _ = metric(ctx, b.api.client, b.base, "go_memstats_stack_inuse_bytes")
	m.heap, _ = metric(ctx, b.api.client, b.base, "go_memstats_heap_inuse_bytes")
	m.goroutines, _ = metric(ctx, b.api.client, b.base, "go_goroutines")
	return m
}

func (m goMemory) minus(o goMemory) goMemory {
	return goMemory{m.stack - o.stack, m.heap - o.heap, m.goroutines - o.goroutines}
}

func (m goMemory) per(n int) goMemory {
	f := float64(max(n, 1))
	return goMemory{m.stack / f, m.heap / f, m.goroutines / f}
}
