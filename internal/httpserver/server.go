// Package httpserver is the HTTP surface of the API: the GraphQL endpoint,
// the playground, health and readiness probes, and the middleware around them.
package httpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
)

// Config wires the handler.
type Config struct {
	// GraphQL serves /query.
	GraphQL http.Handler
	// Dev turns on the playground.
	Dev bool
	// Ready checks the dependencies for /readyz (DynamoDB, PostgreSQL).
	Ready func(ctx context.Context) error
	Logger *slog.Logger
}

// New returns the handler of every route.
func New(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/query", cfg.GraphQL)
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
	if cfg.Dev {
		mux.Handle("GET /playground", playground.Handler("AlgoItny", "/query"))
		mux.Handle("GET /{$}", http.RedirectHandler("/playground", http.StatusFound))
	}
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
