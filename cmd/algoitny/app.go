package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/httpserver"
	"github.com/algoitny/api/internal/jobs"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Main is the running application: every dependency opened once and wired in
// one place. Tests run it on ":0" with the real dependencies.
type Main struct {
	Config Config
	Logger *slog.Logger

	DB   *dynamo.DB
	Pool *pgxpool.Pool
	Jobs *jobs.Runner

	listener net.Listener
	server   *http.Server
}

// Open connects to DynamoDB and PostgreSQL and builds the River runner. With
// serveHTTP it also listens on Config.Addr (so Addr is known before Run).
func (m *Main) Open(ctx context.Context, serveHTTP bool) error {
	var err error
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	if m.DB, err = dynamo.Open(ctx, m.Config.Dynamo); err != nil {
		return err
	}
	if m.Pool, err = openPool(ctx, m.Config.DatabaseURL); err != nil {
		return err
	}
	m.Jobs, err = jobs.New(jobs.Config{
		Pool: m.Pool, Schema: m.Config.RiverSchema, Store: m.DB, Logger: m.Logger,
		Work: m.Config.Workers,
	})
	if err != nil {
		return err
	}
	if !serveHTTP {
		return nil
	}
	gql := handler.NewDefaultServer(graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{Plans: m.DB}}))
	gql.SetErrorPresenter(graph.ErrorPresenter(m.Logger))
	m.server = &http.Server{
		Handler: httpserver.New(httpserver.Config{
			GraphQL: gql, Dev: m.Config.Dev, Logger: m.Logger,
			Ready: func(ctx context.Context) error {
				if err := m.DB.Ping(ctx); err != nil {
					return err
				}
				return m.Pool.Ping(ctx)
			},
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if m.listener, err = net.Listen("tcp", m.Config.Addr); err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	return nil
}

// Addr is the address the server listens on.
func (m *Main) Addr() string { return m.listener.Addr().String() }

// Run starts the workers (if configured) and serves HTTP (if opened with it)
// until ctx is done, then shuts down gracefully: in-flight requests finish,
// running jobs get 30 s before River cancels them for a later retry.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Jobs.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	errc := make(chan error, 1)
	if m.server != nil {
		go func() { errc <- m.server.Serve(m.listener) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m.server != nil {
		if serr := m.server.Shutdown(shutdown); serr != nil && err == nil {
			err = serr
		}
	}
	if jerr := m.Jobs.Stop(shutdown); jerr != nil && err == nil {
		err = jerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close releases the connections.
func (m *Main) Close() {
	if m.Pool != nil {
		m.Pool.Close()
	}
}

func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if url == "" {
		url = devstack.DefaultLocalURL
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL unreachable (set DATABASE_URL): %w", err)
	}
	return pool, nil
}
