package accounts

import (
	"context"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/cache"
)

// changesTopic is where user ids are published when their account changes.
const changesTopic = "accounts:user-changed"

// maxCachedSessions bounds the session cache: past it, a new session
// replaces an arbitrary one.
const maxCachedSessions = 10_000

// sessionCache keeps, by session id, what authenticating a session read from
// DynamoDB (its user and whether it was logged out), so that a request with a
// known session costs no read: an authenticated request is then as cheap as
// an anonymous one. internal/cache says why it never serves a stale session:
// deactivation, logout, plan and staff changes take effect on the next
// request in the process that made them, and in other replicas as soon as
// the broker delivers (milliseconds), within the TTL at worst.
func (s *Service) sessionCache() *cache.Cache[string, *algoitny.AuthSnapshot] {
	s.sessionsOnce.Do(func() {
		if s.Changes == nil || s.SessionCacheTTL < 0 {
			return // nil: every method is a no-op, every Get a miss
		}
		s.sessions = cache.New[string, *algoitny.AuthSnapshot](cache.Config[*algoitny.AuthSnapshot]{
			TTL: s.sessionTTL(), MaxEntries: maxCachedSessions, Now: s.now,
		})
	})
	return s.sessions
}

// WatchChanges keeps the session cache in step with account changes made in
// other processes until ctx is done (see cache.Cache.Watch). Without Changes,
// or with a negative SessionCacheTTL, it returns at once and sessions are
// read on every request.
func (s *Service) WatchChanges(ctx context.Context) {
	c := s.sessionCache()
	if c == nil {
		return
	}
	c.Watch(ctx, s.Changes, changesTopic, func(userID []byte) { s.forget(string(userID)) }, s.logger())
}

// FollowChanges calls changed with the id of every user whose account
// changes in any process (logout, deactivation, plan or staff change,
// deletion) until ctx is done: the websocket transport checks that user's
// sockets at once rather than at their next periodic check. Without
// Changes it returns at once. A change told while the subscription is down
// is not replayed: followers keep their periodic checks.
func (s *Service) FollowChanges(ctx context.Context, changed func(userID string)) {
	if s.Changes == nil {
		return
	}
	for ctx.Err() == nil {
		sub, err := s.Changes.Subscribe(ctx, changesTopic)
		if err != nil {
			if ctx.Err() == nil {
				s.logger().Warn("accounts: cannot follow account changes; sockets are checked periodically meanwhile", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for e := range sub.Events() {
			// Forgotten here too: WatchChanges hears of it on a subscription
			// of its own, maybe after changed has authenticated again.
			s.forget(string(e.Payload))
			changed(string(e.Payload))
		}
	}
}

// forget drops the cached sessions of a user.
func (s *Service) forget(userID string) {
	s.sessionCache().ForgetFunc(func(_ string, snap *algoitny.AuthSnapshot) bool { return snap.User.ID == userID })
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
		s.forget(id)
		cache.Publish(ctx, s.Changes, changesTopic, []byte(id), s.logger()) // no-op without Changes
	}
}

// session returns what authentication needs to know of a session: from the
// cache, or read from the store (and cached).
func (s *Service) session(ctx context.Context, email, sessionID string) (*algoitny.AuthSnapshot, error) {
	c := s.sessionCache()
	if snap, ok := c.Get(sessionID); ok {
		return snap, nil
	}
	t := c.Begin()
	snap, err := s.Store.AuthLookup(ctx, email, sessionID)
	if err != nil {
		return nil, err
	}
	c.Put(sessionID, snap, t)
	return snap, nil
}

func (s *Service) sessionTTL() time.Duration {
	if s.SessionCacheTTL == 0 {
		return 30 * time.Second
	}
	return max(s.SessionCacheTTL, 0)
}
