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
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/gorilla/websocket"
)

// fanRound is one event delivered to every subscriber.
type fanRound struct {
	fromNotify   *samples      // NOTIFY's arrival at the server → received, per subscriber
	fromMutation *samples      // cancelJob sent → received, per subscriber
	requests     float64       // DynamoDB requests of the server during the round
	mutation     time.Duration // cancelJob's response time
	notify       time.Duration // cancelJob sent → NOTIFY's arrival at the server
	frames       [][]byte      // what the first subscriber received: the event, then its completion
}

// fanPhase is the fan-out to n subscribers: the server's rounds and the
// baseline's, alternated.
type fanPhase struct {
	n                          int
	server, base, fromMutation *samples
	first, mutation, notify    *samples // per server round
	serverP95, baseP95         *samples // each round's p95
	rounds                     int
}

// scenarioFanout: one event to N websocket subscribers of jobUpdated,
// against a raw gorilla broadcast loop to N connections, for each N of
// -subscribers; server RSS per idle subscriber against a bare gorilla echo
// connection; DynamoDB requests per event at 10 and at N subscribers.
//
// Both sides are timed from the arrival of the NOTIFY that triggers them,
// as each process stamps it (the server exports it in
// algoitny_pubsub_last_received_seconds, the baseline at /stamp), and
// their rounds alternate (baseline, target, baseline, …) so that both see
// the same load of the machine. What comes before the NOTIFY — cancelJob's
// DynamoDB reads and transaction, which vary by tens of milliseconds in
// DynamoDB Local and have no counterpart in the baseline — is reported in
// a row of its own.
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

	// The largest size first, on a server with no other socket: it also
	// measures memory per idle subscriber and DynamoDB requests per event.
	var phases []*fanPhase
	var mem *fanMemory
	for i, n := range slices.Backward(sizes) {
		ph, m, err := b.fanPhase(ctx, fb, n, i == len(sizes)-1)
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
func fanName(n int) string { return fmt.Sprintf("subscription fan-out to %d websocket clients", n) }

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
	return &fanBase{b: b, addr: baseAddr, channel: baseChannel}, bp.stop, nil
}

// fanRows are a phase's rows: its deliveries timed from the NOTIFY
// against the baseline's, and timed from the mutation.
func (b *run) fanRows(ph *fanPhase) []row {
	var rows []row
	s95, b95 := ph.serverP95.quantile(0.5), ph.baseP95.quantile(0.5)
	r95 := ratioOf(s95, b95)
	pass := r95 <= 1.5 && ph.server.err == 0 && len(ph.server.d) > 0
	rows = append(rows, row{
		scenario: fanName(ph.n) + " (delivery)",
		baseline: fmt.Sprintf("raw broadcast of the same frames (one write per socket): p50 %s, p95 %s (median round), p99 %s", ms(ph.base.quantile(0.5)), ms(b95), ms(ph.base.quantile(0.99))),
		p50:      ms(ph.server.quantile(0.5)), p99: ms(ph.server.quantile(0.99)),
		thr:    fmt.Sprintf("%d rounds × %d deliveries each", ph.rounds, ph.n),
		ratio:  fmt.Sprintf("p95 %s = %.2f× (median round); all rounds pooled %.2f×", ms(s95), r95, ratioOf(ph.server.quantile(0.95), ph.base.quantile(0.95))),
		target: "p95 ≤ 1.5×", pass: &pass,
		note: "from the arrival of cancelJob's NOTIFY at the server's listener to each client's receipt of the CANCELLED event: " +
			"the local fan-out, one shared execution of the selection, the writes (`next` and `complete` in one write per socket); the baseline from its own NOTIFY's arrival, writing the same frames the same way; rounds alternate; " +
			"p95 is each side's median of its rounds' p95 (a round in which the machine stalled — the mutation taking hundreds of milliseconds too — counts as one round, not as every slow delivery in it); " +
			fmt.Sprintf("the first subscriber of a round received it after %s (median of rounds)", ms(ph.first.quantile(0.5))) +
			prefixed("; ", b.errNote(ph.base, ph.server)),
	})
	rows = append(rows, row{
		scenario: fanName(ph.n) + " (from the mutation)",
		baseline: fmt.Sprintf("the baseline from its NOTIFY: p95 %s", ms(ph.base.quantile(0.95))),
		p50:      ms(ph.fromMutation.quantile(0.5)), p99: ms(ph.fromMutation.quantile(0.99)),
		thr:   fmt.Sprintf("%d rounds × %d deliveries each", ph.rounds, ph.n),
		ratio: fmt.Sprintf("p95 %s = %.2f×", ms(ph.fromMutation.quantile(0.95)), ratioOf(ph.fromMutation.quantile(0.95), ph.base.quantile(0.95))),
		note: fmt.Sprintf("the same deliveries timed from sending cancelJob (its DynamoDB reads and transaction, pg_notify): "+
			"the NOTIFY arrived %s after the mutation was sent, which answered after %s (medians of rounds)", ms(ph.notify.quantile(0.5)), ms(ph.mutation.quantile(0.5))),
	})
	return rows
}

// fanMemoryRows adds the rows of the largest phase's extra measures: the
// server's memory per idle subscriber against a bare echo connection's,
// and DynamoDB requests per event at 10 and at n subscribers.
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
	pass2 := rr <= 2 && perSub > 0 && mem.memPer.heap >= 0
	b.rows = append(b.rows, row{
		scenario: "server RSS per idle subscriber",
		baseline: fmt.Sprintf("bare gorilla echo connection: %.1f KB", echoPer/1024),
		p50:      fmt.Sprintf("%.1f KB", perSub/1024),
		ratio:    fmt.Sprintf("%.2f×", rr), target: "≤ 2×", pass: &pass2,
		note: fmt.Sprintf("per subscriber, the larger of the VmRSS growth of the process (%.1f KB) and the Go runtime's goroutine stacks + heap in use (%.1f + %.1f KB) "+
			"from before to after %d authenticated sockets each with one jobUpdated subscription; goroutines %.1f",
			mem.rssPer/1024, mem.memPer.stack/1024, mem.memPer.heap/1024, mem.n, mem.memPer.goroutines),
	})
	pass3 := mem.reqN-mem.req10 <= 3
	b.rows = append(b.rows, row{
		scenario: "DynamoDB requests per fan-out event",
		baseline: fmt.Sprintf("10 subscribers: %.0f requests", mem.req10),
		p50:      fmt.Sprintf("%d subscribers: %.0f requests", mem.n, mem.reqN),
		ratio:    fmt.Sprintf("+%.0f requests for %d more subscribers", mem.reqN-mem.req10, mem.n-10), target: "independent of subscriber count",
		pass: &pass3, note: "server's algoitny_dynamodb_requests_total over the round, the cancelJob mutation (≈5 requests) included",
	})
}

// fanMemory is what the largest phase measures besides deliveries.
type fanMemory struct {
	n           int
	rssPer      float64
	memPer      goMemory
	reqN, req10 float64
}

// fanPhase dials n subscribers to the server and n sockets to the
// baseline, then alternates baseline and server rounds. With extra it
// also measures the idle server's memory per subscriber and the DynamoDB
// requests of an event at n and at 10 subscribers.
func (b *run) fanPhase(ctx context.Context, fb *fanBase, n int, extra bool) (*fanPhase, *fanMemory, error) {
	token := b.tokens[0]
	newJob, err := b.fanJobs(ctx)
	if err != nil {
		return nil, nil, err
	}
	mem0 := b.goMemory(ctx) // a forced GC first, then the process's RSS
	rss0, _ := rssBytes(b.server.pid())
	_, clients, err := dialMany(ctx, n, func() (*websocket.Conn, *wsClient, error) {
		c, err := dialWS(ctx, b.wsURL, token)
		return nil, c, err
	})
	defer closeAll(nil, clients)
	if err != nil {
		return nil, nil, fmt.Errorf("dial: %w", err)
	}
	var mem *fanMemory
	// First an unmeasured round that holds every socket subscribed and idle
	// (for the memory measurement) and shows what the server writes; the
	// measured rounds then all follow their subscriptions after the same
	// short pause, as the baseline's broadcasts follow the previous round.
	idle := func() {}
	if extra {
		mem = &fanMemory{n: n}
		idle = func() { b.measureIdle(ctx, mem, rss0, mem0) }
	}
	fr, err := b.fanRound(ctx, clients, newJob, token, "idle", idle, false)
	if err != nil {
		return nil, nil, err
	}
	if err := fb.open(ctx, n, fr.frames); err != nil {
		return nil, nil, fmt.Errorf("baseline: %w", err)
	}
	defer fb.closeSockets()

	ph, err := b.fanMeasure(ctx, fb, clients, newJob, mem)
	if err != nil {
		return nil, nil, err
	}
	if mem != nil { // 10 subscribers: DynamoDB requests per event
		fr, err := b.fanRound(ctx, clients[:min(10, len(clients))], newJob, token, "ten", nil, false)
		if err != nil {
			return nil, nil, err
		}
		mem.req10 = fr.requests
	}
	return ph, mem, nil
}

// fanJobs returns a function that creates the pending job of a round. The
// job points at an execution, as a COMPLETED job does, so that
// `history { … }` in the selection is resolved for every subscriber.
func (b *run) fanJobs(ctx context.Context) (func() (*algoitny.Job, error), error) {
	u := b.ds.users[0]
	hist := b.ds.histories[0]
	if len(hist) == 0 {
		return nil, fmt.Errorf("user 0 has no history")
	}
	return func() (*algoitny.Job, error) {
		j, _, err := b.db.CreateJob(ctx, &algoitny.Job{
			Type: algoitny.JobCodeExecution, UserID: u.ID, Platform: hist[0].Platform, ProblemID: hist[0].ProblemID,
			Title: "fan-out", Language: algoitny.LanguagePython, SolutionCode: aPlusBPython, HistoryID: hist[0].ID,
		})
		return j, err
	}, nil
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

// fanMeasure alternates baseline and server rounds to the clients and
// returns the phase; with mem it records the fewest DynamoDB requests of
// a round.
func (b *run) fanMeasure(ctx context.Context, fb *fanBase, clients []*wsClient, newJob func() (*algoitny.Job, error), mem *fanMemory) (*fanPhase, error) {
	n, token := len(clients), b.tokens[0]
	rounds := max(3, b.opts.fanRounds)
	ph := &fanPhase{n: n, rounds: rounds, server: &samples{}, base: &samples{}, fromMutation: &samples{},
		first: &samples{}, mutation: &samples{}, notify: &samples{}, serverP95: &samples{}, baseP95: &samples{}}
	for r := range rounds {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		base, err := fb.round(ctx, fmt.Sprintf("n%d-r%d", n, r))
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		ph.base.merge(base)
		ph.baseP95.add(base.quantile(0.95))
		b.logf("fan-out to %d, baseline round %d: from NOTIFY first %s, p50 %s, p95 %s, last %s", n, r,
			ms(base.quantile(0)), ms(base.quantile(0.5)), ms(base.quantile(0.95)), ms(base.quantile(1)))
		fr, err := b.fanRound(ctx, clients, newJob, token, fmt.Sprint("f", r), nil, true)
		if err != nil {
			return nil, err
		}
		d := fr.fromNotify
		b.logf("fan-out to %d, server round %d: mutation %s, NOTIFY after %s; from NOTIFY first %s, p50 %s, p95 %s, last %s", n, r, ms(fr.mutation), ms(fr.notify),
			ms(d.quantile(0)), ms(d.quantile(0.5)), ms(d.quantile(0.95)), ms(d.quantile(1)))
		ph.server.merge(d)
		ph.serverP95.add(d.quantile(0.95))
		ph.fromMutation.merge(fr.fromMutation)
		ph.first.add(d.quantile(0))
		ph.mutation.add(fr.mutation)
		ph.notify.add(fr.notify)
		if mem != nil && (r == 0 || fr.requests < mem.reqN) {
			// The fewest of the rounds: the server's periodic jobs (sweeps)
			// add requests to whichever round they fall in, while a cost
			// per subscriber would be in every round.
			mem.reqN = fr.requests
		}
	}
	return ph, nil
}

// fanRound subscribes every client to a new pending job, waits for their
// initial events, runs idle (if set), cancels the job and measures each
// client's receipt of the CANCELLED event, from the mutation and from the
// NOTIFY. Only measured rounds are profiled (-profile fanout).
func (b *run) fanRound(ctx context.Context, clients []*wsClient, newJob func() (*algoitny.Job, error), token, subID string, idle func(), measured bool) (*fanRound, error) {
	job, err := newJob()
	if err != nil {
		return nil, err
	}
	jobID := globalID("Job", job.ID)
	if err := subscribeAll(ctx, clients, subID, jobID); err != nil {
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
	fr := &fanRound{fromNotify: &samples{}, fromMutation: &samples{}}
	col := listenAll(clients, subID)
	defer func() {
		for _, c := range clients {
			c.forget(subID)
		}
	}()
	start := time.Now()
	go col.collect()
	stopProfile := b.deliveryProfile(ctx, "fanout", measured && len(clients) > 10)
	if _, err := b.api.query(ctx, token, `mutation($id: ID!) { cancelJob(id: $id) { status } }`, map[string]any{"id": jobID}, nil); err != nil {
		return nil, fmt.Errorf("cancelJob: %w", err)
	}
	fr.mutation = time.Since(start)
	<-col.done
	stopProfile()
	fr.frames = col.frames
	time.Sleep(300 * time.Millisecond)
	if err := b.timeRound(ctx, fr, col.got, len(clients), start, m0); err != nil {
		return nil, err
	}
	return fr, nil
}

// subscribeAll subscribes every client to jobUpdated of jobID as subID and
// waits for each one's first event (the current state).
func subscribeAll(ctx context.Context, clients []*wsClient, subID, jobID string) error {
	return parallel(ctx, 32, len(clients), func(i int) error {
		ch, err := clients[i].subscribe(subID, jobUpdated, map[string]any{"id": jobID})
		if err != nil {
			return err
		}
		_, err = clients[i].next(ch, 60*time.Second) // the current state
		return err
	})
}

// fanCollector gathers a round's deliveries: each client's reader records
// the event and the completion as the baseline's readers do (decoded, then
// one send to a collector).
type fanCollector struct {
	clients      int
	events, ends chan fanMessage
	done         chan struct{} // collect has returned
	got          []time.Time   // receipts of the CANCELLED event
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

// collect waits (at most 30 s) for every client's event and completion;
// frames is set only when all came.
func (col *fanCollector) collect() {
	defer close(col.done)
	timeout := time.After(30 * time.Second)
	var first [2][]byte
	for range 2 * col.clients {
		select {
		case e := <-col.events:
			col.got = append(col.got, e.m.at)
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

// timeRound fills fr from the receipts (got, of clients clients) and the
// server's metrics: DynamoDB requests since m0, and when the NOTIFY of the
// round's only job event (the CANCELLED one) arrived.
func (b *run) timeRound(ctx context.Context, fr *fanRound, got []time.Time, clients int, start time.Time, m0 float64) error {
	m1, err := metric(ctx, b.api.client, b.base, "algoitny_dynamodb_requests_total")
	if err != nil {
		return err
	}
	fr.requests = m1 - m0
	secs, err := metric(ctx, b.api.client, b.base, `algoitny_pubsub_last_received_seconds{kind="job"}`)
	if err != nil {
		return err
	}
	ref := time.Unix(0, int64(secs*1e9))
	if ref.Before(start) {
		return fmt.Errorf("the server received no job event after cancelJob was sent")
	}
	fr.notify = ref.Sub(start)
	fr.fromNotify.d, fr.fromMutation.d = sinceAll(got, ref), sinceAll(got, start)
	fr.fromNotify.ops, fr.fromMutation.ops = len(got), len(got)
	failed := clients - len(got)
	fr.fromNotify.err, fr.fromMutation.err = failed, failed
	return nil
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

// fanBase drives the baseline broadcast process (`bench -baseline
// broadcast`): its sockets, its frames, its rounds.
type fanBase struct {
	b       *run
	addr    string
	channel string // the baseline LISTENs on it

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
		fmt.Fscan(resp.Body, &have)
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
	fmt.Fscan(resp.Body, &nanos)
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
			c.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`))
			c.ReadMessage()
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
