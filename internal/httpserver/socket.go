package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/internal/apierror"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// socket is one websocket: gqlgen's connection (transport.WebsocketConn)
// on a gorilla connection, and what the application keeps of it — its
// session, its operations and the messages it has not sent yet.
//
// It enforces the graphql-transport-ws rules where gqlgen's defaults
// deviate: 4400 for an invalid message, 4401 for a subscribe before
// connection_init, 4408 when connection_init does not come in time, 4409
// for a duplicate subscription id, 4429 for a second connection_init. The
// legacy graphql-ws protocol gets 4409 too, for a start whose id is in use
// (gqlgen would run both).
//
// Messages are queued and written by a goroutine that runs while the queue
// is not empty: an operation never waits for a slow client, and the bytes
// a client leaves unread are counted (SocketLimits.MaxUnsentBytes).
type socket struct {
	t      *WebsocketTransport
	ticket *socketTicket
	admit  *admission      // the HTTP server's, nil when there is none
	c      *websocket.Conn // set by Accept

	mu     sync.Mutex // guards the fields below
	inited bool
	active map[string]bool // operation ids in use (both protocols)
	// ending counts, by id, the operations gqlgen runs that the client
	// ended (complete, stop) and whose last message gqlgen has not written
	// yet: that message is dropped (the client is done with the operation,
	// and may have reused the id already).
	ending  map[string]int
	session *socketSession // nil while signed out
	expiry  *time.Timer
	recheck *time.Timer
	ops     int                                  // operations running
	slots   map[*graphql.OperationContext]func() // admission slots of operations created, not dispatched yet

	queue   []frame // messages not yet written
	unsent  int64   // their bytes, and those of the one being written
	writing bool    // the writer runs
	closing bool    // a close frame is queued or written: nothing more is
	gone    bool    // Close ran: the writer closes the connection when done
}

// frame is a message of the queue: data, or a close frame's code and reason.
type frame struct {
	data  []byte
	close bool
}

type socketKey struct{}

func socketFrom(ctx context.Context) *socket {
	s, _ := ctx.Value(socketKey{}).(*socket)
	return s
}

var errProtocolClosed = errors.New("websocket closed for a protocol violation")

// NextReader implements transport.WebsocketConn. A socket being closed
// reads no more.
func (s *socket) NextReader() (int, io.Reader, error) {
	mt, data, err := s.c.ReadMessage()
	if s.isClosing() {
		return 0, nil, errSocketClosing
	}
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return 0, nil, transport.ErrWebsocketClosed
		}
		return 0, nil, err
	}
	var code int
	var reason string
	if s.c.Subprotocol() == subprotocolTransportWS {
		code, reason = s.check(data)
	} else {
		code, reason = s.checkLegacy(data)
	}
	if code != 0 {
		s.closeWith(code, reason)
		return 0, nil, errProtocolClosed
	}
	return mt, bytes.NewReader(withDocumentID(data)), nil
}

// withDocumentID is a subscribe (or legacy start) message with its
// payload's documentId lifted where TrustedDocuments reads it
// (liftDocumentID); other messages as they are.
func withDocumentID(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"documentId"`)) {
		return data
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	payload, ok := liftDocumentID(m["payload"])
	if !ok {
		return data
	}
	m["payload"] = payload
	return mustJSON(m)
}

type wireMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// check applies the graphql-transport-ws rules to a client message: a
// close code and reason for a violation, 0 otherwise.
func (s *socket) check(data []byte) (int, string) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
		return closeInvalidMessage, "Invalid message received"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Type {
	case "connection_init":
		if s.inited {
			return closeTooManyInitCalls, "Too many initialisation requests"
		}
		// The payload is optional, and an object when present.
		if p := bytes.TrimSpace(m.Payload); len(p) > 0 && !bytes.Equal(p, []byte("null")) && p[0] != '{' {
			return closeInvalidMessage, "Invalid message received"
		}
		s.inited = true
	case "subscribe":
		if !s.inited {
			return closeUnauthorized, "Unauthorized"
		}
		if m.ID == "" {
			return closeInvalidMessage, "Invalid message received"
		}
		if s.active[m.ID] {
			return closeDuplicateID, "Subscriber for " + m.ID + " already exists"
		}
		s.active[m.ID] = true
	case "complete":
		s.clientEnded(m.ID)
	case "ping", "pong":
	default:
		return closeInvalidMessage, "Invalid message received"
	}
	return 0, ""
}

// checkLegacy tracks the operation ids of a legacy graphql-ws socket: a
// start whose id is in use closes the socket with 4409, as with
// graphql-transport-ws; a stop frees the id. Malformed messages are left
// to gqlgen to answer.
func (s *socket) checkLegacy(data []byte) (int, string) {
	var m wireMessage
	if json.Unmarshal(data, &m) != nil {
		return 0, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Type {
	case "start":
		if s.active[m.ID] {
			return closeDuplicateID, "Subscriber for " + m.ID + " already exists"
		}
		s.active[m.ID] = true
	case "stop":
		s.clientEnded(m.ID)
	}
	return 0, ""
}

// clientEnded frees id, which the client ended; gqlgen still writes the
// operation's last message, which WriteJSON drops. s.mu is held.
func (s *socket) clientEnded(id string) {
	if !s.active[id] {
		return
	}
	delete(s.active, id)
	if s.ending == nil {
		s.ending = map[string]int{}
	}
	s.ending[id]++
}

// WriteJSON implements transport.WebsocketConn: the message is queued. An
// operation the server ends (complete or error) frees its id. A message
// over the socket's or its address's budget of unsent bytes closes the
// socket with 1008.
func (s *socket) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if endsOperation(b) {
		var m wireMessage
		if json.Unmarshal(b, &m) == nil {
			if n := s.ending[m.ID]; n > 0 {
				// The end of an operation the client ended earlier (gqlgen
				// always sends one): not the end of a newer one that may
				// have the id now.
				if s.ending[m.ID] = n - 1; n == 1 {
					delete(s.ending, m.ID)
				}
				return nil
			}
			delete(s.active, m.ID)
		}
	}
	return s.enqueue(b)
}

var errSocketClosing = errors.New("websocket closing")

// enqueue queues a message, within the budgets of unsent bytes. s.mu is
// held.
func (s *socket) enqueue(b []byte) error {
	if s.closing {
		return errSocketClosing
	}
	n, l := int64(len(b)), s.t.cfg.Limits.MaxUnsentBytes
	if (l > 0 && s.unsent > 0 && s.unsent+n > l) || !s.ticket.addUnsent(n) {
		s.closeLocked(closePolicyViolation, "Policy Violation: too many bytes not read")
		return errSocketClosing
	}
	s.unsent += n
	s.push(frame{data: b})
	return nil
}

// push appends f to the queue and starts the writer if it is not running.
// s.mu is held.
func (s *socket) push(f frame) {
	s.queue = append(s.queue, f)
	if !s.writing {
		s.writing = true
		go s.writeQueue()
	}
}

// writeQueue writes the queued messages in order, each within the write
// timeout, and returns when the queue is empty. After a close frame, a
// failed write, or with the socket gone (Close) and nothing left to
// write, it closes the connection: the reader then fails and gqlgen ends
// the socket.
func (s *socket) writeQueue() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.writing = false
			gone := s.gone
			s.mu.Unlock()
			if gone {
				_ = s.c.Close()
			}
			return
		}
		f := s.queue[0]
		s.queue[0] = frame{}
		s.queue = s.queue[1:]
		s.mu.Unlock()

		deadline := time.Now().Add(s.t.cfg.WriteTimeout)
		var err error
		if f.close {
			err = s.c.WriteControl(websocket.CloseMessage, f.data, deadline)
		} else {
			s.c.SetWriteDeadline(deadline)
			err = s.c.WriteMessage(websocket.TextMessage, f.data)
			s.mu.Lock()
			s.unsent -= int64(len(f.data))
			s.ticket.addUnsent(-int64(len(f.data)))
			s.mu.Unlock()
		}
		if err != nil || f.close {
			s.mu.Lock()
			s.closing = true
			s.dropQueue()
			s.writing = false
			s.mu.Unlock()
			_ = s.c.Close()
			return
		}
	}
}

// dropQueue drops the messages not written yet. s.mu is held.
func (s *socket) dropQueue() {
	for _, f := range s.queue {
		if !f.close {
			s.unsent -= int64(len(f.data))
			s.ticket.addUnsent(-int64(len(f.data)))
		}
	}
	s.queue = nil
}

// closeWith closes the socket with code: the messages not written yet are
// dropped (the one being written goes first), the close frame is sent and
// the connection closed.
func (s *socket) closeWith(code int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked(code, reason)
}

func (s *socket) closeLocked(code int, reason string) {
	if s.closing {
		return
	}
	s.closing = true
	s.dropQueue()
	s.stopTimers()
	s.push(frame{data: websocket.FormatCloseMessage(code, reason), close: true})
}

// endsOperation reports whether an outgoing message (either protocol)
// is a "complete" or an "error". gqlgen's message structs marshal their type
// last, so the end of the bytes tells without parsing the payload.
func endsOperation(msg []byte) bool {
	return bytes.HasSuffix(msg, []byte(`"type":"complete"}`)) || bytes.HasSuffix(msg, []byte(`"type":"error"}`))
}

// WriteClose implements transport.WebsocketConn: the close frame follows
// the messages queued, gqlgen's generic codes translated into
// graphql-transport-ws's.
func (s *socket) WriteClose(code int, msg string) error {
	if s.c.Subprotocol() == subprotocolTransportWS && code == transport.WebsocketCloseProtocolError {
		switch msg {
		case "connection initialisation timeout":
			code, msg = closeInitTimeout, "Connection initialisation timeout"
		default:
			code, msg = closeInvalidMessage, "Invalid message received"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.closing = true
		s.stopTimers()
		s.push(frame{data: websocket.FormatCloseMessage(code, msg), close: true})
	}
	return nil
}

// stopTimers stops the session's expiry and re-check. s.mu is held.
func (s *socket) stopTimers() {
	for _, t := range []*time.Timer{s.expiry, s.recheck} {
		if t != nil {
			t.Stop()
		}
	}
}

// Close implements transport.WebsocketConn: the connection is closed once
// the queue is written (at most the write timeout per message).
func (s *socket) Close() error {
	s.mu.Lock()
	s.gone, s.closing = true, true
	s.stopTimers()
	writing, sess := s.writing, s.session
	s.mu.Unlock()
	if sess != nil {
		s.t.users.remove(sess.userID, s)
	}
	s.t.forget(s)
	if writing {
		return nil
	}
	return s.c.Close()
}

// Subprotocol implements transport.WebsocketConn.
func (s *socket) Subprotocol() string { return s.c.Subprotocol() }

// SetReadLimit implements transport.WebsocketReadLimiter.
func (s *socket) SetReadLimit(n int64) { s.c.SetReadLimit(n) }

// SetReadDeadline implements transport.WebsocketReadDeadliner.
func (s *socket) SetReadDeadline(t time.Time) error { return s.c.SetReadDeadline(t) }

// socketExecutor is the executor of one socket's operations: gqlgen's,
// with the socket's caps, the admission and the session's re-check around
// each operation. gqlgen creates an operation (parsing, validation, the
// limits' checks) on the socket's reader and dispatches it (execution) on
// a goroutine of its own; the operation's slot of the admission is taken
// before the one and released after the other.
type socketExecutor struct {
	graphql.GraphExecutor
	s *socket
}

// CreateOperationContext implements graphql.GraphExecutor: over a cap the
// operation is answered TOO_MANY_REQUESTS, the admission turning it away
// SERVER_BUSY (or TOO_MANY_REQUESTS), both before it is parsed; a
// subscription on a signed-out socket closes the socket with 4401.
func (e socketExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	s := e.s
	refused := &graphql.OperationContext{RawQuery: params.Query, OperationName: params.OperationName, Variables: params.Variables}
	if err := s.startOperation(); err != nil {
		return refused, gqlerror.List{err}
	}
	release, err := s.slot(ctx)
	if err != nil {
		s.endOperation()
		return refused, gqlerror.List{err}
	}
	rc, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	if errs == nil && rc.Operation.Operation == ast.Subscription && s.signedOut() {
		// Every subscription follows something of a signed-in user's (a
		// job, an execution, hints, a check), so it could only ever answer
		// NOT_FOUND, and a client that subscribes without its token has
		// lost it: it should sign in again, not hold the socket.
		s.closeWith(closeUnauthorized, "Unauthorized: send a token in connection_init to subscribe")
		errs = gqlerror.List{apierror.New(apierror.Unauthenticated, "subscriptions need a signed-in socket: send your token in connection_init")}
	}
	if errs != nil {
		release()
		s.endOperation()
		return rc, errs
	}
	s.mu.Lock()
	if s.slots == nil {
		s.slots = map[*graphql.OperationContext]func(){}
	}
	s.slots[rc] = release
	s.mu.Unlock()
	return rc, nil
}

// DispatchOperation implements graphql.GraphExecutor: the operation runs
// as the session's user now (reauthenticate) in the slot its creation
// took — a query or mutation until its answer is made, a subscription
// until its resolver has started — and counts against the caps until its
// last response.
func (e socketExecutor) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	s := e.s
	s.mu.Lock()
	release := s.slots[rc]
	delete(s.slots, rc)
	s.mu.Unlock()
	if release == nil { // not created by this executor
		release = func() {}
	}
	var once, ended sync.Once
	free := func() { once.Do(release) }
	end := func() { free(); ended.Do(s.endOperation) }
	defer func() {
		if p := recover(); p != nil {
			end()
			panic(p)
		}
	}()
	ctx, err := s.reauthenticate(ctx)
	if err != nil {
		end()
		return graphql.OneShot(e.DispatchError(ctx, gqlerror.List{{Err: err, Message: err.Error()}})), ctx
	}
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, rc)
	if rc.Operation.Operation == ast.Subscription {
		free()
	}
	return func(ctx context.Context) *graphql.Response {
		defer func() {
			if p := recover(); p != nil {
				end()
				panic(p)
			}
		}()
		resp := next(ctx)
		free()
		if resp == nil {
			end()
		}
		return resp
	}, ctx
}

// startOperation counts an operation against the socket's cap and its
// address's: an error to answer it with when either is reached.
func (s *socket) startOperation() *gqlerror.Error {
	l := s.t.cfg.Limits
	s.mu.Lock()
	limit, signedOut := l.MaxOperations, s.session == nil
	if signedOut {
		limit = l.MaxOperationsSignedOut
	}
	if limit > 0 && s.ops >= limit {
		s.mu.Unlock()
		msg := fmt.Sprintf("this socket runs at most %d operations at once: wait for one to complete", limit)
		if signedOut && l.MaxOperations > limit {
			msg += " (a signed-in socket runs " + strconv.Itoa(l.MaxOperations) + ")"
		}
		return apierror.New(codeTooMany, msg)
	}
	s.ops++
	s.mu.Unlock()
	if err := s.ticket.startOperation(); err != nil {
		s.mu.Lock()
		s.ops--
		s.mu.Unlock()
		return err
	}
	return nil
}

// endOperation uncounts an operation startOperation counted.
func (s *socket) endOperation() {
	s.mu.Lock()
	s.ops--
	s.mu.Unlock()
	s.ticket.endOperation()
}

// slot takes a slot of the admission for an operation of the socket's
// address (no admission: nothing to take) and returns its release.
func (s *socket) slot(ctx context.Context) (func(), *gqlerror.Error) {
	a := s.admit
	if a == nil {
		return func() {}, nil
	}
	addr := s.ticket.addr
	switch err := a.admit(ctx, addr); {
	case errors.Is(err, errTooMany):
		return nil, apierror.New(codeTooMany, "too many operations of your address are waiting or being served: try again later")
	case err != nil:
		return nil, apierror.New(codeBusy, "the server is busy: try again later")
	}
	return func() { a.release(addr) }, nil
}

func (s *socket) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *socket) signedOut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session == nil
}
