package httpserver

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// origins decides which browser origins may call the API: the configured
// list ("*": any), and in dev mode any page served from this machine
// (http://localhost:*, http://127.0.0.1:*, http://[::1]:*), so that a
// front-end dev server works without ALGOITNY_CORS_ORIGINS. The HTTP
// middleware and the websocket upgrade share it. Refused origins are logged
// once each (a bounded number of them: a page cannot flood the log).
type origins struct {
	list   []string
	any    bool
	local  bool
	logger *slog.Logger

	mu     sync.Mutex
	logged map[string]bool
}

// maxLoggedOrigins bounds the refused origins logged by a process.
const maxLoggedOrigins = 1000

func newOrigins(list []string, local bool, logger *slog.Logger) *origins {
	return &origins{list: list, any: slices.Contains(list, "*"), local: local, logger: logger, logged: map[string]bool{}}
}

// allowed reports whether a page of origin may call the API.
func (o *origins) allowed(origin string) bool {
	return o.any || slices.Contains(o.list, origin) || (o.local && localOrigin(origin))
}

// refused logs, once per origin, a request refused for its origin: the
// front-end team's first question when a browser says "CORS error".
func (o *origins) refused(r *http.Request, what string) {
	if o.logger == nil {
		return
	}
	origin := r.Header.Get("Origin")
	o.mu.Lock()
	first := !o.logged[origin] && len(o.logged) < maxLoggedOrigins
	if first {
		o.logged[origin] = true
	}
	o.mu.Unlock()
	if first {
		o.logger.WarnContext(r.Context(), "origin not allowed (set ALGOITNY_CORS_ORIGINS)", "origin", origin, "request", what)
	}
}

// localOrigin reports whether origin is a page served from this machine
// over http or https: localhost, 127.0.0.1 or [::1], any port.
func localOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// exposedHeaders are the response headers a page may read: the request id
// to quote in a bug report, and how long to wait after a 429 or 503.
const exposedHeaders = "X-Request-Id, Retry-After"

// cors sets the CORS headers of a request from an allowed origin and
// answers preflights (false: answered). A preflight from an allowed origin
// allows the request headers it asks for (client libraries add their own:
// apollographql-client-name, sentry-trace, baggage, …): the page is trusted
// already, and tokens travel in the Authorization header, never in cookies,
// so credentials are not allowed. A refused preflight is 403, logged with
// its origin.
func (cfg Config) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	allowed := cfg.origins.allowed(origin)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		if !allowed {
			cfg.origins.refused(r, "preflight")
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return false
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", "GET, POST")
		h.Set("Access-Control-Allow-Headers", allowHeaders(r.Header.Values("Access-Control-Request-Headers")))
		h.Set("Access-Control-Max-Age", "600")
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Headers")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	if allowed {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", exposedHeaders)
	} else if r.Header.Get("Upgrade") == "" { // a websocket's is logged by its transport
		cfg.origins.refused(r, r.Method)
	}
	w.Header().Add("Vary", "Origin")
	return true
}

// baseAllowHeaders are allowed to every preflight from an allowed origin.
var baseAllowHeaders = []string{"Content-Type", "Authorization", "Accept", "X-Request-Id", "GraphQL-Preflight"}

// allowHeaders is the Access-Control-Allow-Headers of a preflight: the
// base headers and those it asks for, when they are header names.
func allowHeaders(requested []string) string {
	out := slices.Clone(baseAllowHeaders)
	for _, v := range requested {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" || !headerToken(name) || len(out) >= 64 {
				continue
			}
			if !slices.ContainsFunc(out, func(h string) bool { return strings.EqualFold(h, name) }) {
				out = append(out, name)
			}
		}
	}
	return strings.Join(out, ", ")
}

// headerToken reports whether s is a header name (RFC 9110's token), at
// most 100 bytes.
func headerToken(s string) bool {
	if len(s) > 100 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
