package accounts

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/pubsub"
)

// Changes carries "this user's account changed" between the processes that
// cache sessions: every serve replica subscribes (WatchChanges), and whatever
// changes a user — here or in another process — publishes. The Postgres
// broker (internal/pubsub) is one: a LISTEN/NOTIFY channel all replicas share.
type Changes interface {
	Publish(ctx context.Context, topic string, payload []byte) error
	Subscribe(ctx context.Context, topic string) (*pubsub.Subscription, error)
	// Epoch numbers the broker's unbroken stretches of delivery; 0 while
	// events may be lost (see pubsub.Postgres.Epoch).
	Epoch() uint64
}

// changesTopic is where user ids are published when their account changes.
const changesTopic = "accounts:user-changed"

// maxCachedSessions bounds the cache: past it, a new session replaces an
// arbitrary one.
const maxCachedSessions = 10_000

// sessionCache keeps what authenticating a session read from DynamoDB (its
// user and whether it was logged out), so that a request with a known
// session costs no read. It is what makes an authenticated request as cheap
// as an anonymous one.
//
// It never serves what a change has made stale:
//   - the process that changes a user forgets that user's sessions before it
//     answers (forget), and publishes the change to the others (Changes);
//   - entries are used only while Changes delivers without a gap: an entry
//     remembers the broker's epoch it was read in, and a reconnection (when
//     events may have been lost) makes every entry a miss;
//   - a read that raced with a change is not stored (gen);
//   - the cache is off until WatchChanges subscribes, and whenever its
//     subscription ends;
//   - and every entry expires after the TTL whatever happens.
//
// So deactivation, logout, plan and staff changes take effect on the next
// request in the process that made them, and in other replicas as soon as
// the broker delivers (milliseconds), or within the TTL if a listener
// connection dies without the broker noticing.
type sessionCache struct {
	mu      sync.Mutex
	live    bool   // WatchChanges is subscribed
	gen     uint64 // bumped by every forget and reset
	entries map[string]cachedSession
}

type cachedSession struct {
	snap    *algoitny.AuthSnapshot
	epoch   uint64
	expires time.Time
}

// get returns the cached snapshot of a session if it is still good: read in
// the current, unbroken epoch and not expired.
func (c *sessionCache) get(sessionID string, epoch uint64, now time.Time) (*algoitny.AuthSnapshot, bool) {
	if epoch == 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[sessionID]
	if !ok || !c.live || e.epoch != epoch || !now.Before(e.expires) {
		return nil, false
	}
	return e.snap, true
}

// begin is called before reading a session; put stores the read only if no
// change was seen in between.
func (c *sessionCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *sessionCache) put(sessionID string, e cachedSession, gen uint64) {
	if e.epoch == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if c.entries == nil {
		c.entries = make(map[string]cachedSession)
	}
	if _, ok := c.entries[sessionID]; !ok && len(c.entries) >= maxCachedSessions {
		for id := range c.entries {
			delete(c.entries, id)
			break
		}
	}
	c.entries[sessionID] = e
}

// forget drops every session of a user.
func (c *sessionCache) forget(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for id, e := range c.entries {
		if e.snap.User.ID == userID {
			delete(c.entries, id)
		}
	}
}

// reset empties the cache and turns it on or off.
func (c *sessionCache) reset(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries = nil
	c.live = live
}

// WatchChanges keeps the session cache in step with account changes made in
// other processes until ctx is done: it subscribes to Changes, forgets the
// sessions of every user it hears about, and turns the cache off whenever it
// is not subscribed (before, between and after subscriptions). Without
// Changes, or with a negative SessionCacheTTL, it returns at once and
// sessions are read on every request.
func (s *Service) WatchChanges(ctx context.Context) {
	if s.Changes == nil || s.SessionCacheTTL < 0 {
		return
	}
	defer s.sessions.reset(false)
	for ctx.Err() == nil {
		sub, err := s.Changes.Subscribe(ctx, changesTopic)
		if err != nil {
			if ctx.Err() == nil {
				s.logger().Warn("accounts: cannot watch account changes; sessions are read on every request", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		s.sessions.reset(true)
		for e := range sub.Events() {
			s.sessions.forget(string(e.Payload))
		}
		s.sessions.reset(false)
		if ctx.Err() == nil {
			s.logger().Warn("accounts: the account-change subscription ended; resubscribing", "err", sub.Err())
		}
	}
}

// changed is called after users' stored accounts changed (nil users are
// skipped; the same user twice is reported once): this process forgets their
// sessions at once, the others when they hear of it. Both the user a change
// was meant for and the one the store says it wrote are passed, in case an
// index lagged and they differ.
func (s *Service) changed(ctx context.Context, users ...*algoitny.User) {
	var ids []string
	for _, u := range users {
		if u != nil && u.ID != "" && !slices.Contains(ids, u.ID) {
			ids = append(ids, u.ID)
		}
	}
	for _, id := range ids {
		s.sessions.forget(id)
	}
	if s.Changes == nil {
		return
	}
	// The change is stored: tell the others even if the client went away,
	// but never hang a request on PostgreSQL.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	for _, id := range ids {
		if err := s.Changes.Publish(pctx, changesTopic, []byte(id)); err != nil {
			s.logger().Error("accounts: cannot publish an account change; other replicas may use cached sessions until they expire",
				"user", id, "err", err, "ttl", s.sessionTTL())
		}
	}
}

// publishTimeout bounds telling other replicas of a change.
const publishTimeout = 5 * time.Second

// session returns what authentication needs to know of a session: from the
// cache, or read from the store (and cached).
func (s *Service) session(ctx context.Context, email, sessionID string) (*algoitny.AuthSnapshot, error) {
	ttl := s.sessionTTL()
	var epoch uint64
	if s.Changes != nil && ttl > 0 {
		epoch = s.Changes.Epoch()
	}
	now := s.now()
	if snap, ok := s.sessions.get(sessionID, epoch, now); ok {
		return snap, nil
	}
	gen := s.sessions.begin()
	snap, err := s.Store.AuthLookup(ctx, email, sessionID)
	if err != nil {
		return nil, err
	}
	s.sessions.put(sessionID, cachedSession{snap: snap, epoch: epoch, expires: now.Add(ttl)}, gen)
	return snap, nil
}

func (s *Service) sessionTTL() time.Duration {
	if s.SessionCacheTTL == 0 {
		return 30 * time.Second
	}
	return max(s.SessionCacheTTL, 0)
}
