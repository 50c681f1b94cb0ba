package httpserver_test

import (
	"net/http/httptest"
	"net/netip"
	"syscall"
	"testing"

	"github.com/algoitny/api/internal/httpserver"
)

func TestClientAddress(t *testing.T) {
	t.Parallel()
	proxies, err := httpserver.ParseTrustedProxies("10.0.0.0/8, 192.0.2.7, ::1")
	if err != nil {
		t.Fatal(err)
	}
	trusting := proxies
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"PeerWithoutProxies", nil, "203.0.113.9:4000", nil, "203.0.113.9"},
		{"ForwardedForIgnoredUntrusted", nil, "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"ForwardedForFromUntrustedPeer", trusting, "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"OneTrustedProxy", trusting, "192.0.2.7:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		// The client wrote the leftmost entries itself: only the address
		// the first trusted proxy saw counts.
		{"ForgedLeftEntries", trusting, "10.1.2.3:4000", []string{"1.1.1.1, 2.2.2.2, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"SeveralHeaders", trusting, "10.1.2.3:4000", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},
		{"AllTrusted", trusting, "10.1.2.3:4000", []string{"10.0.0.1, 10.0.0.2"}, "10.0.0.1"},
		{"NoHeaderFromProxy", trusting, "10.1.2.3:4000", nil, "10.1.2.3"},
		{"GarbageStopsTheWalk", trusting, "10.1.2.3:4000", []string{"198.51.100.1, not-an-address, 10.0.0.5"}, "10.0.0.5"},
		{"PortInEntry", trusting, "10.1.2.3:4000", []string{"198.51.100.1:5555"}, "198.51.100.1"},
		{"IPv6By64", nil, "[2001:db8:1:2:aaaa::1]:4000", nil, "2001:db8:1:2::/64"},
		{"IPv6SameNetwork", nil, "[2001:db8:1:2:bbbb::9]:4000", nil, "2001:db8:1:2::/64"},
		{"IPv6Proxy", trusting, "[::1]:4000", []string{"[2001:db8::5]:80"}, "2001:db8::/64"},
		{"IPv4Mapped", nil, "[::ffff:203.0.113.9]:4000", nil, "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/query", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := httpserver.ClientAddress(r, tc.proxies); got != tc.want {
				t.Fatalf("ClientAddress = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := httpserver.ParseTrustedProxies(" 10.0.0.0/8 ,192.0.2.7,,2001:db8::/32, ::ffff:198.51.100.2")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("198.51.100.2/32")}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.internal", "10.0.0"} {
		if _, err := httpserver.ParseTrustedProxies(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestDefaultSocketLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		openFiles                uint64
		perAddr, unauth, reserve int
	}{
		{1 << 20, 256, 10000, 1000},
		{20000, 256, 5000, 500},
		{1024, 256, 256, 25},
		{0, 256, 10000, 1000}, // unknown
	} {
		l := httpserver.DefaultSocketLimits(tc.openFiles)
		if l.MaxPerAddress != tc.perAddr || l.MaxUnauthenticated != tc.unauth || l.Reserve != tc.reserve {
			t.Fatalf("DefaultSocketLimits(%d) = %+v", tc.openFiles, l)
		}
	}
}

// TestRaiseOpenFileLimit lowers the process's soft limit and checks that
// RaiseOpenFileLimit puts it back at the hard limit. Not parallel: the
// limit is the whole test process's.
func TestRaiseOpenFileLimit(t *testing.T) {
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Max < 512 {
		t.Skipf("hard limit %d: too low to lower safely", orig.Max)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	low := syscall.Rlimit{Cur: orig.Max - 256, Max: orig.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	got, err := httpserver.RaiseOpenFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil {
		t.Fatal(err)
	}
	if now.Cur != orig.Max || got != now.Cur {
		t.Fatalf("soft limit %d after RaiseOpenFileLimit (returned %d), want the hard limit %d", now.Cur, got, orig.Max)
	}
}
