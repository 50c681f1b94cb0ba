package dynamo

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/cache"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Two kinds of items are read far more often than they change, and a serve
// process keeps them in memory:
//
//   - problem partitions (a problem's METADATA item and its TESTCASE#
//     items), read on every problem page and history page: whole partitions
//     are cached and Queries of them (a problem with its first test cases, a
//     page of test cases, one test case), GetItem of the problem and the
//     problems of a BatchGetItem are answered from memory;
//   - users' items (the Users table's METADATA item of an email), read for
//     every author on a history page: GetItem and BatchGetItem of them;
//   - a user's quota counter item of a day (one GetItem answers myUsage),
//     read on every page a client shows the usage on and changed only when
//     the user spends or gets back a use (ConsumeQuota, ReleaseQuota). The
//     quota itself is never decided from it: ConsumeQuota's conditional
//     write is;
//   - a user's executions read by id (GetHistory, GetHistories): a job's
//     events show its execution to every subscriber, and an execution
//     changes only when it is made public or given hints.
//
// internal/cache keeps these from serving what another process changed:
// every write to a problem partition, a user item, a quota counter or an
// execution goes through
// partitionChanged, which forgets it here and publishes its key. The session
// check of authentication does not use this cache (accounts has its own).
const (
	partitionsTopic = "dynamo:partition-changed"
	// partitionCacheTTL bounds how long a partition is trusted (the bound
	// when an event is lost without the broker knowing).
	partitionCacheTTL = 30 * time.Second
	// maxCachedPartitionBytes: larger partitions (problems with big test
	// data) are read from DynamoDB every time, and remembered as too big.
	maxCachedPartitionBytes = 256 << 10
	// partitionCacheBytes and partitionCacheEntries bound the whole cache
	// (≈ 10,000 typical problems); partitionOverhead is what an entry costs
	// besides its attributes' bytes, and attrOverhead what each attribute
	// costs decoded (a map slot, an interface, a struct).
	partitionCacheBytes   = 64 << 20
	partitionCacheEntries = 20_000
	partitionOverhead     = 512
	attrOverhead          = 96
	// partitionPage is the page size of a partition's load, so that a big
	// partition is known as such after a page, not a megabyte.
	partitionPage = 64
)

// partition is a cached partition: its items sorted by sort key, or tooBig
// (then the items are not kept). An entry with heads knows only the items
// of the partition whose sort keys heads lists (sorted; it holds those that
// exist): what GetItem and BatchGetItem of a problem, a user, a quota
// counter or an execution read (cachesHead). A Query of a problem partition
// loads the whole of it (heads nil).
type partition struct {
	items  []map[string]types.AttributeValue
	size   int
	tooBig bool
	heads  []string
	// since is when the oldest of a heads entry's items was read: merging
	// heads must not stretch an item's life past the cache's TTL.
	since time.Time
}

// maxHeads bounds the items one entry knows by key; past it the entry
// starts again from the item just read.
const maxHeads = 32

// knows reports whether p answers a read of sort key sk.
func (p *partition) knows(sk string) bool {
	if p.heads == nil {
		return true
	}
	_, found := slices.BinarySearch(p.heads, sk)
	return found
}

// withHead returns a copy of p (a heads entry, or nil) that also knows sk,
// holding item (nil: there is no such item), read at now. What p knew is
// dropped when it is full or older than the TTL.
func (p *partition) withHead(sk string, item map[string]types.AttributeValue, now time.Time) *partition {
	n := &partition{since: now}
	if p != nil && len(p.heads) < maxHeads && now.Sub(p.since) < partitionCacheTTL {
		n.heads, n.since = slices.Clone(p.heads), p.since
		for _, it := range p.items {
			if stringAttr(it, attrSK) != sk {
				n.items = append(n.items, it)
				n.size += itemCost(it)
			}
		}
	}
	if i, found := slices.BinarySearch(n.heads, sk); !found {
		n.heads = slices.Insert(n.heads, i, sk)
	}
	if item != nil {
		i, _ := slices.BinarySearchFunc(n.items, sk, func(it map[string]types.AttributeValue, sk string) int {
			return strings.Compare(stringAttr(it, attrSK), sk)
		})
		n.items = slices.Insert(n.items, i, item)
		n.size += itemCost(item)
	}
	return n
}

// itemCost estimates what an item costs in the cache: its bytes and a
// decoded value per attribute, nested ones (an execution's test results)
// included.
func itemCost(item map[string]types.AttributeValue) int {
	return itemSize(item) + attrOverhead*attrCount(item)
}

func attrCount(item map[string]types.AttributeValue) int {
	n := 0
	for _, v := range item {
		n += valueCount(v)
	}
	return n
}

func valueCount(v types.AttributeValue) int {
	n := 1
	switch v := v.(type) {
	case *types.AttributeValueMemberM:
		n += attrCount(v.Value)
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			n += valueCount(e)
		}
	}
	return n
}

// SetChanges is called once, before the DB is used, by every process that
// writes problems (serve replicas and workers): their writes are then
// published on b so that the serve replicas' partition caches forget them.
func (db *DB) SetChanges(b cache.Broker, log *slog.Logger) {
	db.changes, db.log = b, log
	db.partitions = cache.New[string, *partition](cache.Config[*partition]{
		TTL: partitionCacheTTL, MaxBytes: partitionCacheBytes, MaxEntries: partitionCacheEntries,
		Size: func(p *partition) int { return partitionOverhead + p.size },
		Now:  func() time.Time { return db.now() },
	})
}

// WatchChanges turns the partition cache on for this process and keeps it in
// step with the writes of every process until ctx is done (SetChanges
// first; without it, it returns at once).
func (db *DB) WatchChanges(ctx context.Context) {
	if db.changes == nil {
		return
	}
	db.partitions.Watch(ctx, db.changes, partitionsTopic, func(key []byte) { db.partitions.Forget(string(key)) }, db.log)
}

// partitionKey names a partition in the cache and in change events.
func partitionKey(table, pk string) string { return table + "|" + pk }

// partitionChanged is called after (and, for safety, whether or not) a
// write to a problem partition or a user item: this process forgets it at
// once, the others when they hear of it. When the request's context ended
// first, DynamoDB may still apply the write after this: the change is told
// again a little later, so that a read made in between is not kept.
func (db *DB) partitionChanged(ctx context.Context, table, pk string) {
	if db.changes == nil {
		return
	}
	key := partitionKey(table, pk)
	db.partitions.Forget(key)
	cache.Publish(ctx, db.changes, partitionsTopic, []byte(key), db.log)
	if ctx.Err() != nil {
		time.AfterFunc(uncertainWriteDelay, func() {
			db.partitions.Forget(key)
			cache.Publish(context.Background(), db.changes, partitionsTopic, []byte(key), db.log)
		})
	}
}

// uncertainWriteDelay is how long after an interrupted write its change is
// told again (longer than a write takes to land).
const uncertainWriteDelay = 2 * time.Second

// fresh returns a context in which reads go to DynamoDB itself (consistent):
// for reads a write decides on, which must not trust a copy. Callers outside
// this package say the same with algoitny.WithFreshReads.
func fresh(ctx context.Context) context.Context { return algoitny.WithFreshReads(ctx) }

func isFresh(ctx context.Context) bool { return algoitny.FreshReads(ctx) }

// cachesPartition reports whether q reads a problem partition in a way the
// cache can answer: the table itself, by key range, without a filter.
func (db *DB) cachesPartition(ctx context.Context, q *query) bool {
	return db.changes != nil && !isFresh(ctx) && !q.scan && q.index == "" && q.table == db.tables.Main && q.filter == nil &&
		q.skBefore == "" && q.skBetween[0] == "" && strings.HasPrefix(q.pk, pkPrefixProblem)
}

// partition returns the partition pk from the cache or, when the cache is on,
// reads and caches it (requests that miss it together share one read: a
// popular problem just edited costs one load, not one per request). ok is
// false when the cache is off or the partition is too big: the caller reads
// DynamoDB as usual.
func (db *DB) partition(ctx context.Context, pk string) (p *partition, ok bool, err error) {
	whole := func(p *partition) bool { return p.heads == nil } // not only some items of it
	p, err = db.partitions.Load(ctx, partitionKey(db.tables.Main, pk), whole,
		func(ctx context.Context) (*partition, error) { return db.loadPartition(ctx, pk) })
	switch {
	case errors.Is(err, cache.ErrOff):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return p, !p.tooBig, nil
}

// loadPartition reads the whole of partition pk, page by page, or as much of
// it as shows that it is too big to keep (then only the marker is returned).
func (db *DB) loadPartition(ctx context.Context, pk string) (*partition, error) {
	p := &partition{}
	q := &query{list: "partition", table: db.tables.Main, pk: pk, forward: true}
	var start map[string]types.AttributeValue
	for {
		items, next, err := db.query(ctx, q, partitionPage, start)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			p.size += itemCost(it)
		}
		if p.size > maxCachedPartitionBytes {
			return &partition{tooBig: true}, nil
		}
		p.items = append(p.items, items...)
		if len(next) == 0 {
			// A forward Query returns the items in sort-key order, which
			// answer and cachedItem rely on.
			return p, nil
		}
		start = next
	}
}

// answer is what DynamoDB would return for q (on this partition) with limit
// and start: items in q's order after start, matching its sort-key prefix,
// at most limit of them; next is set when more would follow.
func (p *partition) answer(q *query, limit int32, start map[string]types.AttributeValue) (items []map[string]types.AttributeValue, next map[string]types.AttributeValue) {
	after := stringAttr(start, attrSK)
	n := len(p.items)
	for i := range n {
		it := p.items[i]
		if !q.forward {
			it = p.items[n-1-i]
		}
		sk := stringAttr(it, attrSK)
		switch {
		case after != "" && q.forward && sk <= after, after != "" && !q.forward && sk >= after:
			continue
		case q.skPrefix != "" && !strings.HasPrefix(sk, q.skPrefix):
			continue
		}
		if limit > 0 && len(items) == int(limit) {
			return items, keyOf(items[len(items)-1]).av()
		}
		items = append(items, it)
	}
	return items, nil
}

// cachedItem returns the item k of table if the cache knows it: known is
// false when it does not (then ask DynamoDB); item is nil when the item does
// not exist.
func (db *DB) cachedItem(table string, k itemKey) (item map[string]types.AttributeValue, known bool) {
	if db.changes == nil {
		return nil, false
	}
	switch {
	case table == db.tables.Main && strings.HasPrefix(k.PK, pkPrefixProblem):
	case db.cachesHead(table, k):
	default:
		return nil, false
	}
	p, ok := db.partitions.Get(partitionKey(table, k.PK))
	if !ok || p.tooBig || !p.knows(k.SK) || (p.heads != nil && db.now().Sub(p.since) >= partitionCacheTTL) {
		return nil, false
	}
	i := sort.Search(len(p.items), func(i int) bool { return stringAttr(p.items[i], attrSK) >= k.SK })
	if i < len(p.items) && stringAttr(p.items[i], attrSK) == k.SK {
		return p.items[i], true
	}
	return nil, true
}

// cachesHead reports whether k is an item the cache keeps as a head of its
// partition when it is read alone: a user's or a problem's METADATA, a
// user's quota counter of a day, a user's execution.
func (db *DB) cachesHead(table string, k itemKey) bool {
	switch {
	case db.changes == nil:
		return false
	case k.SK == skMetadata:
		return (table == db.tables.Users && strings.HasPrefix(k.PK, pkPrefixUser)) ||
			(table == db.tables.Main && strings.HasPrefix(k.PK, pkPrefixProblem))
	default:
		return table == db.tables.Main && strings.HasPrefix(k.PK, pkPrefixUser) && (isQuotaSK(k.SK) || isHistorySK(k.SK))
	}
}

// keepHeads caches, as heads, the items of keys that cachesHead keeps, read
// with ticket t (found holds those that exist). A whole partition or a
// too-big marker already cached is not replaced by less.
func (db *DB) keepHeads(table string, keys []itemKey, found map[itemKey]map[string]types.AttributeValue, t cache.Ticket) {
	if !t.Live() {
		return
	}
	for _, k := range keys {
		if !db.cachesHead(table, k) {
			continue
		}
		if found[k] == nil && isHistorySK(k.SK) {
			// Executions are written by the workers: "none yet" is not
			// worth keeping against the moment the job stores it.
			continue
		}
		key := partitionKey(table, k.PK)
		old, _ := db.partitions.Get(key) // nil when absent
		if old != nil && old.heads == nil {
			continue
		}
		p := old.withHead(k.SK, found[k], db.now())
		if p.size > maxCachedPartitionBytes {
			p = (*partition)(nil).withHead(k.SK, found[k], db.now())
		}
		if p.size <= maxCachedPartitionBytes {
			db.partitions.Put(key, p, t)
		}
	}
}
