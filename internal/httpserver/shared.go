package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Shared subscriptions: one execution per distinct operation, its bytes
// written to every subscriber.
//
// gqlgen executes a subscription's selection for every subscriber and every
// event: a job followed by a thousand sockets resolves and encodes the same
// JSON a thousand times, on goroutines of each subscription. For a
// subscription whose every event is the whole current state (sharedFields:
// jobUpdated sends the job as it is now), subscribers that sent the same
// operation with the same variables as the same identity can share one
// execution: the hub runs it once, keeps its latest event for those who
// join later (they start, like everyone, with the current state) and writes
// each event's bytes to all of them. Subscriptions whose events are
// increments (executionProgress, hintProgress) are not shared: a late joiner
// would miss the earlier ones.
//
// Only graphql-transport-ws sockets share (gorillaConn intercepts their
// subscribe and complete messages); the legacy graphql-ws protocol goes
// through gqlgen as before.

// sharedFields are the subscription fields whose events each carry the
// whole state, each with how to number its resolver's stream of events
// (countEvents).
var sharedFields = map[string]func(context.Context, any, *eventCount) any{
	"jobUpdated": countStream[*algoitny.JobEvent],
}

// eventCount numbers the events of a shared execution's stream as its
// resolver sends them, and knows which one is the last: an event that says
// so (algoitny.JobEvent.Last: the stream ends after it). The hub counts the
// responses gqlgen makes of them — one per event, in order — so when it
// holds the last one it sends it together with the completion, in one
// write per member, instead of a `next` to every member and then a
// `complete` to every member once gqlgen has seen the stream close.
type eventCount struct {
	last atomic.Int64 // the last event's number (from 1), 0 while unknown
}

type eventCountKey struct{}

// countEvents is a field middleware: in a shared execution (hub.run puts
// an eventCount in its context) it passes the subscription field's stream
// through countStream. Everywhere else it does nothing.
func countEvents(ctx context.Context, next graphql.Resolver) (any, error) {
	// Every field of every operation comes here: the field's own context
	// (the nearest value) says at once whether to look further.
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Object != "Subscription" || fc.Field.Field == nil {
		return next(ctx)
	}
	res, err := next(ctx)
	c, ok := ctx.Value(eventCountKey{}).(*eventCount)
	follow := sharedFields[fc.Field.Name]
	if !ok || err != nil || res == nil || follow == nil {
		return res, err
	}
	return follow(ctx, res, c), nil
}

// countStream forwards the resolver's stream res (a <-chan T) and records
// in c the number of its last event before forwarding it.
func countStream[T interface{ Last() bool }](ctx context.Context, res any, c *eventCount) any {
	in, ok := res.(<-chan T)
	if !ok {
		return res
	}
	out := make(chan T)
	go func() {
		defer close(out)
		var n int64
		for {
			select {
			case v, ok := <-in:
				if !ok {
					return
				}
				n++
				if v.Last() {
					c.last.Store(n)
				}
				select {
				case out <- v:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return (<-chan T)(out)
}

// hub is the set of shared executions of one websocket transport.
type hub struct {
	// freshness is how old a group's latest event may be for a newcomer to
	// start from it (WebsocketConfig.SharedFreshness).
	freshness time.Duration

	mu     sync.Mutex
	groups map[string]*group
}

func newHub(freshness time.Duration) *hub {
	return &hub{freshness: freshness, groups: map[string]*group{}}
}

// group is one shared execution and its members.
type group struct {
	key    string
	cancel context.CancelFunc

	mu      sync.Mutex // guards the fields below
	members map[member]struct{}
	last    []byte    // the latest event's payload, for those who join later
	lastAt  time.Time // when it came; written under hub.mu too
	done    bool
}

// member is one subscription: a socket and the id its client chose.
type member struct {
	conn *gorillaConn
	id   string
}

// subscribePayload is a graphql-transport-ws subscribe message's payload.
type subscribePayload struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// share takes a subscribe message over when its operation may be shared
// and reports whether it did; otherwise gqlgen handles it. ctx is the
// socket's context (its actor from connection_init).
func (h *hub) share(ctx context.Context, exec graphql.GraphExecutor, c *gorillaConn, id string, raw json.RawMessage) bool {
	var p subscribePayload
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&p) != nil {
		return false // gqlgen answers the malformed message
	}
	params := &graphql.RawParams{Query: p.Query, OperationName: p.OperationName, Variables: p.Variables, Extensions: p.Extensions}
	ctx = graphql.StartOperationTrace(ctx)
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil || rc.Operation == nil || rc.Operation.Operation != ast.Subscription || !sharable(rc) {
		return false
	}
	// Every operation re-authenticates (ReauthenticateSocket): the member
	// joins as who the session says it is now.
	ctx, err := ReauthenticateSocket(ctx, rc.Operation.Operation)
	if err != nil {
		c.finishShared(id, nil, nil, "error", mustJSON(gqlerror.List{presentAuthError(err)}))
		return true
	}
	key, ok := groupKey(rc, algoitny.ActorFrom(ctx))
	if !ok {
		return false
	}
	m := member{conn: c, id: id}
	for {
		h.mu.Lock()
		g := h.groups[key]
		if g == nil || g.stale(h.freshness) {
			// A new execution, its starter a member from the start. A group
			// whose latest event is old stays with its members, but newcomers
			// start afresh: their first event is a fresh read, as it would be
			// unshared (an event lost while LISTEN reconnected is not kept).
			g = &group{key: key, members: map[member]struct{}{m: {}}}
			h.groups[key] = g
			c.joined(id, g)
			// The execution outlives the member that started it and must not
			// keep its socket: it gets the identity every member shares (the
			// key) and nothing else of the socket's context.
			gctx, cancel := context.WithCancel(algoitny.WithActor(context.Background(), algoitny.ActorFrom(ctx)))
			g.cancel = cancel
			h.mu.Unlock()
			go h.run(gctx, exec, rc, g)
			return true
		}
		h.mu.Unlock()
		g.mu.Lock() // not under h.mu: joining waits for the latest event's writes
		if g.done {
			g.mu.Unlock()
			h.mu.Lock()
			if h.groups[key] == g {
				delete(h.groups, key) // ended meanwhile: the next try starts afresh
			}
			h.mu.Unlock()
			continue
		}
		g.members[m] = struct{}{}
		c.joined(id, g)
		if g.last != nil {
			c.sendShared(id, g, "next", g.last)
		}
		g.mu.Unlock()
		return true
	}
}

// stale reports whether newcomers should start a fresh execution: the
// latest event is older than freshness. h.mu is held (lastAt is written
// under both locks).
func (g *group) stale(freshness time.Duration) bool {
	return !g.lastAt.IsZero() && time.Since(g.lastAt) > freshness
}

// sharable reports whether the operation is one field of sharedFields.
func sharable(rc *graphql.OperationContext) bool {
	sel := rc.Operation.SelectionSet
	if len(sel) != 1 {
		return false
	}
	f, ok := sel[0].(*ast.Field)
	return ok && sharedFields[f.Name] != nil && len(f.Directives) == 0
}

// groupKey identifies the subscriptions that may share an execution: the
// same document, operation and variables, as the same identity (what a
// resolver may show depends on the user, staff status and plan only).
func groupKey(rc *graphql.OperationContext, a *algoitny.Actor) (string, bool) {
	vars, err := json.Marshal(rc.Variables) // map keys sorted: canonical
	if err != nil {
		return "", false
	}
	who := "anonymous"
	if a != nil && a.User != nil {
		who = fmt.Sprintf("user:%s:staff=%t:plan=%s", a.User.ID, a.User.IsStaff, a.User.PlanName)
	}
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s", who, rc.OperationName, rc.RawQuery, vars), true
}

// run executes g's operation once and writes every event to its members,
// then completes them.
func (h *hub) run(ctx context.Context, exec graphql.GraphExecutor, rc *graphql.OperationContext, g *group) {
	defer g.cancel()
	count := &eventCount{}
	ctx = context.WithValue(ctx, eventCountKey{}, count)
	defer func() {
		if p := recover(); p != nil {
			err := rc.Recover(ctx, p)
			var gqlErr *gqlerror.Error
			if e, ok := err.(*gqlerror.Error); ok {
				gqlErr = e
			} else {
				gqlErr = &gqlerror.Error{Message: "internal error"}
			}
			h.end(g, "error", mustJSON(gqlerror.List{gqlErr}))
			return
		}
		h.end(g, "complete", nil)
	}()
	ctx = graphql.WithOperationContext(ctx, rc)
	responses, ctx := exec.DispatchOperation(ctx, rc)
	for n := int64(1); ; n++ {
		var resp *graphql.Response
		onShortStack(func() { resp = responses(ctx) })
		if resp == nil {
			return
		}
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err)
		}
		if count.last.Load() == n {
			h.finish(g, b)
			return
		}
		h.mu.Lock()
		g.mu.Lock()
		g.last, g.lastAt = b, time.Now()
		members := make([]member, 0, len(g.members))
		for m := range g.members {
			members = append(members, m)
		}
		g.mu.Unlock()
		h.mu.Unlock()
		// Written outside the lock: a slow socket delays the rest of this
		// event (for at most its write timeout), not joining or leaving. A
		// member joining now is sent this event as the latest.
		fanOut(members, func(m member) { m.conn.sendShared(m.id, g, "next", b) })
		if len(members) == 0 {
			return
		}
	}
}

// finish removes g and sends its members its last event (payload) and
// "complete", both in one write to each socket (gorillaConn.finishShared).
func (h *hub) finish(g *group, payload []byte) {
	h.close(g, payload, "complete", nil)
}

// end removes g and sends its members a final message ("complete", or
// "error" with payload).
func (h *hub) end(g *group, typ string, payload []byte) {
	h.close(g, nil, typ, payload)
}

// close removes g and sends each member its final messages: event (if
// any) and typ with payload, in one write per socket.
func (h *hub) close(g *group, event []byte, typ string, payload []byte) {
	h.mu.Lock()
	if h.groups[g.key] == g {
		delete(h.groups, g.key)
	}
	h.mu.Unlock()
	g.mu.Lock()
	g.done = true
	members := g.members
	g.members = map[member]struct{}{}
	g.mu.Unlock()
	fanOut(slices.Collect(maps.Keys(members)), func(m member) { m.conn.finishShared(m.id, g, event, typ, payload) })
}

// fanOutChunk is the fewest members a writer of fanOut is given.
const fanOutChunk = 64

// fanOut calls write for every member, from up to GOMAXPROCS goroutines
// for a large group: each socket is written under its own lock, so the
// writes are independent, and one goroutine writing a thousand sockets in
// turn left the other cores idle while the last subscriber waited for the
// 999 before it (issue 18's fan-out). It returns when every write is done.
func fanOut(members []member, write func(member)) {
	writers := min(runtime.GOMAXPROCS(0), len(members)/fanOutChunk)
	if writers <= 1 {
		for _, m := range members {
			write(m)
		}
		return
	}
	var wg sync.WaitGroup
	per := (len(members) + writers - 1) / writers
	for chunk := range slices.Chunk(members, per) {
		wg.Go(func() {
			for _, m := range chunk {
				write(m)
			}
		})
	}
	wg.Wait()
}

// leave removes a member; the execution stops when none is left.
func (h *hub) leave(g *group, m member) {
	g.mu.Lock()
	delete(g.members, m)
	empty := len(g.members) == 0 && !g.done
	if empty {
		g.done = true // whoever comes next starts a fresh execution
	}
	g.mu.Unlock()
	if !empty {
		return
	}
	h.mu.Lock()
	if h.groups[g.key] == g {
		delete(h.groups, g.key)
	}
	h.mu.Unlock()
	g.cancel()
}

// presentAuthError is the error a subscribe on a socket whose session ended
// gets (the socket is being closed with 4403 too).
func presentAuthError(err error) *gqlerror.Error {
	return apierror.New(apierror.Unauthenticated, algoitny.ErrorMessage(err))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// WebsocketTransport is gqlgen's websocket transport, which also hands the
// executor to the socket's gorillaConn (shared subscriptions execute with
// it), knows the signed-in sockets by user (UserChanged) and counts sockets
// against SocketLimits.
type WebsocketTransport struct {
	transport.Websocket
	sockets *socketRegistry
	gate    *socketGate
}

// Do implements graphql.Transport. A socket over a cap (SocketLimits) is
// refused before the upgrade, with 429 or 503 and Retry-After; an admitted
// one holds its place until it is closed (Do returns then).
func (t *WebsocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ticket, refused := t.gate.admit(r)
	if refused != nil {
		refused.refuse(w)
		return
	}
	defer ticket.release()
	slot, ok := r.Context().Value(socketKey{}).(*socketSlot)
	if !ok {
		slot = &socketSlot{}
		r = r.WithContext(context.WithValue(r.Context(), socketKey{}, slot))
	}
	slot.exec, slot.ticket = exec, ticket
	t.Websocket.Do(w, r, exec)
}
