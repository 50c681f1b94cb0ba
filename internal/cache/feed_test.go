package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/cache"
)

// write is a write of key through p's feed, as internal/dynamo's write path
// makes it: announce, write (here: nothing), finish with outcome.
func write(t *testing.T, p *process, strict bool, outcome cache.Outcome, key string) {
	t.Helper()
	ch, err := p.feed.Change(context.Background(), strict, []string{key})
	if err != nil {
		t.Fatalf("announcing a change of %s: %v", key, err)
	}
	ch.Finish(context.Background(), outcome)
}

func TestFeedGoesLive(t *testing.T) {
	t.Parallel()
	h := newHub()
	member := start(t, h, true)
	member.live(t)
	if member.feed.Epoch() == 0 {
		t.Fatal("a live member's feed has no epoch")
	}
	writer := start(t, h, false)
	time.Sleep(2 * testWindow) // the scenario: past the warm-up a member would need
	writer.cache.Put("k", "v", writer.cache.Begin())
	if _, ok := writer.cache.Get("k"); ok {
		t.Fatal("a writer that is not a member (sends no heartbeats) served from its cache")
	}
}

// TestWarmUp: a process that starts listening stores nothing for the write
// window: a write announced before it listened may land until then.
func TestWarmUp(t *testing.T) {
	t.Parallel()
	began := time.Now() // before the feed starts: its window is timed from a moment after this
	p := start(t, newHub(), true)
	p.live(t)
	if waited := time.Since(began); waited < testWindow {
		t.Fatalf("the cache went live %s after the feed started; the write window is %s", waited, testWindow)
	}
}

// TestChangesReachEveryProcess: a change announced by one process makes the
// others forget the key at once and not store it while the write may be in
// progress; once it is done, they read and store it again.
func TestChangesReachEveryProcess(t *testing.T) {
	t.Parallel()
	h := newHub()
	a, b := start(t, h, true), start(t, h, true)
	a.live(t)
	b.live(t)
	a.cache.Put("k", "old", a.cache.Begin())
	a.cache.Put("other", "v", a.cache.Begin())

	ch, err := b.feed.Change(context.Background(), false, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	algoitnytest.Eventually(t, waitLimit, "A to forget k", func() bool { _, ok := a.cache.Get("k"); return !ok })
	a.cache.Put("k", "read during the write", a.cache.Begin())
	if _, ok := a.cache.Get("k"); ok {
		t.Fatal("A stored a key whose write is in progress")
	}
	if !hit(a.cache, "other", "v") {
		t.Fatal("a change of k dropped another key")
	}
	ch.Finish(context.Background(), cache.Applied)
	algoitnytest.Eventually(t, waitLimit, "A to store k again once the write is done", func() bool {
		a.cache.Put("k", "new", a.cache.Begin())
		return hit(a.cache, "k", "new")
	})
}

// TestUnknownOutcomeHoldsTheKey: when the writer cannot tell whether its
// write was made (it may still land), the key stays held for the write
// window, then is cached again.
func TestUnknownOutcomeHoldsTheKey(t *testing.T) {
	t.Parallel()
	h := newHub()
	a, b := start(t, h, true), start(t, h, true)
	a.live(t)
	write(t, b, false, cache.Unknown, "k")
	algoitnytest.Eventually(t, waitLimit, "A to hear of the change", func() bool {
		a.cache.Put("k", "v", a.cache.Begin())
		_, ok := a.cache.Get("k")
		return !ok
	})
	began := time.Now()
	algoitnytest.Eventually(t, waitLimit, "the hold to end", func() bool { a.cache.Put("k", "v", a.cache.Begin()); return hit(a.cache, "k", "v") })
	if time.Since(began) < testWindow/2 {
		t.Fatalf("k was stored again %s after a change of unknown outcome; the write window is %s", time.Since(began), testWindow)
	}
}

// TestStrictChangeReturnsWhenNoMemberServesTheOldValue: when a strict
// change returns, every member has applied it or stopped trusting its
// cache — also one whose link stalled and one that went down.
func TestStrictChangeReturnsWhenNoMemberServesTheOldValue(t *testing.T) {
	t.Parallel()
	h := newHub()
	writer := start(t, h, true)
	healthy, stalled, down := start(t, h, true), start(t, h, true), start(t, h, true)
	for _, p := range []*process{writer, healthy, stalled, down} {
		p.live(t)
	}
	writer.knows(t, 3) // the writer hears every member's heartbeats
	for _, p := range []*process{healthy, stalled, down} {
		p.cache.Put("session", "valid", p.cache.Begin())
	}
	stalled.node.stall()
	down.node.cut()
	write(t, writer, true, cache.Applied, "session")
	if hit(healthy.cache, "session", "valid") {
		t.Fatal("a healthy member served the old value after the strict change returned")
	}
	if hit(stalled.cache, "session", "valid") {
		t.Fatal("a member whose link stalled served the old value after the strict change returned")
	}
	if hit(down.cache, "session", "valid") {
		t.Fatal("a member whose link went down served the old value after the strict change returned")
	}
	// The stalled member applies the backlog in order when its link is back.
	stalled.node.resume()
	algoitnytest.Eventually(t, waitLimit, "the stalled member to be live again", func() bool { return stalled.feed.Epoch() != 0 })
	if hit(stalled.cache, "session", "valid") {
		t.Fatal("the stalled member kept the old value after its backlog")
	}
}

// TestStrictChangeWithoutMembersKnown: a writer that has not listened long
// enough to know every member waits the whole bound.
func TestStrictChangeWithoutMembersKnown(t *testing.T) {
	t.Parallel()
	h := newHub()
	member := start(t, h, true)
	member.live(t)
	member.cache.Put("k", "v", member.cache.Begin())
	member.node.stall() // it will never acknowledge
	writer := start(t, h, false)
	began := time.Now()
	write(t, writer, true, cache.Applied, "k")
	if hit(member.cache, "k", "v") {
		t.Fatalf("a member served the old value after a strict change returned (it waited %s)", time.Since(began))
	}
}

// TestAnnouncementFailsClosed: a process that cannot announce a write must
// not make it (EUNAVAILABLE), and its cache is off meanwhile.
func TestAnnouncementFailsClosed(t *testing.T) {
	t.Parallel()
	h := newHub()
	p := start(t, h, true)
	p.live(t)
	p.node.cut()
	if _, err := p.feed.Change(context.Background(), false, []string{"k"}); !algoitny.IsCode(err, algoitny.EUNAVAILABLE) {
		t.Fatalf("Change with the link down = %v, want EUNAVAILABLE", err)
	}
	p.cache.Put("k", "v", p.cache.Begin())
	if _, ok := p.cache.Get("k"); ok {
		t.Fatal("a process whose link is down served from its cache")
	}
	p.node.reconnect(7)
	p.live(t)
	stalledWriter := start(t, h, false)
	stalledWriter.node.stall()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := stalledWriter.feed.Change(ctx, true, []string{"k"}); !algoitny.IsCode(err, algoitny.EUNAVAILABLE) {
		t.Fatalf("Change over a stalled link = %v, want EUNAVAILABLE", err)
	}
}

// TestStalledMemberStopsServing: a member whose feed stalls stops serving
// cached entries within the bound, and serves the entries nobody changed
// again once its feed is back.
func TestStalledMemberStopsServing(t *testing.T) {
	t.Parallel()
	h := newHub()
	p, other := start(t, h, true), start(t, h, true)
	p.live(t)
	p.cache.Put("kept", "v", p.cache.Begin())
	p.cache.Put("changed", "v", p.cache.Begin())
	p.node.stall()
	stalledAt := time.Now()
	write(t, other, false, cache.Applied, "changed")
	algoitnytest.Eventually(t, waitLimit, "the stalled member to stop serving", func() bool { _, ok := p.cache.Get("kept"); return !ok })
	if d := time.Since(stalledAt); d > 3*testBound {
		t.Logf("stopped %s after the stall (bound %s): a slow machine", d, testBound)
	}
	p.node.resume()
	algoitnytest.Eventually(t, waitLimit, "the member to serve again", func() bool { return hit(p.cache, "kept", "v") })
	if hit(p.cache, "changed", "v") {
		t.Fatal("a key changed while the member was stalled was served after its backlog")
	}
}

// TestLeavingMemberIsNotWaitedFor: a member that says goodbye is not waited
// for by strict changes (a killed one is, until its trust runs out).
func TestLeavingMemberIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	h := newHub()
	writer := start(t, h, true)
	writer.live(t)
	leaving := h.node(t)
	f := cache.NewFeed(cache.FeedConfig{Broker: leaving, Member: true, Bound: testBound, WriteWindow: testWindow})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	algoitnytest.Eventually(t, waitLimit, "the writer to hear the leaving member", func() bool {
		n, _ := writer.feed.HeardMembers()
		return n == 1
	})
	cancel()
	<-done
	// Acknowledgements are not sent any more; the goodbye took it off the
	// writer's list, so the change returns without waiting the bound.
	before := writer.feed.Stats()
	write(t, writer, true, cache.Applied, "k")
	if after := writer.feed.Stats(); after.BoundWaits != before.BoundWaits {
		t.Fatal("a strict change waited for the trust of a member that had left")
	}
}

// TestAcknowledgedStrictChangeDoesNotWaitTheBound: with every member
// healthy, a strict change returns on their acknowledgements.
func TestAcknowledgedStrictChangeDoesNotWaitTheBound(t *testing.T) {
	t.Parallel()
	h := newHub()
	// A bound long enough that acknowledgements never miss it, even on a
	// loaded machine.
	const bound = 3 * time.Second
	writer, a, b := startBound(t, h, true, bound), startBound(t, h, true, bound), startBound(t, h, true, bound)
	for _, p := range []*process{writer, a, b} {
		p.live(t)
	}
	writer.knows(t, 2)
	for range 5 {
		write(t, writer, true, cache.Applied, "k")
	}
	if s := writer.feed.Stats(); s.BoundWaits != 0 || s.Strict != 5 {
		t.Fatalf("stats %+v: want 5 strict changes, none waiting for a member's trust to run out", s)
	}
	// A member that stops answering is waited for, until its trust ends.
	a.node.stall()
	write(t, writer, true, cache.Applied, "k")
	if s := writer.feed.Stats(); s.BoundWaits != 1 {
		t.Fatalf("stats %+v: a change with a silent member did not wait for its trust to run out", s)
	}
}

// TestLongWriteKeepsItsHold: a write that runs longer than the write window
// renews its announcement, so the others hold the key all along, and its
// context lives on.
func TestLongWriteKeepsItsHold(t *testing.T) {
	t.Parallel()
	h := newHub()
	a, b := start(t, h, true), start(t, h, true)
	a.live(t)
	ch, err := b.feed.Change(context.Background(), false, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := ch.Write(context.Background())
	algoitnytest.Eventually(t, waitLimit, "A to hear of the change", func() bool {
		a.cache.Put("k", "v", a.cache.Begin())
		_, ok := a.cache.Get("k")
		return !ok
	})
	// The scenario: all through the write, however long, nothing is stored.
	for end := time.Now().Add(3 * testWindow); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		a.cache.Put("k", "v", a.cache.Begin())
		if _, ok := a.cache.Get("k"); ok {
			t.Fatal("another process stored a key whose (long) write was in progress")
		}
		if wctx.Err() != nil {
			t.Fatal("the context of a write whose announcement was renewed ended")
		}
	}
	cancel()
	ch.Finish(context.Background(), cache.Applied)
	algoitnytest.Eventually(t, waitLimit, "k to be stored again", func() bool { a.cache.Put("k", "v", a.cache.Begin()); return hit(a.cache, "k", "v") })
}

// TestWriteIsGivenUpBeforeTheHoldEnds: when the writer can no longer renew
// its announcement, the write's context ends while the others still hold
// the key (so a write that lands late lands while they read DynamoDB).
func TestWriteIsGivenUpBeforeTheHoldEnds(t *testing.T) {
	t.Parallel()
	h := newHub()
	a, b := start(t, h, true), start(t, h, true)
	a.live(t)
	ch, err := b.feed.Change(context.Background(), false, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := ch.Write(context.Background())
	defer cancel()
	algoitnytest.Eventually(t, waitLimit, "A to hear of the change", func() bool {
		a.cache.Put("k", "v", a.cache.Begin())
		_, ok := a.cache.Get("k")
		return !ok
	})
	b.node.stall()
	<-wctx.Done()
	a.cache.Put("k", "v", a.cache.Begin())
	if _, ok := a.cache.Get("k"); ok {
		t.Fatal("the hold ended before the write was given up")
	}
	b.node.resume()
}

// TestLateReplyShortensTheWrite: a reply from PostgreSQL that comes late
// (the announcement went out long before the writer knew) leaves the
// write less time: its context ends before any process stops holding the
// key, and a reply later than the write's life leaves no time at all.
func TestLateReplyShortensTheWrite(t *testing.T) {
	t.Parallel()
	h := newHub()
	const window = 5 * testWindow // the writer's margin: 400 ms of late timers
	a, b := startWindow(t, h, true, testBound, window), startWindow(t, h, true, testBound, window)
	a.live(t)
	b.node.replyDelay.Store(int64(window / 2))
	ch, err := b.feed.Change(context.Background(), false, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	b.node.replyDelay.Store(0)
	b.node.cut() // no renewal can go out
	wctx, cancel := ch.Write(context.Background())
	defer cancel()
	<-wctx.Done()
	a.cache.Put("k", "v", a.cache.Begin())
	if _, ok := a.cache.Get("k"); ok {
		t.Fatal("another process stopped holding the key before the write was given up")
	}
	b.node.reconnect(2)
	b.node.replyDelay.Store(int64(window))
	ch2, err := b.feed.Change(context.Background(), false, []string{"k2"}) // its reply comes after the write's life
	if err != nil {
		t.Fatal(err)
	}
	wctx2, cancel2 := ch2.Write(context.Background())
	defer cancel2()
	if wctx2.Err() == nil {
		t.Fatal("a write whose announcement's reply came after its life may still be made")
	}
}

// TestReadDuringAHoldIsNeverStored: a read that began while a key was held
// (its write in progress, maybe not landed) is not stored even after the
// hold ran out — when the write's outcome was unknown and no end came —
// while a read that began after it is.
func TestReadDuringAHoldIsNeverStored(t *testing.T) {
	t.Parallel()
	h := newHub()
	a, b := start(t, h, true), start(t, h, true)
	a.live(t)
	ch, err := b.feed.Change(context.Background(), false, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	algoitnytest.Eventually(t, waitLimit, "A to hear of the change", func() bool {
		a.cache.Put("k", "v", a.cache.Begin())
		_, ok := a.cache.Get("k")
		return !ok
	})
	during := a.cache.Begin() // a read of k begins: it may see what was there before the write
	ch.Finish(context.Background(), cache.Unknown)
	time.Sleep(testWindow + 100*time.Millisecond) // the scenario: the hold runs out; no end comes
	a.cache.Put("k", "old", during)
	if _, ok := a.cache.Get("k"); ok {
		t.Fatal("a read that began during a hold was stored after the hold ran out")
	}
	algoitnytest.Eventually(t, waitLimit, "a read begun after the hold to be stored", func() bool {
		a.cache.Put("k", "new", a.cache.Begin())
		return hit(a.cache, "k", "new")
	})
}
