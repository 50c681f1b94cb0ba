package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/gorilla/websocket"
)

// Close codes of the graphql-transport-ws protocol.
const (
	closeInvalidMessage   = 4400
	closeUnauthorized     = 4401
	closeForbidden        = 4403
	closeInitTimeout      = 4408
	closeDuplicateID      = 4409
	closeTooManyInitCalls = 4429
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
	// PingInterval is the keep-alive period (default 15 s): graphql-ws "ka"
	// messages, or graphql-transport-ws pings whose pong must come back
	// within two periods.
	PingInterval time.Duration
	// ReadLimit bounds one client message (default 256 KB).
	ReadLimit int64
	// WriteTimeout drops a client that does not take a message in time (default 10 s).
	WriteTimeout time.Duration
	// RecheckInterval is how often a signed-in socket's session is checked
	// again (default 1 min): a logout, a deactivation or a change of staff
	// status closes the socket with 4403 — its subscriptions were authorized
	// for the old identity. Operations started on the socket re-authenticate
	// anyway (ReauthenticateSocket).
	RecheckInterval time.Duration
}

// NewWebsocket returns gqlgen's websocket transport (both the
// graphql-transport-ws and the legacy graphql-ws subprotocols) running on
// gorilla/websocket, with authentication in connection_init.
func NewWebsocket(cfg WebsocketConfig) transport.Websocket {
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
	limit := cfg.ReadLimit
	return transport.Websocket{
		Implementation:        gorillaImplementation{cfg: cfg},
		InitFunc:              cfg.initFunc,
		InitTimeout:           cfg.InitTimeout,
		KeepAlivePingInterval: cfg.PingInterval,
		PingPongInterval:      cfg.PingInterval,
		PayloadReadLimit:      &limit,
	}
}

// socketKey carries the socket of an upgrade request to the InitFunc.
type socketKey struct{}

type socketSlot struct{ conn *gorillaConn }

// withSocketSlot prepares an upgrade request's context to receive its socket.
func withSocketSlot(ctx context.Context) context.Context {
	return context.WithValue(ctx, socketKey{}, &socketSlot{})
}

// initFunc authenticates a socket from its connection_init payload
// ("Authorization": "Bearer <token>", or "authToken"/"token"). Without a
// token the socket is anonymous. A bad token closes it with 4403 — not a
// plain 1000, which makes clients reconnect forever. The session's expiry
// closes the socket too. gqlgen panics on a nil context: never return one.
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
	if token == "" {
		return algoitny.WithActor(ctx, &algoitny.Actor{}), nil, nil
	}
	actor, err := cfg.Auth.Authenticate(ctx, token)
	if err != nil {
		ctx = transport.WithWebsocketCloseCode(ctx, closeForbidden)
		return transport.AppendCloseReason(ctx, "Forbidden"), nil, errors.New(algoitny.ErrorMessage(err))
	}
	sess := &socketSession{token: token, auth: cfg.Auth, staff: actor.User.IsStaff}
	if slot, ok := ctx.Value(socketKey{}).(*socketSlot); ok && slot.conn != nil {
		sess.conn = slot.conn
		if !actor.ExpiresAt.IsZero() {
			slot.conn.expireAt(actor.ExpiresAt)
		}
		slot.conn.recheckEvery(cfg.RecheckInterval, sess.stillValid)
	}
	ctx = context.WithValue(ctx, sessionKey{}, sess)
	return algoitny.WithActor(ctx, actor), nil, nil
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

// ReauthenticateSocket gives an operation that arrives on a signed-in socket
// the socket's current identity (a fresh Authenticate, so quotas, plan and
// role are today's). When the session is no longer accepted, the socket is
// closed with 4403 and the EUNAUTHENTICATED error is returned for the
// operation. Contexts of other transports are returned unchanged.
func ReauthenticateSocket(ctx context.Context) (context.Context, error) {
	sess, ok := ctx.Value(sessionKey{}).(*socketSession)
	if !ok {
		return ctx, nil
	}
	actor, err := sess.auth.Authenticate(ctx, sess.token)
	if err != nil {
		if algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) && sess.conn != nil {
			sess.conn.closeWith(closeForbidden, "Forbidden")
			sess.conn.c.Close()
		}
		return ctx, err
	}
	return algoitny.WithActor(ctx, actor), nil
}

// writeBuffers is shared by every socket of the process.
var writeBuffers = &sync.Pool{}

// gorillaImplementation accepts websockets with gorilla/websocket.
type gorillaImplementation struct{ cfg WebsocketConfig }

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
	conn := &gorillaConn{c: c, writeTimeout: g.cfg.WriteTimeout, active: map[string]bool{}}
	if slot, ok := r.Context().Value(socketKey{}).(*socketSlot); ok {
		slot.conn = conn
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
// id, 4429 for a second connection_init.
type gorillaConn struct {
	c            *websocket.Conn
	writeTimeout time.Duration

	mu      sync.Mutex // guards the fields below and serializes writes
	inited  bool
	closed  bool
	active  map[string]bool // graphql-transport-ws subscription ids
	expiry  *time.Timer
	recheck *time.Timer
}

var errProtocolClosed = errors.New("websocket closed for a protocol violation")

// NextReader implements transport.WebsocketConn.
func (g *gorillaConn) NextReader() (int, io.Reader, error) {
	mt, data, err := g.c.ReadMessage()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return 0, nil, transport.ErrWebsocketClosed
		}
		return 0, nil, err
	}
	if g.c.Subprotocol() == subprotocolTransportWS {
		if code, reason := g.check(data); code != 0 {
			g.closeWith(code, reason)
			return 0, nil, errProtocolClosed
		}
	}
	return mt, bytes.NewReader(data), nil
}

type wireMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// check applies the graphql-transport-ws rules to a client message.
func (g *gorillaConn) check(data []byte) (int, string) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
		return closeInvalidMessage, "Invalid message received"
	}
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
		delete(g.active, m.ID)
	case "ping", "pong":
	default:
		return closeInvalidMessage, "Invalid message received"
	}
	return 0, ""
}

// WriteJSON implements transport.WebsocketConn. A subscription the server
// ends (complete or error) frees its id.
func (g *gorillaConn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c.Subprotocol() == subprotocolTransportWS {
		var m wireMessage
		if json.Unmarshal(b, &m) == nil && (m.Type == "complete" || m.Type == "error") {
			delete(g.active, m.ID)
		}
	}
	g.c.SetWriteDeadline(time.Now().Add(g.writeTimeout))
	return g.c.WriteMessage(websocket.TextMessage, b)
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
		if !valid() {
			g.closeWith(closeForbidden, "Forbidden")
			g.c.Close()
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.closed {
			g.recheck = time.AfterFunc(d, tick)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.recheck = time.AfterFunc(d, tick)
}

// stopTimers stops the expiry and recheck timers; g.mu must be held.
func (g *gorillaConn) stopTimers() {
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
	g.closed = true // no close frame after the connection is gone
	g.stopTimers()
	g.mu.Unlock()
	return g.c.Close()
}

// Subprotocol implements transport.WebsocketConn.
func (g *gorillaConn) Subprotocol() string { return g.c.Subprotocol() }

// SetReadLimit implements transport.WebsocketReadLimiter.
func (g *gorillaConn) SetReadLimit(n int64) { g.c.SetReadLimit(n) }

// SetReadDeadline implements transport.WebsocketReadDeadliner.
func (g *gorillaConn) SetReadDeadline(t time.Time) error { return g.c.SetReadDeadline(t) }
