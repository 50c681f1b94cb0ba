package httpserver

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/gorilla/websocket"
)

// Close codes of /query's websockets: graphql-transport-ws's, and RFC
// 6455's where the protocol has none.
const (
	closeInvalidMessage   = 4400
	closeUnauthorized     = 4401
	closeForbidden        = 4403
	closeInitTimeout      = 4408
	closeDuplicateID      = 4409
	closeTooManyInitCalls = 4429
	// closeTryAgainLater refuses a signed-out socket over
	// SocketLimits.MaxUnauthenticated.
	closeTryAgainLater = 1013
	// closePolicyViolation closes a socket whose messages not yet sent
	// outgrow SocketLimits.MaxUnsentBytes(PerAddress).
	closePolicyViolation = 1008
	// closeServiceRestart closes every socket when the server shuts down
	// (Shutdown): graphql-ws clients reconnect and subscribe again, and
	// each subscription starts with the current state.
	closeServiceRestart = 1012
)

const subprotocolTransportWS = "graphql-transport-ws"

// WebsocketConfig configures subscriptions over websockets.
type WebsocketConfig struct {
	Auth Authenticator
	// AllowedOrigins may open sockets from a browser, besides the API's own
	// host ("*" allows any).
	AllowedOrigins []string
	// LocalOrigins allows pages served from this machine too
	// (http://localhost:*, http://127.0.0.1:*; dev mode), as Config's.
	LocalOrigins bool
	// InitTimeout is how long a client may take to send connection_init (default 10 s).
	InitTimeout time.Duration
	// PingInterval is the keep-alive period (default 15 s): graphql-ws "ka"
	// messages, or graphql-transport-ws pings whose pong must come back
	// within two periods (gqlgen's).
	PingInterval time.Duration
	// ReadLimit bounds one client message (default 256 KB).
	ReadLimit int64
	// WriteTimeout drops a client that does not take a message in time (default 10 s).
	WriteTimeout time.Duration
	// RecheckInterval is how often a signed-in socket's session is checked
	// again (default 1 min, ± 10 %): a logout, a deactivation or a change of
	// staff status closes the socket with 4403 — its subscriptions were
	// authorized for the old identity. WebsocketTransport.UserChanged checks
	// at once; this is the backstop for a notification lost. Operations
	// started on the socket authenticate again anyway.
	RecheckInterval time.Duration
	// Limits caps sockets, their operations and their unsent bytes
	// (SocketLimits; the zero value caps nothing).
	Limits SocketLimits
	// Logger, if set, warns once when the per-address cap refuses sockets
	// that came through an untrusted proxy, and once per origin refused.
	Logger *slog.Logger
}

// WebsocketTransport is gqlgen's websocket transport (graphql-transport-ws
// and the legacy graphql-ws) on gorilla/websocket, with what gqlgen leaves
// to the application:
//
//   - authentication in connection_init (initFunc), sessions re-checked
//     while the socket lives and with each operation (socketSession);
//   - the caps of SocketLimits: sockets when they open (socketGate),
//     operations as they start (socketExecutor), unsent bytes as they are
//     queued (socket.WriteJSON);
//   - each operation's parsing, validation and execution in a slot of the
//     HTTP admission (Admission), as an HTTP request's are; a
//     subscription's until it has started — its events are not counted;
//   - graphql-transport-ws's close codes where gqlgen's deviate
//     (socket.NextReader, socket.WriteClose).
type WebsocketTransport struct {
	cfg     WebsocketConfig
	ws      transport.Websocket
	gate    *socketGate
	users   *userSockets
	origins *origins
	open    openSockets
}

// openSockets are a transport's upgraded sockets, closed together by
// Shutdown.
type openSockets struct {
	mu      sync.Mutex
	set     map[*socket]bool
	closing bool          // Shutdown ran: a socket upgraded now is closed at once
	empty   chan struct{} // closed when set empties after Shutdown
}

var (
	_ graphql.Transport                 = (*WebsocketTransport)(nil)
	_ transport.WebsocketImplementation = (*WebsocketTransport)(nil)
)

// NewWebsocket returns the websocket transport of cfg.
func NewWebsocket(cfg WebsocketConfig) *WebsocketTransport {
	cfg.InitTimeout = cmp.Or(cfg.InitTimeout, 10*time.Second)
	cfg.PingInterval = cmp.Or(cfg.PingInterval, 15*time.Second)
	cfg.ReadLimit = cmp.Or(cfg.ReadLimit, 256<<10)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, 10*time.Second)
	cfg.RecheckInterval = cmp.Or(cfg.RecheckInterval, time.Minute)
	t := &WebsocketTransport{cfg: cfg, gate: newSocketGate(cfg.Limits, cfg.Logger), users: &userSockets{byUser: map[string]map[*socket]bool{}},
		origins: newOrigins(cfg.AllowedOrigins, cfg.LocalOrigins, cfg.Logger)}
	t.open.set = map[*socket]bool{}
	t.ws = transport.Websocket{
		Implementation:        t,
		InitFunc:              t.initFunc,
		InitTimeout:           cfg.InitTimeout,
		KeepAlivePingInterval: cfg.PingInterval, // graphql-ws
		PingPongInterval:      cfg.PingInterval, // graphql-transport-ws
		PayloadReadLimit:      &cfg.ReadLimit,
	}
	return t
}

// Supports implements graphql.Transport: websocket upgrades.
func (t *WebsocketTransport) Supports(r *http.Request) bool { return t.ws.Supports(r) }

// Do implements graphql.Transport. A socket over a cap (SocketLimits) is
// refused before the upgrade, with 429 or 503 and Retry-After; an admitted
// one holds its place until it is closed (Do returns then).
func (t *WebsocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	// Refused here rather than by the upgrader, whose refusal gqlgen
	// reports with the log package (a line outside the JSON log).
	if !t.checkOrigin(r) {
		t.origins.refused(r, "websocket")
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "a websocket upgrade needs Connection: Upgrade and Upgrade: websocket", http.StatusBadRequest)
		return
	}
	ticket, refused := t.gate.admit(r)
	if refused != nil {
		refused.refuse(w)
		return
	}
	defer ticket.release()
	s := &socket{t: t, ticket: ticket, admit: admissionFrom(r.Context()), active: map[string]bool{}}
	ctx := context.WithValue(r.Context(), socketKey{}, s)
	t.ws.Do(w, r.WithContext(ctx), socketExecutor{GraphExecutor: exec, s: s})
}

// Load returns the sockets open, the operations they run and the bytes
// queued for them (for /metrics).
func (t *WebsocketTransport) Load() (sockets, operations, unsent int64) {
	return t.gate.open.Load(), t.gate.ops.Load(), t.gate.unsent.Load()
}

// UserChanged checks the sessions of the user's signed-in sockets at once
// (not at their next periodic check) and closes with 4403 those no longer
// accepted: call it for every account change any replica makes (logout,
// deactivation, staff change, deletion; accounts.Service.FollowChanges).
func (t *WebsocketTransport) UserChanged(userID string) {
	for _, s := range t.users.of(userID) {
		go s.checkSession()
	}
}

// writeBuffers is shared by every socket of the process.
var writeBuffers = &sync.Pool{}

// Accept implements transport.WebsocketImplementation: the upgrade, with
// gorilla/websocket.
func (t *WebsocketTransport) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		Subprotocols:    opts.Subprotocols,
		CheckOrigin:     t.checkOrigin,
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
	s := socketFrom(r.Context()) // set by Do
	s.c = c
	t.open.mu.Lock()
	closing := t.open.closing
	t.open.set[s] = true
	t.open.mu.Unlock()
	if closing {
		s.closeWith(closeServiceRestart, "Service Restart")
	}
	return s, nil
}

// forget removes a closed socket from the open ones.
func (t *WebsocketTransport) forget(s *socket) {
	t.open.mu.Lock()
	defer t.open.mu.Unlock()
	if !t.open.set[s] {
		return
	}
	delete(t.open.set, s)
	if t.open.closing && len(t.open.set) == 0 {
		close(t.open.empty)
	}
}

// Shutdown closes every socket with 1012 Service Restart, and any upgraded
// after, then waits for them to be closed (or ctx to end). Call it when
// the server stops, before the live events stop: a subscription then never
// gets a "complete" it has not earned (its job still running, to finish on
// another server) — graphql-ws clients retry a 1012 and subscribe again,
// and each subscription starts with the current state.
func (t *WebsocketTransport) Shutdown(ctx context.Context) error {
	t.open.mu.Lock()
	if !t.open.closing {
		t.open.closing = true
		t.open.empty = make(chan struct{})
		if len(t.open.set) == 0 {
			close(t.open.empty)
		}
	}
	sockets := make([]*socket, 0, len(t.open.set))
	for s := range t.open.set {
		sockets = append(sockets, s)
	}
	empty := t.open.empty
	t.open.mu.Unlock()
	for _, s := range sockets {
		s.closeWith(closeServiceRestart, "Service Restart")
	}
	select {
	case <-empty:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkOrigin allows non-browser clients (no Origin), the API's own host and
// the allowed origins (AllowedOrigins, LocalOrigins).
func (t *WebsocketTransport) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if t.origins.allowed(origin) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// initFunc authenticates a socket from its connection_init payload
// ("Authorization": "Bearer <token>", or "authToken"/"token"). Without a
// token the socket is signed out: it may run queries and mutations (at
// most SocketLimits.MaxOperationsSignedOut at once), a subscription closes
// it with 4401 (socketExecutor), and when SocketLimits.MaxUnauthenticated
// signed-out sockets are open already it is closed at once with 1013 Try
// Again Later. A bad token closes it with 4403 — not a plain 1000, which
// makes clients reconnect forever. The session's expiry closes the socket
// too. gqlgen panics on a nil context: never return one.
func (t *WebsocketTransport) initFunc(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	s := socketFrom(ctx)
	token := tokenOf(payload)
	if token == "" {
		if !s.ticket.anonymous() {
			ctx = transport.WithWebsocketCloseCode(ctx, closeTryAgainLater)
			return transport.AppendCloseReason(ctx, "Try Again Later"), nil, errors.New("too many sockets are not signed in: sign in, or try again later")
		}
		return algoitny.WithActor(ctx, &algoitny.Actor{}), nil, nil
	}
	actor, err := t.cfg.Auth.Authenticate(ctx, token)
	if err != nil {
		ctx = transport.WithWebsocketCloseCode(ctx, closeForbidden)
		return transport.AppendCloseReason(ctx, "Forbidden"), nil, errors.New(algoitny.ErrorMessage(err))
	}
	s.ticket.signedIn()
	s.signIn(&socketSession{token: token, userID: actor.User.ID, staff: actor.User.IsStaff}, actor.ExpiresAt)
	return algoitny.WithActor(ctx, actor), nil, nil
}

// tokenOf reads the session token of a connection_init payload.
func tokenOf(payload transport.InitPayload) string {
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
	return token
}

// socketSession is the credential a socket signed in with. The identity
// found in connection_init must not outlive the session: every operation on
// the socket authenticates again, and a timer re-checks between operations.
type socketSession struct {
	token  string
	userID string
	staff  bool // staff status at connection_init
}

// signIn records the socket's session and starts its checks: its expiry
// (at expires, if set) and the periodic re-check.
func (s *socket) signIn(sess *socketSession, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session = sess
	if !expires.IsZero() {
		s.expiry = time.AfterFunc(time.Until(expires), func() { s.closeWith(closeForbidden, "Session expired") })
	}
	every := s.t.cfg.RecheckInterval
	s.recheck = time.AfterFunc(jitter(every), func() {
		if s.checkSession() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closing {
				s.recheck.Reset(jitter(every))
			}
		}
	})
	s.t.users.add(sess.userID, s)
}

// checkSession closes the socket with 4403 unless its session is still
// accepted with the staff status it signed in with, and reports whether
// it is. A failure to check (the store is down) keeps the socket.
func (s *socket) checkSession() bool {
	s.mu.Lock()
	sess := s.session
	s.mu.Unlock()
	if sess == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	actor, err := s.t.cfg.Auth.Authenticate(ctx, sess.token)
	if algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) || (err == nil && actor.User.IsStaff != sess.staff) {
		s.closeWith(closeForbidden, "Forbidden")
		return false
	}
	return true
}

// reauthenticate gives an operation on a signed-in socket the socket's
// current identity (a fresh Authenticate, so quotas, plan and role are
// today's). When the session is no longer accepted, the socket is closed
// with 4403 and the EUNAUTHENTICATED error returned for the operation.
// A signed-out socket's operations run signed out, as over HTTP.
func (s *socket) reauthenticate(ctx context.Context) (context.Context, error) {
	s.mu.Lock()
	sess := s.session
	s.mu.Unlock()
	if sess == nil {
		return ctx, nil
	}
	actor, err := s.t.cfg.Auth.Authenticate(ctx, sess.token)
	if err != nil {
		if algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) {
			s.closeWith(closeForbidden, "Forbidden")
		}
		return ctx, err
	}
	return algoitny.WithActor(ctx, actor), nil
}

// jitter returns d ± 10%, at random. Sockets opened together (a deploy,
// a reconnect storm, a class starting a contest) would otherwise re-check
// their sessions together for ever: a thousand DynamoDB reads in the same
// millisecond every minute, and every event delayed behind them.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + rand.N(d/5+1)
}

// userSockets are the signed-in sockets of a transport, by user id.
type userSockets struct {
	mu     sync.Mutex
	byUser map[string]map[*socket]bool
}

func (u *userSockets) add(userID string, s *socket) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byUser[userID] == nil {
		u.byUser[userID] = map[*socket]bool{}
	}
	u.byUser[userID][s] = true
}

func (u *userSockets) remove(userID string, s *socket) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byUser[userID], s)
	if len(u.byUser[userID]) == 0 {
		delete(u.byUser, userID)
	}
}

func (u *userSockets) of(userID string) []*socket {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []*socket
	for s := range u.byUser[userID] {
		out = append(out, s)
	}
	return out
}
