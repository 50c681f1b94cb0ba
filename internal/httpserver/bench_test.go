package httpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/httpserver"
	"github.com/vektah/gqlparser/v2/ast"
)

// BenchmarkTypename measures the server's own CPU and allocations per
// `{ __typename }` request (every middleware, the transport, gqlgen), next
// to a plain handler that decodes the same body and writes the same answer:
// the per-request work the bench's typename scenario compares over HTTP.
//
//	go test -run '^$' -bench Typename -benchmem ./internal/httpserver/
func BenchmarkTypename(b *testing.B) {
	const body = `{"query":"{ __typename }"}`
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{}, httpserver.GraphQLConfig{Logger: logger,
		Observe: httpserver.ObserveOperation, Work: &httpserver.DocumentWork{},
		Websocket: httpserver.NewWebsocket(httpserver.WebsocketConfig{Logger: logger})}))
	full := httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, Metrics: httpserver.NewMetrics(nil),
		Ready: func(context.Context) error { return nil }})
	// gqlgen as its documentation sets it up (the bench's `-baseline gqlgen`).
	stock := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()}))
	stock.AddTransport(transport.POST{})
	stock.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	stock.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query string `json:"query"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data":{"__typename":"Query"}}`))
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"plain", plain}, {"stock", stock}, {"server", full}, {"gqlgen", gql}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"__typename":"Query"`) {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
