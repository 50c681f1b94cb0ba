package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/watch"
)

// TestChecksWebhook: through the API, a check whose page fails 5 runs in a
// row (each retried twice) goes DOWN and then recovers; a webhook created
// with createWebhook receives DOWN then UP, signed with the secret it was
// given, and the channel's delivery log shows both delivered.
func TestChecksWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	hits := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		fail := hits <= 15 // 5 runs of 3 attempts
		mu.Unlock()
		if fail {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "fine")
	}))
	defer target.Close()
	var secret string
	var got []map[string]any
	badSigs := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if _, err := watch.Verify(secret, r.Header, body, time.Now()); err != nil {
			badSigs++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var n map[string]any
		if err := json.Unmarshal(body, &n); err != nil {
			t.Errorf("notification %s: %v", body, err)
		}
		got = append(got, n)
	}))
	defer receiver.Close()
	hosts := []string{strings.TrimPrefix(target.URL, "http://"), strings.TrimPrefix(receiver.URL, "http://")}
	s := startAPITuned(t, func(c *Config) {
		c.Workers, c.FetchAllowHosts, c.CheckMinDelay = true, hosts, 200*time.Millisecond
	}, func(j *jobs.Config) { j.FetchCooldown, j.FetchPollInterval = 20*time.Millisecond, 100*time.Millisecond })
	admin := s.staff(t, "admin@example.com")

	var wh struct {
		CreateWebhook struct {
			Channel struct{ ID, Kind, URL string }
			Secret  string
		}
	}
	s.query(t, admin, `mutation($url: String!) { createWebhook(url: $url) { channel { id kind url } secret } }`,
		map[string]any{"url": receiver.URL + "/hook"}).decode(t, &wh)
	if wh.CreateWebhook.Channel.Kind != "WEBHOOK" || len(wh.CreateWebhook.Secret) < 32 {
		t.Fatalf("webhook %+v", wh)
	}
	mu.Lock()
	secret = wh.CreateWebhook.Secret
	mu.Unlock()
	var created struct{ CreateCheck struct{ ID string } }
	s.query(t, admin, `mutation($in: CreateCheckInput!) { createCheck(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"url": target.URL + "/status", "checkType": "AVAILABILITY", "delayMs": 200}}).decode(t, &created)

	algoitnytest.Eventually(t, 60*time.Second, "the DOWN and UP notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2
	})
	mu.Lock()
	if len(got) != 2 || got[0]["state"] != "DOWN" || got[1]["state"] != "UP" || badSigs != 0 ||
		!strings.Contains(got[0]["reason"].(string), "HTTP 503") || got[0]["url"] != target.URL+"/status" ||
		got[0]["checkId"] != created.CreateCheck.ID { // the id the API shows
		t.Fatalf("notifications %v (%d bad signatures)", got, badSigs)
	}
	mu.Unlock()

	var state struct {
		Check struct {
			State         string
			LastResult    struct{ Attempts int }
			FailureReason string
			Stats         []struct {
				Hours, Runs, Up int
				UptimePercent   *float64
				P50Ms           *int
			}
		}
	}
	s.query(t, admin, `query($id: ID!) { check(id: $id) { state failureReason lastResult { attempts } stats { hours runs up uptimePercent p50Ms } } }`,
		map[string]any{"id": created.CreateCheck.ID}).decode(t, &state)
	if state.Check.State != "UP" || state.Check.FailureReason != "" || state.Check.LastResult.Attempts != 1 {
		t.Fatalf("check %+v", state)
	}
	// 5 failed runs and at least one good one, in every window.
	if len(state.Check.Stats) != 3 || state.Check.Stats[0].Hours != 24 || state.Check.Stats[2].Hours != 720 {
		t.Fatalf("stats %+v", state.Check.Stats)
	}
	for _, st := range state.Check.Stats {
		if st.Runs < 6 || st.Runs-st.Up != 5 || st.UptimePercent == nil || *st.UptimePercent >= 100 || st.P50Ms == nil {
			t.Fatalf("stats %+v", st)
		}
	}
	var log struct {
		MyNotificationChannels []struct {
			ID         string
			Deliveries struct {
				Edges []struct {
					Node struct {
						CheckID, State, Status, LastError string
						Attempts                          int
					}
				}
			}
		}
	}
	s.query(t, admin, `{ myNotificationChannels { id deliveries(first: 10) { edges { node { checkId state status attempts lastError } } } } }`, nil).decode(t, &log)
	if len(log.MyNotificationChannels) != 1 {
		t.Fatalf("channels %+v", log)
	}
	edges := log.MyNotificationChannels[0].Deliveries.Edges
	if len(edges) != 2 || edges[0].Node.State != "UP" || edges[1].Node.State != "DOWN" || edges[0].Node.CheckID != created.CreateCheck.ID {
		t.Fatalf("delivery log %+v", edges)
	}
	for _, e := range edges {
		if e.Node.Status != "DELIVERED" || e.Node.Attempts != 1 {
			t.Fatalf("delivery %+v", e.Node)
		}
	}
	bob := s.login(t, "bob@example.com")
	if r := s.query(t, bob, `mutation($id: ID!) { deleteNotificationChannel(id: $id) }`, map[string]any{"id": wh.CreateWebhook.Channel.ID}); r.code() != "NOT_FOUND" {
		t.Fatalf("bob deletes admin's channel: %s", r.Raw)
	}
	if r := s.query(t, admin, `mutation { createWebhook(url: "http://10.1.2.3/hook") { secret } }`, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("private webhook: %s", r.Raw)
	}
	var del struct{ DeleteNotificationChannel bool }
	s.query(t, admin, `mutation($id: ID!) { deleteNotificationChannel(id: $id) }`, map[string]any{"id": wh.CreateWebhook.Channel.ID}).decode(t, &del)
	if !del.DeleteNotificationChannel {
		t.Fatal("delete returned false")
	}
}
