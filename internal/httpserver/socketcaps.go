package httpserver

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// SocketLimits bound the websockets of one serve process. Every socket is
// an open file and a goroutine or two for as long as it lives, and opening
// one costs a client nothing: without a bound, sockets that only send
// connection_init fill the process's open files (accept then fails for
// everyone, HTTP requests included).
//
// Two caps, checked when the socket is opened (the HTTP upgrade), answered
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
// not keep signed-in users out. A zero cap is no cap.
type SocketLimits struct {
	MaxPerAddress      int
	MaxUnauthenticated int
	Reserve            int
	// TrustedProxies are the peers whose X-Forwarded-For is believed (see
	// ClientAddress). Empty: the header is ignored, as anyone can send it.
	TrustedProxies []netip.Prefix
}

// DefaultSocketLimits are the caps for a process that may hold openFiles
// open files: 256 sockets per address; a quarter of the open files (at most
// 10,000) for sockets not signed in, a tenth of that kept in reserve. The
// rest stays for signed-in sockets, HTTP connections and everything else.
func DefaultSocketLimits(openFiles uint64) SocketLimits {
	unauth := 10000
	if openFiles > 0 && openFiles/4 < uint64(unauth) {
		unauth = max(int(openFiles/4), 16)
	}
	return SocketLimits{MaxPerAddress: 256, MaxUnauthenticated: unauth, Reserve: max(unauth/10, 1)}
}

// ClientAddress is the address r's sockets are counted against: the TCP
// peer's, unless the peer is one of TrustedProxies — then X-Forwarded-For
// is read from the right, skipping trusted proxies, and the first address
// that is not one is the client (entries left of it were written by the
// client itself and prove nothing). An entry that is not an address stops
// the walk at the last address read. IPv6 addresses count by their /64
// network, which one subscriber usually holds whole.
func (l SocketLimits) ClientAddress(r *http.Request) string {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if l.trusted(addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseHostAddr(strings.TrimSpace(hops[i]))
			if !ok {
				break
			}
			addr = a
			if !l.trusted(addr) {
				break
			}
		}
	}
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

func (l SocketLimits) trusted(a netip.Addr) bool {
	for _, p := range l.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHostAddr reads "1.2.3.4", "1.2.3.4:5", "::1", "[::1]:5"; IPv4-mapped
// IPv6 addresses are IPv4, zones are dropped.
func parseHostAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		host, _, serr := net.SplitHostPort(s)
		if serr != nil {
			return netip.Addr{}, false
		}
		if a, err = netip.ParseAddr(host); err != nil {
			return netip.Addr{}, false
		}
	}
	return a.Unmap().WithZone(""), true
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// networks (ALGOITNY_TRUSTED_PROXIES).
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or a CIDR network", f)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a CIDR network", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// socketGate counts the open sockets of a transport against its limits.
type socketGate struct {
	limits SocketLimits
	logger *slog.Logger

	mu        sync.Mutex
	perAddr   map[string]int
	pending   int // upgraded, connection_init not (successfully) handled yet
	anonymous int // connection_init without a token
	warned    bool
}

func newSocketGate(l SocketLimits, logger *slog.Logger) *socketGate {
	return &socketGate{limits: l, logger: logger, perAddr: map[string]int{}}
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
	state int // guarded by gate.mu
}

// refusal is why a socket was not admitted: the HTTP status and a message.
type refusal struct {
	status int
	msg    string
}

// admit counts a socket about to be upgraded, or says why not.
func (g *socketGate) admit(r *http.Request) (*socketTicket, *refusal) {
	addr := g.limits.ClientAddress(r)
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.limits.MaxPerAddress; l > 0 && g.perAddr[addr] >= l {
		if !g.warned && r.Header.Get("X-Forwarded-For") != "" && g.logger != nil {
			// Once: behind a proxy whose address is not trusted, every
			// client shares the proxy's address, and its cap.
			g.warned = true
			g.logger.Warn("websocket refused: too many from one address, and the request came through a proxy that is not trusted — behind a reverse proxy or load balancer set ALGOITNY_TRUSTED_PROXIES",
				"address", addr, "limit", l)
		}
		return nil, &refusal{http.StatusTooManyRequests, "Too many websockets from your address (at most " + strconv.Itoa(l) + "): close some and try again"}
	}
	if l := g.limits.MaxUnauthenticated; l > 0 && g.pending+g.anonymous >= l+g.limits.Reserve {
		return nil, &refusal{http.StatusServiceUnavailable, "Too many websockets not signed in: try again later"}
	}
	g.perAddr[addr]++
	g.pending++
	return &socketTicket{gate: g, addr: addr}, nil
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
	if g.perAddr[t.addr]--; g.perAddr[t.addr] <= 0 {
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
