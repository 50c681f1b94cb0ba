// Package httpserver is the HTTP surface of the API: the GraphQL endpoint
// (GraphQL-over-HTTP and websockets), the playground, health and readiness
// probes, Prometheus metrics, and the middleware around them (request ids,
// structured logs, CORS, body and time limits, authentication).
package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/algoitny/api/internal/auth"
	"github.com/algoitny/api/internal/playground"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Authenticator turns a bearer session token into the request's actor
// (accounts.Service). It returns EUNAUTHENTICATED for a bad token.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (*algoitny.Actor, error)
}

// Config wires the handler.
type Config struct {
	// GraphQL serves /query (see NewGraphQL).
	GraphQL http.Handler
	Auth    Authenticator
	// Dev turns on the playground (internal/playground: GraphiQL with its
	// assets embedded, so it works offline).
	Dev bool
	// Ready checks the dependencies for /readyz (DynamoDB, PostgreSQL).
	Ready func(ctx context.Context) error
	// Logger writes the access log (a line per request but /healthz,
	// /readyz and /metrics) and the server's warnings.
	Logger  *slog.Logger
	Metrics *Metrics
	// CORSOrigins may call the API from a browser ("*" allows any origin).
	CORSOrigins []string
	// LocalOrigins allows, besides CORSOrigins, pages served from this
	// machine (http://localhost:*, http://127.0.0.1:*; dev mode).
	LocalOrigins bool
	// MaxBodyBytes bounds a request body (default 10 MB: test cases are large).
	MaxBodyBytes int64
	// MaxUploadBytes bounds the body of a multipart request that may carry
	// a file (uploadAllowed; default DefaultMaxUploadBytes, a 32 MB problem
	// package and its envelope).
	MaxUploadBytes int64
	// BodyTimeout bounds the reading of a request body, like
	// http.Server's ReadHeaderTimeout the headers' (default 10 s): its nth
	// byte must have come BodyTimeout + n/BodyMinRate after its headers
	// (BodyMinRate, 64 KB/s: a body of 10 MB has 170 s, a client sending a
	// byte now and then is cut after about BodyTimeout). Over it the
	// request is answered 408 REQUEST_TIMEOUT and its connection closed.
	BodyTimeout time.Duration
	// RequestTimeout bounds an HTTP request (default 30 s): parsing,
	// validation, the limits' checks and execution stop when it is up, as
	// they do when the client goes away. Websockets are exempt.
	RequestTimeout time.Duration
	// Admission bounds the /query requests served at once (zero fields
	// are DefaultAdmission's; Concurrency -1 turns it off).
	Admission Admission
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// address the admission's per-address share counts (ClientAddress).
	TrustedProxies []netip.Prefix
	// CountRequests, if set, counts the storage requests that
	// authenticate a request, added to dev mode's
	// `extensions.dynamodbRequests` (GraphQLConfig.CountRequests).
	CountRequests CountRequests

	proxyWarning *proxyWarning // set by New
	origins      *origins      // set by New
}

// New returns the handler of every route.
func New(cfg Config) http.Handler {
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 10 * time.Second
	}
	cfg.proxyWarning = &proxyWarning{logger: cfg.Logger}
	cfg.origins = newOrigins(cfg.CORSOrigins, cfg.LocalOrigins, cfg.Logger)
	mux := http.NewServeMux()
	admit := newAdmission(cfg.Admission)
	if admit != nil && cfg.Metrics != nil {
		cfg.Metrics.watchAdmission(admit)
	}
	query := cfg.query(admit)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := cfg.Ready(ctx); err != nil {
			cfg.Logger.WarnContext(ctx, "not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Metrics.registry, promhttp.HandlerOpts{}))
	}
	if cfg.Dev {
		pg := playground.Handler("/playground", "/query")
		mux.Handle("GET /playground", pg)
		mux.Handle("GET /playground/", pg)
		mux.Handle("GET /{$}", http.RedirectHandler("/playground", http.StatusFound))
	}
	return cfg.observe(mux, query)
}

// query serves /query. Its middleware is one function, so a request is
// copied once (one context, one *http.Request) rather than once per layer
// (issue 18: the per-request cost of `{ __typename }`). In order:
//
//   - CORS: preflights answered, headers set for allowed origins only;
//   - websocket upgrades go on at once (authenticated in connection_init,
//     exempt from the body limit and the request timeout; each operation
//     takes a slot of the admission, see WebsocketTransport);
//   - the body, read whole (at most MaxBodyBytes, at BodyTimeout's pace)
//     before the request asks for a slot of the admission, so that a client
//     sending it slowly holds none (Admission: it counts as waiting);
//   - the admission (back-pressure, see Admission);
//   - the request timeout (RequestTimeout: parsing, validation, the limits'
//     checks and execution stop when it is up, as they do when the client
//     goes away);
//   - authentication: anonymous without an Authorization header, the
//     session's user with a valid bearer token, and 401 UNAUTHENTICATED for a
//     bad one (a client that sends a token expects to be someone; silently
//     serving it anonymously would hide the problem).
func (cfg Config) query(admit *admission) func(w http.ResponseWriter, r *http.Request, ri *requestInfo) {
	return func(w http.ResponseWriter, r *http.Request, ri *requestInfo) {
		if !cfg.cors(w, r) {
			return // a preflight, answered
		}
		if r.Header.Get("Upgrade") != "" {
			ctx := context.WithValue(r.Context(), requestInfoKey{}, ri)
			cfg.GraphQL.ServeHTTP(w, r.WithContext(withAdmission(ctx, admit)))
			return
		}
		addr := ClientAddress(r, cfg.TrustedProxies)
		if !cfg.admit(w, r, ri, admit, addr) {
			return // answered
		}
		if admit != nil {
			defer admit.release(addr)
		}
		defer ri.freeBody()
		// One context ends the request: its time up (errRequestTimeout),
		// its response budget spent (the budget calls stop), its client
		// gone, or its answer written.
		ctx, stop := context.WithTimeoutCause(r.Context(), cfg.RequestTimeout, errRequestTimeout)
		defer stop()
		ri.stop = stop
		ctx = context.WithValue(ctx, requestInfoKey{}, ri)
		if r.Header.Get("Authorization") != "" {
			var ok bool
			if ctx, ok = cfg.authenticate(w, r, ctx); !ok {
				return
			}
		}
		cfg.GraphQL.ServeHTTP(w, r.WithContext(ctx))
	}
}

// admit reads r's body into ri and then takes a slot of the admission
// (none: admit is nil) for the request of client address addr; false when
// it answered r itself: 429 or 503 from the admission, or the body's
// error (readBody).
func (cfg Config) admit(w http.ResponseWriter, r *http.Request, ri *requestInfo, admit *admission, addr string) bool {
	if admit == nil {
		return r.Method != http.MethodPost || cfg.readBody(w, r, ri)
	}
	if err := admit.arrive(addr); err != nil {
		// The body is not read: the connection is not kept for another
		// request (net/http would read the rest of it first).
		w.Header().Set("Connection", "close")
		cfg.refuse(w, r, admit, err, addr)
		return false
	}
	if r.Method == http.MethodPost && !cfg.readBody(w, r, ri) {
		admit.depart(addr)
		return false
	}
	if err := admit.acquire(r.Context(), addr); err != nil {
		ri.freeBody()
		cfg.refuse(w, r, admit, err, addr)
		return false
	}
	return true
}

// refuse answers a request the admission turned away: 429
// TOO_MANY_REQUESTS over its address's share, 503 SERVER_BUSY otherwise,
// both with Retry-After.
func (cfg Config) refuse(w http.ResponseWriter, r *http.Request, admit *admission, err error, addr string) {
	retryAfter := strconv.Itoa(int((admit.cfg.RetryAfter + time.Second - 1) / time.Second))
	w.Header().Set("Retry-After", retryAfter)
	setErrorMediaType(w, r)
	if errors.Is(err, errTooMany) {
		cfg.proxyWarning.check(r, "a request", addr)
		msg := "too many requests from your address are waiting or being served; retry after " + retryAfter + " s"
		writeResponse(w, http.StatusTooManyRequests, response{Errors: gqlerror.List{apierror.New(codeTooMany, msg)}})
		return
	}
	busy := apierror.New(codeBusy, "the server is busy; retry after "+retryAfter+" s")
	writeResponse(w, http.StatusServiceUnavailable, response{Errors: gqlerror.List{busy}})
}

// authenticate returns ctx with the actor of r's bearer token; false when
// it answered r itself (401 UNAUTHENTICATED for a bad token, 500 when the
// sessions cannot be read).
func (cfg Config) authenticate(w http.ResponseWriter, r *http.Request, ctx context.Context) (context.Context, bool) {
	token, ok := auth.BearerToken(r)
	var actor *algoitny.Actor
	var err error = algoitny.Errorf(algoitny.EUNAUTHENTICATED, "use Authorization: Bearer <session token>")
	if ok && cfg.Dev && cfg.CountRequests != nil { // dev mode reports the reads in extensions.dynamodbRequests
		actx, reads := cfg.CountRequests(ctx)
		actor, err = cfg.Auth.Authenticate(actx, token)
		ctx = withAuthReads(ctx, reads())
	} else if ok {
		actor, err = cfg.Auth.Authenticate(ctx, token)
	}
	if err != nil {
		code, msg := apierror.Unauthenticated, algoitny.ErrorMessage(err)
		status := http.StatusUnauthorized
		if !algoitny.IsCode(err, algoitny.EUNAUTHENTICATED) {
			cfg.Logger.ErrorContext(r.Context(), "authentication failed", "err", err)
			code, msg, status = apierror.Internal, "internal error", http.StatusInternalServerError
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="algoitny"`)
		setErrorMediaType(w, r)
		writeResponse(w, status, response{Errors: gqlerror.List{apierror.New(code, msg)}})
		return ctx, false
	}
	return algoitny.WithActor(ctx, actor), true
}

// authReadsKey carries the DynamoDB requests that authenticated an HTTP
// request, for `extensions.dynamodbRequests` (dev mode).
type authReadsKey struct{}

func withAuthReads(ctx context.Context, n int64) context.Context {
	v := &atomic.Int64{}
	v.Store(n)
	return context.WithValue(ctx, authReadsKey{}, v)
}

// takeAuthReads returns the requests that authenticated the request of ctx
// the first time it is asked (the first operation of a batch counts them),
// 0 after.
func takeAuthReads(ctx context.Context) int64 {
	if v, ok := ctx.Value(authReadsKey{}).(*atomic.Int64); ok {
		return v.Swap(0)
	}
	return 0
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is sent: a failed write means the client has gone, and
	// there is nothing left to tell it.
	_ = json.NewEncoder(w).Encode(v)
}

// ParseOrigins splits a comma-separated CORS allow-list.
func ParseOrigins(s string) []string {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, strings.TrimSuffix(o, "/"))
		}
	}
	return out
}
