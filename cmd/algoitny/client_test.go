package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/jobs"
)

// apiServer is a started Main with helpers to call its GraphQL API.
type apiServer struct {
	*Main
	URL string
}

// startAPI runs Main on :0 against tables and a River schema of the test's
// own, migrated and seeded, and stops it when the test ends.
func startAPI(t testing.TB, tweak func(*Config)) *apiServer {
	t.Helper()
	return startAPITuned(t, tweak, nil)
}

// startAPITuned is startAPI with the job runner's configuration adjusted.
func startAPITuned(t testing.TB, tweak func(*Config), tune func(*jobs.Config)) *apiServer {
	t.Helper()
	return startAPITunedLogged(t, tweak, tune, testLogger(t))
}

// startAPITunedLogged is startAPITuned with the server's logs sent to logger.
func startAPITunedLogged(t testing.TB, tweak func(*Config), tune func(*jobs.Config), logger *slog.Logger) *apiServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig(t)
	cfg.Workers = false
	cfg.SessionSecret = "Zr8mQ2vX9kLp4Tn7Wc1Bd6Hf3Js5Ye0Ua8Io2Ek4Ng7Rq1"
	if tweak != nil {
		tweak(&cfg)
	}
	if err := migrate(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := seedPlans(ctx, cfg, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	// A test ends with whatever jobs it left running: they need no grace.
	m := &Main{Config: cfg, Logger: logger, Tune: tune, ShutdownGrace: time.Second}
	if err := m.Open(ctx, true); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		m.Close()
		m.DB.DropTables(context.Background())
	})
	return &apiServer{Main: m, URL: "http://" + m.Addr() + "/query"}
}

// gqlResult is a decoded GraphQL response.
type gqlResult struct {
	Status     int
	Header     http.Header
	Data       json.RawMessage
	Errors     []gqlErr
	Extensions map[string]any
	Raw        []byte
}

type gqlErr struct {
	Message    string
	Path       []any
	Extensions map[string]any
}

// code returns the extensions.code of the first error, "" if none.
func (r *gqlResult) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// decode unmarshals data into v, failing the test on GraphQL errors.
func (r *gqlResult) decode(t testing.TB, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %s", r.Raw)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode %s: %v", r.Raw, err)
	}
}

// query posts a GraphQL request as token ("" = anonymous).
func (s *apiServer) query(t testing.TB, token, query string, vars map[string]any) *gqlResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return s.post(t, token, "application/json", body, nil)
}

// queryRetryingBusy is query, sent again after the Retry-After the server
// gives while it answers SERVER_BUSY (at most 60 times), as a client does.
func (s *apiServer) queryRetryingBusy(t testing.TB, token, query string, vars map[string]any) *gqlResult {
	t.Helper()
	for range 60 {
		r := s.query(t, token, query, vars)
		if r.code() != "SERVER_BUSY" {
			return r
		}
		wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || wait < 1 {
			wait = 1
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
	t.Fatalf("the server stayed busy for 60 attempts")
	return nil
}

func (s *apiServer) post(t testing.TB, token, contentType string, body []byte, header http.Header) *gqlResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return s.send(t, req)
}

func (s *apiServer) send(t testing.TB, req *http.Request) *gqlResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 2*time.Minute) // only stops a hang
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := &gqlResult{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	var body struct {
		Data       json.RawMessage
		Errors     []gqlErr
		Extensions map[string]any
	}
	_ = json.Unmarshal(raw, &body) // a body that is not JSON: callers check Status and Raw
	r.Data, r.Errors, r.Extensions = body.Data, body.Errors, body.Extensions
	return r
}

// login signs in with devLogin and returns the session token.
func (s *apiServer) login(t testing.TB, email string) string {
	t.Helper()
	var out struct {
		DevLogin struct{ Token string }
	}
	s.query(t, "", `mutation($e: String!) { devLogin(email: $e) { token } }`, map[string]any{"e": email}).decode(t, &out)
	return out.DevLogin.Token
}

// staff signs in a user and grants it staff rights (what `algoitny admin grant` does).
func (s *apiServer) staff(t testing.TB, email string) string {
	t.Helper()
	token := s.login(t, email)
	if _, err := s.Accounts.GrantStaff(context.Background(), email, true); err != nil {
		t.Fatal(err)
	}
	return token
}

// user returns the stored user of an email.
func (s *apiServer) user(t testing.TB, email string) *algoitny.User {
	t.Helper()
	u, err := s.DB.GetUserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// testLogger discards logs unless ALGOITNY_TEST_LOGS is set.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("ALGOITNY_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// globalIDOf builds a global id the way the API does.
func globalIDOf(typ string, parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + strings.Join(parts, ":")))
}

// parseGlobalID returns the last part of a global id (the entity's own id).
func parseGlobalID(id string) (string, string) {
	raw, _ := base64.RawURLEncoding.DecodeString(id)
	parts := strings.Split(string(raw), ":")
	return parts[len(parts)-1], parts[0]
}

var fmtSscanImpl = fmt.Sscan
