package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/cache"
	"github.com/algoitny/api/internal/pubsub"
)

// hub stands for PostgreSQL's LISTEN/NOTIFY between processes: one global
// order of messages, delivered to each listening process in that order. A
// process's link can stall (its messages queue up, its publishes hang) or
// go down (what is sent meanwhile is lost, and it comes back in a new
// epoch), like a process whose connections hang or are terminated.
type hub struct {
	mu    sync.Mutex
	nodes []*node
}

// node is one process's broker on the hub.
type node struct {
	hub   *hub
	mem   *pubsub.Memory
	epoch atomic.Uint64

	// replyDelay delays the return of Publish after its message went out,
	// as a reply from PostgreSQL that comes late.
	replyDelay atomic.Int64

	// guarded by hub.mu
	stalled bool
	down    bool
	queue   [][2]string
	unstall chan struct{}
}

var errLinkDown = errors.New("test link is down")

func newHub() *hub { return &hub{} }

func (h *hub) node(t *testing.T) *node {
	n := &node{hub: h, mem: pubsub.NewMemory(pubsub.MemoryConfig{}), unstall: make(chan struct{})}
	n.epoch.Store(1)
	t.Cleanup(n.mem.Close)
	h.mu.Lock()
	h.nodes = append(h.nodes, n)
	h.mu.Unlock()
	return n
}

func (n *node) Publish(ctx context.Context, topic string, payload []byte) error {
	h := n.hub
	h.mu.Lock()
	if n.down {
		h.mu.Unlock()
		return errLinkDown
	}
	if n.stalled {
		wait := n.unstall
		h.mu.Unlock()
		select { // a stalled link: the call hangs until its deadline
		case <-ctx.Done():
			return ctx.Err()
		case <-wait:
			return errLinkDown
		}
	}
	for _, o := range h.nodes {
		switch {
		case o.down:
		case o.stalled:
			o.queue = append(o.queue, [2]string{topic, string(payload)})
		default:
			o.mem.Publish(ctx, topic, payload)
		}
	}
	h.mu.Unlock()
	time.Sleep(time.Duration(n.replyDelay.Load())) // the scenario: a slow broker
	return nil
}

func (n *node) SubscribeSize(ctx context.Context, topic string, size int) (*pubsub.Subscription, error) {
	return n.mem.SubscribeSize(ctx, topic, size)
}

func (n *node) Epoch() uint64 { return n.epoch.Load() }

// stall stops n's link without closing it.
func (n *node) stall() {
	n.hub.mu.Lock()
	defer n.hub.mu.Unlock()
	n.stalled = true
}

// resume delivers what queued up while n was stalled, in order.
func (n *node) resume() {
	n.hub.mu.Lock()
	defer n.hub.mu.Unlock()
	for _, m := range n.queue {
		n.mem.Publish(context.Background(), m[0], []byte(m[1]))
	}
	n.queue, n.stalled = nil, false
	close(n.unstall)
	n.unstall = make(chan struct{})
}

// cut takes n's link down: messages sent until reconnect are lost.
func (n *node) cut() {
	n.hub.mu.Lock()
	defer n.hub.mu.Unlock()
	n.down = true
	n.epoch.Store(0)
}

// reconnect brings n's link back in a new epoch.
func (n *node) reconnect(epoch uint64) {
	n.hub.mu.Lock()
	defer n.hub.mu.Unlock()
	n.down = false
	n.epoch.Store(epoch)
}

// Timings of the feeds in tests: short, so that tests wait little.
const (
	testBound  = 300 * time.Millisecond
	testWindow = 400 * time.Millisecond
	// waitLimit bounds a wait for something that should happen at once.
	waitLimit = 10 * time.Second
)

// process is a process of the tests: a feed on its own node and a cache.
type process struct {
	node  *node
	feed  *cache.Feed
	cache *cache.Cache[string]
}

// start runs a member process (or, with member false, a writer that caches
// nothing) until the test ends.
func start(t *testing.T, h *hub, member bool) *process {
	t.Helper()
	return startBound(t, h, member, testBound)
}

// startBound is start with another bound.
func startBound(t *testing.T, h *hub, member bool, bound time.Duration) *process {
	t.Helper()
	return startWindow(t, h, member, bound, testWindow)
}

// startWindow is start with another bound and write window: tests that
// compare a writer's clock with another process's hold need a window whose
// landing margin (a fifth of it) outlasts a loaded machine's late timers.
func startWindow(t *testing.T, h *hub, member bool, bound, window time.Duration) *process {
	t.Helper()
	n := h.node(t)
	f := cache.NewFeed(cache.FeedConfig{Broker: n, Member: member, Bound: bound, WriteWindow: window,
		Logger: slog.New(slog.DiscardHandler)})
	c := cache.New[string](cache.Config[string]{TTL: time.Hour, Feed: f})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &process{node: n, feed: f, cache: c}
}

// live waits until p's cache serves what it stores.
func (p *process) live(t *testing.T) {
	t.Helper()
	algoitnytest.Eventually(t, waitLimit, "the cache to go live", func() bool {
		p.cache.Put("probe", "p", p.cache.Begin())
		_, ok := p.cache.Get("probe")
		return ok
	})
	p.cache.Forget("probe")
}

// knows waits until p's feed has listened for a bound and heard the
// heartbeats of members other members: then its strict changes wait for
// their acknowledgements, not for the bound.
func (p *process) knows(t *testing.T, members int) {
	t.Helper()
	algoitnytest.Eventually(t, waitLimit, fmt.Sprintf("the feed to know %d members", members), func() bool {
		n, all := p.feed.HeardMembers()
		return all && n == members
	})
}

func hit(c *cache.Cache[string], k, want string) bool {
	v, ok := c.Get(k)
	return ok && v == want
}
