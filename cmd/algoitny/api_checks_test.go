package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/jobs"
)

const checkFields = `id url checkType keyword status delayMs failureReason lastResult { status httpStatus keywordFound error }`

func TestChecks(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/down" {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("<html>Registration is OPEN now</html>"))
	}))
	defer target.Close()
	host := strings.TrimPrefix(target.URL, "http://")
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.FetchAllowHosts, c.CheckMinDelay = true, []string{host}, 200*time.Millisecond
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 100*time.Millisecond })
	admin := s.staff(t, "admin@example.com")
	s.query(t, admin, `mutation { updatePlan(name: "Free", input: {minCheckDelayMs: 1000}) { name } }`, nil)
	alice := s.login(t, "alice@example.com")

	create := func(token string, in map[string]any) *gqlResult {
		return s.query(t, token, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { `+checkFields+` } }`, map[string]any{"in": in})
	}
	var kw struct{ CreateCheck struct{ ID, Status string } }
	create(alice, map[string]any{"url": target.URL + "/contest", "checkType": "KEYWORD", "keyword": "registration is open", "delayMs": 1000}).decode(t, &kw)
	if kw.CreateCheck.Status != "ACTIVE" {
		t.Fatalf("created %+v", kw)
	}

	// The subscription starts with the current state, then pushes each result.
	ws := s.dialWS(t, "graphql-transport-ws", nil)
	ws.init(alice)
	ws.subscribe("c", `subscription($id: ID!) { checkUpdated(id: $id) { check { status } result { status keywordFound httpStatus } deleted } }`, map[string]any{"id": kw.CreateCheck.ID})
	results := 0
	deadline := time.Now().Add(20 * time.Second)
	for results < 2 {
		m := ws.read(time.Until(deadline))
		if m.Type == "ping" {
			ws.send(map[string]any{"type": "pong"})
			continue
		}
		var ev struct {
			Data struct {
				CheckUpdated struct {
					Result *struct {
						Status       string
						KeywordFound *bool
						HTTPStatus   int
					}
				}
			}
		}
		if err := json.Unmarshal(m.Payload, &ev); err != nil {
			t.Fatalf("event %s: %v", m.Payload, err)
		}
		if r := ev.Data.CheckUpdated.Result; r != nil {
			if r.Status != "UP" || r.KeywordFound == nil || !*r.KeywordFound || r.HTTPStatus != 200 {
				t.Fatalf("result %s", m.Payload)
			}
			results++
		}
	}

	// AVAILABILITY of a page that answers 503 is DOWN.
	var down struct{ CreateCheck struct{ ID string } }
	create(alice, map[string]any{"url": target.URL + "/down", "checkType": "AVAILABILITY", "delayMs": 1000}).decode(t, &down)
	var got struct {
		Check struct {
			LastResult *struct {
				Status     string
				HTTPStatus int
			}
			RecentResults []struct{ Status string }
		}
	}
	algoitnytest.EventuallyEvery(t, 20*time.Second, 100*time.Millisecond, "the down check's first run", func() bool {
		got.Check.LastResult = nil
		s.query(t, alice, `query($id: ID!) { check(id: $id) { lastResult { status httpStatus } recentResults(limit: 5) { status } } }`, map[string]any{"id": down.CreateCheck.ID}).decode(t, &got)
		return got.Check.LastResult != nil
	})
	if got.Check.LastResult.Status != "DOWN" || got.Check.LastResult.HTTPStatus != 503 || len(got.Check.RecentResults) == 0 {
		t.Fatalf("down check %+v", got)
	}

	// Lists, pause/resume, update, ownership.
	var mine struct {
		MyChecks struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	s.query(t, alice, `{ myChecks { edges { node { id } } } }`, nil).decode(t, &mine)
	if len(mine.MyChecks.Edges) != 2 {
		t.Fatalf("myChecks %+v", mine)
	}
	var paused struct{ PauseCheck struct{ Status string } }
	s.query(t, alice, `mutation($id: ID!) { pauseCheck(id: $id) { status } }`, map[string]any{"id": down.CreateCheck.ID}).decode(t, &paused)
	var resumed struct{ ResumeCheck struct{ Status string } }
	s.query(t, alice, `mutation($id: ID!) { resumeCheck(id: $id) { status } }`, map[string]any{"id": down.CreateCheck.ID}).decode(t, &resumed)
	if paused.PauseCheck.Status != "PAUSED" || resumed.ResumeCheck.Status != "ACTIVE" {
		t.Fatalf("pause %+v resume %+v", paused, resumed)
	}
	var upd struct{ UpdateCheck struct{ DelayMs int } }
	s.query(t, alice, `mutation($id: ID!) { updateCheck(id: $id, input: {delayMs: 2000}) { delayMs } }`, map[string]any{"id": down.CreateCheck.ID}).decode(t, &upd)
	if upd.UpdateCheck.DelayMs != 2000 {
		t.Fatalf("update %+v", upd)
	}
	bob := s.login(t, "bob@example.com")
	if r := s.query(t, bob, `query($id: ID!) { check(id: $id) { url } }`, map[string]any{"id": down.CreateCheck.ID}); string(r.Data) != `{"check":null}` {
		t.Fatalf("bob reads alice's check: %s", r.Raw)
	}
	if r := s.query(t, bob, `mutation($id: ID!) { deleteCheck(id: $id) }`, map[string]any{"id": down.CreateCheck.ID}); r.code() != "NOT_FOUND" {
		t.Fatalf("bob deletes alice's check: %s", r.Raw)
	}

	// Validation and the plan's limits (Free: 3 checks, at least 1 s apart).
	for field, in := range map[string]map[string]any{
		"delayMs": {"url": target.URL, "checkType": "AVAILABILITY", "delayMs": 200},
		"keyword": {"url": target.URL, "checkType": "KEYWORD"},
		"url":     {"url": "ftp://example.com/", "checkType": "AVAILABILITY"},
	} {
		if r := create(alice, in); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != field {
			t.Fatalf("%s: %s", field, r.Raw)
		}
	}
	create(alice, map[string]any{"url": target.URL + "/third", "checkType": "AVAILABILITY", "delayMs": 60000})
	r := create(alice, map[string]any{"url": target.URL + "/fourth", "checkType": "AVAILABILITY", "delayMs": 60000})
	if r.code() != "RATE_LIMITED" || r.Errors[0].Extensions["limit"] != float64(3) || r.Errors[0].Extensions["resetAt"] != nil {
		t.Fatalf("fourth check: %s", r.Raw)
	}

	// Deleting the account deletes its checks.
	carol := s.login(t, "carol@example.com")
	var cc struct{ CreateCheck struct{ ID string } }
	create(carol, map[string]any{"url": target.URL + "/carol", "checkType": "AVAILABILITY", "delayMs": 60000}).decode(t, &cc)
	carolCheck, _ := parseGlobalID(cc.CreateCheck.ID)
	s.query(t, carol, `mutation { deleteMyAccount }`, nil)
	if c, err := s.DB.GetCheck(context.Background(), carolCheck); err == nil {
		t.Fatalf("check left after account deletion: %+v", c)
	}

	// Deleting ends the subscription with a deleted event.
	var del struct{ DeleteCheck bool }
	s.query(t, alice, `mutation($id: ID!) { deleteCheck(id: $id) }`, map[string]any{"id": kw.CreateCheck.ID}).decode(t, &del)
	evs := ws.collect("c", 20*time.Second)
	if len(evs) == 0 || !strings.Contains(string(evs[len(evs)-1]), `"deleted":true`) {
		t.Fatalf("after delete: %s", evs)
	}
}

func TestChecksRefusePrivateTargets(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	s := startAPI(t, nil) // no allow-list: the default
	alice := s.login(t, "alice@example.com")
	for _, u := range []string{target.URL, "http://localhost/", "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://[::1]/"} {
		r := s.query(t, alice, `mutation($u: String!) { createCheck(input: {url: $u, checkType: AVAILABILITY, delayMs: 60000}) { id } }`, map[string]any{"u": u})
		if r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "url" {
			t.Fatalf("%s: %s", u, r.Raw)
		}
	}
}

// TestCheckListsCountInComplexity: a page of checks and a check's recent
// results (up to 1440) cost their children as many times as they may hold,
// like every connection.
func TestCheckListsCountInComplexity(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	token := s.login(t, "alice@example.com")
	r := s.query(t, token, `{ myChecks(first: 100) { edges { node { recentResults(limit: 1440) { status checkedAt } } } } }`, nil)
	if r.code() != "COMPLEXITY_LIMIT_EXCEEDED" {
		t.Fatalf("100 checks × 1440 results: %s", r.Raw)
	}
	if r := s.query(t, token, `{ myChecks(first: 5) { edges { node { recentResults(limit: 20) { status } } } } }`, nil); len(r.Errors) != 0 {
		t.Fatalf("a reasonable query refused: %s", r.Raw)
	}
}

// TestChecksAnyPort: checks and webhooks may name any port of a public
// address; non-public addresses stay refused on every port. No worker
// runs, so nothing is fetched.
func TestChecksAnyPort(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) { c.Workers = false })
	alice := s.login(t, "alice@example.com")
	create := func(u string) *gqlResult {
		return s.query(t, alice, `mutation($u: String!) { createCheck(input: {url: $u, checkType: AVAILABILITY, delayMs: 60000}) { url } }`, map[string]any{"u": u})
	}
	if r := create("http://example.com:8080/status"); len(r.Errors) != 0 {
		t.Fatalf("public address on :8080: %s", r.Raw)
	}
	for _, u := range []string{"http://10.1.2.3:8080/", "http://localhost:9000/", "http://127.0.0.1:5432/", "http://example.com:70000/"} {
		if r := create(u); r.code() != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "url" {
			t.Fatalf("%s: %s", u, r.Raw)
		}
	}
	if r := s.query(t, alice, `mutation { createWebhook(url: "https://example.com:8443/hook") { secret } }`, nil); len(r.Errors) != 0 {
		t.Fatalf("webhook on :8443: %s", r.Raw)
	}
	if r := s.query(t, alice, `mutation { createWebhook(url: "http://192.168.0.10:8443/hook") { secret } }`, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("private webhook on :8443: %s", r.Raw)
	}
}
