package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(101-i)*time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.95, 95 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := quantile(d, tc.q); got != tc.want {
			t.Fatalf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if d[0] != 100*time.Millisecond {
		t.Fatal("quantile sorted its input")
	}
	if quantile(nil, 0.5) != 0 {
		t.Fatal("quantile of nothing")
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	out := table([]row{
		{scenario: "a|b", p50: "1 ms", pass: ptr(true)},
		{scenario: "c", pass: ptr(false)},
		{scenario: "d"},
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("table has %d lines:\n%s", len(lines), out)
	}
	for i, want := range []string{"PASS", "FAIL", "info"} {
		if !strings.HasSuffix(lines[2+i], "| "+want+" |") {
			t.Fatalf("line %d = %q, want result %s", 2+i, lines[2+i], want)
		}
	}
	if !strings.Contains(lines[2], `a\|b`) || !strings.Contains(lines[3], "| — |") {
		t.Fatalf("cells not escaped or empty cells not marked:\n%s", out)
	}
}

func TestParallelStopsAtFirstError(t *testing.T) {
	t.Parallel()
	err := parallel(t.Context(), 4, 1000, func(i int) error {
		if i == 10 {
			return errTest
		}
		return nil
	})
	if err != errTest {
		t.Fatalf("parallel = %v", err)
	}
}

var errTest = &testErr{}

type testErr struct{}

func (*testErr) Error() string { return "test" }

// -quick sets small values under the flags given; the mixed and overload
// scenarios follow -duration unless their own flags say.
func TestParseFlags(t *testing.T) {
	o, _, _, err := parseFlags([]string{"-quick", "-scale", "0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.scale != 0.1 || !slices.Equal(o.subscribers, []int{30, 100}) || o.staleTrials != 2 || o.mixedDuration != 8*time.Second || o.duration != 2*time.Second {
		t.Fatalf("quick: %+v", o)
	}
	o, _, _, err = parseFlags([]string{"-duration", "3s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.mixedDuration != 18*time.Second || o.overloadDuration != 9*time.Second || !slices.Equal(o.subscribers, []int{300, 1000}) {
		t.Fatalf("-duration 3s: mixed %s, overload %s, subscribers %v", o.mixedDuration, o.overloadDuration, o.subscribers)
	}
	o, _, _, err = parseFlags([]string{"-duration", "3s", "-mixed-duration", "1m"})
	if err != nil || o.mixedDuration != time.Minute {
		t.Fatalf("-mixed-duration 1m: %s %v", o.mixedDuration, err)
	}
}

// TestTypenameCPU: each process's CPU per request is what it spent in its
// own rounds less what it spent idle in the other's, per request of its
// own rounds.
func TestTypenameCPU(t *testing.T) {
	c := cpuUse{
		procs:   []cpuProc{{"the server", 1}, {"the API replica", 2}, {"stock gqlgen", 3}},
		base:    []time.Duration{0, 10 * time.Millisecond, 450 * time.Millisecond},
		target:  []time.Duration{0, 510 * time.Millisecond, 20 * time.Millisecond},
		baseOps: 10000, targetOps: 10000,
	}
	ours, theirs := typenameCPU(c)
	if ours != 50*time.Microsecond || theirs != 43*time.Microsecond {
		t.Errorf("typenameCPU = %s, %s; want 50µs, 43µs", ours, theirs)
	}
}

func TestParseInts(t *testing.T) {
	t.Parallel()
	got, err := parseInts("300, 1000")
	if err != nil || !slices.Equal(got, []int{300, 1000}) {
		t.Fatalf("parseInts = %v, %v", got, err)
	}
	for _, bad := range []string{"", "300,", "0", "-5", "x"} {
		if _, err := parseInts(bad); err == nil {
			t.Fatalf("parseInts(%q) accepted", bad)
		}
	}
}

// Deliveries are timed from a reference that can come after some of them
// (another process's stamp): those are negative, not dropped.
func TestSinceAll(t *testing.T) {
	t.Parallel()
	ref := time.Unix(100, 0)
	got := sinceAll([]time.Time{ref.Add(3 * time.Millisecond), ref.Add(-time.Millisecond)}, ref)
	if !slices.Equal(got, []time.Duration{3 * time.Millisecond, -time.Millisecond}) {
		t.Fatalf("sinceAll = %v", got)
	}
}

// The baseline's frames read back with gorilla's client, at each length
// encoding.
func TestWSTextFrame(t *testing.T) {
	t.Parallel()
	var wire []byte
	want := []string{"x", strings.Repeat("y", 200), strings.Repeat("z", 70000)}
	for _, p := range want {
		wire = append(wire, wsTextFrame([]byte(p))...)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_, _ = c.NetConn().Write(wire)
		_, _, _ = c.ReadMessage() // until the client closes
		c.Close()
	}))
	defer srv.Close()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range want {
		mt, got, err := c.ReadMessage()
		if err != nil || mt != websocket.TextMessage || string(got) != p {
			t.Fatalf("read %d bytes (type %d, err %v), want %d", len(got), mt, err, len(p))
		}
	}
}
