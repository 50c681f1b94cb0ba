// Package pubsub fans events out from publishers to live subscribers: a job
// worker publishes "job:<id>" after each state change and every GraphQL
// subscription (jobUpdated, executionProgress, hintProgress) watching that
// topic receives it, on whichever `serve` replica its websocket is.
//
// Two brokers implement Broker:
//
//   - Memory delivers inside one process; unit tests and single-process
//     development use it, and Postgres uses it for its local fan-out.
//   - Postgres carries events between processes over PostgreSQL
//     LISTEN/NOTIFY: each process holds ONE listener connection on one
//     channel and fans out locally through a Memory. Payloads too large for a
//     notification (8000 bytes) travel through a small table (see Migrate).
//
// Rules both brokers keep:
//
//   - Publish never blocks on a subscriber. Each subscription has a buffered
//     channel; a subscriber whose buffer is full is dropped: its channel is
//     closed and Err reports ErrSlowSubscriber. A GraphQL subscription that
//     sees this ends, and the client resubscribes and refetches the state.
//   - A subscription ends, its channel closed exactly once, on Close, on its
//     context's cancellation, on being dropped or on the broker's Close;
//     nothing is left running for it afterwards.
//   - Events of one topic published one after the other (each Publish
//     returning before the next starts) arrive in that order.
//   - Delivery is at most once. Postgres loses the events published while its
//     listener reconnects after a lost connection, so subscribers treat
//     events as hints and read the authoritative state on (re)subscribe.
//
// Errors are algoitny errors: invalid topics and configurations are
// EINVALID, database failures and a closed broker EINTERNAL; only a context
// that is done already is reported with its own error.
package pubsub
