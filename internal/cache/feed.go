package cache

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/pubsub"
)

// Broker carries the feed's messages: internal/pubsub's Postgres broker (a
// LISTEN/NOTIFY channel every process shares, delivered to each listener in
// commit order), or its Memory broker within one process.
type Broker interface {
	Publish(ctx context.Context, topic string, payload []byte) error
	SubscribeSize(ctx context.Context, topic string, size int) (*pubsub.Subscription, error)
	// Epoch numbers the broker's unbroken stretches of delivery; 0 while
	// messages may be lost.
	Epoch() uint64
}

var (
	_ Broker = (*pubsub.Postgres)(nil)
	_ Broker = (*pubsub.Memory)(nil)
)

// FeedConfig configures a Feed. Only Broker is required.
type FeedConfig struct {
	Broker Broker
	// Member makes this process a member: it caches reads, so it sends
	// heartbeats and acknowledges strict changes. A process that only writes
	// (the command line) is not one.
	Member bool
	// Bound is how stale display data may be on a member whose feed stalls
	// silently, and the longest a strict change waits for a member that does
	// not answer (default DefaultBound).
	Bound time.Duration
	// Beat is the heartbeat period (default Bound/5).
	Beat time.Duration
	// WriteWindow is how long a process holds a key after it last heard
	// the announcement of its write (default DefaultWriteWindow): a writer
	// renews the announcement while its write runs and gives the write up
	// in time for it to land within the window (Change.Write). It is also
	// the warm-up of a process that starts listening.
	WriteWindow time.Duration
	// Logger receives what cannot be returned (default slog.Default()).
	Logger *slog.Logger
}

const (
	// DefaultBound is FeedConfig.Bound's default.
	DefaultBound = time.Second
	// DefaultWriteWindow is FeedConfig.WriteWindow's default.
	DefaultWriteWindow = 5 * time.Second
	// MaxLandingMargin bounds how long after a write request was given up
	// DynamoDB is assumed to possibly still apply it (Change.Write).
	MaxLandingMargin = 2 * time.Second
)

// feedTopic carries every message of the feed, so each process sees them in
// one order (the order PostgreSQL committed them).
const feedTopic = "cache:feed"

// feedBuffer is the feed subscription's buffer: a feed that falls behind
// by this much is dropped by the broker, which costs a warm-up.
const feedBuffer = 4096

// Feed keeps the in-memory caches of every AlgoItny process coherent with
// DynamoDB. Every process (serve replicas, workers, the command line) runs
// one over the same broker channel, and every write of cached data goes
// through Change and Finish (internal/dynamo's write path does it for all
// writes). The protocol:
//
//   - A write is announced before it is sent (Change): each process that
//     hears the announcement forgets the keys and holds them — reads of a
//     held key go to DynamoDB and are not stored — until the writer says it
//     is done (Finish) or WriteWindow has passed since the latest
//     announcement (renewed while the write runs; a write that cannot be
//     renewed in time is given up, Change.Write). A write whose
//     announcement cannot be published is not made (EUNAVAILABLE), so no
//     change ever goes untold.
//   - A member trusts its cache only while it can show its feed is
//     complete: every Beat it publishes a heartbeat, and when its own
//     heartbeat comes back, every message committed before it has been
//     applied (the broker delivers in commit order). Each heartbeat that
//     comes back lets it trust its cache until Bound after the heartbeat was
//     sent. A feed that stalls, disconnects (the broker's epoch changes) or
//     falls behind stops all cached reads within Bound, at once for the
//     last two; after a gap the caches start empty.
//   - A member that starts listening (at start, or after a gap) stores
//     nothing for WriteWindow: a write announced before it listened has
//     landed by then.
//   - A strict change (security state) does not return before every member
//     that may act on the old value has applied the announcement: each
//     member acknowledges strict announcements, and the writer waits for
//     the acknowledgement of every member whose heartbeat it heard within
//     Bound before its announcement — or until that member's trust has run
//     out (Bound after its last heartbeat) — and at most Bound after the
//     announcement was committed.
//
// So: strict data is never served stale after the change returned, display
// data at most Bound (milliseconds when the feed is healthy), and a process
// whose PostgreSQL is down neither serves cached data nor writes cached
// data. Clocks need not agree; the protocol compares each process's own
// clock with itself.
type Feed struct {
	cfg FeedConfig
	id  string
	log *slog.Logger
	// base is the origin of mono.
	base time.Time

	seq atomic.Uint64 // numbers this process's heartbeats and changes

	// Read by every cache access without the lock.
	epoch        atomic.Uint64 // the current listening stretch, 0 while not listening
	brokerEpoch  atomic.Uint64 // the broker's epoch that stretch began in
	trustedUntil atomic.Int64  // mono ns: cached reads are trusted before it
	warmUntil    atomic.Int64  // mono ns: nothing is stored before it

	mu     sync.Mutex
	caches []forgetter
	epochs uint64                        // epochs handed out
	holds  map[string]map[changeID]int64 // key → change → held until (mono ns)
	// heldTill is, for each key, when its latest ended hold ended (released
	// or run out), kept a while after: a read that began before then
	// overlapped a hold — maybe a write's landing — and is not stored.
	heldTill  map[string]int64
	lastPrune int64              // mono ns of the latest pruneLocked
	listening int64              // mono ns since the stretch began, 0 while not listening
	beats     map[uint64]int64   // own heartbeats in flight: seq → sent at
	members   map[string]int64   // member → when its latest heartbeat arrived
	waiters   map[uint64]*waiter // own strict changes waiting, by seq

	acks chan message // acknowledgements to publish
	// sending counts the messages being published off the caller's
	// goroutine (heartbeats, ends); once sendsClosed (the feed stopped),
	// they are published on the caller's goroutine instead.
	sendMu      sync.Mutex
	sendsClosed bool
	sending     sync.WaitGroup

	stats struct {
		changes, strict, refused, boundWaits, gaps atomic.Int64
	}
}

// FeedStats counts what a feed did, for metrics and tests.
type FeedStats struct {
	// Changes counts announced changes, Strict those of security state.
	Changes, Strict int64
	// Refused counts changes that could not be announced (not written).
	Refused int64
	// BoundWaits counts strict changes that waited for a member's trust to
	// run out (a member that did not acknowledge, or members unknown).
	BoundWaits int64
	// Gaps counts listening stretches that ended (the caches were emptied).
	Gaps int64
}

// Stats returns the feed's counters.
func (f *Feed) Stats() FeedStats {
	return FeedStats{Changes: f.stats.changes.Load(), Strict: f.stats.strict.Load(), Refused: f.stats.refused.Load(),
		BoundWaits: f.stats.boundWaits.Load(), Gaps: f.stats.gaps.Load()}
}

// maxHeldKeys: past this many held keys, hold prunes the expired holds
// (otherwise pruned with each heartbeat).
const maxHeldKeys = 4096

// forgetter is a cache attached to a feed.
type forgetter interface {
	Forget(key string)
	reset()
}

type changeID struct {
	member string
	seq    uint64
}

// message is what the feed publishes, as JSON.
type message struct {
	V      int      `json:"v"` // feedVersion
	Kind   string   `json:"k"` // kindBeat, kindChange, kindEnd, kindAck, kindBye
	From   string   `json:"m"`
	Seq    uint64   `json:"n,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	Strict bool     `json:"s,omitempty"`
	To     string   `json:"to,omitempty"` // an acknowledgement's writer
}

// feedVersion numbers the messages' format: a process that reads a message
// it does not understand (a newer version's, or garbage) cannot vouch for
// its feed and treats it as a gap. Older versions' messages are read as
// this one's (0: the first, which had no version field).
const feedVersion = 1

const (
	kindBeat   = "beat"
	kindChange = "change"
	kindEnd    = "end"
	kindAck    = "ack"
	kindBye    = "bye"
)

// NewFeed returns a feed that is not listening yet (see Run). Its caches are
// off until it is.
func NewFeed(cfg FeedConfig) *Feed {
	cfg.Bound = cmp.Or(max(cfg.Bound, 0), DefaultBound)
	cfg.Beat = cmp.Or(max(cfg.Beat, 0), cfg.Bound/5)
	cfg.WriteWindow = cmp.Or(max(cfg.WriteWindow, 0), DefaultWriteWindow)
	b := make([]byte, 6)
	rand.Read(b)
	host, _ := os.Hostname()
	return &Feed{
		cfg:      cfg,
		id:       host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b),
		log:      cmp.Or(cfg.Logger, slog.Default()),
		base:     time.Now(),
		holds:    map[string]map[changeID]int64{},
		heldTill: map[string]int64{},
		beats:    map[uint64]int64{},
		members:  map[string]int64{},
		waiters:  map[uint64]*waiter{},
		acks:     make(chan message, 1024),
	}
}

// Flush waits until the messages this process is still sending have gone
// out (or failed); later ones are sent before the call that makes them
// returns. Call it before closing the broker.
func (f *Feed) Flush() {
	f.sendMu.Lock()
	f.sendsClosed = true
	f.sendMu.Unlock()
	f.sending.Wait()
}

// goSend runs send, a publication, on a goroutine of its own (Flush waits
// for it), or at once once the feed is flushed.
func (f *Feed) goSend(send func()) {
	f.sendMu.Lock()
	if f.sendsClosed {
		f.sendMu.Unlock()
		send()
		return
	}
	f.sending.Add(1)
	f.sendMu.Unlock()
	go func() {
		defer f.sending.Done()
		send()
	}()
}

// ID names this process in the feed's messages.
func (f *Feed) ID() string { return f.id }

// Bound returns the configured bound.
func (f *Feed) Bound() time.Duration { return f.cfg.Bound }

// mono is the feed's monotonic clock, in nanoseconds since NewFeed.
func (f *Feed) mono() int64 { return int64(time.Since(f.base)) }

// now is mono for a feed that may be nil (a cache without one).
func (f *Feed) now() int64 {
	if f == nil {
		return 0
	}
	return f.mono()
}

// attach makes c forget what the feed's changes name.
func (f *Feed) attach(c forgetter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.caches = append(f.caches, c)
}

// Epoch returns the current listening stretch if cached reads may be
// served now (listening, warm, heartbeats current, the broker's delivery
// unbroken), 0 otherwise.
func (f *Feed) Epoch() uint64 {
	if e := f.stretch(); e != 0 && f.trusted() && f.warm() {
		return e
	}
	return 0
}

// stretch returns the current listening stretch, 0 while not listening or
// while the broker's delivery may have broken: an entry is valid only in
// the stretch it was stored in.
func (f *Feed) stretch() uint64 {
	if f == nil {
		return 0
	}
	e := f.epoch.Load()
	if e == 0 || f.cfg.Broker.Epoch() != f.brokerEpoch.Load() {
		return 0
	}
	return e
}

// trusted reports whether the feed's heartbeats vouch that it is complete
// (a lapse is temporary: entries stay, and serve again once a heartbeat
// comes back).
func (f *Feed) trusted() bool { return f != nil && f.mono() < f.trustedUntil.Load() }

// warm reports whether the warm-up after the stretch began is over.
func (f *Feed) warm() bool { return f != nil && f.mono() >= f.warmUntil.Load() }

// storable returns the stretch reads may be stored in now, 0 when none.
func (f *Feed) storable() uint64 {
	if e := f.stretch(); e != 0 && f.warm() {
		return e
	}
	return 0
}

// held reports whether a value of key read from a moment at (mono ns) on
// may not be stored: a change of it is announced and not known to be done,
// or one was, at some point after at (the read overlapped it: it may have
// read what was there before the write landed).
func (f *Feed) held(key string, at int64) bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.heldTill[key] > at {
		return true
	}
	now := f.mono()
	for _, until := range f.holds[key] {
		if until > now || until > at {
			return true
		}
	}
	return false
}

// endHoldLocked records that key's hold ended at end. f.mu is held.
func (f *Feed) endHoldLocked(key string, end int64) {
	f.heldTill[key] = max(f.heldTill[key], end)
}

// hold forgets keys in every attached cache and holds them for change id.
func (f *Feed) hold(id changeID, keys []string, until int64) {
	f.mu.Lock()
	if now := f.mono(); len(f.holds)+len(f.heldTill) > maxHeldKeys && now-f.lastPrune > int64(f.cfg.Bound)/5 {
		f.pruneLocked(now)
	}
	for _, k := range keys {
		hs := f.holds[k]
		if hs == nil {
			hs = map[changeID]int64{}
			f.holds[k] = hs
		}
		hs[id] = max(hs[id], until)
	}
	caches := f.caches
	f.mu.Unlock()
	forget(caches, keys)
}

// release forgets keys again (a read stored before this is of unknown age)
// and lifts change id's hold on them.
func (f *Feed) release(id changeID, keys []string) {
	// Forgotten before the hold is lifted: a read that began during the
	// hold (maybe before the write landed) is then refused by its ticket.
	f.mu.Lock()
	caches := f.caches
	f.mu.Unlock()
	forget(caches, keys)
	f.mu.Lock()
	now := f.mono()
	for _, k := range keys {
		if hs := f.holds[k]; hs != nil {
			if _, ok := hs[id]; ok {
				f.endHoldLocked(k, min(hs[id], now))
			}
			delete(hs, id)
			if len(hs) == 0 {
				delete(f.holds, k)
			}
		}
	}
	f.mu.Unlock()
}

func forget(caches []forgetter, keys []string) {
	for _, c := range caches {
		for _, k := range keys {
			c.Forget(k)
		}
	}
}

// Run listens to the feed until ctx is done: it applies every process's
// changes to the attached caches, sends heartbeats (members), acknowledges
// strict changes and keeps the caches' trust. It resubscribes after a
// failure; the caches are off meanwhile.
func (f *Feed) Run(ctx context.Context) {
	ackDone := make(chan struct{})
	go func() { defer close(ackDone); f.publishAcks(ctx) }()
	defer func() {
		<-ackDone
		f.Flush() // a heartbeat after the goodbye would make us a member again
		if f.cfg.Member {
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			f.publish(bctx, message{Kind: kindBye, From: f.id})
			cancel()
		}
	}()
	for ctx.Err() == nil {
		be := f.cfg.Broker.Epoch()
		sub, err := f.cfg.Broker.SubscribeSize(ctx, feedTopic, feedBuffer)
		if err == nil && (be == 0 || f.cfg.Broker.Epoch() != be) {
			sub.Close() // the broker reconnected meanwhile: what was lost is unknown
			err = algoitny.Errorf(algoitny.EUNAVAILABLE, "the broker is reconnecting")
		}
		if err != nil {
			if ctx.Err() == nil {
				f.log.Warn("cache: cannot listen to the change feed; reading from storage meanwhile", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(f.cfg.Bound / 4):
			}
			continue
		}
		f.listen(be)
		err = f.receive(ctx, sub, be)
		sub.Close()
		f.deaf()
		if ctx.Err() == nil {
			f.log.Warn("cache: the change feed broke; reading from storage until it is back and warm", "err", err)
			select { // not in a tight loop if it breaks at once again
			case <-ctx.Done():
			case <-time.After(f.cfg.Bound / 4):
			}
		}
	}
}

// listen starts a listening stretch: the caches start empty, store nothing
// for WriteWindow and serve nothing before a heartbeat came back.
func (f *Feed) listen(brokerEpoch uint64) {
	now := f.mono()
	f.mu.Lock()
	f.epochs++
	epoch := f.epochs
	f.listening = now
	f.beats = map[uint64]int64{}
	f.members = map[string]int64{}
	caches := f.caches
	f.mu.Unlock()
	for _, c := range caches {
		c.reset()
	}
	f.trustedUntil.Store(0)
	f.warmUntil.Store(now + int64(f.cfg.WriteWindow))
	f.brokerEpoch.Store(brokerEpoch)
	f.epoch.Store(epoch)
}

// deaf ends a listening stretch.
func (f *Feed) deaf() {
	f.stats.gaps.Add(1)
	f.epoch.Store(0)
	f.trustedUntil.Store(0)
	f.mu.Lock()
	f.listening = 0
	for _, w := range f.waiters {
		w.blind = true
		w.poke()
	}
	f.mu.Unlock()
}

// receive applies the messages of sub and sends heartbeats until the
// subscription ends, the broker's delivery breaks or ctx is done.
func (f *Feed) receive(ctx context.Context, sub *pubsub.Subscription, be uint64) error {
	var beat <-chan time.Time
	if f.cfg.Member {
		t := time.NewTicker(f.cfg.Beat)
		defer t.Stop()
		beat = t.C
		f.beat(ctx, be)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-sub.Events():
			if !ok {
				return cmp.Or(sub.Err(), error(pubsub.ErrClosed))
			}
			if f.cfg.Broker.Epoch() != be {
				return algoitny.Errorf(algoitny.EUNAVAILABLE, "the broker reconnected: messages may be lost")
			}
			var m message
			if err := json.Unmarshal(ev.Payload, &m); err != nil || m.V > feedVersion || !knownKind(m.Kind) {
				// What it said is unknown: what this process caches may
				// be stale.
				return algoitny.Errorf(algoitny.EUNAVAILABLE, "a feed message this process does not understand (version %d, kind %q, err %v)", m.V, m.Kind, err)
			}
			f.apply(m)
		case <-beat:
			if f.cfg.Broker.Epoch() != be {
				return algoitny.Errorf(algoitny.EUNAVAILABLE, "the broker reconnected: messages may be lost")
			}
			f.beat(ctx, be)
		}
	}
}

// beat publishes a heartbeat; apply extends the trust when it comes back.
func (f *Feed) beat(ctx context.Context, be uint64) {
	n := f.seq.Add(1)
	now := f.mono()
	f.mu.Lock()
	f.pruneLocked(now)
	f.beats[n] = now
	f.mu.Unlock()
	f.goSend(func() {
		pctx, cancel := context.WithTimeout(ctx, f.cfg.Bound)
		defer cancel()
		if err := f.publish(pctx, message{Kind: kindBeat, From: f.id, Seq: n}); err != nil && ctx.Err() == nil {
			f.log.Warn("cache: cannot send a heartbeat; cached reads stop within the bound", "err", err)
		}
	})
}

// pruneLocked forgets what can no longer matter: own heartbeats lost for
// longer than the bound, members not heard of for ten bounds (killed
// processes; they said no goodbye), and holds past their time whose end
// never came (their writer died, or its write's outcome is unknown).
// f.mu is held.
func (f *Feed) pruneLocked(now int64) {
	bound := int64(f.cfg.Bound)
	for s, at := range f.beats {
		if now-at > bound {
			delete(f.beats, s)
		}
	}
	for m, at := range f.members {
		if now-at > 10*bound {
			delete(f.members, m)
		}
	}
	for k, hs := range f.holds {
		for id, until := range hs {
			if until <= now {
				f.endHoldLocked(k, until)
				delete(hs, id)
			}
		}
		if len(hs) == 0 {
			delete(f.holds, k)
		}
	}
	// A read is bounded (LoadTimeout, the request's timeout): one that
	// began before a hold ended has long been stored or dropped by then.
	keep := max(2*int64(f.cfg.WriteWindow), int64(time.Minute))
	for k, end := range f.heldTill {
		if now-end > keep {
			delete(f.heldTill, k)
		}
	}
	f.lastPrune = now
}

// apply applies one message of the feed, in the feed's order.
func (f *Feed) apply(m message) {
	now := f.mono()
	switch m.Kind {
	case kindBeat:
		f.mu.Lock()
		defer f.mu.Unlock()
		if m.From != f.id {
			f.members[m.From] = now
			return
		}
		if sent, ok := f.beats[m.Seq]; ok {
			for s := range f.beats {
				if s <= m.Seq {
					delete(f.beats, s)
				}
			}
			// A tenth of the bound less than the writers assume: for
			// clocks that run at slightly different rates and a reader
			// paused between its check and its use of an entry.
			if until := sent + int64(f.cfg.Bound) - int64(f.cfg.Bound)/10; until > f.trustedUntil.Load() {
				f.trustedUntil.Store(until)
			}
		}
	case kindChange:
		id := changeID{m.From, m.Seq}
		f.hold(id, m.Keys, now+int64(f.cfg.WriteWindow))
		if m.From == f.id {
			if m.Strict {
				f.position(m.Seq, now)
			}
			return
		}
		if m.Strict && f.cfg.Member {
			select {
			case f.acks <- message{Kind: kindAck, From: f.id, To: m.From, Seq: m.Seq}:
			default:
				// The writer waits for our trust to run out instead.
				f.log.Warn("cache: acknowledgement queue full; a strict change waits for the bound")
			}
		}
	case kindEnd:
		f.release(changeID{m.From, m.Seq}, m.Keys)
	case kindAck:
		if m.To != f.id {
			return
		}
		f.mu.Lock()
		if w := f.waiters[m.Seq]; w != nil {
			delete(w.pending, m.From)
			w.poke()
		}
		f.mu.Unlock()
	case kindBye:
		f.mu.Lock()
		delete(f.members, m.From)
		for _, w := range f.waiters {
			delete(w.pending, m.From)
			w.poke()
		}
		f.mu.Unlock()
	}
}

// position records where this process's strict change n came in the feed:
// the members heard within Bound before it are the ones to wait for, each
// until its acknowledgement or until Bound after its last heartbeat. When
// this process has not listened for Bound, it cannot know them all: the
// change then waits the whole bound.
func (f *Feed) position(n uint64, now int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.waiters[n]
	if w == nil {
		return
	}
	bound := int64(f.cfg.Bound)
	if f.listening == 0 || now-f.listening < bound {
		w.blind = true
		w.poke()
		return
	}
	w.positioned = true
	w.pending = map[string]int64{}
	for m, at := range f.members {
		if now-at < bound {
			w.pending[m] = at + bound
		}
	}
	w.poke()
}

// publishAcks publishes the acknowledgements apply queued, off the feed's
// goroutine, until ctx is done.
func (f *Feed) publishAcks(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-f.acks:
			pctx, cancel := context.WithTimeout(ctx, f.cfg.Bound)
			if err := f.publish(pctx, m); err != nil && ctx.Err() == nil {
				f.log.Warn("cache: cannot acknowledge a strict change; its writer waits for the bound", "err", err)
			}
			cancel()
		}
	}
}

func knownKind(k string) bool {
	switch k {
	case kindBeat, kindChange, kindEnd, kindAck, kindBye:
		return true
	}
	return false
}

func (f *Feed) publish(ctx context.Context, m message) error {
	m.V = feedVersion
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return f.cfg.Broker.Publish(ctx, feedTopic, b)
}

// waiter is a strict change waiting for the members' acknowledgements.
type waiter struct {
	// positioned: the change came back in the feed and pending holds the
	// members to wait for (member → when its trust runs out, mono ns).
	positioned bool
	pending    map[string]int64
	// blind: this process cannot know the members; wait the whole bound.
	blind  bool
	signal chan struct{} // poked (without blocking) when anything changed
}

func (w *waiter) poke() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// Outcome is what became of an announced write.
type Outcome int

const (
	// Applied: the write was made.
	Applied Outcome = iota
	// NotApplied: the write was certainly not made (a failed condition, a
	// refused request).
	NotApplied
	// Unknown: the write may or may not have been made, or may still be
	// (a timeout, a broken connection).
	Unknown
)

// Change is an announced write of cached keys; see Feed.Change.
type Change struct {
	f      *Feed
	id     changeID
	keys   []string
	strict bool
	// start is when the announcement began (mono ns): every process's hold
	// of the keys begins after it. told is when it was known committed.
	start, told int64
}

// Change announces a write of keys, which every process then forgets and
// holds, and returns what the writer needs to make it: the write must be
// made with the context of Change.Write, and Finish called after. strict
// marks security state (see Feed). It returns EUNAVAILABLE when the
// announcement cannot be published: then nothing must be written. With no
// keys it announces nothing.
func (f *Feed) Change(ctx context.Context, strict bool, keys []string) (*Change, error) {
	c := &Change{f: f, keys: keys, strict: strict}
	if f == nil || len(keys) == 0 {
		return c, nil
	}
	c.start = f.mono()
	f.stats.changes.Add(1)
	if strict {
		f.stats.strict.Add(1)
	}
	c.id = changeID{f.id, f.seq.Add(1)}
	f.hold(c.id, keys, c.start+int64(f.cfg.WriteWindow))
	if strict {
		f.mu.Lock()
		f.waiters[c.id.seq] = &waiter{signal: make(chan struct{}, 1)}
		f.mu.Unlock()
	}
	if err := f.announce(ctx, c, strict); err != nil {
		f.dropWaiter(c.id.seq)
		f.unhold(c.id, keys) // nothing will be written
		f.stats.refused.Add(1)
		f.log.Warn("cache: cannot announce a change; the write is not made", "keys", keys, "err", err)
		return nil, &algoitny.Error{Code: algoitny.EUNAVAILABLE, Err: err,
			Message: "the change cannot be announced to the other servers right now, so it was not made; retry"}
	}
	c.told = f.mono()
	return c, nil
}

// unhold lifts this process's hold of keys for change id (its announcement
// failed: no other process heard of it, or it holds the keys a little
// longer than needed).
func (f *Feed) unhold(id changeID, keys []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if hs := f.holds[k]; hs != nil {
			delete(hs, id)
			if len(hs) == 0 {
				delete(f.holds, k)
			}
		}
	}
}

// life is how long after an announcement began its write may still be
// made: the write window less a landing margin (a fifth of it, at most
// MaxLandingMargin), so that a request given up then has landed, if at
// all, before any process stops holding the keys.
func (f *Feed) life() time.Duration {
	return f.cfg.WriteWindow - min(MaxLandingMargin, f.cfg.WriteWindow/5)
}

// announceTimeout bounds publishing an announcement: a write waits that
// long at most for PostgreSQL before it is refused — well within its
// life, so that a slow announcement leaves the write time to be made.
func (f *Feed) announceTimeout() time.Duration { return min(5*time.Second, f.life()/2) }

// announce publishes c's announcement (again: a renewal, which holds the
// keys longer and needs no acknowledgement).
func (f *Feed) announce(ctx context.Context, c *Change, strict bool) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.announceTimeout())
	defer cancel()
	return f.publish(pctx, message{Kind: kindChange, From: f.id, Seq: c.id.seq, Keys: c.keys, Strict: strict})
}

// Write returns the context to make the write in. Every process holds the
// keys for WriteWindow after it heard the latest announcement, which
// began after the last announcement went out, so the announcement is
// renewed every third of the window while the write runs, and the context
// is cancelled when the latest announcement that went out began longer
// than the write's life ago (see life): counted from when each began, not
// from when this is called, as a reply from PostgreSQL may come late. A
// context that ends at once means the write must not be made. Call cancel
// when the write returned: it also stops the renewals.
func (c *Change) Write(ctx context.Context) (context.Context, context.CancelFunc) {
	f := c.f
	if f == nil || len(c.keys) == 0 {
		return context.WithCancel(ctx)
	}
	life := f.life()
	wctx, cancel := context.WithCancel(ctx)
	left := life - time.Duration(f.mono()-c.start)
	if left <= 0 {
		cancel()
		return wctx, cancel
	}
	expire := time.AfterFunc(left, cancel)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		period := f.cfg.WriteWindow / 3
		next := time.NewTimer(max(0, period-time.Duration(f.mono()-c.start)))
		defer next.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				return
			case <-next.C:
				began := f.mono()
				f.hold(c.id, c.keys, began+int64(f.cfg.WriteWindow))
				if err := f.announce(wctx, c, false); err != nil {
					f.log.Warn("cache: cannot renew the announcement of a write in progress", "keys", c.keys, "err", err)
				} else {
					expire.Reset(life - time.Duration(f.mono()-began))
				}
				next.Reset(max(0, period-time.Duration(f.mono()-began)))
			}
		}
	}()
	var once sync.Once
	return wctx, func() {
		once.Do(func() {
			close(stop)
			<-stopped // no renewal after the write: it would hold the keys again
			expire.Stop()
			cancel()
		})
	}
}

// Finish ends a change: once the write's outcome is known, the keys are
// released everywhere. An unknown outcome keeps them held until the write
// window ends, and they are forgotten everywhere once more later (twice
// the window), should the write have landed later still. A strict change
// whose write may have been made then waits until no member can serve the
// old value (see Feed) — at most Bound after the announcement — whatever
// ctx says, as the write stands.
func (c *Change) Finish(ctx context.Context, outcome Outcome) {
	f := c.f
	if f == nil || len(c.keys) == 0 {
		return
	}
	defer f.dropWaiter(c.id.seq)
	end := func() {
		pctx, cancel := context.WithTimeout(context.Background(), f.cfg.Bound)
		defer cancel()
		if err := f.publish(pctx, message{Kind: kindEnd, From: f.id, Seq: c.id.seq, Keys: c.keys}); err != nil {
			f.log.Warn("cache: cannot say a change is done; other processes read the keys from storage until the write window ends", "keys", c.keys, "err", err)
		}
	}
	if outcome != Unknown {
		f.release(c.id, c.keys)
		f.goSend(end)
	} else {
		time.AfterFunc(2*f.cfg.WriteWindow, func() {
			f.release(c.id, c.keys)
			end()
		})
	}
	if c.strict && outcome != NotApplied {
		c.wait()
	}
}

// wait blocks until every member that may serve the old value of a strict
// change has applied its announcement or stopped trusting its cache.
func (c *Change) wait() {
	f := c.f
	hard := c.told + int64(f.cfg.Bound)
	f.mu.Lock()
	w := f.waiters[c.id.seq]
	f.mu.Unlock()
	if w == nil {
		return
	}
	expired := false // a member's trust ran out before it acknowledged
	defer func() {
		if expired {
			f.stats.boundWaits.Add(1)
		}
	}()
	for {
		now := f.mono()
		if now >= hard {
			expired = true
			return
		}
		next := hard
		f.mu.Lock()
		done := false
		if w.positioned && !w.blind {
			for m, until := range w.pending {
				if until <= now {
					delete(w.pending, m)
					expired = true
				} else {
					next = min(next, until)
				}
			}
			done = len(w.pending) == 0
		}
		f.mu.Unlock()
		if done {
			return
		}
		t := time.NewTimer(time.Duration(next - now))
		select {
		case <-w.signal:
		case <-t.C:
		}
		t.Stop()
	}
}

func (f *Feed) dropWaiter(n uint64) {
	f.mu.Lock()
	delete(f.waiters, n)
	f.mu.Unlock()
}
