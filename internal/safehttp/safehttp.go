// Package safehttp fetches URLs that users give the server (problem pages to
// extract, pages to watch) without letting them reach the server's own
// network: Judge0 fell to exactly that kind of server-side request forgery
// (CVE-2024-29021).
//
// Only http and https URLs on ports 80 and 443 are fetched (any port, for
// clients configured with AnyPort);
// the address a hostname resolves to is checked when the connection is made
// (so a name that later resolves to 127.0.0.1 is still refused), every
// redirect goes through the same check, bodies are read up to a cap, and
// every request has a timeout.
package safehttp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Config configures a Client.
type Config struct {
	// Timeout bounds a whole request, redirects included (default 15 s).
	Timeout time.Duration
	// MaxBodyBytes caps what is read of a response (default 2 MB).
	MaxBodyBytes int64
	// MaxRedirects bounds the redirects followed (default 5).
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
	// AllowHosts lists hosts ("127.0.0.1", "localhost:8080") that may be
	// fetched although they are not public: for tests only. Empty by default.
	AllowHosts []string
	// MinHostInterval spaces requests to one host (default 0: none), so a
	// burst of jobs does not hammer a judge's site.
	MinHostInterval time.Duration
	// Resolver resolves host names (default: the system's). Tests set one
	// whose answers they control.
	Resolver *net.Resolver
	// RootCAs, when set, replaces the system's trusted roots (tests that
	// serve TLS with certificates of their own).
	RootCAs *x509.CertPool
	// AnyPort lets URLs name any port 1–65535 (URL checks and webhooks: a
	// status page on :8080 is common). The address must still be public;
	// without it only 80 and 443 are fetched (problem pages).
	AnyPort bool
	// OwnAddresses are this server's own public addresses that its
	// interfaces do not show (a NATed or load-balanced IP): refused like
	// private ones, so that a URL cannot reach the server's own ports
	// from inside its firewall. The interfaces' addresses are refused
	// without being listed.
	OwnAddresses []netip.Addr
}

// Client fetches user-given URLs safely.
type Client struct {
	cfg  Config
	http *http.Client

	mu       sync.Mutex
	nextSlot map[string]time.Time // per host: the earliest next request
}

// ErrForbidden is wrapped by errors about addresses the client refuses.
var ErrForbidden = errors.New("safehttp: address not allowed")

// NotPublicMessage is what Get tells of a destination it refuses (a
// non-public address, before or after DNS resolution) and, in the same
// words, of a host name that does not exist (NXDOMAIN): told apart, the two
// answers would let anyone ask which names the server's own DNS knows.
const NotPublicMessage = "the URL does not lead to a public address"

// notPublic is the error Get returns for a refused destination or a name
// that does not resolve: EINVALID (field "url") with NotPublicMessage,
// wrapping ErrForbidden and the cause.
func notPublic(cause error) error {
	return &algoitny.Error{Code: algoitny.EINVALID, Field: "url", Message: NotPublicMessage,
		Err: fmt.Errorf("%w: %w", ErrForbidden, cause)}
}

// refused reports whether a request failed because of where it leads: the
// address is refused, or the name does not exist (which Get answers alike).
// Temporary DNS failures are not: the resolver is down for every name.
func refused(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, ErrForbidden) || (errors.As(err, &dnsErr) && dnsErr.IsNotFound)
}

// New returns a Client.
func New(cfg Config) *Client {
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 2 << 20
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = 5
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "AlgoItny/1.0 (+https://algoitny.dev)"
	}
	c := &Client{cfg: cfg}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: c.control, Resolver: cfg.Resolver}
	transport := &http.Transport{
		DialContext:           dialer.DialContext,
		Proxy:                 nil, // a proxy would hide the real destination from the check
		TLSHandshakeTimeout:   5 * time.Second,
		TLSClientConfig:       &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
	}
	c.http = &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if via[0].Method == http.MethodPost {
				// A webhook's answer is its first response: a 307/308
				// would re-send the signed body to another host.
				return http.ErrUseLastResponse
			}
			if len(via) >= cfg.MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", cfg.MaxRedirects)
			}
			return c.CheckURL(req.URL.String())
		},
	}
	return c
}

// CheckURL says whether a URL may be fetched at all, before any DNS lookup:
// http(s) only, no credentials, a host, port 80 or 443 (any port 1–65535
// with Config.AnyPort; redirects too), and no literal address
// that is not public. It returns EINVALID for malformed URLs, EINVALID
// with NotPublicMessage (wrapping ErrForbidden) for a destination that is
// not public — the words a dial to one gets, so that the two tell nobody
// apart which destinations are dialled —, and an error wrapping
// ErrForbidden for a refused port.
func (c *Client) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return algoitny.Invalid("url", "only http(s) URLs can be fetched")
	}
	if u.User != nil {
		return algoitny.Invalid("url", "URLs with credentials cannot be fetched")
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" && !c.allowedHost(u.Host) {
		if n, err := strconv.Atoi(p); !c.cfg.AnyPort || err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%w: port %s", ErrForbidden, p)
		}
	}
	host := strings.Trim(u.Hostname(), "[]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		if !c.allowedHost(u.Host) {
			return notPublic(fmt.Errorf("%s", host))
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil && !public(ip) && !c.allowedHost(u.Host) {
		return notPublic(fmt.Errorf("%s", ip))
	}
	return nil
}

func (c *Client) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return slices.Contains(c.cfg.AllowHosts, hostport) || slices.Contains(c.cfg.AllowHosts, host)
}

// control runs for every connection, after DNS resolution: the address
// actually dialled must be public (or allow-listed).
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbidden, address)
	}
	if c.allowedHost(address) || c.allowedHost(ap.Addr().String()) {
		return nil
	}
	if !public(ap.Addr()) {
		return fmt.Errorf("%w: %s resolves to a non-public address", ErrForbidden, ap.Addr())
	}
	if c.own(ap.Addr()) {
		return fmt.Errorf("%w: %s is this server's own address", ErrForbidden, ap.Addr())
	}
	return nil
}

// own reports whether ip is one of this server's addresses: listed in
// Config.OwnAddresses or held by one of its network interfaces (read at
// each dial, so an address added later counts too). A connection to it
// would be delivered locally, past any firewall in front of the server.
func (c *Client) own(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, embedded := range embeddedIPv4(ip) {
		if c.own(embedded) {
			return true
		}
	}
	if slices.Contains(c.cfg.OwnAddresses, ip) {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true // unknown: refuse rather than risk reaching ourselves
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ip {
			return true
		}
	}
	return false
}

// public reports whether ip is a globally routable unicast address: not
// loopback, private (RFC 1918, ULA), link-local (which holds the cloud
// metadata endpoint 169.254.169.254), CGNAT, multicast, unspecified or
// documentation space.
func public(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, embedded := range embeddedIPv4(ip) {
		if !public(embedded) {
			return false
		}
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries, by
// which it is judged: IPv4-compatible (::a.b.c.d, deprecated but still
// routed to the IPv4 address by some stacks), NAT64 (64:ff9b::/96), 6to4
// (2002:AABB:CCDD::/16 carries AA.BB.CC.DD) and Teredo (2001::/32: the
// server's address in bits 32–63, the client's inverted in the last 32).
// IPv4-mapped addresses are unmapped before (netip.Addr.Unmap).
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(x [4]byte) netip.Addr { return netip.AddrFrom4(x) }
	switch {
	case ipv4Compatible.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return []netip.Addr{v4([4]byte{b[12], b[13], b[14], b[15]})}
	case nat64.Contains(ip):
		return []netip.Addr{v4([4]byte{b[12], b[13], b[14], b[15]})}
	case sixToFour.Contains(ip):
		return []netip.Addr{v4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(ip):
		return []netip.Addr{v4([4]byte{b[4], b[5], b[6], b[7]}), v4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})}
	}
	return nil
}

var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
)

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),   // site-local (deprecated, still routed inside some sites)
	netip.MustParsePrefix("100::/64"),    // discard-only
	netip.MustParsePrefix("2001:2::/48"), // benchmarking
}

// Response is a fetched response with its (capped) body.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	// Truncated is set when the body was longer than MaxBodyBytes.
	Truncated bool
	// FinalURL is where the redirects ended.
	FinalURL string
	// CertNotAfter is when the final server's (verified) certificate
	// expires; nil over plain http.
	CertNotAfter *time.Time
	Elapsed      time.Duration
}

// Get fetches raw. It returns EINVALID for URLs that cannot be fetched;
// EINVALID with NotPublicMessage, wrapping ErrForbidden, when the
// destination is refused or its host name does not exist (one answer for
// both, see NotPublicMessage); and the network error otherwise.
func (c *Client) Get(ctx context.Context, raw string) (*Response, error) {
	h := http.Header{}
	h.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	return c.do(ctx, http.MethodGet, raw, h, nil)
}

// Post sends body to raw with the given headers (a webhook), under the same
// rules as Get — public destinations only, checked again after DNS
// resolution — and returns the same errors. A POST's redirect is not
// followed: the 3xx is the answer (a 307/308 would re-send the signed body
// and its headers to wherever it points).
func (c *Client) Post(ctx context.Context, raw string, header http.Header, body []byte) (*Response, error) {
	return c.do(ctx, http.MethodPost, raw, header, body)
}

// do is Get and Post.
func (c *Client) do(ctx context.Context, method, raw string, header http.Header, body []byte) (*Response, error) {
	if err := c.CheckURL(raw); err != nil {
		if errors.Is(err, ErrForbidden) {
			return nil, notPublic(err)
		}
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, raw, rd)
	if err != nil {
		return nil, algoitny.Invalid("url", "invalid URL")
	}
	if err := c.wait(ctx, req.URL.Host); err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		if refused(err) {
			return nil, notPublic(err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	out := &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: got, FinalURL: resp.Request.URL.String(), Elapsed: time.Since(start)}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		na := resp.TLS.PeerCertificates[0].NotAfter.UTC()
		out.CertNotAfter = &na
	}
	if int64(len(got)) > c.cfg.MaxBodyBytes {
		out.Body, out.Truncated = got[:c.cfg.MaxBodyBytes], true
	}
	return out, nil
}

// wait reserves the host's next request slot and sleeps until it.
func (c *Client) wait(ctx context.Context, host string) error {
	if c.cfg.MinHostInterval <= 0 {
		return nil
	}
	c.mu.Lock()
	if c.nextSlot == nil {
		c.nextSlot = map[string]time.Time{}
	}
	now := time.Now()
	slot := c.nextSlot[host]
	if slot.Before(now) {
		slot = now
	}
	c.nextSlot[host] = slot.Add(c.cfg.MinHostInterval)
	c.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(slot)):
		return nil
	}
}
