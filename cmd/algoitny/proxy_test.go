package main

import (
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tcpProxy forwards connections to a TCP address, and can stall them (stop
// forwarding in both directions without closing anything, as a network
// partition does), cut them, or add latency: the faults and the distance a
// replica's link to PostgreSQL has in the multi-replica tests.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	stalled bool
	severed bool          // every connection is closed at once (Sever)
	resume  chan struct{} // closed when a stall ends
	pairs   map[net.Conn]net.Conn
	latency atomic.Int64 // ns
}

// startProxy listens on 127.0.0.1 and forwards to target until the test ends.
func startProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, resume: make(chan struct{}), pairs: map[net.Conn]net.Conn{}}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

// Addr is the proxy's address.
func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		severed := p.severed
		p.mu.Unlock()
		if severed {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.pairs[c] = up
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst: each chunk is written the proxy's latency after
// it was read (reading goes on meanwhile, as on a long link), and held while
// the proxy is stalled.
func (p *tcpProxy) pipe(src, dst net.Conn) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	chunks := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer src.Close()
		defer dst.Close()
		for c := range chunks {
			if wait := time.Until(c.at.Add(time.Duration(p.latency.Load()))); wait > 0 {
				time.Sleep(wait) // the link's latency: what this proxy simulates
			}
			p.mu.Lock()
			for p.stalled {
				wait := p.resume
				p.mu.Unlock()
				<-wait
				p.mu.Lock()
			}
			p.mu.Unlock()
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	defer close(chunks)
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case chunks <- chunk{buf[:n], time.Now()}:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// SetLatency delays every byte forwarded from now on by d, in both
// directions (0: none).
func (p *tcpProxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// Stall stops forwarding without closing the connections.
func (p *tcpProxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Resume forwards again, what was held first.
func (p *tcpProxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled {
		p.stalled = false
		close(p.resume)
		p.resume = make(chan struct{})
	}
}

// Cut closes every connection (new ones are accepted).
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, up := range p.pairs {
		c.Close()
		up.Close()
	}
	p.pairs = map[net.Conn]net.Conn{}
}

// Sever cuts the link for good: every connection is closed, and new ones
// are closed as soon as they are accepted, as when the network between a
// replica and PostgreSQL is down.
func (p *tcpProxy) Sever() {
	p.mu.Lock()
	p.severed = true
	p.mu.Unlock()
	p.Cut()
}

// UpstreamPorts returns the local ports of the proxy's connections to the
// target: PostgreSQL's pg_stat_activity.client_port of the backends that
// serve the proxied process.
func (p *tcpProxy) UpstreamPorts() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ports []int
	for _, up := range p.pairs {
		if a, ok := up.LocalAddr().(*net.TCPAddr); ok {
			ports = append(ports, a.Port)
		}
	}
	return ports
}

// viaProxy returns the PostgreSQL URL u with its host:port replaced by
// proxy's address.
func viaProxy(t testing.TB, u string, proxy *tcpProxy) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	parsed.Host = proxy.Addr()
	return parsed.String()
}

// pgAddr returns the host:port of a PostgreSQL URL.
func pgAddr(t testing.TB, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	host, port := parsed.Hostname(), parsed.Port()
	if port == "" {
		port = "5432"
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatalf("port of %s: %v", u, err)
	}
	return net.JoinHostPort(host, port)
}
