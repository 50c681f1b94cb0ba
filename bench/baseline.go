package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/graph"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
)

// The baseline servers run as separate processes of the bench binary
// (`bench -baseline KIND`), so that they and the API server are set up the
// same way: own process, own Go runtime, same loopback.

// runBaseline serves a baseline on 127.0.0.1:0 until ctx is done and prints
// "listening on ADDR" like the server.
func runBaseline(ctx context.Context, kind string) error {
	var h http.Handler
	switch kind {
	case "http":
		h = plainJSONHandler()
	case "gqlgen":
		h = stockGraphQLHandler()
	case "broadcast":
		h = newBroadcaster()
	case "echo":
		h = echoHandler()
	default:
		return fmt.Errorf("unknown baseline %q (http, gqlgen, broadcast, echo)", kind)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if addr := os.Getenv("BENCH_BASELINE_PPROF_ADDR"); addr != "" { // profiling a baseline by hand
		go http.ListenAndServe(addr, http.DefaultServeMux)
	}
	fmt.Fprintf(os.Stdout, "baseline %s listening on %s\n", kind, l.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// stockGraphQLHandler is gqlgen as its documentation sets it up, over the
// project's own executable schema: handler.New, the POST transport, an LRU
// cache of parsed documents and automatic persisted queries. No access log,
// metrics, request ids or limits: what `{ __typename }` costs a server that
// does nothing but GraphQL (issue 18's yardstick for the per-request cost).
func stockGraphQLHandler() http.Handler {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{}, Complexity: graph.Complexity()}))
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	mux := http.NewServeMux()
	mux.Handle("/query", srv)
	return mux
}

// plainJSONHandler answers POST /query with {"data":{"__typename":"Query"}}
// after decoding the JSON body: what `{ __typename }` costs without GraphQL.
func plainJSONHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /query", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 10<<20)).Decode(&req); err != nil || req.Query == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"__typename": "Query"}})
	})
	return mux
}

// upgrader has the API server's buffer sizes (internal/httpserver/websocket.go).
var upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: func(*http.Request) bool { return true }}

// echoHandler is a bare gorilla echo server on /ws.
func echoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, data); err != nil {
				return
			}
		}
	})
	return mux
}

// broadcaster keeps every socket of /ws and writes the body of each POST
// /broadcast to all of them in a loop: the raw fan-out a subscription
// server cannot beat.
type broadcaster struct {
	mux   *http.ServeMux
	mu    sync.Mutex
	conns map[*websocket.Conn]bool
}

func newBroadcaster() *broadcaster {
	b := &broadcaster{mux: http.NewServeMux(), conns: map[*websocket.Conn]bool{}}
	b.mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[c] = true
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			delete(b.conns, c)
			b.mu.Unlock()
			c.Close()
		}()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	b.mux.HandleFunc("POST /broadcast", func(w http.ResponseWriter, r *http.Request) {
		msg, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		b.mu.Lock()
		for c := range b.conns {
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			c.WriteMessage(websocket.TextMessage, msg)
		}
		n := len(b.conns)
		b.mu.Unlock()
		fmt.Fprintf(w, "%d\n", n)
	})
	return b
}

func (b *broadcaster) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }
