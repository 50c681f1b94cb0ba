package httpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// SocketLimits bound the websockets of one serve process and what they
// hold. A zero cap is no cap.
//
// Sockets: every socket is an open file and a goroutine or two for as
// long as it lives, and opening one costs a client nothing: without a
// bound, sockets that only send connection_init fill the process's open
// files (accept then fails for everyone, HTTP requests included). Two
// caps, checked when the socket is opened (the HTTP upgrade), answered
// with an HTTP status and Retry-After, before any websocket exists:
//
//   - MaxPerAddress: the open sockets of one client address (ClientAddress),
//     signed in or not — 429 Too Many Requests over it.
//   - MaxUnauthenticated plus Reserve: the sockets not signed in, in total —
//     503 Service Unavailable over it. A socket is not signed in from its
//     upgrade until a connection_init with a valid token; one whose
//     connection_init has no token stays so for its life.
//
// Signed-out sockets (connection_init without a token) may hold at most
// MaxUnauthenticated of those slots: one more is closed at connection_init
// with 1013 Try Again Later. The Reserve slots are thus always left for
// sockets on their way to signing in (between upgrade and connection_init,
// at most WebsocketConfig.InitTimeout): a flood of signed-out sockets does
// not keep signed-in users out.
//
// Operations: a socket runs at most MaxOperations operations at once
// (MaxOperationsSignedOut when it is signed out), and the sockets of one
// address at most MaxOperationsPerAddress; a subscription counts until it
// completes. One more is answered TOO_MANY_REQUESTS, the socket stays.
//
// Bytes not yet sent: the messages a socket has to send wait in its queue
// while the client does not read them. A message that would take the
// queue past MaxUnsentBytes (unless the queue is empty: one answer, which
// the response budget bounds, always goes), or the queues of the address's
// sockets past MaxUnsentBytesPerAddress, closes the socket with 1008
// Policy Violation: the queued messages are dropped, the one being written
// goes first.
type SocketLimits struct {
	MaxPerAddress      int
	MaxUnauthenticated int
	Reserve            int

	MaxOperations           int
	MaxOperationsSignedOut  int
	MaxOperationsPerAddress int

	MaxUnsentBytes           int64
	MaxUnsentBytesPerAddress int64

	// TrustedProxies are the peers whose X-Forwarded-For is believed (see
	// ClientAddress). Empty: the header is ignored, as anyone can send it.
	TrustedProxies []netip.Prefix
}

// DefaultSocketLimits are the caps for a process that may hold openFiles
// open files: 256 sockets per address; a quarter of the open files (at most
// 10,000) for sockets not signed in, a tenth of that kept in reserve. The
// rest stays for signed-in sockets, HTTP connections and everything else.
// A socket runs 16 operations at once (2 signed out), an address's sockets
// 256; a socket's unsent messages hold 16 MB, an address's 128 MB (more
// than the largest answer, DefaultResponseBudget.SignedIn).
func DefaultSocketLimits(openFiles uint64) SocketLimits {
	unauth := 10000
	if openFiles > 0 && openFiles/4 < uint64(unauth) {
		unauth = max(int(openFiles/4), 16)
	}
	return SocketLimits{MaxPerAddress: 256, MaxUnauthenticated: unauth, Reserve: max(unauth/10, 1),
		MaxOperations: 16, MaxOperationsSignedOut: 2, MaxOperationsPerAddress: 256,
		MaxUnsentBytes: 16 << 20, MaxUnsentBytesPerAddress: 128 << 20}
}

// socketGate counts the open sockets of a transport against its limits,
// and what they hold by address.
type socketGate struct {
	limits SocketLimits
	warn   *proxyWarning

	mu        sync.Mutex
	perAddr   map[string]*addrSockets
	pending   int // upgraded, connection_init not (successfully) handled yet
	anonymous int // connection_init without a token

	open   atomic.Int64 // sockets admitted and not closed (for /metrics)
	ops    atomic.Int64 // operations running, all sockets (for /metrics)
	unsent atomic.Int64 // bytes queued, all sockets (for /metrics)
}

// addrSockets is what the sockets of one address hold.
type addrSockets struct {
	sockets int // guarded by socketGate.mu
	ops     atomic.Int64
	unsent  atomic.Int64
}

func newSocketGate(l SocketLimits, logger *slog.Logger) *socketGate {
	return &socketGate{limits: l, warn: &proxyWarning{logger: logger}, perAddr: map[string]*addrSockets{}}
}

// Socket states of a ticket.
const (
	ticketPending = iota
	ticketSignedIn
	ticketAnonymous
	ticketRefused  // refused at connection_init: closing
	ticketReleased // closed
)

// socketTicket is one admitted socket's place in the counts.
type socketTicket struct {
	gate  *socketGate
	addr  string
	load  *addrSockets
	state int // guarded by gate.mu
}

// refusal is why a socket was not admitted: the HTTP status and a message.
type refusal struct {
	status int
	msg    string
}

// admit counts a socket about to be upgraded, or says why not.
func (g *socketGate) admit(r *http.Request) (*socketTicket, *refusal) {
	addr := ClientAddress(r, g.limits.TrustedProxies)
	g.mu.Lock()
	defer g.mu.Unlock()
	load := g.perAddr[addr]
	if l := g.limits.MaxPerAddress; l > 0 && load != nil && load.sockets >= l {
		g.warn.check(r, "websocket", addr)
		return nil, &refusal{http.StatusTooManyRequests, "Too many websockets from your address (at most " + strconv.Itoa(l) + "): close some and try again"}
	}
	if l := g.limits.MaxUnauthenticated; l > 0 && g.pending+g.anonymous >= l+g.limits.Reserve {
		return nil, &refusal{http.StatusServiceUnavailable, "Too many websockets not signed in: try again later"}
	}
	if load == nil {
		load = &addrSockets{}
		g.perAddr[addr] = load
	}
	load.sockets++
	g.pending++
	g.open.Add(1)
	return &socketTicket{gate: g, addr: addr, load: load}, nil
}

// signedIn records that the socket signed in: it no longer counts as not
// signed in.
func (t *socketTicket) signedIn() {
	g := t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.state == ticketPending {
		g.pending--
		t.state = ticketSignedIn
	}
}

// anonymous records that the socket stays signed out and reports whether
// it may: at most MaxUnauthenticated do.
func (t *socketTicket) anonymous() bool {
	g := t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.state != ticketPending {
		return t.state == ticketAnonymous
	}
	g.pending--
	if l := g.limits.MaxUnauthenticated; l > 0 && g.anonymous >= l {
		t.state = ticketRefused
		return false
	}
	g.anonymous++
	t.state = ticketAnonymous
	return true
}

// startOperation counts an operation against the address's cap; an error
// to answer it with when the address runs MaxOperationsPerAddress already.
func (t *socketTicket) startOperation() *gqlerror.Error {
	l := int64(t.gate.limits.MaxOperationsPerAddress)
	if n := t.load.ops.Add(1); l > 0 && n > l {
		t.load.ops.Add(-1)
		return apierror.New(codeTooMany, fmt.Sprintf("the websockets of your address run at most %d operations at once: wait for some to complete", l))
	}
	t.gate.ops.Add(1)
	return nil
}

// endOperation uncounts an operation startOperation counted.
func (t *socketTicket) endOperation() {
	t.load.ops.Add(-1)
	t.gate.ops.Add(-1)
}

// addUnsent counts n more bytes queued (negative: sent or dropped) and
// reports whether the address stays within MaxUnsentBytesPerAddress
// (when it would not, nothing is counted).
func (t *socketTicket) addUnsent(n int64) bool {
	l := t.gate.limits.MaxUnsentBytesPerAddress
	if after := t.load.unsent.Add(n); n > 0 && l > 0 && after > l {
		t.load.unsent.Add(-n)
		return false
	}
	t.gate.unsent.Add(n)
	return true
}

// release frees the socket's place (it is closed).
func (t *socketTicket) release() {
	g := t.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	switch t.state {
	case ticketReleased:
		return
	case ticketPending:
		g.pending--
	case ticketAnonymous:
		g.anonymous--
	}
	t.state = ticketReleased
	g.open.Add(-1)
	if t.load.sockets--; t.load.sockets <= 0 {
		delete(g.perAddr, t.addr)
	}
}

// refuse answers an upgrade request that was not admitted. The connection
// is closed after the answer, so that a refused client holds no file.
func (rf *refusal) refuse(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Retry-After", "10")
	h.Set("Connection", "close")
	http.Error(w, rf.msg, rf.status)
}
