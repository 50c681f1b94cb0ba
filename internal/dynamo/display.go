package dynamo

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Display data — what pages show and no decision depends on — is read far
// more often than it changes, and a serve process keeps it in memory for at
// most a bound (CacheDisplayData; a second in production):
//
//   - problem partitions (a problem's METADATA item and its TESTCASE#
//     items), read on every problem page and history page: whole partitions
//     are kept and Queries of them (a problem with its first test cases, a
//     page of test cases, one test case), GetItem of the problem and the
//     problems of a BatchGetItem are answered from memory;
//   - a user's quota counter item of a day (what myUsage shows). The quota
//     itself is never decided from it: the conditional write that charges
//     a use (CreateChargedJob, ConsumeQuota) is;
//   - users and plans shown beside other people's items (the authors of
//     publicHistory and historyFeed, the leaderboard), but only for the
//     reads that ask for that copy: GetUsersForDisplay and
//     GetPlansForDisplay. Every other read of a user or a plan —
//     GetUserByEmail, GetUsersByEmail, GetPlan, GetPlans, AuthLookup — goes
//     to DynamoDB, strongly consistent, and is never answered from memory:
//     a user's flags and plan decide what a request may do.
//
// displayKeyOf is the one list of what is kept. This process's own writes
// of such items forget them when they return (localWrites), so a client
// sees its change at once on the replica it made it on, and within the
// bound on the others. Security state — sessions, executions, and users
// and plans as read for decisions — is never taken from memory: it is read
// from DynamoDB, strongly consistent, on use.
const (
	// DisplayBound is how long display data may be kept (the bound the
	// servers use).
	DisplayBound = time.Second
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
// counter read (cachesHead). A Query of a problem partition
// loads the whole of it (heads nil).
type partition struct {
	items  []map[string]types.AttributeValue
	size   int
	tooBig bool
	heads  []string
	// since is when the oldest of a heads entry's items was read: merging
	// heads must not stretch an item's life past the cache's bound.
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
// holding item (nil: there is no such item), read at now (kept at most ttl). What p knew is
// dropped when it is full or older than the TTL.
func (p *partition) withHead(sk string, item map[string]types.AttributeValue, now time.Time, ttl time.Duration) *partition {
	n := &partition{since: now}
	if p != nil && len(p.heads) < maxHeads && now.Sub(p.since) < ttl {
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

// CacheDisplayData makes the DB keep display data (displayKeyOf) for at
// most bound after each read. It is called once, before the DB is used, by
// the serve processes; a DB without it reads everything from DynamoDB.
func (db *DB) CacheDisplayData(bound time.Duration) {
	db.partitions = &memo[*partition]{
		ttl: bound, maxBytes: partitionCacheBytes, maxEntries: partitionCacheEntries,
		size: func(p *partition) int { return partitionOverhead + p.size },
		now:  func() time.Time { return db.now() },
	}
}

// Uncached returns a DB on the same tables and connection that keeps
// nothing in memory: every read goes to DynamoDB, for work that decides on
// what it reads (a judge runs a problem's tests as they are, not as they
// were a second ago). Its writes still make db forget its copies, and its
// requests count as db's.
func (db *DB) Uncached() *DB {
	return &DB{client: db.client, tables: db.tables, now: db.now, filtered: db.filtered, maxCasePageBytes: db.maxCasePageBytes}
}

// partitionKey names a partition in the cache.
func partitionKey(table, pk string) string { return table + "|" + pk }

// displayUse says which reads may take an item from memory.
type displayUse int

const (
	notDisplay displayUse = iota
	// displayAlways: any read not made fresh (problems, quota counters).
	displayAlways
	// displayAsked: only reads for display (forDisplay: users, plans); the
	// others read DynamoDB, consistently, and keep nothing.
	displayAsked
)

// displayKeyOf says whether the item (table, pk, sk) is display data kept
// in memory, for which reads (use), and under which key (its partition's).
// It is the one list of what is kept: reads consult it to decide what to
// keep and answer (displayRead, cachesPartition) and localWrites to decide
// what to forget.
func (db *DB) displayKeyOf(table, pk, sk string) (key string, use displayUse) {
	switch {
	case table == db.tables.Main && strings.HasPrefix(pk, pkPrefixProblem):
		return partitionKey(table, pk), displayAlways // a problem or its test cases
	case table == db.tables.Main && strings.HasPrefix(pk, pkPrefixUser) && isQuotaSK(sk):
		return partitionKey(table, pk), displayAlways // a quota counter (what myUsage shows)
	case table == db.tables.Users && strings.HasPrefix(pk, pkPrefixUser) && sk == skMetadata:
		return partitionKey(table, pk), displayAsked // a user, shown as an author
	case table == db.tables.Plans && strings.HasPrefix(pk, pkPrefixPlan) && sk == skMetadata:
		return partitionKey(table, pk), displayAsked // an author's plan
	}
	return "", notDisplay
}

// displayRead reports whether a read of item k of table made with ctx may
// be answered from memory and kept there: display data (displayKeyOf), a
// read not made fresh, and for users and plans one asking for the display
// copy (forDisplay).
func (db *DB) displayRead(ctx context.Context, table string, k itemKey) bool {
	if db.partitions == nil || isFresh(ctx) {
		return false
	}
	switch _, use := db.displayKeyOf(table, k.PK, k.SK); use {
	case displayAlways:
		return true
	case displayAsked:
		return isForDisplay(ctx)
	}
	return false
}

// displayReadsKey marks a context whose reads of users and plans may be
// served from memory (forDisplay).
type displayReadsKey struct{}

// forDisplay returns a context in which reads of users and plans may take
// the display copy (at most the bound old): only for what is shown beside
// other people's items, never for what a decision is made on. A fresh
// context stays fresh.
func forDisplay(ctx context.Context) context.Context {
	return context.WithValue(ctx, displayReadsKey{}, true)
}

func isForDisplay(ctx context.Context) bool { return ctx.Value(displayReadsKey{}) != nil }

// fresh returns a context in which reads go to DynamoDB itself (consistent):
// for reads a write decides on, which must not trust a copy. Callers outside
// this package say the same with algoitny.WithFreshReads.
func fresh(ctx context.Context) context.Context { return algoitny.WithFreshReads(ctx) }

func isFresh(ctx context.Context) bool { return algoitny.FreshReads(ctx) }

// cachesPartition reports whether q reads a problem partition in a way the
// cache can answer: the table itself, by key range, without a filter.
func (db *DB) cachesPartition(ctx context.Context, q *query) bool {
	return db.partitions != nil && !isFresh(ctx) && !q.scan && q.index == "" && q.table == db.tables.Main && q.filter == nil &&
		q.skBefore == "" && q.skBetween[0] == "" && strings.HasPrefix(q.pk, pkPrefixProblem)
}

// partition returns the partition pk from the cache or reads and keeps it
// (requests that miss it together share one read: a popular problem just
// edited costs one load, not one per request). ok is false when the
// partition is too big: the caller reads DynamoDB as usual. Only called
// when cachesPartition says so.
func (db *DB) partition(ctx context.Context, pk string) (p *partition, ok bool, err error) {
	whole := func(p *partition) bool { return p.heads == nil } // not only some items of it
	p, err = db.partitions.Load(ctx, partitionKey(db.tables.Main, pk), whole,
		func(ctx context.Context) (*partition, error) { return db.loadPartition(ctx, pk) })
	if err != nil {
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

// cachedItem returns the item k of table if the cache knows it and ctx's
// read may take it (displayRead): known is false when it does not (then ask
// DynamoDB); item is nil when the item does not exist.
func (db *DB) cachedItem(ctx context.Context, table string, k itemKey) (item map[string]types.AttributeValue, known bool) {
	if !db.displayRead(ctx, table, k) {
		return nil, false
	}
	p, ok := db.partitions.Get(partitionKey(table, k.PK))
	if !ok || p.tooBig || !p.knows(k.SK) || (p.heads != nil && db.now().Sub(p.since) >= db.partitions.ttl) {
		return nil, false
	}
	i := sort.Search(len(p.items), func(i int) bool { return stringAttr(p.items[i], attrSK) >= k.SK })
	if i < len(p.items) && stringAttr(p.items[i], attrSK) == k.SK {
		return p.items[i], true
	}
	return nil, true
}

// cachesHead reports whether k, read alone with ctx, is kept as a head of
// its partition (a problem's METADATA item, a quota counter, a user or a
// plan read for display; test cases come with their whole partition).
func (db *DB) cachesHead(ctx context.Context, table string, k itemKey) bool {
	return db.displayRead(ctx, table, k) && !(strings.HasPrefix(k.PK, pkPrefixProblem) && k.SK != skMetadata)
}

// keepHeads caches, as heads, the items of keys that cachesHead keeps for
// ctx's read, read with ticket t (found holds those that exist). A whole partition or a
// too-big marker already cached is not replaced by less.
func (db *DB) keepHeads(ctx context.Context, table string, keys []itemKey, found map[itemKey]map[string]types.AttributeValue, t memoTicket) {
	if !t.on {
		return
	}
	for _, k := range keys {
		if !db.cachesHead(ctx, table, k) {
			continue
		}
		key := partitionKey(table, k.PK)
		old, _ := db.partitions.Get(key) // nil when absent
		if old != nil && old.heads == nil {
			continue
		}
		p := old.withHead(k.SK, found[k], t.at, db.partitions.ttl)
		if p.size > maxCachedPartitionBytes {
			p = (*partition)(nil).withHead(k.SK, found[k], t.at, db.partitions.ttl)
		}
		if p.size <= maxCachedPartitionBytes {
			db.partitions.Put(key, p, t)
		}
	}
}
