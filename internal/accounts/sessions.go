package accounts

import (
	"context"
	"slices"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// changesTopic is where user ids are published when their account changes.
const changesTopic = "accounts:user-changed"

// FollowChanges calls changed with the id of every user whose account
// changes in any process (logout, deactivation, plan or staff change,
// deletion) until ctx is done: the websocket transport checks that user's
// sockets at once rather than at their next periodic check. Without
// Changes it returns at once. A change told while the subscription is down
// is not replayed: followers keep their periodic checks. (What a request
// reads is never stale: sessions, users and plans are strict in the
// storage's cache, see internal/dynamo/partitions.go.)
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
			changed(string(e.Payload))
		}
	}
}

// changed tells every process's followers that users' accounts changed
// (nil users are skipped; the same user twice is told once). Both the user a
// change was meant for and the one the store says it wrote are passed, in
// case an index lagged and they differ.
func (s *Service) changed(ctx context.Context, users ...*algoitny.User) {
	if s.Changes == nil {
		return
	}
	var ids []string
	for _, u := range users {
		if u != nil && u.ID != "" && !slices.Contains(ids, u.ID) {
			ids = append(ids, u.ID)
		}
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, id := range ids {
		if err := s.Changes.Publish(pctx, changesTopic, []byte(id)); err != nil {
			s.logger().Warn("accounts: cannot tell sockets of an account change; they notice at their periodic check", "user", id, "err", err)
		}
	}
}
