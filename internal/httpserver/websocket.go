package httpserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
)

// Close codes of the graphql-transport-ws protocol.
const (
	closeInvalidMessage   = 4400
	closeUnauthorized     = 4401
	closeForbidden        = 4403
	closeInitTimeout      = 4408
	closeDuplicateID      = 4409
	closeTooManyInitCalls = 4429
	// closeTryAgainLater (RFC 6455's registry: 1013) refuses a signed-out
	// socket over SocketLimits.MaxUnauthenticated.
	closeTryAgainLater = 1013
)

const subprotocolTransportWS = "graphql-transport-ws"

// WebsocketConfig configures subscriptions over websockets.
type WebsocketConfig struct {
	Auth Authenticator
	// AllowedOrigins may open sockets from a browser, besides the API's own
	// host ("*" allows any).
	AllowedOrigins []string
	// InitTimeout is how long a client may take to send connection_init (default 10 s).
	InitTimeout time.Duration
	// PingInterval is the keep-alive period (default 15 s, ± 10 % per
	// socket): graphql-ws "ka" messages, or graphql-transport-ws pings whose
	// pong must come back within two periods.
	PingInterval time.Duration
	// ReadLimit bounds one client message (default 256 KB).
	ReadLimit int64
	// WriteTimeout drops a client that does not take a message in time (default 10 s).
	WriteTimeout time.Duration
	// RecheckInterval is how often a signed-in socket's session is checked
	// again (default 1 min, ± 10 %): a logout, a deactivation or a change of staff
	// status closes the socket with 4403 — its subscriptions were authorized
	// for the old identity. WebsocketTransport.UserChanged checks at once;
	// this is the backstop for a notification lost. Operations started on
	// the socket re-authenticate anyway (ReauthenticateSocket).
	RecheckInterval time.Duration
	// SharedFreshness is how old the latest event of a shared subscription
	// (shared.go) may be for a newcomer to start from it; an older one
	// makes the newcomer start a fresh execution (a fresh read). Default 10 s.
	SharedFreshness time.Duration
	// Limits caps sockets per client address and sockets not signed in
	// (SocketLimits; the zero value caps nothing).
	Limits SocketLimits
	// Logger, if set, warns once when the per-address cap refuses sockets
	// that came through an untrusted proxy.
	Logger *slog.Logger

	sockets *socketRegistry // set by NewWebsocket
}

// NewWebsocket returns gqlgen's websocket transport (both the
// graphql-transport-ws and the legacy graphql-ws subprotocols) running on
// gorilla/websocket, with authentication in connection_init.
func NewWebsocket(cfg WebsocketConfig) *WebsocketTransport {
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = 10 * time.Second
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 15 * time.Second
	}
	if cfg.ReadLimit == 0 {
		cfg.ReadLimit = 256 << 10
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.RecheckInterval == 0 {
		cfg.RecheckInterval = time.Minute
	}
	if cfg.SharedFreshness == 0 {
		cfg.SharedFreshness = 10 * time.Second
	}
	limit := cfg.ReadLimit
	cfg.sockets = &socketRegistry{byUser: map[string]map[*gorillaConn]*socketSession{}}
	// Keep-alive is ours (gorillaConn.keepAlive), not gqlgen's: its pinger is
	// a goroutine per socket, ours a timer that holds no goroutine between
	// pings — an idle subscriber costs less memory.
	return &WebsocketTransport{Websocket: transport.Websocket{
		Implementation:   gorillaImplementation{cfg: cfg, hub: newHub(cfg.SharedFreshness)},
		InitFunc:         cfg.initFunc,
		InitTimeout:      cfg.InitTimeout,
		PayloadReadLimit: &limit,
	}, sockets: cfg.sockets, gate: newSocketGate(cfg.Limits, cfg.Logger)}
}

// UserChanged checks the sessions of the user's signed-in sockets at once
// (not at their next periodic check) and closes with 4403 those no longer
// accepted: call it for every account change any replica makes (logout,
// deactivation, staff change, deletion; accounts.Service.FollowChanges).
func (t *WebsocketTransport) UserChanged(userID string) { t.sockets.changed(userID) }

// socketRegistry is the signed-in sockets of a transport, by user id.
type socketRegistry struct {
	mu     sync.Mutex
	byUser map[string]map[*gorillaConn]*socketSession
}

func (r *socketRegistry) add(userID string, c *gorillaConn, sess *socketSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byUser[userID] == nil {
		r.byUser[userID] = map[*gorillaConn]*socketSession{}
	}
	r.byUser[userID][c] = sess
}

func (r *socketRegistry) remove(userID string, c *gorillaConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byUser[userID], c)
	if len(r.byUser[userID]) == 0 {
		delete(r.byUser, userID)
	}
}

func (r *socketRegistry) changed(userID string) {
	r.mu.Lock()
	socks := make(map[*gorillaConn]*socketSession, len(r.byUser[userID]))
	for c, sess := range r.byUser[userID] {
		socks[c] = sess
	}
	r.mu.Unlock()
	for c, sess := range socks {
		go c.checkSession(sess.stillValid)
	}
}

// socketKey carries the socket of an upgrade request to the InitFunc.
type socketKey struct{}

type socketSlot struct {
	conn   *gorillaConn
	exec   graphql.GraphExecutor // set by WebsocketTransport.Do
	ticket *socketTicket         // the socket's place in the caps; set by WebsocketTransport.Do
}

// withSocketSlot prepares an upgrade request's context to receive its socket.
func withSocketSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, socketKey{}, &socketSlot{})
}

// initFunc authenticates a socket from its connection_init payload
// ("Authorization": "Bearer <token>", or "authToken"/"token"). Without a
// token the socket is anonymous (signed out): it may run queries and
// mutations, a subscription closes it with 4401 (ReauthenticateSocket),
// and when SocketLimits.MaxUnauthenticated signed-out sockets are open
// already it is closed at once with 1013 Try Again Later. A bad token
// closes it with 4403 — not a plain 1000, which makes clients reconnect
// forever. The session's expiry closes the socket too. gqlgen panics on a
// nil context: never return one.
func (cfg WebsocketConfig) initFunc(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	token := ""
	for _, k := range []string{"Authorization", "authorization", "authToken", "token"} {
		if v, ok := payload[k].(string); ok && v != "" {
			token = v
			break
		}
	}
	if scheme, rest, ok := strings.Cut(token, " "); ok && strings.EqualFold(scheme, "bearer") {
		token = strings.TrimSpace(rest)
	}
	slot, _ := ctx.Value(socketKey{}).(*socketSlot)
	if slot != nil && slot.conn != nil {
		slot.conn.keepAlive(cfg.PingInterval)
	}
	if token == "" {
		if slot != nil && slot.ticket != nil && !slot.ticket.anonymous() {
			ctx = transport.WithWebsocketCloseCode(ctx, closeTryAgainLater)
			return transport.AppendCloseReason(ctx, "Try Again Later"), nil, errors.New("too many sockets are not signed in: sign in, or try again later")
		}
		var conn *gorillaConn
		if slot != nil {
			conn = slot.conn
		}
		ctx = algoitny.WithActor(context.WithValue(ctx, anonymousKey{}, anonymousSocket{conn}), &algoitny.Actor{})
		if conn != nil {
			conn.setContext(ctx)
		}
		return ctx, nil, nil
	}
	var actor *algoitny.Actor
	var err error
	onShortStack(func() { actor, err = cfg.Auth.Authenticate(ctx, token) })
	if err != nil {
		ctx = transport.WithWebsocketCloseCode(ctx, closeForbidden)
		return transport.AppendCloseReason(ctx, "Forbidden"), nil, errors.New(algoitny.ErrorMessage(err))
	}
	sess := &socketSession{token: token, auth: cfg.Auth, staff: actor.User.IsStaff}
	if slot != nil && slot.ticket != nil {
		slot.ticket.signedIn()
	}
	if slot != nil && slot.conn != nil {
		sess.conn = slot.conn
		if !actor.ExpiresAt.IsZero() {
			slot.conn.expireAt(actor.ExpiresAt)
		}
		slot.conn.recheckEvery(cfg.RecheckInterval, sess.stillValid)
		if cfg.sockets != nil {
			cfg.sockets.add(actor.User.ID, slot.conn, sess)
			slot.conn.onClose(func() { cfg.sockets.remove(actor.User.ID, slot.conn) })
		}
	}
	ctx = algoitny.WithActor(context.WithValue(ctx, sessionKey{}, sess), actor)
	if slot != nil && slot.conn != nil {
		slot.conn.setContext(ctx)
	}
	return ctx, nil, nil
}

// socketSession is the credential a socket signed in with. The identity
// found in connection_init must not outlive the session: every operation on
// the socket authenticates again, and a timer re-checks between operations.
type socketSession struct {
	token string
	auth  Authenticator
	conn  *gorillaConn // nil when the transport is not ours (tests)
	staff bool         // staff status at connection_init
}

type sessionKey struct{}

// anonymousSocket marks the context of a socket whose connection_init had
// no token.
type anonymousSocket struct{ conn *gorillaConn } // conn nil when the transport is not ours

type anonymousKey struct{}

// stillValid reports whether the socket may stay open: false once the
// session is no longer accepted or the user's staff status changed. A
// failure to check (the store is down) keeps the socket.
func (s *socketSession) stillValid() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	actor, err := s.auth.Authenticate(ctx, s.token)
	if algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) {
		return false
	}
	return err != nil || actor.User.IsStaff == s.staff
}

// ReauthenticateSocket gives an operation (of kind op) that arrives on a
// signed-in socket the socket's current identity (a fresh Authenticate, so
// quotas, plan and role are today's). When the session is no longer
// accepted, the socket is closed with 4403 and the EUNAUTHENTICATED error
// is returned for the operation.
//
// On a socket whose connection_init had no token, a subscription closes the
// socket with 4401 and gets EUNAUTHENTICATED: every subscription follows
// something of a signed-in user's (a job, an execution, hints, a check),
// so it could only ever answer NOT_FOUND, and a client that subscribes
// without its token has lost it — it should sign in again, not hold the
// socket. Queries and mutations run signed out, as over HTTP. Contexts of
// other transports are returned unchanged.
func ReauthenticateSocket(ctx context.Context, op ast.Operation) (context.Context, error) {
	if anon, ok := ctx.Value(anonymousKey{}).(anonymousSocket); ok {
		if op != ast.Subscription {
			return ctx, nil
		}
		if anon.conn != nil {
			anon.conn.closeWith(closeUnauthorized, "Unauthorized: send a token in connection_init to subscribe")
			anon.conn.c.Close()
		}
		return ctx, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "subscriptions need a signed-in socket: send your token in connection_init")
	}
	sess, ok := ctx.Value(sessionKey{}).(*socketSession)
	if !ok {
		return ctx, nil
	}
	var actor *algoitny.Actor
	var err error
	onShortStack(func() { actor, err = sess.auth.Authenticate(ctx, sess.token) })
	if err != nil {
		if algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) && sess.conn != nil {
			sess.conn.closeWith(closeForbidden, "Forbidden")
			sess.conn.c.Close()
		}
		return ctx, err
	}
	return algoitny.WithActor(ctx, actor), nil
}

// onShortStack runs f on a goroutine of its own and waits for it, passing
// on a panic. A socket's reader and each subscription hold a goroutine for
// as long as they live, and a goroutine's stack keeps the size its deepest
// call needed: a DynamoDB request (the SDK's middleware stack) made on them
// would leave every idle subscriber with a stack several times the minimum.
func onShortStack(f func()) {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}

// writeBuffers is shared by every socket of the process.
var writeBuffers = &sync.Pool{}

// gorillaImplementation accepts websockets with gorilla/websocket.
type gorillaImplementation struct {
	cfg WebsocketConfig
	hub *hub // the transport's shared subscriptions
}

// Accept implements transport.WebsocketImplementation.
func (g gorillaImplementation) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		Subprotocols:    opts.Subprotocols,
		CheckOrigin:     g.checkOrigin,
		ReadBufferSize:  1024, // client messages are small
		WriteBufferSize: 4096,
		// Idle subscribers hold no write buffer: it is taken from the pool
		// for each write.
		WriteBufferPool: writeBuffers,
	}
	c, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err // Upgrade has answered the request
	}
	conn := &gorillaConn{c: c, writeTimeout: g.cfg.WriteTimeout, active: map[string]bool{}, hub: g.hub}
	if slot, ok := r.Context().Value(socketKey{}).(*socketSlot); ok {
		slot.conn, conn.exec = conn, slot.exec
	}
	return conn, nil
}

// checkOrigin allows non-browser clients (no Origin), the API's own host and
// the configured origins.
func (g gorillaImplementation) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(g.cfg.AllowedOrigins, "*") || slices.Contains(g.cfg.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// gorillaConn adapts a gorilla connection to gqlgen and enforces the
// graphql-transport-ws rules where gqlgen's defaults deviate: 4400 for an
// invalid message, 4401 for a subscribe before connection_init, 4408 when
// connection_init does not come in time, 4409 for a duplicate subscription
// id, 4429 for a second connection_init. The legacy graphql-ws protocol
// gets 4409 too, for a start whose id is in use (gqlgen would run both).
type gorillaConn struct {
	c            *websocket.Conn
	writeTimeout time.Duration

	mu      sync.Mutex // guards the fields below and serializes writes
	inited  bool
	closed  bool            // no more writes (a close frame was sent, or the connection is gone)
	gone    bool            // Close ran
	closers []func()        // run by Close
	active  map[string]bool // operation ids in use (both protocols)
	// ending counts, by id, the operations gqlgen runs that the client
	// ended (complete, stop) and whose last message gqlgen has not written
	// yet: that message is dropped (the client is done with the operation,
	// and may have reused the id already).
	ending   map[string]int
	expiry   *time.Timer
	recheck  *time.Timer
	ping     *time.Timer
	pongSeen bool // a pong arrived since the last ping

	// Shared subscriptions (shared.go): the executor, the socket's context
	// after connection_init, and the socket's memberships by id.
	hub    *hub
	exec   graphql.GraphExecutor
	ctx    context.Context
	shared map[string]*group
}

var errProtocolClosed = errors.New("websocket closed for a protocol violation")

// NextReader implements transport.WebsocketConn.
// Subscribe and complete messages of shared subscriptions are handled here
// and never reach gqlgen.
func (g *gorillaConn) NextReader() (int, io.Reader, error) {
	for {
		mt, data, err := g.c.ReadMessage()
		if err != nil {
			g.leaveAll()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return 0, nil, transport.ErrWebsocketClosed
			}
			return 0, nil, err
		}
		if g.c.Subprotocol() != subprotocolTransportWS {
			if code, reason := g.applyLegacy(data); code != 0 {
				g.closeWith(code, reason)
				return 0, nil, errProtocolClosed
			}
			return mt, bytes.NewReader(data), nil
		}
		m, code, reason := g.check(data)
		if code != 0 {
			g.closeWith(code, reason)
			return 0, nil, errProtocolClosed
		}
		shared := false
		if m.Type == "subscribe" && g.exec != nil && g.context() != nil {
			// Parsing and validating the operation runs deep: not on the
			// reader, which lives as long as the socket (onShortStack).
			onShortStack(func() { shared = g.hub.share(g.context(), g.exec, g, m.ID, m.Payload) })
		}
		switch {
		case shared:
			continue
		case m.Type == "complete" && g.leave(m.ID):
			continue
		}
		return mt, bytes.NewReader(data), nil
	}
}

func (g *gorillaConn) setContext(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctx = ctx
}

func (g *gorillaConn) context() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ctx
}

// joined records that subscription id of the socket is a member of gr.
// The hub calls it holding gr's lock (or before anyone can reach gr), so
// the group's end cannot come between joining and this record.
func (g *gorillaConn) joined(id string, gr *group) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared == nil {
		g.shared = map[string]*group{}
	}
	g.shared[id] = gr
}

// finishShared sends the last message ("complete", or "error" with payload)
// of subscription id of group gr and frees the id — unless the id has
// moved on (the client completed it and reused the id since), in which
// case the newer subscription is left alone. gr nil: a subscription that
// never joined a group. With event set, the group's last event goes first,
// and both messages leave in one write.
func (g *gorillaConn) finishShared(id string, gr *group, event []byte, typ string, payload []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared[id] != gr {
		return
	}
	delete(g.shared, id)
	delete(g.active, id) // before the message: the client may reuse the id at once
	if event == nil {
		g.writeShared(id, typ, payload)
		return
	}
	if g.closed {
		return
	}
	// Both frames, encoded here, in one write to the socket: what gorilla
	// would write, without its copy into its buffer and a syscall each.
	// Every writer of the socket but gorilla's replies to pings and closes
	// holds g.mu, and those are one write each: the frames cannot mix.
	qid := jsonString(id)
	buf := frameBuffers.Get().(*[]byte)
	b := appendSharedFrame((*buf)[:0], qid, "next", event)
	b = appendSharedFrame(b, qid, typ, payload)
	nc := g.c.NetConn()
	nc.SetWriteDeadline(time.Now().Add(g.writeTimeout))
	_, err := nc.Write(b)
	*buf = b[:0]
	frameBuffers.Put(buf)
	if err != nil {
		g.c.Close() // the reader fails and the socket ends
	}
}

// jsonString is s as a JSON string, as json.Marshal writes it, without
// its reflection for the ids clients choose ("1", "job-3f2a").
func jsonString(s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return b
		}
	}
	return append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"')
}

var frameBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendSharedFrame appends the websocket frame (final, text, unmasked: a
// server's, RFC 6455 §5.2) of the message writeShared writes.
func appendSharedFrame(b, qid []byte, typ string, payload []byte) []byte {
	n := len(`{"id":`) + len(qid) + len(`,"type":"`) + len(typ) + len(`"}`)
	if payload != nil {
		n += len(`,"payload":`) + len(payload)
	}
	b = append(b, 0x81) // FIN, text
	switch {
	case n < 126:
		b = append(b, byte(n))
	case n <= 0xffff:
		b = append(b, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, `{"id":`...)
	b = append(b, qid...)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if payload != nil {
		b = append(b, `,"payload":`...)
		b = append(b, payload...)
	}
	return append(b, '}')
}

// leave ends the shared subscription id, if it is one.
func (g *gorillaConn) leave(id string) bool {
	g.mu.Lock()
	gr := g.shared[id]
	delete(g.shared, id)
	g.mu.Unlock() // the hub locks the group, which writes to sockets: never hold g.mu here
	if gr != nil {
		g.hub.leave(gr, member{conn: g, id: id})
	}
	return gr != nil
}

// leaveAll ends the socket's shared subscriptions (it is closing).
func (g *gorillaConn) leaveAll() {
	g.mu.Lock()
	shared := g.shared
	g.shared = nil
	g.mu.Unlock()
	for id, gr := range shared {
		g.hub.leave(gr, member{conn: g, id: id})
	}
}

// sendShared writes an event of group gr to subscription id, if the id is
// still gr's on this socket.
func (g *gorillaConn) sendShared(id string, gr *group, typ string, payload []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shared[id] == gr {
		g.writeShared(id, typ, payload)
	}
}

// writeShared writes one graphql-transport-ws message of a shared
// subscription: {"id":…,"type":…,"payload":…}, payload already JSON (nil:
// none). The payload is written as it is, not copied into a message per
// subscriber. A socket that cannot take it is closed. g.mu is held.
func (g *gorillaConn) writeShared(id, typ string, payload []byte) {
	if g.closed {
		return
	}
	g.c.SetWriteDeadline(time.Now().Add(g.writeTimeout))
	w, err := g.c.NextWriter(websocket.TextMessage)
	if err == nil {
		qid := jsonString(id)
		w.Write([]byte(`{"id":`))
		w.Write(qid)
		w.Write([]byte(`,"type":"` + typ + `"`))
		if payload != nil {
			w.Write([]byte(`,"payload":`))
			w.Write(payload)
		}
		w.Write([]byte{'}'})
		err = w.Close()
	}
	if err != nil {
		g.c.Close() // the reader fails and the socket ends
	}
}

type wireMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// check applies the graphql-transport-ws rules to a client message and
// returns it parsed.
func (g *gorillaConn) check(data []byte) (m wireMessage, code int, reason string) {
	if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
		return m, closeInvalidMessage, "Invalid message received"
	}
	code, reason = g.apply(m)
	return m, code, reason
}

func (g *gorillaConn) apply(m wireMessage) (int, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if g.inited {
			return closeTooManyInitCalls, "Too many initialisation requests"
		}
		// The payload is optional, and an object when present.
		if p := bytes.TrimSpace(m.Payload); len(p) > 0 && !bytes.Equal(p, []byte("null")) && p[0] != '{' {
			return closeInvalidMessage, "Invalid message received"
		}
		g.inited = true
	case "subscribe":
		if !g.inited {
			return closeUnauthorized, "Unauthorized"
		}
		if m.ID == "" {
			return closeInvalidMessage, "Invalid message received"
		}
		if g.active[m.ID] {
			return closeDuplicateID, "Subscriber for " + m.ID + " already exists"
		}
		g.active[m.ID] = true
	case "complete":
		g.clientEnded(m.ID)
	case "pong":
		// The client is alive: no deadline until the next ping sets one.
		g.pongSeen = true
		g.c.SetReadDeadline(time.Time{})
	case "ping":
	default:
		return closeInvalidMessage, "Invalid message received"
	}
	return 0, ""
}

// applyLegacy tracks the operation ids of a legacy graphql-ws socket: a
// start whose id is in use closes the socket with 4409, as with
// graphql-transport-ws; a stop frees the id. Malformed messages are left
// to gqlgen to answer.
func (g *gorillaConn) applyLegacy(data []byte) (int, string) {
	var m wireMessage
	if json.Unmarshal(data, &m) != nil {
		return 0, ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch m.Type {
	case "start":
		if g.active[m.ID] {
			return closeDuplicateID, "Subscriber for " + m.ID + " already exists"
		}
		g.active[m.ID] = true
	case "stop":
		g.clientEnded(m.ID)
	}
	return 0, ""
}

// clientEnded frees id, which the client ended. Unless it is a shared
// subscription (shared.go, which gqlgen never sees), gqlgen still writes
// the operation's last message: WriteJSON drops it. g.mu is held.
func (g *gorillaConn) clientEnded(id string) {
	if !g.active[id] {
		return
	}
	delete(g.active, id)
	if g.shared[id] == nil {
		if g.ending == nil {
			g.ending = map[string]int{}
		}
		g.ending[id]++
	}
}

// WriteJSON implements transport.WebsocketConn. An operation the server
// ends (complete or error) frees its id.
func (g *gorillaConn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if endsSubscription(b) {
		var m wireMessage
		if json.Unmarshal(b, &m) == nil {
			if n := g.ending[m.ID]; n > 0 {
				// The end of an operation the client ended earlier (gqlgen
				// always sends one): not the end of a newer one that may
				// have the id now.
				if n == 1 {
					delete(g.ending, m.ID)
				} else {
					g.ending[m.ID] = n - 1
				}
				return nil
			}
			if g.shared[m.ID] != nil {
				return nil // the id names a shared subscription, which goes on
			}
			delete(g.active, m.ID)
		}
	}
	g.c.SetWriteDeadline(time.Now().Add(g.writeTimeout))
	return g.c.WriteMessage(websocket.TextMessage, b)
}

// endsSubscription reports whether an outgoing message (either protocol)
// is a "complete" or an "error". gqlgen's message structs marshal their type
// last, so the end of the bytes tells without parsing the payload — which
// for "next" messages is the whole event, sent to every subscriber.
func endsSubscription(msg []byte) bool {
	return bytes.HasSuffix(msg, []byte(`"type":"complete"}`)) || bytes.HasSuffix(msg, []byte(`"type":"error"}`))
}

// WriteClose implements transport.WebsocketConn, translating gqlgen's
// generic codes into the protocol's.
func (g *gorillaConn) WriteClose(code int, msg string) error {
	if g.c.Subprotocol() == subprotocolTransportWS && code == transport.WebsocketCloseProtocolError {
		switch msg {
		case "connection initialisation timeout":
			code, msg = closeInitTimeout, "Connection initialisation timeout"
		default:
			code, msg = closeInvalidMessage, "Invalid message received"
		}
	}
	return g.closeWith(code, msg)
}

// closeWith sends a close frame once.
func (g *gorillaConn) closeWith(code int, msg string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	g.stopTimers()
	return g.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, msg), time.Now().Add(g.writeTimeout))
}

// expireAt closes the socket with 4403 when the session ends.
func (g *gorillaConn) expireAt(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expiry = time.AfterFunc(time.Until(t), func() {
		g.closeWith(closeForbidden, "Session expired")
		g.c.Close()
	})
}

// recheckEvery closes the socket with 4403 when valid, called every d,
// returns false.
func (g *gorillaConn) recheckEvery(d time.Duration, valid func() bool) {
	var tick func()
	tick = func() {
		if !g.checkSession(valid) {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.closed {
			g.recheck = time.AfterFunc(jitter(d), tick)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.recheck = time.AfterFunc(jitter(d), tick)
}

// checkSession closes the socket with 4403 unless valid says its session
// is still accepted, and reports whether it is.
func (g *gorillaConn) checkSession(valid func() bool) bool {
	if valid() {
		return true
	}
	g.closeWith(closeForbidden, "Forbidden")
	g.c.Close()
	return false
}

// onClose runs f once the socket is closed (or at once if it is).
func (g *gorillaConn) onClose(f func()) {
	g.mu.Lock()
	closed := g.closed && g.gone
	if !closed {
		g.closers = append(g.closers, f)
	}
	g.mu.Unlock()
	if closed {
		f()
	}
}

// keepAlive sends a keep-alive every d from now on: a "ka" message with
// the legacy graphql-ws protocol; a "ping" with graphql-transport-ws, whose
// "pong" must come back within 2·d of the ping (else the read fails and the
// socket closes) — what gqlgen's pinger does, on a timer instead of a
// goroutine.
func (g *gorillaConn) keepAlive(d time.Duration) {
	transportWS := g.c.Subprotocol() == subprotocolTransportWS
	msg := []byte(`{"type":"ka"}`)
	if transportWS {
		msg = []byte(`{"type":"ping"}`)
		g.c.SetReadDeadline(time.Now().Add(2 * d))
	}
	var tick func()
	tick = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.closed {
			return
		}
		g.c.SetWriteDeadline(time.Now().Add(g.writeTimeout))
		if err := g.c.WriteMessage(websocket.TextMessage, msg); err != nil {
			return // the reader learns it too and ends the connection
		}
		if transportWS && g.pongSeen {
			g.c.SetReadDeadline(time.Now().Add(2 * d))
		}
		g.pongSeen = false
		g.ping = time.AfterFunc(jitter(d), tick)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.ping = time.AfterFunc(jitter(d), tick)
	}
}

// jitter returns d ± 10%, at random. Sockets opened together (a deploy,
// a reconnect storm, a class starting a contest) would otherwise ping and
// re-check their sessions together for ever: a thousand DynamoDB reads in
// the same millisecond every minute, and every event delayed behind them.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + rand.N(d/5+1)
}

// stopTimers stops the expiry, recheck and keep-alive timers; g.mu must be
// held.
func (g *gorillaConn) stopTimers() {
	if g.ping != nil {
		g.ping.Stop()
	}
	if g.expiry != nil {
		g.expiry.Stop()
	}
	if g.recheck != nil {
		g.recheck.Stop()
	}
}

// Close implements transport.WebsocketConn.
func (g *gorillaConn) Close() error {
	g.mu.Lock()
	g.closed, g.gone = true, true // no close frame after the connection is gone
	g.stopTimers()
	closers := g.closers
	g.closers = nil
	g.mu.Unlock()
	for _, f := range closers {
		f()
	}
	g.leaveAll()
	return g.c.Close()
}

// Subprotocol implements transport.WebsocketConn.
func (g *gorillaConn) Subprotocol() string { return g.c.Subprotocol() }

// SetReadLimit implements transport.WebsocketReadLimiter.
func (g *gorillaConn) SetReadLimit(n int64) { g.c.SetReadLimit(n) }

// SetReadDeadline implements transport.WebsocketReadDeadliner.
func (g *gorillaConn) SetReadDeadline(t time.Time) error { return g.c.SetReadDeadline(t) }
