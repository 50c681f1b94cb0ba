package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsClient is a raw websocket client speaking graphql-transport-ws (or the
// legacy graphql-ws), for end-to-end tests of subscriptions.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
}

type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// dialWS opens a socket to the API with a subprotocol.
func (s *apiServer) dialWS(t testing.TB, subprotocol string, header http.Header) *wsClient {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{subprotocol}, HandshakeTimeout: time.Minute}
	conn, resp, err := d.Dial(strings.Replace(s.URL, "http://", "ws://", 1), header)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	if err := c.conn.WriteJSON(v); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message, failing after timeout — at least a
// minute: a read's deadline only stops a hang, and a loaded machine has
// taken seconds to answer.
func (c *wsClient) read(timeout time.Duration) wsMessage {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(max(timeout, time.Minute)))
	var m wsMessage
	if err := c.conn.ReadJSON(&m); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// event returns the next message that is not a keep-alive (a ping is
// answered with a pong, as a client must: the server may ping at any
// time), failing after timeout.
func (c *wsClient) event(timeout time.Duration) wsMessage {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m := c.read(time.Until(deadline))
		switch m.Type {
		case "ping":
			c.send(map[string]any{"type": "pong"})
		case "ka", "pong":
		default:
			return m
		}
	}
}

// init sends connection_init with a token ("" = none) and waits for the ack.
func (c *wsClient) init(token string) {
	c.t.Helper()
	payload := map[string]any{}
	if token != "" {
		payload["Authorization"] = "Bearer " + token
	}
	c.send(map[string]any{"type": "connection_init", "payload": payload})
	deadline := time.Now().Add(time.Minute) // pings do not extend it
	for {
		m := c.read(time.Until(deadline))
		switch m.Type {
		case "connection_ack":
			return
		case "ka":
		case "ping": // may come first (any time, says graphql-transport-ws): a slow init met the ping interval
			c.send(map[string]any{"type": "pong"})
		default:
			c.t.Fatalf("expected connection_ack, got %+v", m)
		}
	}
}

// subscribe starts a subscription (graphql-transport-ws).
func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	c.send(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query, "variables": vars}})
}

// closeCode waits for the server to close the socket and returns the code.
func (c *wsClient) closeCode(timeout time.Duration) int {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		_, _, err := c.conn.ReadMessage()
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); ok {
			return ce.Code
		}
		c.t.Fatalf("expected a close frame, got %v", err)
	}
}

// collect reads the next messages of subscription id until it completes.
func (c *wsClient) collect(id string, timeout time.Duration) []json.RawMessage {
	c.t.Helper()
	var out []json.RawMessage
	deadline := time.Now().Add(timeout)
	for {
		m := c.read(time.Until(deadline))
		switch {
		case m.Type == "ping":
			c.send(map[string]any{"type": "pong"})
		case m.ID != id:
		case m.Type == "next" || m.Type == "data":
			out = append(out, m.Payload)
		case m.Type == "complete":
			return out
		case m.Type == "error":
			c.t.Fatalf("subscription error: %s", m.Payload)
		}
	}
}
