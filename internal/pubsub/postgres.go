package pubsub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultChannel is the PostgreSQL notification channel every AlgoItny
// process listens on unless configured otherwise.
const DefaultChannel = "algoitny_events"

// maxNotifyPayload is the longest NOTIFY payload PostgreSQL accepts in its
// default build: "shorter than 8000 bytes".
const maxNotifyPayload = 7999

// PostgresConfig configures a Postgres broker. Only Pool is required.
type PostgresConfig struct {
	// Pool runs Publish and loads stored payloads. The listener connection
	// is opened with the same connection settings, so the pool must reach
	// PostgreSQL directly (LISTEN does not work through a transaction-mode
	// pooler such as PgBouncer). Close the broker before the pool.
	Pool *pgxpool.Pool
	// Channel is the notification channel (default DefaultChannel): ASCII
	// letters, digits and underscores. Every process that should exchange
	// events uses the same one.
	Channel string
	// BufferSize is each local subscription's buffer (default
	// DefaultBufferSize).
	BufferSize int
	// PayloadTTL is how long a stored (large) payload is kept for the
	// listeners to load (default 5 min); older rows are pruned by Publish.
	PayloadTTL time.Duration
	// ReconnectMin and ReconnectMax bound the listener's reconnection
	// backoff (defaults 100 ms and 5 s).
	ReconnectMin, ReconnectMax time.Duration
	// HealthCheckInterval is how long the listener waits for a notification
	// before it pings its connection to detect a silently dropped one
	// (default 30 s).
	HealthCheckInterval time.Duration
	// Logger receives reconnections and undeliverable notifications
	// (default slog.Default()).
	Logger *slog.Logger
}

// Postgres is a Broker across processes over PostgreSQL LISTEN/NOTIFY. Each
// process that serves subscriptions (every `serve` replica) and each that
// publishes (workers) creates one. It holds one listener connection that
// LISTENs on Channel and republishes what arrives into a local Memory;
// Publish sends pg_notify through the pool. Payloads whose notification
// would exceed 8000 bytes are stored in the algoitny_pubsub_payloads table
// (see Migrate) and only their id is notified.
//
// A process receives its own publications through its listener, like every
// other process, so local and remote subscribers see the same order.
type Postgres struct {
	cfg       PostgresConfig
	pool      *pgxpool.Pool
	local     *Memory
	log       *slog.Logger
	connCfg   *pgx.ConnConfig
	listenSQL string

	ctx       context.Context // cancelled by Close; bounds the listener
	cancel    context.CancelFunc
	done      chan struct{} // closed when the listener goroutine returns
	closeOnce sync.Once
	lastPrune atomic.Int64 // unix nanoseconds of the last prune this process sent

	// epoch is the number of the listener connection, 0 while there is none
	// (see Epoch); connections counts them (the listener goroutine's own).
	epoch       atomic.Uint64
	connections uint64

	// received is when the listener last received a notification, by
	// topic kind (see Received).
	receivedMu sync.Mutex
	received   map[string]time.Time
}

// maxReceivedKinds bounds Received's kinds: topics come from every process
// on the channel, so their prefixes are not ours to count.
const maxReceivedKinds = 32

// NewPostgres opens the listener connection, LISTENs on the channel and
// starts the goroutine that keeps it listening (reconnecting with backoff)
// until Close; ctx bounds only this first connection. Subscriptions made
// after it returns receive every event published after they are made. It
// returns EINVALID for a missing pool or a bad channel name and EINTERNAL
// when PostgreSQL is unreachable: a process fails at startup rather than
// serve subscriptions that never receive anything.
func NewPostgres(ctx context.Context, cfg PostgresConfig) (*Postgres, error) {
	if cfg.Pool == nil {
		return nil, algoitny.Invalid("Pool", "pubsub: a pool is required")
	}
	cfg.Channel = cmp.Or(cfg.Channel, DefaultChannel)
	if !validChannel(cfg.Channel) {
		return nil, algoitny.Invalid("Channel", "pubsub: the channel must be 1 to 63 ASCII letters, digits and underscores, not starting with a digit")
	}
	cfg.PayloadTTL = cmp.Or(max(cfg.PayloadTTL, 0), 5*time.Minute)
	cfg.ReconnectMin = cmp.Or(max(cfg.ReconnectMin, 0), 100*time.Millisecond)
	cfg.ReconnectMax = max(cmp.Or(cfg.ReconnectMax, 5*time.Second), cfg.ReconnectMin)
	cfg.HealthCheckInterval = cmp.Or(max(cfg.HealthCheckInterval, 0), 30*time.Second)
	p := &Postgres{
		cfg:       cfg,
		pool:      cfg.Pool,
		local:     NewMemory(MemoryConfig{BufferSize: cfg.BufferSize}),
		log:       cmp.Or(cfg.Logger, slog.Default()),
		connCfg:   cfg.Pool.Config().ConnConfig.Copy(),
		listenSQL: "LISTEN " + pgx.Identifier{cfg.Channel}.Sanitize(),
		done:      make(chan struct{}),
	}
	// Visible in pg_stat_activity, so operators (and the reconnect test) can
	// tell the listener from pool connections.
	if p.connCfg.RuntimeParams == nil {
		p.connCfg.RuntimeParams = make(map[string]string)
	}
	p.connCfg.RuntimeParams["application_name"] = ListenerApplicationName(cfg.Channel)
	conn, err := p.connect(ctx)
	if err != nil {
		return nil, algoitny.Internal(err, "pubsub: cannot listen on channel %s", cfg.Channel)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.connected()
	go p.listen(conn)
	return p, nil
}

// Epoch numbers the unbroken stretches of delivery: it is 0 while the
// listener connection is down (events published then are lost here) and
// takes a new value each time it is back. Whoever caches state that events
// invalidate (accounts' sessions) trusts an entry only while the epoch it was
// read in lasts. A connection that died silently counts as up until the
// health check (HealthCheckInterval) notices it.
func (p *Postgres) Epoch() uint64 { return p.epoch.Load() }

// connected starts a new epoch: the listener is listening again.
func (p *Postgres) connected() {
	p.connections++
	p.epoch.Store(p.connections)
}

// validChannel reports whether name is a plain PostgreSQL identifier, which
// needs no thought about quoting, case folding or truncation anywhere.
func validChannel(name string) bool {
	if name == "" || len(name) > 63 || ('0' <= name[0] && name[0] <= '9') {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ListenerApplicationName is the application_name of the listener
// connection on channel, so it can be found in pg_stat_activity.
func ListenerApplicationName(channel string) string {
	name := "algoitny-pubsub " + channel
	if len(name) > 63 { // PostgreSQL truncates longer names
		name = name[:63]
	}
	return name
}

// Publish notifies every process listening on the channel, including this
// one, of an event on topic. It waits for PostgreSQL, never for subscribers.
// It returns EINVALID for a bad topic, ErrClosed after Close, and an
// EINTERNAL error wrapping the cause (ctx's error among them) when the
// database fails.
func (p *Postgres) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := validateTopic(topic); err != nil {
		return err
	}
	if p.ctx.Err() != nil {
		return ErrClosed
	}
	var err error
	if msg, ok := encodeInline(topic, payload); ok {
		_, err = p.pool.Exec(ctx, "SELECT pg_notify($1, $2)", p.cfg.Channel, msg)
	} else {
		err = p.publishStored(ctx, topic, payload)
	}
	if err != nil {
		return algoitny.Internal(fmt.Errorf("pubsub publish %s: %w", topic, err), "event publish failed")
	}
	return nil
}

// PublishAll implements BatchPublisher: when every message fits a
// notification, one statement notifies them all, in order (PostgreSQL
// delivers a transaction's notifications in the order they were sent);
// otherwise each is published in turn. Errors as Publish's.
func (p *Postgres) PublishAll(ctx context.Context, msgs []Message) error {
	if p.ctx.Err() != nil {
		return ErrClosed
	}
	inline := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if err := validateTopic(m.Topic); err != nil {
			return err
		}
		msg, ok := encodeInline(m.Topic, m.Payload)
		if !ok {
			inline = nil
			break
		}
		inline = append(inline, msg)
	}
	if inline == nil {
		for _, m := range msgs {
			if err := p.Publish(ctx, m.Topic, m.Payload); err != nil {
				return err
			}
		}
		return nil
	}
	if len(inline) == 0 {
		return nil
	}
	// unnest … WITH ORDINALITY yields the messages in order, and the
	// volatile pg_notify is evaluated after the ORDER BY.
	_, err := p.pool.Exec(ctx, "SELECT pg_notify($1, m) FROM unnest($2::text[]) WITH ORDINALITY AS t(m, i) ORDER BY i", p.cfg.Channel, inline)
	if err != nil {
		return algoitny.Internal(fmt.Errorf("pubsub publish %d events: %w", len(inline), err), "event publish failed")
	}
	return nil
}

const (
	storeSQL = `WITH ins AS (
	INSERT INTO algoitny_pubsub_payloads (topic, payload) VALUES ($1, $2) RETURNING id
)
SELECT pg_notify($3, json_build_object('t', $1::text, 'id', id)::text) FROM ins`
	// The DELETE runs although nothing reads it: data-modifying CTEs always do.
	storeAndPruneSQL = `WITH ins AS (
	INSERT INTO algoitny_pubsub_payloads (topic, payload) VALUES ($1, $2) RETURNING id
), pruned AS (
	DELETE FROM algoitny_pubsub_payloads WHERE created_at < now() - make_interval(secs => $4)
)
SELECT pg_notify($3, json_build_object('t', $1::text, 'id', id)::text) FROM ins`
)

// publishStored stores payload and notifies its id, in one statement (one
// transaction): the notification is sent at commit, when the row is visible.
// At most twice per PayloadTTL per process it also prunes expired rows.
func (p *Postgres) publishStored(ctx context.Context, topic string, payload []byte) error {
	now := time.Now().UnixNano()
	last := p.lastPrune.Load()
	if now-last >= int64(p.cfg.PayloadTTL/2) && p.lastPrune.CompareAndSwap(last, now) {
		_, err := p.pool.Exec(ctx, storeAndPruneSQL, topic, payload, p.cfg.Channel, p.cfg.PayloadTTL.Seconds())
		return err
	}
	_, err := p.pool.Exec(ctx, storeSQL, topic, payload, p.cfg.Channel)
	return err
}

// Subscribe returns a subscription to topic on this process. It receives the
// events published after it returns by any process on the channel, until ctx
// is done, it is closed or dropped, or the broker closes (see Memory.Subscribe
// for Err). It returns EINVALID for a bad topic, ctx.Err() when ctx is done
// already, and ErrClosed after Close.
func (p *Postgres) Subscribe(ctx context.Context, topic string) (*Subscription, error) {
	return p.local.Subscribe(ctx, topic)
}

// SubscribeSize is Subscribe with a buffer of size events (see
// Memory.SubscribeSize).
func (p *Postgres) SubscribeSize(ctx context.Context, topic string, size int) (*Subscription, error) {
	return p.local.SubscribeSize(ctx, topic, size)
}

// Close stops the listener, waits for its goroutine and closes its
// connection, then ends every local subscription with ErrClosed. It does not
// close the pool. Calling it again does nothing.
func (p *Postgres) Close() {
	p.closeOnce.Do(func() {
		p.cancel()
		<-p.done
		p.local.Close()
	})
}

// connect opens a listener connection and LISTENs on the channel.
func (p *Postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, p.connCfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, p.listenSQL); err != nil {
		closeConn(conn)
		return nil, err
	}
	return conn, nil
}

// listen is the listener goroutine: it receives notifications on conn and,
// when the connection fails, reconnects with backoff, until Close.
func (p *Postgres) listen(conn *pgx.Conn) {
	defer close(p.done)
	delay := p.cfg.ReconnectMin
	for {
		start := time.Now()
		err := p.receive(conn)
		p.epoch.Store(0)
		closeConn(conn)
		if p.ctx.Err() != nil {
			return
		}
		if time.Since(start) > p.cfg.ReconnectMax {
			delay = p.cfg.ReconnectMin // it was healthy for a while: not a flapping server
		}
		p.log.Warn("pubsub: listener connection lost; events published until it is back are lost", "channel", p.cfg.Channel, "err", err)
		for {
			if !p.sleep(delay) {
				return
			}
			delay = min(delay*2, p.cfg.ReconnectMax)
			if conn, err = p.connect(p.ctx); err == nil {
				p.connected()
				p.log.Info("pubsub: listener reconnected", "channel", p.cfg.Channel)
				break
			}
			if p.ctx.Err() != nil {
				return
			}
			p.log.Warn("pubsub: listener cannot reconnect", "channel", p.cfg.Channel, "err", err, "retry_in", delay)
		}
	}
}

// sleep waits about d (with jitter, so replicas do not reconnect in step)
// and reports false if the broker was closed meanwhile.
func (p *Postgres) sleep(d time.Duration) bool {
	t := time.NewTimer(d/2 + rand.N(d/2+1))
	defer t.Stop()
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// receive dispatches the notifications arriving on conn until the
// connection fails (its error is returned) or the broker is closed. After
// HealthCheckInterval without a notification it pings the server: a
// connection dropped without a FIN would otherwise wait forever.
func (p *Postgres) receive(conn *pgx.Conn) error {
	for {
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.HealthCheckInterval)
		n, err := conn.WaitForNotification(ctx)
		at := time.Now()
		idle := ctx.Err() == context.DeadlineExceeded
		cancel()
		switch {
		case err == nil:
			if err := p.dispatch(n.Payload, at); err != nil {
				// An event was lost: a new epoch says so (to whoever
				// trusts it, the caches' change feed); the connection,
				// and every other topic's events, go on.
				p.log.Warn("pubsub: an event was lost; starting a new epoch", "channel", p.cfg.Channel, "err", err)
				p.epoch.Store(0)
				p.connected()
			}
		case p.ctx.Err() != nil:
			return p.ctx.Err()
		case idle && !conn.IsClosed():
			ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
			err := conn.Ping(ctx)
			cancel()
			if err != nil {
				return fmt.Errorf("health check: %w", err)
			}
		default:
			return err
		}
	}
}

// dispatch decodes one notification and publishes it locally, loading a
// stored payload first if anyone here subscribes to its topic. A stored
// payload that cannot be loaded is an event lost: its error makes the
// listener start a new epoch. A malformed notification, which no AlgoItny
// process sends, is ignored. at is when it arrived (Received).
func (p *Postgres) dispatch(msg string, at time.Time) error {
	var env envelope
	err := json.Unmarshal([]byte(msg), &env)
	if err == nil {
		err = validateTopic(env.Topic)
	}
	if err != nil {
		p.log.Warn("pubsub: ignoring a malformed notification", "channel", p.cfg.Channel, "err", err)
		return nil
	}
	p.noteReceived(env.Topic, at)
	payload := env.Bytes
	switch {
	case env.ID != 0:
		if !p.local.hasSubscribers(env.Topic) {
			return nil
		}
		if payload, err = p.load(env.ID); err != nil {
			return fmt.Errorf("a stored payload (topic %s, id %d) cannot be loaded; the event is lost: %w", env.Topic, env.ID, err)
		}
	case env.Text != nil:
		payload = []byte(*env.Text)
	}
	// Its only error is ErrClosed: the process is stopping and nobody here
	// listens any more, which is no reason for a new epoch.
	_ = p.local.publish(env.Topic, payload)
	return nil
}

// Received returns, by topic kind (a topic's text up to its first colon:
// "job" for "job:<id>"), when this process's listener last received a
// notification, before loading or fanning it out. It is exported as a
// metric: the time an event took from here to a subscriber's socket is the
// server's own part of the delivery (the benchmark's fan-out is timed from
// it), and a kind that stops advancing tells of a listener that hears
// nothing. Kinds beyond the first 32 count as "other".
func (p *Postgres) Received() map[string]time.Time {
	p.receivedMu.Lock()
	defer p.receivedMu.Unlock()
	return maps.Clone(p.received)
}

func (p *Postgres) noteReceived(topic string, at time.Time) {
	kind, _, _ := strings.Cut(topic, ":")
	p.receivedMu.Lock()
	defer p.receivedMu.Unlock()
	if p.received == nil {
		p.received = map[string]time.Time{}
	}
	if _, ok := p.received[kind]; !ok && len(p.received) >= maxReceivedKinds {
		kind = "other"
	}
	p.received[kind] = at
}

// load reads a stored payload. It runs on the listener goroutine, which keeps
// the order of events; the pool, not the listener connection, runs it.
func (p *Postgres) load(id int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	var payload []byte
	err := p.pool.QueryRow(ctx, "SELECT payload FROM algoitny_pubsub_payloads WHERE id = $1", id).Scan(&payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("payload %d is gone (pruned after PayloadTTL?)", id)
	}
	return payload, err
}

// closeConn closes a listener connection, bounded in time. A connection
// that failed is being closed by pgx in a goroutine of its own; closeConn
// waits for that too, so Close leaves nothing running.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
	select {
	case <-conn.PgConn().CleanupDone():
	case <-ctx.Done():
	}
}

// envelope is the JSON text of a notification. NOTIFY carries text, so a
// payload that is valid UTF-8 travels as a string (readable with psql's
// LISTEN), any other as base64; a stored one as the id of its row.
type envelope struct {
	Topic string  `json:"t"`
	Text  *string `json:"s,omitempty"`
	Bytes []byte  `json:"b,omitempty"`
	ID    int64   `json:"id,omitempty"`
}

// encodeInline returns the notification carrying topic and payload itself,
// or false if it would be too long for NOTIFY.
func encodeInline(topic string, payload []byte) (string, bool) {
	if len(payload) > maxNotifyPayload {
		return "", false // too long even before encoding
	}
	env := envelope{Topic: topic}
	if utf8.Valid(payload) {
		s := string(payload)
		env.Text = &s
	} else {
		env.Bytes = payload
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<" as is, not as "\u003c": more payload fits
	if err := enc.Encode(env); err != nil {
		return "", false // cannot happen: strings, bytes and an int
	}
	msg := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return string(msg), len(msg) <= maxNotifyPayload
}

// Migrate creates the table that carries payloads too large for a
// notification, in the first schema of the pool's search path. It is
// idempotent and safe to run from several processes at once (an advisory
// lock serialises them). The table is UNLOGGED: its rows live for minutes
// and may be lost in a crash like any in-flight event. It returns an
// EINTERNAL error wrapping the database's.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('algoitny_pubsub_migrate'))"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
CREATE UNLOGGED TABLE IF NOT EXISTS algoitny_pubsub_payloads (
	id         bigserial PRIMARY KEY,
	topic      text NOT NULL,
	payload    bytea NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS algoitny_pubsub_payloads_created_at_idx ON algoitny_pubsub_payloads (created_at)`)
		return err
	})
	if err != nil {
		return algoitny.Internal(fmt.Errorf("pubsub migrate: %w", err), "event table migration failed")
	}
	return nil
}
