package httpserver

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
)

// ClientAddress is the address a request is counted against by the
// per-address limits (the admission's share, the socket caps): the TCP
// peer's, unless the peer is one of trustedProxies — then X-Forwarded-For
// is read from the right, skipping trusted proxies, and the first address
// that is not one is the client (entries left of it were written by the
// client itself and prove nothing). An entry that is not an address stops
// the walk at the last address read. IPv6 addresses count by their /64
// network, which one subscriber usually holds whole.
func ClientAddress(r *http.Request, trustedProxies []netip.Prefix) string {
	addr, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if trusted(trustedProxies, addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, ok := parseHostAddr(strings.TrimSpace(hops[i]))
			if !ok {
				break
			}
			addr = a
			if !trusted(trustedProxies, addr) {
				break
			}
		}
	}
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHostAddr reads "1.2.3.4", "1.2.3.4:5", "::1", "[::1]:5"; IPv4-mapped
// IPv6 addresses are IPv4, zones are dropped.
func parseHostAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil { // a peer's "host:port", at no cost
		return ap.Addr().Unmap().WithZone(""), true
	}
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

// proxyWarning logs, once, that a per-address limit refused a request that
// came through a proxy whose address is not trusted: behind such a proxy
// every client has the proxy's address and shares its limits.
type proxyWarning struct {
	once   sync.Once
	logger *slog.Logger
}

func (p *proxyWarning) check(r *http.Request, what, addr string) {
	if p == nil || p.logger == nil || r.Header.Get("X-Forwarded-For") == "" {
		return
	}
	p.once.Do(func() {
		p.logger.Warn(what+" refused: too many from one address, and the request came through a proxy that is not trusted — behind a reverse proxy or load balancer set ALGOITNY_TRUSTED_PROXIES",
			"address", addr)
	})
}
