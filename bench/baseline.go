package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/algoitny/api/graph"
	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
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
		bc := newBroadcaster()
		url, channel := os.Getenv("BENCH_BROADCAST_DATABASE_URL"), os.Getenv("BENCH_BROADCAST_CHANNEL")
		if url == "" || channel == "" {
			return fmt.Errorf("baseline broadcast: set BENCH_BROADCAST_DATABASE_URL and BENCH_BROADCAST_CHANNEL")
		}
		go func() {
			if err := bc.listen(ctx, url, channel); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "baseline broadcast: listen:", err)
				os.Exit(1)
			}
		}()
		h = bc
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
		go func() { _ = http.ListenAndServe(addr, http.DefaultServeMux) }()
	}
	fmt.Fprintf(os.Stdout, "baseline %s listening on %s\n", kind, l.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
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
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"__typename": "Query"}})
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
		defer func() { _ = c.Close() }()
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

// broadcaster keeps every socket of /ws and, on each notification of
// its PostgreSQL channel (BENCH_BROADCAST_DATABASE_URL,
// BENCH_BROADCAST_CHANNEL), writes the frames last posted to /frames to
// all of them in a loop: the raw fan-out a subscription server cannot beat.
// It is triggered the way the API server's subscriptions are (a LISTEN
// connection wakes up) and writes what the server writes for a final
// event — the subscription's `next` and its `complete`, the same bytes, two
// frames in one write to each socket, as the server does — so that the two
// are timed like with like. The frames are encoded once for all sockets
// and written straight to each socket: nothing is cheaper. GET /stamp says
// when the last notification arrived (unix nanoseconds), as the server's
// algoitny_pubsub_last_received_seconds does.
type broadcaster struct {
	mux   *http.ServeMux
	mu    sync.Mutex
	conns map[*websocket.Conn]bool
	wire  []byte // the frames, encoded
	stamp atomic.Int64
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
			_ = c.Close()
		}()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	// POST /frames sets what a broadcast writes: a JSON array of the
	// messages, each written as one text frame.
	b.mux.HandleFunc("POST /frames", func(w http.ResponseWriter, r *http.Request) {
		var frames []json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&frames); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var wire []byte
		for _, f := range frames {
			wire = append(wire, wsTextFrame(f)...)
		}
		b.mu.Lock()
		b.wire = wire
		b.mu.Unlock()
	})
	b.mux.HandleFunc("GET /stamp", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d\n", b.stamp.Load())
	})
	// GET /count says how many sockets are open.
	b.mux.HandleFunc("GET /count", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		n := len(b.conns)
		b.mu.Unlock()
		fmt.Fprintf(w, "%d\n", n)
	})
	return b
}

// broadcast writes the frames to every socket. Nothing else writes to
// the sockets (the bench's clients send no pings).
func (b *broadcaster) broadcast() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.conns {
		nc := c.NetConn()
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		_, _ = nc.Write(b.wire)
	}
}

// wsTextFrame encodes p as one final, unmasked text frame: what a server
// sends (RFC 6455 §5.2).
func wsTextFrame(p []byte) []byte {
	h := []byte{0x81} // FIN, text
	switch n := len(p); {
	case n < 126:
		h = append(h, byte(n))
	case n <= 0xffff:
		h = append(h, 126, byte(n>>8), byte(n))
	default:
		h = append(h, 127)
		h = binary.BigEndian.AppendUint64(h, uint64(n))
	}
	return append(h, p...)
}

// listen broadcasts on every notification of channel until ctx is done.
func (b *broadcaster) listen(ctx context.Context, url, channel string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	for {
		_, err := conn.WaitForNotification(ctx)
		b.stamp.Store(time.Now().UnixNano())
		if err != nil {
			return err
		}
		b.broadcast()
	}
}

func (b *broadcaster) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }
