package main

import (
	"context"
	"encoding/base64"
	be "encoding/binary"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/jobs"
)

// Tests of the defects of issue 17 (items 7, 10, 11, 13, 15), against the
// real server.

// dnsServer is a DNS server on a loopback UDP port whose answers the test
// controls: the names in known (lower case, no final dot) resolve to their
// address, every other name is NXDOMAIN. resolver asks it and nothing else
// (not the machine's resolver, hosts file or host name), and queried
// reports whether a name was asked for.
type dnsServer struct {
	resolver *net.Resolver
	mu       sync.Mutex
	asked    map[string]bool
}

func startDNS(t *testing.T, known map[string]netip.Addr) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	d := &dnsServer{asked: map[string]bool{}}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, name := dnsAnswer(buf[:n], known); resp != nil {
				d.mu.Lock()
				d.asked[name] = true
				d.mu.Unlock()
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	d.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	return d
}

func (d *dnsServer) queried(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[name]
}

// dnsAnswer answers one DNS query (RFC 1035 §4.1): A or AAAA records of
// the known names, NXDOMAIN for the others; nil for what is not a query.
func dnsAnswer(q []byte, known map[string]netip.Addr) ([]byte, string) {
	if len(q) < 12 || q[2]&0x80 != 0 {
		return nil, ""
	}
	i := 12
	var labels []string
	for i < len(q) && q[i] != 0 {
		n := int(q[i])
		if n > 63 || i+1+n > len(q) {
			return nil, ""
		}
		labels = append(labels, string(q[i+1:i+1+n]))
		i += 1 + n
	}
	if i+5 > len(q) {
		return nil, ""
	}
	name, qtype := strings.ToLower(strings.Join(labels, ".")), be.BigEndian.Uint16(q[i+1:])
	addr, ok := known[name]
	flags := uint16(0x8000|0x0080) | be.BigEndian.Uint16(q[2:])&0x0100 // a response, recursion available, RD as asked
	if !ok {
		flags |= 3 // NXDOMAIN
	}
	resp := append(be.BigEndian.AppendUint16(q[:2:2], flags), 0, 1, 0, 0, 0, 0, 0, 0)
	resp = append(resp, q[12:i+5]...) // the question
	if ok && (qtype == 1 && addr.Is4() || qtype == 28 && addr.Is6()) {
		resp[7] = 1 // one answer: the name (a pointer to the question's), its type, class IN, TTL 60 s, the address
		resp = append(resp, 0xc0, 12)
		resp = be.BigEndian.AppendUint16(resp, qtype)
		resp = append(resp, 0, 1, 0, 0, 0, 60)
		ip := addr.AsSlice()
		resp = be.BigEndian.AppendUint16(resp, uint16(len(ip)))
		resp = append(resp, ip...)
	}
	return resp, name
}

// TestChecksNoDNSOracle: a check of an internal host name and one of a name
// that does not exist end alike (item 11): DOWN at once, same reason, same
// result, so URL checks tell nothing about the server's own DNS. The
// server resolves through a DNS server of the test's (Config.FetchResolver):
// an internal name for a private address, NXDOMAIN for the other, on any
// machine.
func TestChecksNoDNSOracle(t *testing.T) {
	t.Parallel()
	const internal, unknown = "db.internal.algoitny.test", "no-such-host.algoitny.test"
	dns := startDNS(t, map[string]netip.Addr{internal: netip.MustParseAddr("10.20.30.40")})
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.CheckMinDelay, c.FetchResolver = true, 200*time.Millisecond, dns.resolver
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 100*time.Millisecond })
	alice := s.login(t, "alice@example.com")
	type check struct {
		ID, Status, State, FailureReason string
		LastResult                       *struct{ Status, Error string }
	}
	run := func(url string) check {
		t.Helper()
		var out struct{ CreateCheck check }
		s.query(t, alice, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { id status } }`,
			map[string]any{"in": map[string]any{"url": url, "checkType": "AVAILABILITY", "delayMs": 60000}}).decode(t, &out)
		var got struct{ Check check }
		if !algoitnytest.PollEvery(context.Background(), 30*time.Second, 100*time.Millisecond, func() bool {
			got.Check = check{}
			s.query(t, alice, `query($id: ID!) { check(id: $id) { id status state failureReason lastResult { status error } } }`,
				map[string]any{"id": out.CreateCheck.ID}).decode(t, &got)
			return got.Check.LastResult != nil && got.Check.State == "DOWN"
		}) {
			t.Fatalf("%s: never went DOWN: %+v", url, got.Check)
		}
		return got.Check
	}
	a, b := run("http://"+internal+"/admin"), run("http://"+unknown+"/admin")
	if !dns.queried(internal) || !dns.queried(unknown) {
		t.Fatalf("the test's DNS server was not asked (%s: %t, %s: %t): the server resolved elsewhere", internal, dns.queried(internal), unknown, dns.queried(unknown))
	}
	if a.Status != "ACTIVE" || a.LastResult.Status != "DOWN" || !strings.Contains(a.FailureReason, "public address") {
		t.Fatalf("internal name: %+v", a)
	}
	if a.Status != b.Status || a.State != b.State || a.FailureReason != b.FailureReason || *a.LastResult != *b.LastResult {
		t.Fatalf("an internal name and an unknown one are told apart:\n%s: %+v %+v\n%s: %+v %+v", internal, a, a.LastResult, unknown, b, b.LastResult)
	}
}

// TestNULRefused: NUL bytes are refused with BAD_USER_INPUT wherever text
// enters: variables, literals, nested input objects, lists, ids (item 11).
func TestNULRefused(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	in := func(over map[string]any) map[string]any {
		m := map[string]any{"platform": "CUSTOM", "problemId": "nul1", "title": "Sum", "language": "PYTHON"}
		for k, v := range over {
			m[k] = v
		}
		return map[string]any{"in": m}
	}
	for name, r := range map[string]*gqlResult{
		"title variable":  s.query(t, admin, createProblemMutation, in(map[string]any{"title": "Su\x00m"})),
		"tag in a list":   s.query(t, admin, createProblemMutation, in(map[string]any{"tags": []string{"math", "gr\x00aph"}})),
		"test case input": s.query(t, admin, createProblemMutation, in(map[string]any{"testCases": []map[string]any{{"input": "1\x00", "output": "1"}}})),
		"title literal":   s.query(t, admin, `mutation { createProblem(input: {platform: CUSTOM, problemId: "nul2", title: "Su\u0000m", language: PYTHON}) { id } }`, nil),
		"problemId":       s.query(t, "", `{ problem(platform: CUSTOM, problemId: "nul1\u0000") { id } }`, nil),
		"check keyword":   s.query(t, admin, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { id } }`, map[string]any{"in": map[string]any{"url": "https://example.com/", "checkType": "KEYWORD", "keyword": "op\x00en"}}),
		"global id":       s.query(t, admin, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": base64.RawURLEncoding.EncodeToString([]byte("Check:c\x00heck"))}),
	} {
		if r.code() != "BAD_USER_INPUT" {
			t.Errorf("%s: %s", name, r.Raw)
		}
	}
	// Nothing was stored.
	for _, id := range []string{"nul1", "nul2"} {
		var out struct{ Problem *struct{ ID string } }
		s.query(t, admin, `query($id: String!) { problem(platform: CUSTOM, problemId: $id) { id } }`, map[string]any{"id": id}).decode(t, &out)
		if out.Problem != nil {
			t.Errorf("problem %s stored", id)
		}
	}
}

// TestExtractionRefusedDestination: an extraction whose page redirects to a
// refused address fails at once and says why, not "internal error", and
// is logged below ERROR: a client's mistake, not the server's (item 7).
func TestExtractionRefusedDestination(t *testing.T) {
	t.Parallel()
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the refused address was fetched: %s", r.URL)
	}))
	defer inner.Close()
	judgeSite := httptest.NewServer(http.RedirectHandler(inner.URL+"/secret", http.StatusFound))
	defer judgeSite.Close()
	host := strings.TrimPrefix(judgeSite.URL, "http://")
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startAPITunedLogged(t, func(c *Config) { c.Workers, c.FetchAllowHosts = true, []string{host} }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	}, logger)
	admin := s.staff(t, "admin@example.com")
	var out struct{ ExtractProblem struct{ ID string } }
	s.query(t, admin, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": judgeSite.URL + "/problem/1000"}).decode(t, &out)
	j := s.waitJobResult(t, admin, out.ExtractProblem.ID)
	if j.Status != "FAILED" || !strings.Contains(j.ErrorMessage, "does not lead to a public address") || strings.Contains(j.ErrorMessage, "internal error") {
		t.Fatalf("extraction of a refused destination: %+v", j)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("logged at ERROR: %s", line)
		}
	}
}

// TestPublicExecutionsFollowTheirProblem: a public execution leaves
// publicHistory, historyFeed and searchHistory for everyone but its owner
// and staff while its problem is deleted or back to a draft, with its test
// outputs (item 10); published again, the problem brings it back.
func TestPublicExecutionsFollowTheirProblem(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	alice, bob := s.login(t, "alice@example.com"), s.login(t, "bob@example.com")
	aliceU := s.user(t, "alice@example.com")
	s.createProblem(t, admin, "BAEKJOON", "2001", 1, true)
	s.createProblem(t, admin, "BAEKJOON", "2002", 1, true)
	deleted, drafted := s.seedHistory(t, aliceU, "2001", true), s.seedHistory(t, aliceU, "2002", true)
	ids := map[string]string{
		globalIDOf("SearchHistory", deleted.UserID, deleted.ID): "of the deleted problem",
		globalIDOf("SearchHistory", drafted.UserID, drafted.ID): "of the problem back to a draft",
	}
	// seen reports, for each execution, whether token sees it (and its test
	// outputs) in each place.
	seen := func(token string) map[string][]string {
		t.Helper()
		where := map[string][]string{}
		for _, q := range []struct{ name, query string }{
			{"publicHistory", `{ list: publicHistory(first: 50) { edges { node { id testResults { output } } } } }`},
			{"historyFeed", `{ list: historyFeed(first: 50) { edges { node { id testResults { output } } } } }`},
		} {
			var out struct {
				List struct {
					Edges []struct {
						Node struct {
							ID          string
							TestResults []struct{ Output string }
						}
					}
				}
			}
			s.query(t, token, q.query, nil).decode(t, &out)
			for _, e := range out.List.Edges {
				if _, ok := ids[e.Node.ID]; ok && len(e.Node.TestResults) == 2 && e.Node.TestResults[1].Output == "4" {
					where[e.Node.ID] = append(where[e.Node.ID], q.name)
				}
			}
		}
		for id := range ids {
			var out struct{ SearchHistory *struct{ ID string } }
			s.query(t, token, `query($id: ID!) { searchHistory(id: $id) { id testResults { output } } }`, map[string]any{"id": id}).decode(t, &out)
			if out.SearchHistory != nil {
				where[id] = append(where[id], "searchHistory")
			}
		}
		return where
	}
	for _, who := range []string{bob, ""} {
		if got := seen(who); len(got) != 2 || len(got[globalIDOf("SearchHistory", deleted.UserID, deleted.ID)]) != 3 {
			t.Fatalf("before: %v", got)
		}
	}
	s.query(t, admin, `mutation { deleteProblem(platform: BAEKJOON, problemId: "2001", reason: "duplicate") { isDeleted } }`, nil).decode(t, &struct{}{})
	s.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "2002", input: {isCompleted: false}) { isCompleted } }`, nil).decode(t, &struct{}{})
	for name, who := range map[string]string{"bob": bob, "anonymous": ""} {
		for id, where := range seen(who) {
			t.Errorf("an execution %s is still shown to %s in %v", ids[id], name, where)
		}
	}
	// Its owner (and staff) keep it.
	for name, who := range map[string]string{"alice": alice, "staff": admin} {
		for id := range ids {
			if w := seen(who)[id]; !slices.Contains(w, "searchHistory") {
				t.Errorf("the execution %s is gone for %s (%v)", ids[id], name, w)
			}
		}
	}
	var mine struct {
		MyHistory struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	s.query(t, alice, `{ myHistory { edges { node { id } } } }`, nil).decode(t, &mine)
	if len(mine.MyHistory.Edges) != 2 {
		t.Fatalf("alice's own history: %+v", mine)
	}
	// Published again, the problem brings its public executions back.
	s.query(t, admin, `mutation { updateProblem(platform: BAEKJOON, problemId: "2002", input: {isCompleted: true}) { isCompleted } }`, nil).decode(t, &struct{}{})
	if got := seen(bob)[globalIDOf("SearchHistory", drafted.UserID, drafted.ID)]; len(got) != 3 {
		t.Fatalf("republished: %v", got)
	}
}

// TestExtractionDraftsStatementAndTags: the draft an extraction makes holds
// the statement and the judge's tags, and the finished job points to it
// (item 15).
func TestExtractionDraftsStatementAndTags(t *testing.T) {
	t.Parallel()
	judgeSite := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/problem/1920" {
			http.NotFound(w, r)
			return
		}
		page, err := os.ReadFile("../../internal/analysis/testdata/baekjoon_1920.html")
		if err != nil {
			t.Error(err)
		}
		w.Write(page)
	}))
	defer judgeSite.Close()
	host := strings.TrimPrefix(judgeSite.URL, "http://")
	s := startAPITuned(t, func(c *Config) { c.Workers, c.FetchAllowHosts = true, []string{host} }, func(j *jobs.Config) {
		j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 200*time.Millisecond
	})
	alice := s.staff(t, "alice@example.com")
	type job struct {
		Status, ProblemID string
		Platform          *string
		Problem           *struct {
			ProblemID, Title, Statement string
			Tags                        []string
			NeedsReview                 bool
		}
	}
	extract := func() job {
		t.Helper()
		var out struct{ ExtractProblem struct{ ID string } }
		s.query(t, alice, `mutation($u: String!) { extractProblem(url: $u) { id } }`, map[string]any{"u": judgeSite.URL + "/problem/1920"}).decode(t, &out)
		s.waitJob(t, alice, out.ExtractProblem.ID, 60*time.Second)
		var got struct{ Job job }
		s.query(t, alice, `query($id: ID!) { job(id: $id) { status platform problemId problem { problemId title statement tags needsReview } } }`,
			map[string]any{"id": out.ExtractProblem.ID}).decode(t, &got)
		return got.Job
	}
	j := extract()
	if j.Status != "COMPLETED" || j.Platform == nil || *j.Platform != "BAEKJOON" || j.ProblemID != "1920" || j.Problem == nil {
		t.Fatalf("finished extraction: %+v", j)
	}
	p := j.Problem
	if p.ProblemID != "1920" || p.Title != "수 찾기" || !p.NeedsReview || !slices.Equal(p.Tags, []string{"자료 구조", "정렬", "이분 탐색"}) {
		t.Fatalf("draft: %+v", p)
	}
	for _, part := range []string{"N개의 정수 A[1], A[2], …, A[N]이 주어져 있을 때", "\n\nInput\n", "\n\nOutput\nM개의 줄에 답을 출력한다."} {
		if !strings.Contains(p.Statement, part) {
			t.Fatalf("statement lacks %q:\n%s", part, p.Statement)
		}
	}
	// Extracted again: the job points to the problem that was there.
	if again := extract(); again.Status != "COMPLETED" || again.ProblemID != "1920" || again.Problem == nil || again.Problem.Statement != p.Statement {
		t.Fatalf("second extraction: %+v", again)
	}
}
