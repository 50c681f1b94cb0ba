package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// api calls the server's GraphQL endpoint over HTTP.
type api struct {
	url    string // http://ADDR/query
	client *http.Client
}

// newHTTPClient keeps up to conns connections per host alive: every
// concurrent bench client reuses its connection, like a real client would.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        conns * 2,
			MaxIdleConnsPerHost: conns * 2,
			MaxConnsPerHost:     0,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// gqlResponse is a decoded GraphQL response.
type gqlResponse struct {
	Status int
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
	Extensions map[string]any
}

// dynamoRequests is the server's count of DynamoDB calls for the request
// (extensions.dynamodbRequests, dev mode), -1 if absent.
func (r *gqlResponse) dynamoRequests() int {
	if v, ok := r.Extensions["dynamodbRequests"].(float64); ok {
		return int(v)
	}
	return -1
}

func (r *gqlResponse) err() error {
	if r.Status >= 500 {
		return fmt.Errorf("HTTP %d", r.Status)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%s (%v)", r.Errors[0].Message, r.Errors[0].Extensions["code"])
	}
	if r.Status != http.StatusOK {
		return fmt.Errorf("HTTP %d", r.Status)
	}
	return nil
}

// do posts one operation. body is the encoded request (see encodeQuery) so
// that a load loop can reuse it.
func (a *api) do(ctx context.Context, token string, body []byte) (*gqlResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := &gqlResponse{Status: resp.StatusCode}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("decode response (HTTP %d): %w", resp.StatusCode, err)
		}
	}
	return out, nil
}

// query runs one operation and decodes its data into v (if not nil); GraphQL
// errors are errors.
func (a *api) query(ctx context.Context, token, query string, vars map[string]any, v any) (*gqlResponse, error) {
	r, err := a.do(ctx, token, encodeQuery(query, vars))
	if err != nil {
		return nil, err
	}
	if err := r.err(); err != nil {
		return r, err
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			return r, err
		}
	}
	return r, nil
}

func encodeQuery(query string, vars map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return b
}

// login signs in with devLogin and returns the session token.
func (a *api) login(ctx context.Context, email string) (string, error) {
	var out struct{ DevLogin struct{ Token string } }
	_, err := a.query(ctx, "", `mutation($e: String!) { devLogin(email: $e) { token } }`, map[string]any{"e": email}, &out)
	return out.DevLogin.Token, err
}

// globalID builds a global id the way the API does (graph/ids.go).
func globalID(typ string, parts ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(typ + ":" + strings.Join(parts, ":")))
}

// metric reads one sample of a Prometheus counter or gauge from /metrics.
func metric(ctx context.Context, client *http.Client, base, name string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var v float64
			_, err := fmt.Sscan(rest, &v)
			return v, err
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

// wsClient is a graphql-transport-ws client on gorilla/websocket with one
// reader goroutine that hands messages to the subscription waiting for them.
type wsClient struct {
	conn *websocket.Conn
	wmu  sync.Mutex

	mu      sync.Mutex
	waiters map[string]chan wsMessage
	hooks   map[string]func(wsMessage) // instead of waiters, on the reader
	closed  chan struct{}
	err     error
}

type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	at      time.Time
	raw     []byte // the frame as received
}

// dialWS opens a socket, sends connection_init with token and waits for the ack.
func dialWS(ctx context.Context, url, token string) (*wsClient, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second,
		ReadBufferSize: 1024, WriteBufferSize: 1024}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	c := &wsClient{conn: conn, waiters: map[string]chan wsMessage{}, closed: make(chan struct{})}
	payload := map[string]any{}
	if token != "" {
		payload["Authorization"] = "Bearer " + token
	}
	if err := c.send(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		_ = conn.Close()
		return nil, err
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("connection_init: %w", err)
		}
		if m.Type == "connection_ack" {
			break
		}
	}
	conn.SetReadDeadline(time.Time{})
	go c.readLoop()
	return c, nil
}

func (c *wsClient) send(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.conn.WriteJSON(v)
}

func (c *wsClient) readLoop() {
	defer close(c.closed)
	for {
		_, data, err := c.conn.ReadMessage()
		at := time.Now()
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		var m wsMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		m.at, m.raw = at, data
		if m.Type == "ping" {
			_ = c.send(map[string]any{"type": "pong"})
			continue
		}
		c.mu.Lock()
		ch, hook := c.waiters[m.ID], c.hooks[m.ID]
		c.mu.Unlock()
		if hook != nil {
			hook(m)
			continue
		}
		if ch != nil {
			select {
			case ch <- m:
			default: // nobody reads this subscription fast enough: drop
			}
		}
	}
}

// subscribe starts a subscription; its messages arrive on the returned channel.
func (c *wsClient) subscribe(id, query string, vars map[string]any) (<-chan wsMessage, error) {
	ch := make(chan wsMessage, 16)
	c.mu.Lock()
	c.waiters[id] = ch
	c.mu.Unlock()
	err := c.send(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query, "variables": vars}})
	return ch, err
}

func (c *wsClient) forget(id string) {
	c.mu.Lock()
	delete(c.waiters, id)
	delete(c.hooks, id)
	c.mu.Unlock()
}

// onMessages hands the subscription's messages to f on the reader
// goroutine, from now until forget: no goroutine and no timer of its own
// per message, as a raw socket's reader does (recvTimes).
func (c *wsClient) onMessages(id string, f func(wsMessage)) {
	c.mu.Lock()
	if c.hooks == nil {
		c.hooks = map[string]func(wsMessage){}
	}
	c.hooks[id] = f
	c.mu.Unlock()
}

var errWSClosed = errors.New("websocket closed")

// next waits for the next message of a subscription.
func (c *wsClient) next(ch <-chan wsMessage, timeout time.Duration) (wsMessage, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Type == "error" {
			return m, fmt.Errorf("subscription error: %s", m.Payload)
		}
		return m, nil
	case <-c.closed:
		c.mu.Lock()
		defer c.mu.Unlock()
		return wsMessage{}, fmt.Errorf("%w: %v", errWSClosed, c.err)
	case <-t.C:
		return wsMessage{}, errors.New("timed out waiting for a subscription message")
	}
}

func (c *wsClient) close() { _ = c.conn.Close() }
