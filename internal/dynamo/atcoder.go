package dynamo

// AtCoder solved-problem sync (issue 9, seed 004), in the main table.
//
// Why the main table: the records are small, few kinds, and keyed so that
// they cannot collide with the main table's entities (USER_AC#, CONTEST#);
// a fourth table would add a migration, a config name and capacity to manage
// for no access pattern the main table cannot serve. Seed 004's own design is
// a single table too.
//
// Items (key formats in keys.go):
//
//	USER_AC#{user_id} / AC    UserAcProblemRecord: ac_problems (see below),
//	                          ac_first_ac (issue 20), ac_count, version
//	USER_AC#{user_id} / LINK  the linked handle, the sync cursor and version,
//	                          last sync times; GSI1 ATCODER#LINKED by last attempt
//	CONTEST#{YYYYMM} / {start_epoch_second}-{difficulty_order}
//	                          AdtContestRecord: contest_id,
//	                          last_fetched_submission_id, start, duration, title,
//	                          problems (issue 20, see below)
//
// Attribute names are the seed's snake_case, so the records read as the
// seed documents them.
//
// Item size: an AC list is one item, so that one read answers "which of
// these problems has the user solved". DynamoDB items are limited to 400 KB
// and reads cost one unit per 4 KB. The list is stored exactly as the seed's
// ac_problems list of strings while that stays under 16 KB (about 1,500
// ids); a longer list is stored as ac_problems_gz: the sorted ids joined by
// newlines, gzip-compressed. Sorted AtCoder ids share long prefixes and
// compress to a few bytes each, so every problem AtCoder has ever had
// (≈8,000) fits in a few tens of KB; a list that would still exceed
// acMaxEncodedBytes compressed is refused with EINTERNAL rather than
// failing inside DynamoDB.
//
// First-AC times (issue 20) sit beside the ids, in the same form: with the
// plain list, ac_first_ac is a list of numbers of the same length (epoch
// seconds, 0 = unknown), element i for ac_problems[i]; with the compressed
// form, ac_first_ac_gz is the seconds in decimal, one a line, gzipped. The
// plain form is kept while ids and times together stay under 16 KB. The ids'
// attributes are unchanged, so an item written before times were kept reads
// as a list without times (ACList.TimesRecorded false), and a replica still
// running the older code reads a new item as before (writing it back drops
// the times, which the next sync of the newer code notices and refills).
//
// Concurrency: the link item's version guards the cursor and the AC item's
// version guards the list; a sync commits a page with one TransactWriteItems
// that checks both (or one conditional UpdateItem when the list did not
// change). Relinking to another handle gives the link a new link_id and
// deletes the list in the same transaction, so a sync of the old handle that
// is still running can never commit.
//
// A contest's problems (issue 20) are a list attribute of its record, each
// a map with short names, since a month holds a few hundred contests of 5 to
// 9 problems each: p (problem id), i (index in the contest), t (name), d
// (AtCoder Problems' raw difficulty, absent without a model), x (true when
// the estimate is experimental). Difficulties are copied into every contest
// that sets the problem, so that a month's contests, problems and
// difficulties are one Query of one partition, with no scan and no second
// read; the problem sync rewrites a record only when its problems or their
// difficulties changed.
//
// Contest records are discovered with BatchWriteItem (25 a call, unprocessed
// items retried) and advanced with a conditional UpdateItem
// (last_fetched_submission_id only grows): BatchWriteItem cannot be
// conditional, and two users' syncs advancing the same contest must not lower
// it.

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

const (
	entityAtCoderAC   = "UserAcProblem"
	entityAtCoderLink = "AtCoderLink"
	entityADTContest  = "AdtContest"

	attrACProblems   = "ac_problems"
	attrACProblemsGz = "ac_problems_gz"
	attrACFirstAC    = "ac_first_ac"
	attrACFirstACGz  = "ac_first_ac_gz"
	attrACCount      = "ac_count"
	attrVersion      = "version"

	// acListMaxBytes is the largest list kept in the seed's plain list form.
	acListMaxBytes = 16 << 10
	// acMaxEncodedBytes leaves room under the 400 KB item limit for the keys
	// and the other attributes.
	acMaxEncodedBytes = 350 << 10
	// acMaxDecodedBytes bounds decompression (a corrupt item must not make us
	// allocate without limit).
	acMaxDecodedBytes = 64 << 20
)

// atcoderLinkItem is USER_AC#{user_id} / LINK.
type atcoderLinkItem struct {
	PK, SK         string
	EntityType     string
	UserID         string     `dynamodbav:"user_id"`
	Handle         string     `dynamodbav:"handle"`
	LinkID         string     `dynamodbav:"link_id"`
	LinkedAt       time.Time  `dynamodbav:"linked_at"`
	Version        int64      `dynamodbav:"version"`
	CursorSecond   int64      `dynamodbav:"cursor_second"`
	CursorIDs      []int64    `dynamodbav:"cursor_ids,omitempty"`
	LastSyncedAt   *time.Time `dynamodbav:"last_synced_at,omitempty"`
	LastAttemptAt  *time.Time `dynamodbav:"last_attempt_at,omitempty"`
	LastError      string     `dynamodbav:"last_error,omitempty"`
	GSI1PK, GSI1SK string
}

// adtContestItem is CONTEST#{YYYYMM} / {start_epoch_second}-{difficulty_order}.
type adtContestItem struct {
	PK, SK                  string
	EntityType              string
	ContestID               string `dynamodbav:"contest_id"`
	LastFetchedSubmissionID int64  `dynamodbav:"last_fetched_submission_id"`
	StartEpochSecond        int64  `dynamodbav:"start_epoch_second"`
	DurationSecond          int64  `dynamodbav:"duration_second"`
	Title                   string `dynamodbav:"title"`
	DifficultyOrder         int    `dynamodbav:"difficulty_order"`
	// Problems is absent until the problem sync has seen the contest.
	Problems []adtProblemItem `dynamodbav:"problems,omitempty"`
}

// adtProblemItem is one element of a contest record's problems.
type adtProblemItem struct {
	ProblemID    string   `dynamodbav:"p"`
	Index        string   `dynamodbav:"i"`
	Title        string   `dynamodbav:"t,omitempty"`
	Difficulty   *float64 `dynamodbav:"d,omitempty"`
	Experimental bool     `dynamodbav:"x,omitempty"`
}

func adtProblemItems(ps []algoitny.ADTContestProblem) []adtProblemItem {
	if ps == nil {
		return nil
	}
	out := make([]adtProblemItem, len(ps))
	for i, p := range ps {
		out[i] = adtProblemItem{ProblemID: p.ProblemID, Index: p.Index, Title: p.Title}
		if d := p.Difficulty; d != nil {
			raw := d.Raw
			out[i].Difficulty, out[i].Experimental = &raw, d.IsExperimental
		}
	}
	return out
}

func adtProblems(items []adtProblemItem) []algoitny.ADTContestProblem {
	if items == nil {
		return nil
	}
	out := make([]algoitny.ADTContestProblem, len(items))
	for i, it := range items {
		out[i] = algoitny.ADTContestProblem{ProblemID: it.ProblemID, Index: it.Index, Title: it.Title}
		if it.Difficulty != nil {
			out[i].Difficulty = &algoitny.AtCoderDifficulty{Raw: *it.Difficulty, IsExperimental: it.Experimental}
		}
	}
	return out
}

func linkKey(userID string) itemKey { return itemKey{atcoderUserPK(userID), skAtCoderLink} }
func acKey(userID string) itemKey   { return itemKey{atcoderUserPK(userID), skAtCoderAC} }

func marshalLink(l *algoitny.AtCoderLink) (map[string]types.AttributeValue, error) {
	var attempt time.Time
	if l.LastAttemptAt != nil {
		attempt = *l.LastAttemptAt
	}
	av, err := attributevalue.MarshalMap(atcoderLinkItem{
		PK: atcoderUserPK(l.UserID), SK: skAtCoderLink, EntityType: entityAtCoderLink,
		UserID: l.UserID, Handle: l.Handle, LinkID: l.LinkID, LinkedAt: l.LinkedAt, Version: l.Version,
		CursorSecond: l.Cursor.Second, CursorIDs: l.Cursor.SeenIDs,
		LastSyncedAt: l.LastSyncedAt, LastAttemptAt: l.LastAttemptAt, LastError: l.LastError,
		GSI1PK: gsiAtCoderLinked, GSI1SK: gsiAtCoderLinkSK(attempt, l.UserID),
	})
	if err != nil {
		return nil, algoitny.Internal(err, "encode AtCoder link")
	}
	return av, nil
}

func unmarshalLink(av map[string]types.AttributeValue) (*algoitny.AtCoderLink, error) {
	var it atcoderLinkItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode AtCoder link")
	}
	return &algoitny.AtCoderLink{
		UserID: it.UserID, Handle: it.Handle, LinkID: it.LinkID, LinkedAt: it.LinkedAt, Version: it.Version,
		Cursor:       algoitny.AtCoderCursor{Second: it.CursorSecond, SeenIDs: it.CursorIDs},
		LastSyncedAt: it.LastSyncedAt, LastAttemptAt: it.LastAttemptAt, LastError: it.LastError,
	}, nil
}

// marshalACList builds the AC item; see the file comment for the encoding.
func marshalACList(userID string, l *algoitny.ACList, version int64, now time.Time) (map[string]types.AttributeValue, error) {
	ids := l.ProblemIDs
	if l.TimesRecorded && len(l.FirstAC) != len(ids) {
		return nil, algoitny.Internal(nil, "an AC list of %d problems with %d first-AC times", len(ids), len(l.FirstAC))
	}
	item := map[string]types.AttributeValue{
		attrPK:       &types.AttributeValueMemberS{Value: atcoderUserPK(userID)},
		attrSK:       &types.AttributeValueMemberS{Value: skAtCoderAC},
		"EntityType": &types.AttributeValueMemberS{Value: entityAtCoderAC},
		"user_id":    &types.AttributeValueMemberS{Value: userID},
		attrACCount:  &types.AttributeValueMemberN{Value: itoa(int64(len(ids)))},
		attrVersion:  &types.AttributeValueMemberN{Value: itoa(version)},
		"updated_at": &types.AttributeValueMemberS{Value: keyTime(now)},
	}
	plain := listBytes(ids)
	if l.TimesRecorded {
		plain += numberListBytes(l.FirstAC)
	}
	if plain <= acListMaxBytes {
		item[attrACProblems] = stringList(ids)
		if l.TimesRecorded {
			nums := make([]types.AttributeValue, len(l.FirstAC))
			for i, s := range l.FirstAC {
				nums[i] = &types.AttributeValueMemberN{Value: itoa(s)}
			}
			item[attrACFirstAC] = &types.AttributeValueMemberL{Value: nums}
		}
		return item, nil
	}
	gz, err := gzipLines(ids)
	if err != nil {
		return nil, err
	}
	size := len(gz)
	item[attrACProblemsGz] = &types.AttributeValueMemberB{Value: gz}
	if l.TimesRecorded {
		lines := make([]string, len(l.FirstAC))
		for i, s := range l.FirstAC {
			lines[i] = itoa(s)
		}
		tgz, err := gzipLines(lines)
		if err != nil {
			return nil, err
		}
		size += len(tgz)
		item[attrACFirstACGz] = &types.AttributeValueMemberB{Value: tgz}
	}
	if size > acMaxEncodedBytes {
		return nil, algoitny.Internal(nil, "an AC list of %d problems does not fit in one item (%d bytes compressed)", len(ids), size)
	}
	return item, nil
}

func stringList(ss []string) *types.AttributeValueMemberL {
	l := make([]types.AttributeValue, len(ss))
	for i, s := range ss {
		l[i] = &types.AttributeValueMemberS{Value: s}
	}
	return &types.AttributeValueMemberL{Value: l}
}

func unmarshalACList(av map[string]types.AttributeValue) (*algoitny.ACList, error) {
	l := &algoitny.ACList{Version: int64(intAttr(av, attrVersion))}
	if t, err := time.Parse(timeLayout, stringAttr(av, "updated_at")); err == nil {
		l.UpdatedAt = t
	}
	var times []int64
	recorded := false
	switch v := av[attrACProblems].(type) {
	case *types.AttributeValueMemberL:
		l.ProblemIDs = make([]string, 0, len(v.Value))
		for _, e := range v.Value {
			if s, ok := e.(*types.AttributeValueMemberS); ok {
				l.ProblemIDs = append(l.ProblemIDs, s.Value)
			}
		}
		if t, ok := av[attrACFirstAC].(*types.AttributeValueMemberL); ok {
			recorded = true
			times = make([]int64, 0, len(t.Value))
			for _, e := range t.Value {
				n, _ := e.(*types.AttributeValueMemberN)
				if n == nil {
					recorded = false
					break
				}
				s, err := strconv.ParseInt(n.Value, 10, 64)
				if err != nil {
					recorded = false
					break
				}
				times = append(times, s)
			}
		}
	default:
		if b, ok := av[attrACProblemsGz].(*types.AttributeValueMemberB); ok {
			ids, err := gunzipLines(b.Value)
			if err != nil {
				return nil, err
			}
			l.ProblemIDs = ids
		}
		if b, ok := av[attrACFirstACGz].(*types.AttributeValueMemberB); ok {
			lines, err := gunzipLines(b.Value)
			if err != nil {
				return nil, err
			}
			recorded = true
			times = make([]int64, len(lines))
			for i, line := range lines {
				s, err := strconv.ParseInt(line, 10, 64)
				if err != nil {
					recorded = false
					break
				}
				times[i] = s
			}
		}
	}
	// Times that do not match the ids (a damaged item) count as none: the
	// next sync reads the history again and rewrites them.
	if recorded && len(times) == len(l.ProblemIDs) {
		l.FirstAC, l.TimesRecorded = times, true
	}
	return l, nil
}

// listBytes is what DynamoDB counts for a list of strings: 3 bytes, plus
// each string's length and one byte per element.
func listBytes(ids []string) int {
	n := 3
	for _, id := range ids {
		n += len(id) + 1
	}
	return n
}

// numberListBytes is what DynamoDB counts for a list of numbers: 3 bytes,
// plus one byte per element and about one byte per two digits plus one.
func numberListBytes(ns []int64) int {
	n := 3
	for _, v := range ns {
		n += 1 + (len(itoa(v))+1)/2 + 1
	}
	return n
}

func gzipLines(ids []string) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level never fails
	if _, err := io.WriteString(zw, strings.Join(ids, "\n")); err != nil {
		return nil, algoitny.Internal(err, "compress AC list")
	}
	if err := zw.Close(); err != nil {
		return nil, algoitny.Internal(err, "compress AC list")
	}
	return buf.Bytes(), nil
}

func gunzipLines(b []byte) ([]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, algoitny.Internal(err, "decode AC list")
	}
	raw, err := io.ReadAll(io.LimitReader(zr, acMaxDecodedBytes+1))
	if err != nil || len(raw) > acMaxDecodedBytes {
		return nil, algoitny.Internal(err, "decode AC list")
	}
	if len(raw) == 0 {
		return []string{}, nil
	}
	return strings.Split(string(raw), "\n"), nil
}

func marshalADTContest(c algoitny.ADTContest) (map[string]types.AttributeValue, error) {
	start := c.Start.Unix()
	av, err := attributevalue.MarshalMap(adtContestItem{
		PK: adtContestPK(adtMonth(c.Start)), SK: adtContestSK(start, int(c.Difficulty)), EntityType: entityADTContest,
		ContestID: c.ID, LastFetchedSubmissionID: c.LastFetchedSubmissionID,
		StartEpochSecond: start, DurationSecond: int64(c.Duration / time.Second), Title: c.Title,
		DifficultyOrder: int(c.Difficulty), Problems: adtProblemItems(c.Problems),
	})
	if err != nil {
		return nil, algoitny.Internal(err, "encode ADT contest")
	}
	return av, nil
}

func unmarshalADTContest(av map[string]types.AttributeValue) (algoitny.ADTContest, error) {
	var it adtContestItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return algoitny.ADTContest{}, algoitny.Internal(err, "decode ADT contest")
	}
	return algoitny.ADTContest{
		ID: it.ContestID, Difficulty: algoitny.ADTDifficulty(it.DifficultyOrder),
		Start: time.Unix(it.StartEpochSecond, 0).UTC(), Duration: time.Duration(it.DurationSecond) * time.Second,
		Title: it.Title, LastFetchedSubmissionID: it.LastFetchedSubmissionID,
		Problems: adtProblems(it.Problems),
	}, nil
}

// LinkAtCoder links userID to handle (the Store of internal/atcoder). A new link starts
// with an empty cursor; the old handle's AC list is deleted in the same
// transaction. It returns ECONFLICT when a concurrent link won.
func (db *DB) LinkAtCoder(ctx context.Context, userID, handle string) (*algoitny.AtCoderLink, bool, error) {
	cur, err := db.getItem(ctx, db.tables.Main, linkKey(userID))
	if err != nil {
		return nil, false, err
	}
	var old *algoitny.AtCoderLink
	if cur != nil {
		if old, err = unmarshalLink(cur); err != nil {
			return nil, false, err
		}
		if strings.EqualFold(old.Handle, handle) {
			return old, false, nil
		}
	}
	link := &algoitny.AtCoderLink{UserID: userID, Handle: handle, LinkID: uuid.NewString(), LinkedAt: db.now().UTC()}
	av, err := marshalLink(link)
	if err != nil {
		return nil, false, err
	}
	put := &types.Put{TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if old != nil {
		put.ConditionExpression = aws.String("link_id = :old")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":old": &types.AttributeValueMemberS{Value: old.LinkID}}
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: put},
		{Delete: &types.Delete{TableName: aws.String(db.tables.Main), Key: acKey(userID).av()}},
	}})
	if conditionFailedAt(err, 0) {
		return nil, false, algoitny.Errorf(algoitny.ECONFLICT, "the AtCoder link was changed concurrently; retry")
	}
	if err != nil {
		return nil, false, translate(err, "link AtCoder account")
	}
	return link, true, nil
}

// UnlinkAtCoder deletes the link and the AC list together. Account deletion
// must call it too: the items live in USER_AC#{user_id}, not in USER#.
// Unlinking an account that is not linked succeeds.
func (db *DB) UnlinkAtCoder(ctx context.Context, userID string) error {
	_, err := db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(db.tables.Main), Key: linkKey(userID).av()}},
		{Delete: &types.Delete{TableName: aws.String(db.tables.Main), Key: acKey(userID).av()}},
	}})
	return translate(err, "unlink AtCoder account")
}

// GetAtCoderLink returns a user's link, or ENOTFOUND.
func (db *DB) GetAtCoderLink(ctx context.Context, userID string) (*algoitny.AtCoderLink, error) {
	return getOne(ctx, db, db.tables.Main, linkKey(userID), unmarshalLink, "no AtCoder account is linked")
}

// GetAtCoderState reads the link and the AC list with one strongly
// consistent Query of the user's partition. It returns ENOTFOUND when no
// account is linked.
func (db *DB) GetAtCoderState(ctx context.Context, userID string) (*algoitny.AtCoderLink, *algoitny.ACList, error) {
	items, err := db.all(ctx, &query{list: "atcoderState", table: db.tables.Main, pk: atcoderUserPK(userID), forward: true})
	if err != nil {
		return nil, nil, err
	}
	var link *algoitny.AtCoderLink
	ac := &algoitny.ACList{}
	for _, it := range items {
		switch stringAttr(it, attrSK) {
		case skAtCoderLink:
			if link, err = unmarshalLink(it); err != nil {
				return nil, nil, err
			}
		case skAtCoderAC:
			if ac, err = unmarshalACList(it); err != nil {
				return nil, nil, err
			}
		}
	}
	if link == nil {
		return nil, nil, algoitny.Errorf(algoitny.ENOTFOUND, "no AtCoder account is linked")
	}
	return link, ac, nil
}

// GetACList reads one user's AC list with exactly one GetItem; an empty list
// (Version 0) when there is none.
func (db *DB) GetACList(ctx context.Context, userID string) (*algoitny.ACList, error) {
	av, err := db.getItem(ctx, db.tables.Main, acKey(userID))
	if err != nil {
		return nil, err
	}
	if av == nil {
		return &algoitny.ACList{}, nil
	}
	return unmarshalACList(av)
}

// GetACLists reads many users' AC lists with BatchGetItem, 100 keys a call,
// retrying unprocessed keys with backoff (seed 004 pattern 2). Users without
// a list are absent from the result.
func (db *DB) GetACLists(ctx context.Context, userIDs []string) (map[string]*algoitny.ACList, error) {
	keys := make([]itemKey, len(userIDs))
	for i, id := range userIDs {
		keys[i] = acKey(id)
	}
	found, err := db.batchGet(ctx, db.tables.Main, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*algoitny.ACList, len(found))
	for _, id := range userIDs {
		av, ok := found[acKey(id)]
		if !ok {
			continue
		}
		l, err := unmarshalACList(av)
		if err != nil {
			return nil, err
		}
		out[id] = l
	}
	return out, nil
}

// CommitAtCoderSync stores one page of sync progress: the link's cursor and
// version and, when it changed, the AC list, in one transaction conditional
// on both versions read. It returns ECONFLICT when either changed or the
// link was replaced or removed, and EINTERNAL when the list is too large to
// store.
func (db *DB) CommitAtCoderSync(ctx context.Context, c algoitny.AtCoderSyncCommit) error {
	at := c.At.UTC()
	upd := expression.Set(expression.Name(attrVersion), expression.Value(c.LinkVersion+1)).
		Set(expression.Name("cursor_second"), expression.Value(c.Cursor.Second))
	if len(c.Cursor.SeenIDs) > 0 {
		upd = upd.Set(expression.Name("cursor_ids"), expression.Value(c.Cursor.SeenIDs))
	} else {
		upd = upd.Remove(expression.Name("cursor_ids"))
	}
	if c.Finished {
		upd = upd.Set(expression.Name("last_synced_at"), expression.Value(at)).
			Set(expression.Name("last_attempt_at"), expression.Value(at)).
			Set(expression.Name(attrGSI1SK), expression.Value(gsiAtCoderLinkSK(at, c.UserID))).
			Remove(expression.Name("last_error"))
	}
	cond := expression.Name("link_id").Equal(expression.Value(c.LinkID)).
		And(expression.Name(attrVersion).Equal(expression.Value(c.LinkVersion)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return algoitny.Internal(err, "build sync commit")
	}
	linkUpdate := &types.Update{
		TableName: aws.String(db.tables.Main), Key: linkKey(c.UserID).av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}
	if c.AC == nil {
		_, err := db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: linkUpdate.TableName, Key: linkUpdate.Key,
			UpdateExpression: linkUpdate.UpdateExpression, ConditionExpression: linkUpdate.ConditionExpression,
			ExpressionAttributeNames: linkUpdate.ExpressionAttributeNames, ExpressionAttributeValues: linkUpdate.ExpressionAttributeValues,
		})
		return translate(err, "commit AtCoder sync")
	}
	acItem, err := marshalACList(c.UserID, c.AC, c.AC.Version+1, at)
	if err != nil {
		return err
	}
	put := &types.Put{TableName: aws.String(db.tables.Main), Item: acItem, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if c.AC.Version > 0 {
		put.ConditionExpression = aws.String("version = :v")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: itoa(c.AC.Version)}}
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: linkUpdate}, {Put: put},
	}})
	return translate(err, "commit AtCoder sync")
}

// RecordAtCoderSyncFailure notes a failed sync on the link (last_error, and
// last_attempt_at with the sweep order when f.Attempted). It returns
// ECONFLICT when the link is gone or was replaced.
func (db *DB) RecordAtCoderSyncFailure(ctx context.Context, f algoitny.AtCoderSyncFailure) error {
	at := f.At.UTC()
	upd := expression.Set(expression.Name("last_error"), expression.Value(f.Message))
	if f.Attempted {
		upd = upd.Set(expression.Name("last_attempt_at"), expression.Value(at)).
			Set(expression.Name(attrGSI1SK), expression.Value(gsiAtCoderLinkSK(at, f.UserID)))
	}
	cond := expression.Name("link_id").Equal(expression.Value(f.LinkID))
	_, err := db.update(ctx, db.tables.Main, linkKey(f.UserID), upd, &cond)
	return translate(err, "record AtCoder sync failure")
}

// ListAtCoderLinksDue pages through the links last attempted before
// attemptedBefore (never attempted first) on GSI1, oldest attempt first. The
// index is eventually consistent: a link may show an older version, which
// the conditional commit catches. It returns EINVALID for a bad page request.
func (db *DB) ListAtCoderLinksDue(ctx context.Context, attemptedBefore time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.AtCoderLink], error) {
	p, err := db.page(ctx, &query{
		list: "atcoderLinksDue", table: db.tables.Main, index: indexGSI1, pk: gsiAtCoderLinked,
		skBefore: gsiAtCoderLinkSK(attemptedBefore, ""), forward: true,
	}, page)
	if err != nil {
		return algoitny.Page[*algoitny.AtCoderLink]{}, err
	}
	return convertPage(p, unmarshalLink)
}

// ListADTContests returns the ADT contests of month (YYYYMM, UTC) in
// chronological order (seed 004 pattern 3: one Query, ascending sort key).
func (db *DB) ListADTContests(ctx context.Context, month string) ([]algoitny.ADTContest, error) {
	items, err := db.all(ctx, &query{list: "adtContests", table: db.tables.Main, pk: adtContestPK(month), forward: true})
	if err != nil {
		return nil, err
	}
	out := make([]algoitny.ADTContest, 0, len(items))
	for _, it := range items {
		c, err := unmarshalADTContest(it)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// PutADTContests writes contest records with BatchWriteItem, 25 a call,
// retrying unprocessed items with backoff (seed 004 pattern 4). A record
// with the same key is replaced.
func (db *DB) PutADTContests(ctx context.Context, contests []algoitny.ADTContest) error {
	writes := make([]types.WriteRequest, 0, len(contests))
	for _, c := range contests {
		av, err := marshalADTContest(c)
		if err != nil {
			return err
		}
		writes = append(writes, putRequest(av))
	}
	return db.batchWrite(ctx, db.tables.Main, writes)
}

// AdvanceADTContest raises the record's last_fetched_submission_id to
// submissionID with a conditional update; false when the record is missing
// or already at or past it.
func (db *DB) AdvanceADTContest(ctx context.Context, c algoitny.ADTContest, submissionID int64) (bool, error) {
	cond := expression.Name("last_fetched_submission_id").LessThan(expression.Value(submissionID))
	k := itemKey{adtContestPK(adtMonth(c.Start)), adtContestSK(c.Start.Unix(), int(c.Difficulty))}
	_, err := db.update(ctx, db.tables.Main, k, expression.Set(expression.Name("last_fetched_submission_id"), expression.Value(submissionID)), &cond)
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, translate(err, "advance ADT contest")
	}
	return true, nil
}

// SetADTContestProblems replaces the problems of contest c's record (c.ID
// at c.Start and c.Difficulty) with one conditional UpdateItem; false (and
// no change) when the record is missing.
func (db *DB) SetADTContestProblems(ctx context.Context, c algoitny.ADTContest, problems []algoitny.ADTContestProblem) (bool, error) {
	items := adtProblemItems(problems)
	if items == nil {
		items = []adtProblemItem{}
	}
	cond := expression.Name("contest_id").Equal(expression.Value(c.ID))
	k := itemKey{adtContestPK(adtMonth(c.Start)), adtContestSK(c.Start.Unix(), int(c.Difficulty))}
	_, err := db.update(ctx, db.tables.Main, k, expression.Set(expression.Name("problems"), expression.Value(items)), &cond)
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, translate(err, "store ADT contest problems")
	}
	return true, nil
}

// ACItemInfo describes how a user's AC item is stored.
type ACItemInfo struct {
	// Bytes is the item's size as DynamoDB counts it against the 400 KB limit.
	Bytes int
	// Encoding is "list" (the seed's ac_problems list of strings) or "gzip"
	// (ac_problems_gz); "" when the user has no AC item.
	Encoding string
}

// ACItemInfo returns the stored size and encoding of a user's AC item, for
// monitoring and for the tests that keep it well under the item limit.
func (db *DB) ACItemInfo(ctx context.Context, userID string) (ACItemInfo, error) {
	av, err := db.getItem(ctx, db.tables.Main, acKey(userID))
	if err != nil || av == nil {
		return ACItemInfo{}, err
	}
	info := ACItemInfo{Bytes: atcoderItemSize(av), Encoding: "list"}
	if _, ok := av[attrACProblemsGz]; ok {
		info.Encoding = "gzip"
	}
	return info, nil
}

// atcoderItemSize follows DynamoDB's item size rules: attribute names plus values;
// numbers about one byte per two digits plus one; lists and maps 3 bytes
// plus one per element.
func atcoderItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + atcoderValueSize(v)
	}
	return n
}

func atcoderValueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return (len(strings.TrimLeft(v.Value, "-0"))+1)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + atcoderValueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + atcoderValueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += (len(s)+1)/2 + 1
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	}
	return 0
}
