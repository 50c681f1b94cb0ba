package dynamo

import (
	"context"
	"slices"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// query describes one paginated list: a partition of a table or index, an
// optional sort-key condition and an optional filter.
type query struct {
	// list names the list for cursors, so that a cursor of one list is refused by another.
	list  string
	table string
	index string // "" = the table itself
	pk    string // partition key value
	// skPrefix restricts the sort key with begins_with.
	skPrefix string
	// skBefore restricts the sort key with < (stale-job sweeps).
	skBefore string
	// skBetween restricts the sort key to a closed range (usage logs of some days).
	skBetween [2]string
	filter    *expression.ConditionBuilder
	// forward is ascending order; the default is newest first.
	forward bool
	// scan reads the whole table instead of one partition (the admin scans
	// seed 001 allows, nothing else). pk and the sort-key conditions are unused.
	scan bool
	// project, when set, names the only attributes to return (besides the
	// keys of the table and of the index, which cursors are made of).
	project []string
}

func (q *query) keyNames() (pk, sk string) {
	if q.index == "" {
		return attrPK, attrSK
	}
	return gsiKeyAttrs(q.index)
}

func (q *query) input(limit int32, start map[string]types.AttributeValue) (*dynamodb.QueryInput, error) {
	pkName, skName := q.keyNames()
	kc := expression.Key(pkName).Equal(expression.Value(q.pk))
	switch {
	case q.skPrefix != "":
		kc = kc.And(expression.Key(skName).BeginsWith(q.skPrefix))
	case q.skBefore != "":
		kc = kc.And(expression.Key(skName).LessThan(expression.Value(q.skBefore)))
	case q.skBetween[0] != "":
		kc = kc.And(expression.Key(skName).Between(expression.Value(q.skBetween[0]), expression.Value(q.skBetween[1])))
	}
	b := expression.NewBuilder().WithKeyCondition(kc)
	if q.filter != nil {
		b = b.WithFilter(*q.filter)
	}
	if len(q.project) > 0 {
		// DynamoDB refuses a projection that names an attribute twice (on
		// the table itself pkName and skName are attrPK and attrSK).
		var names []string
		for _, a := range append([]string{attrPK, attrSK, pkName, skName}, q.project...) {
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
		proj := expression.NamesList(expression.Name(names[0]))
		for _, a := range names[1:] {
			proj = proj.AddNames(expression.Name(a))
		}
		b = b.WithProjection(proj)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, algoitny.Internal(err, "build query")
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(q.table),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(q.forward),
		ExclusiveStartKey:         start,
	}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	if q.index != "" {
		in.IndexName = aws.String(q.index)
	} else {
		// Read-your-writes on the table itself (a fresh execution shows up in
		// "my history" at once). Indexes are eventually consistent only.
		in.ConsistentRead = aws.Bool(true)
	}
	return in, nil
}

// rawPage is one page of items with their cursors.
type rawPage struct {
	items       []map[string]types.AttributeValue
	cursors     []string
	endCursor   string
	hasNextPage bool

	startCursor     string
	hasPreviousPage bool
}

// filteredReads bounds a filtered page: it reads ahead `ahead` items per
// DynamoDB call, and makes at most `calls` calls. A filter that matches
// little (a title nobody wrote, a problem nobody solved) must not read a
// whole index for one request; past the bound the page ends early (see
// page).
type filteredReads struct{ ahead, calls int }

var defaultFilteredReads = filteredReads{ahead: 100, calls: 10}

// page reads one page of q: up to `first` items after the cursor `after`. It
// reads one item more than asked to know whether another page exists, and
// with a filter keeps reading until the page is full, the partition ends or
// the bound of filtered reads is reached: then the page holds what matched so far
// (maybe nothing), hasNextPage is set and the end cursor resumes after the
// last item read, matching or not. Each item's cursor is built from its own
// key, so a page that stops in the middle of a DynamoDB page still resumes
// exactly after its last item.
//
// Paging backward (req.IsBackward), it reads the list the other way from
// Before and returns the page in the list's order: what it says of the
// items that follow then holds for those that precede, and the other way
// round (a cursor given means items lie past it). A Scan pages forward
// only.
func (db *DB) page(ctx context.Context, q *query, req algoitny.PageRequest) (rawPage, error) {
	first, err := req.Validate()
	if err != nil {
		return rawPage{}, err
	}
	if req.IsBackward() {
		if q.scan {
			return rawPage{}, algoitny.ErrForwardOnly()
		}
		reversed := *q
		reversed.forward = !q.forward
		p, err := db.pageFrom(ctx, &reversed, first, req)
		return p.reversed(req.Before != ""), err
	}
	p, err := db.pageFrom(ctx, q, first, req)
	if err != nil {
		return rawPage{}, err
	}
	p.hasPreviousPage = req.After != ""
	if len(p.cursors) > 0 {
		p.startCursor = p.cursors[0]
	}
	return p, nil
}

// reversed is a page read backward in the list's order: its start where
// the read ended, its end at the cursor it started from (more follow when
// there was one).
func (p rawPage) reversed(fromCursor bool) rawPage {
	slices.Reverse(p.items)
	slices.Reverse(p.cursors)
	out := rawPage{items: p.items, cursors: p.cursors, startCursor: p.endCursor, hasPreviousPage: p.hasNextPage, hasNextPage: fromCursor}
	if n := len(p.cursors); n > 0 {
		out.endCursor = p.cursors[n-1]
	}
	return out
}

// pageFrom reads one page of q forward (in q's order) from req's cursor.
func (db *DB) pageFrom(ctx context.Context, q *query, first int, req algoitny.PageRequest) (rawPage, error) {
	var start map[string]types.AttributeValue
	var err error
	if cursor := req.Cursor(); cursor != "" {
		if start, err = decodeCursor(cursor, req.CursorField(), q); err != nil {
			return rawPage{}, err
		}
	}
	var items []map[string]types.AttributeValue
	var resume map[string]types.AttributeValue // set when the read bound ends the page early
	for reads := 1; ; reads++ {
		need := first + 1 - len(items)
		limit := int32(need)
		if q.filter != nil {
			limit = int32(max(need, db.filtered.ahead))
		}
		got, next, err := db.fetch(ctx, q, limit, start)
		if err != nil {
			return rawPage{}, err
		}
		items = append(items, got...)
		if len(items) > first || len(next) == 0 {
			break
		}
		if q.filter != nil && reads >= db.filtered.calls {
			resume = next
			break
		}
		start = next
	}
	p := rawPage{items: items}
	if len(items) > first {
		p.items, p.hasNextPage = items[:first], true
	}
	p.cursors = make([]string, len(p.items))
	for i, it := range p.items {
		p.cursors[i] = encodeCursor(q.list, q.index, it)
	}
	if n := len(p.cursors); n > 0 {
		p.endCursor = p.cursors[n-1]
	}
	if resume != nil {
		p.hasNextPage, p.endCursor = true, encodeCursor(q.list, q.index, resume)
	}
	return p, nil
}

// fetch issues one Query (or Scan) call and returns its items and LastEvaluatedKey.
func (db *DB) fetch(ctx context.Context, q *query, limit int32, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, map[string]types.AttributeValue, error) {
	if q.scan {
		in := &dynamodb.ScanInput{TableName: aws.String(q.table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		if q.filter != nil {
			expr, err := expression.NewBuilder().WithFilter(*q.filter).Build()
			if err != nil {
				return nil, nil, algoitny.Internal(err, "build scan")
			}
			in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Filter(), expr.Names(), expr.Values()
		}
		out, err := db.client.Scan(ctx, in)
		if err != nil {
			return nil, nil, translate(err, "scan "+q.list)
		}
		return out.Items, out.LastEvaluatedKey, nil
	}
	if db.cachesPartition(ctx, q) {
		p, ok, err := db.partition(ctx, q.pk)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			items, next := p.answer(q, limit, start)
			return items, next, nil
		}
	}
	return db.query(ctx, q, limit, start)
}

// query is fetch's Query of DynamoDB itself.
func (db *DB) query(ctx context.Context, q *query, limit int32, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, map[string]types.AttributeValue, error) {
	in, err := q.input(limit, start)
	if err != nil {
		return nil, nil, err
	}
	out, err := db.client.Query(ctx, in)
	if err != nil {
		return nil, nil, translate(err, "query "+q.list)
	}
	return out.Items, out.LastEvaluatedKey, nil
}

// all reads every item of q (bounded lists only: a user's counters, a job's
// progress, the plans).
func (db *DB) all(ctx context.Context, q *query) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		got, next, err := db.fetch(ctx, q, 0, start)
		if err != nil {
			return nil, err
		}
		items = append(items, got...)
		if len(next) == 0 {
			return items, nil
		}
		start = next
	}
}

// convertPage unmarshals the items of a raw page into domain values.
func convertPage[T any](p rawPage, conv func(map[string]types.AttributeValue) (T, error)) (algoitny.Page[T], error) {
	out := positioned(p, algoitny.Page[T]{Items: make([]T, 0, len(p.items)), Cursors: p.cursors})
	for _, it := range p.items {
		v, err := conv(it)
		if err != nil {
			return algoitny.Page[T]{}, err
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}

// positioned is out with p's position: its start and end cursors and
// whether items precede and follow it (the items and their cursors are
// out's own).
func positioned[T any](p rawPage, out algoitny.Page[T]) algoitny.Page[T] {
	out.StartCursor, out.EndCursor = p.startCursor, p.endCursor
	out.HasPreviousPage, out.HasNextPage = p.hasPreviousPage, p.hasNextPage
	return out
}
