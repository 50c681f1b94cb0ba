package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// googleIssuer is a local stand-in for Google: it serves a JWKS and signs ID
// tokens with its own key. The server under test verifies them with its
// production code; only the JWKS URL differs.
type googleIssuer struct {
	key *rsa.PrivateKey
	srv *httptest.Server
}

func newGoogleIssuer(t testing.TB) *googleIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &googleIssuer{key: key}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{
			"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "k1",
			"n": b64(key.PublicKey.N.Bytes()), "e": b64(big.NewInt(int64(key.PublicKey.E)).Bytes()),
		}}})
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// token signs an ID token; change edits the claims before signing.
func (g *googleIssuer) token(t testing.TB, sub, email string, change func(h, c map[string]any)) string {
	t.Helper()
	now := time.Now()
	h := map[string]any{"alg": "RS256", "kid": "k1", "typ": "JWT"}
	c := map[string]any{
		"iss": "https://accounts.google.com", "aud": "client-123", "sub": sub, "email": email,
		"email_verified": true, "name": "Name of " + sub, "picture": "https://pics.example/" + sub,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if change != nil {
		change(h, c)
	}
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	signing := enc(h) + "." + enc(c)
	if h["alg"] == "none" {
		return signing + "."
	}
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, g.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

const loginMutation = `mutation($t: String!) { loginWithGoogle(idToken: $t) { token expiresAt user { id email name plan { name } } } }`

func TestLoginWithGoogle(t *testing.T) {
	t.Parallel()
	g := newGoogleIssuer(t)
	s := startAPI(t, func(c *Config) { c.GoogleClientID, c.GoogleJWKSURL, c.Dev = "client-123", g.srv.URL, false })

	type login struct {
		LoginWithGoogle struct {
			Token string
			User  struct {
				ID, Email, Name string
				Plan            struct{ Name string }
			}
		}
	}
	t.Run("CreatesThenUpdates", func(t *testing.T) {
		var first login
		s.query(t, "", loginMutation, map[string]any{"t": g.token(t, "g-1", "ann@example.com", nil)}).decode(t, &first)
		u := first.LoginWithGoogle.User
		if u.Email != "ann@example.com" || u.Name != "Name of g-1" || u.Plan.Name != "Free" {
			t.Fatalf("first sign-in %+v", u)
		}
		var second login
		s.query(t, "", loginMutation, map[string]any{"t": g.token(t, "g-1", "ann@example.com", func(_, c map[string]any) { c["name"] = "Ann" })}).decode(t, &second)
		if second.LoginWithGoogle.User.ID != u.ID || second.LoginWithGoogle.User.Name != "Ann" {
			t.Fatalf("second sign-in %+v", second.LoginWithGoogle.User)
		}
		var me struct{ Me struct{ Email string } }
		s.query(t, second.LoginWithGoogle.Token, `{ me { email } }`, nil).decode(t, &me)
		if me.Me.Email != "ann@example.com" {
			t.Fatalf("session token: %+v", me)
		}
	})

	t.Run("ConcurrentFirstSignInsMakeOneUser", func(t *testing.T) {
		const n = 30
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// From one address, 30 at once wait for its share of the
				// request slots; on a loaded machine some are told to retry
				// (SERVER_BUSY, Retry-After), as a client does.
				var out login
				s.queryRetryingBusy(t, "", loginMutation, map[string]any{"t": g.token(t, "g-race", "race@example.com", nil)}).decode(t, &out)
				ids[i] = out.LoginWithGoogle.User.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] || id == "" {
				t.Fatalf("sign-ins got different users: %v", ids)
			}
		}
		u, err := s.DB.GetUserByGoogleID(context.Background(), "g-race")
		if err != nil || globalIDOf("User", u.ID) != ids[0] {
			t.Fatalf("stored user %+v %v", u, err)
		}
	})

	for name, change := range map[string]func(h, c map[string]any){
		"Expired":       func(_, c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() },
		"WrongAudience": func(_, c map[string]any) { c["aud"] = "someone-else" },
		"WrongIssuer":   func(_, c map[string]any) { c["iss"] = "https://accounts.evil.com" },
		"AlgNone":       func(h, _ map[string]any) { h["alg"] = "none" },
		"Unverified":    func(_, c map[string]any) { c["email_verified"] = false },
	} {
		t.Run("Refuses"+name, func(t *testing.T) {
			r := s.query(t, "", loginMutation, map[string]any{"t": g.token(t, "g-bad", "bad@example.com", change)})
			if r.code() != "UNAUTHENTICATED" {
				t.Fatalf("%s: %s", name, r.Raw)
			}
		})
	}
	t.Run("RefusesBadSignature", func(t *testing.T) {
		tok := g.token(t, "g-bad", "bad@example.com", nil)
		tampered := tok[:strings.LastIndex(tok, ".")] + "." + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{1}, 256))
		if r := s.query(t, "", loginMutation, map[string]any{"t": tampered}); r.code() != "UNAUTHENTICATED" {
			t.Fatalf("bad signature: %s", r.Raw)
		}
	})
}

func TestAdminGrantCommand(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	token := s.login(t, "boss@example.com")
	bin := binary(t)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env(s.Config)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run("admin", "grant", "boss@example.com"); code != 0 || !strings.Contains(out, "staff now") {
		t.Fatalf("grant: %d %s", code, out)
	}
	if r := s.query(t, token, `{ users { edges { node { email } } } }`, nil); len(r.Errors) != 0 {
		t.Fatalf("new staff cannot list users: %s", r.Raw)
	}
	if code, out := run("admin", "grant", "nobody@example.com"); code != 1 || !strings.Contains(out, "sign in once") {
		t.Fatalf("unknown user: %d %s", code, out)
	}
	if code, _ := run("admin", "promote"); code != 2 {
		t.Fatalf("bad usage: %d", code)
	}
	if code, _ := run("admin", "revoke", "boss@example.com"); code != 0 {
		t.Fatal("revoke failed")
	}
	// The server reads the staff flag from DynamoDB on use.
	if r := s.query(t, token, `{ users { edges { node { email } } } }`, nil); r.code() != "FORBIDDEN" {
		t.Fatalf("revoked staff still lists users after the command returned: %s", r.Raw)
	}
}

func TestPlanCapabilities(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	admin := s.staff(t, "admin@example.com")
	s.createProblem(t, admin, "BAEKJOON", "1000", 1, true)
	s.query(t, admin, `mutation { createPlan(input: {name: "Author", maxHintsPerDay: 1, maxExecutionsPerDay: -1, maxProblems: 2, canViewAllProblems: true, canRegisterProblems: true}) { name } }`, nil)
	author := s.login(t, "author@example.com")
	s.query(t, admin, `mutation($id: ID!) { setUserPlan(userId: $id, plan: "Author") { id } }`, map[string]any{"id": globalIDOf("User", s.user(t, "author@example.com").ID)})

	// maxProblems gates registration exactly.
	for i := range 2 {
		s.createProblem(t, author, "CUSTOM", fmt.Sprint("p", i), 1, false)
	}
	r := s.query(t, author, createProblemMutation, map[string]any{"in": map[string]any{"platform": "CUSTOM", "problemId": "p3", "title": "x", "language": "C"}})
	if r.code() != "RATE_LIMITED" {
		t.Fatalf("third problem: %s", r.Raw)
	}
	// canViewAllProblems shows drafts.
	if r := s.query(t, author, `{ problems(filter: {completed: false}) { edges { node { problemId } } } }`, nil); len(r.Errors) != 0 || !strings.Contains(string(r.Data), "p0") {
		t.Fatalf("author drafts: %s", r.Raw)
	}
	// An unlimited plan (-1) never runs out.
	for i := range 15 {
		if r := s.query(t, author, executeMutation, executeInput(fmt.Sprint("print(", i, ")"), nil)); len(r.Errors) != 0 {
			t.Fatalf("execution %d on an unlimited plan: %s", i, r.Raw)
		}
	}
	var usage struct {
		MyUsage []struct{ Used, Limit, Remaining int }
	}
	s.query(t, author, `{ myUsage { used limit remaining } }`, nil).decode(t, &usage)
	if u := usage.MyUsage[0]; u.Used != 15 || u.Limit != -1 || u.Remaining != -1 {
		t.Fatalf("unlimited usage %+v", u)
	}
}
