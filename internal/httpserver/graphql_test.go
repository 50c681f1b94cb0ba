package httpserver_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/httpserver"
)

// withSchema is cfg with the GraphQL layer over r, wired as cmd/algoitny
// wires it: the schema with its costs, its presenter and its checks.
func withSchema(r *graph.Resolver, cfg httpserver.GraphQLConfig) httpserver.GraphQLConfig {
	cfg.Schema = graph.NewExecutableSchema(graph.Config{Resolvers: r, Complexity: graph.Complexity()})
	cfg.Present = graph.ErrorPresenter(cfg.Logger)
	cfg.Checks = []graphql.HandlerExtension{graph.TextGuard{}}
	return cfg
}

// panickingAccounts answers `plans` with a panic; nothing else is called.
type panickingAccounts struct{ graph.Accounts }

func (panickingAccounts) Plans(context.Context) ([]*algoitny.Plan, error) {
	panic("secret detail: dynamodb table AlgoItny-Main at 10.0.0.7")
}

func TestPanicBecomesInternal(t *testing.T) {
	t.Parallel()
	logs := &strings.Builder{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	gql := httpserver.NewGraphQL(withSchema(&graph.Resolver{Accounts: panickingAccounts{}}, httpserver.GraphQLConfig{Logger: logger}))
	srv := httptest.NewServer(httpserver.New(httpserver.Config{GraphQL: gql, Logger: logger, Ready: func(context.Context) error { return nil }}))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/query", "application/json", strings.NewReader(`{"query":"{ plans { name } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"code":"INTERNAL"`) || !strings.Contains(string(body), `"message":"internal error"`) {
		t.Fatalf("response %s", body)
	}
	if strings.Contains(string(body), "secret") || strings.Contains(string(body), "10.0.0.7") {
		t.Fatalf("internals leaked: %s", body)
	}
	if !strings.Contains(logs.String(), "secret detail") {
		t.Fatalf("the panic was not logged:\n%s", logs.String())
	}
	// The server survived.
	if resp, err := http.Get(srv.URL + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panic: %v %v", resp, err)
	}
}
