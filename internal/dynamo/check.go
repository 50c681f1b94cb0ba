package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

// checkItem is a URL check (seed 002's CHECK item, attribute names as in the
// seed: userid, url, checkType, delayMs, status, attributes, createdAt,
// updatedAt, lastExecutedAt, lastResult). The rest is the scheduler's:
// nextRunAt (ms; only while ACTIVE), the run lease (leaseId, leaseUntil in
// ms), the failure count, the result counter and a version for optimistic
// concurrency. GSI1 is the User-Check index, GSI2 the Type-Status index.
type checkItem struct {
	PK, SK              string
	EntityType          string
	ID                  string          `dynamodbav:"id"`
	UserID              string          `dynamodbav:"userid"`
	URL                 string          `dynamodbav:"url"`
	CheckType           string          `dynamodbav:"checkType"`
	DelayMs             int             `dynamodbav:"delayMs"`
	Status              string          `dynamodbav:"status"`
	Attributes          checkAttributes `dynamodbav:"attributes"`
	Maintenance         []windowAttrs   `dynamodbav:"maintenance,omitempty"`
	CreatedAt           time.Time       `dynamodbav:"createdAt"`
	UpdatedAt           time.Time       `dynamodbav:"updatedAt"`
	LastExecutedAt      *time.Time      `dynamodbav:"lastExecutedAt,omitempty"`
	LastResult          *resultAttrs    `dynamodbav:"lastResult,omitempty"`
	State               string          `dynamodbav:"state,omitempty"`
	StateChangedAt      *time.Time      `dynamodbav:"stateChangedAt,omitempty"`
	Silenced            *silencedAttrs  `dynamodbav:"silenced,omitempty"`
	FailureReason       string          `dynamodbav:"failureReason,omitempty"`
	ConsecutiveFailures int             `dynamodbav:"consecutiveFailures"`
	NextRunAt           int64           `dynamodbav:"nextRunAt,omitempty"`
	Runs                int64           `dynamodbav:"runs"`
	Version             int64           `dynamodbav:"version"`
	LeaseID             string          `dynamodbav:"leaseId,omitempty"`
	LeaseUntil          int64           `dynamodbav:"leaseUntil,omitempty"`
	GSI1PK, GSI1SK      string
	GSI2PK, GSI2SK      string
}

// checkAttributes is seed 002's type-specific attributes map.
type checkAttributes struct {
	Keyword string `dynamodbav:"keyword,omitempty"`
	Invert  bool   `dynamodbav:"invert,omitempty"`
}

// silencedAttrs is a check's change of state not yet notified
// (algoitny.Check.Silenced).
type silencedAttrs struct {
	From   string    `dynamodbav:"from"`
	To     string    `dynamodbav:"to"`
	Reason string    `dynamodbav:"reason"`
	At     time.Time `dynamodbav:"at"`
}

func toSilencedAttrs(c *algoitny.CheckStateChange) *silencedAttrs {
	if c == nil {
		return nil
	}
	return &silencedAttrs{From: string(c.From), To: string(c.To), Reason: c.Reason, At: c.At.UTC()}
}

func (a *silencedAttrs) change() *algoitny.CheckStateChange {
	if a == nil {
		return nil
	}
	return &algoitny.CheckStateChange{From: algoitny.CheckState(a.From), To: algoitny.CheckState(a.To), Reason: a.Reason, At: a.At, InMaintenance: true}
}

// windowAttrs is one maintenance window (ms timestamps).
type windowAttrs struct {
	Start int64 `dynamodbav:"start"`
	End   int64 `dynamodbav:"end"`
}

func toWindowAttrs(ws []algoitny.MaintenanceWindow) []windowAttrs {
	if len(ws) == 0 {
		return nil
	}
	out := make([]windowAttrs, len(ws))
	for i, w := range ws {
		out[i] = windowAttrs{Start: w.Start.UnixMilli(), End: w.End.UnixMilli()}
	}
	return out
}

func fromWindowAttrs(ws []windowAttrs) []algoitny.MaintenanceWindow {
	if len(ws) == 0 {
		return nil
	}
	out := make([]algoitny.MaintenanceWindow, len(ws))
	for i, w := range ws {
		out[i] = algoitny.MaintenanceWindow{Start: time.UnixMilli(w.Start).UTC(), End: time.UnixMilli(w.End).UTC()}
	}
	return out
}

// resultAttrs is seed 002's lastResult map; result items carry the same
// attributes.
type resultAttrs struct {
	Seq          int64      `dynamodbav:"seq"`
	Status       string     `dynamodbav:"status"`
	ResponseTime int        `dynamodbav:"responseTime"`
	Attempts     int        `dynamodbav:"attempts,omitempty"`
	HTTPStatus   int        `dynamodbav:"httpStatus,omitempty"`
	KeywordFound *bool      `dynamodbav:"keywordFound,omitempty"`
	CertNotAfter *time.Time `dynamodbav:"certNotAfter,omitempty"`
	CertWarning  bool       `dynamodbav:"certWarning,omitempty"`
	Error        string     `dynamodbav:"error,omitempty"`
	CheckedAt    time.Time  `dynamodbav:"checkedAt"`
}

// checkResultItem is one run's result in its check's partition, expiring
// after algoitny.CheckResultRetention.
type checkResultItem struct {
	PK, SK     string
	EntityType string
	CheckID    string `dynamodbav:"checkId"`
	resultAttrs
	TTL int64
}

func toResultAttrs(r *algoitny.CheckResult) *resultAttrs {
	if r == nil {
		return nil
	}
	return &resultAttrs{
		Seq: r.Seq, Status: string(r.Status), ResponseTime: r.ResponseTimeMs, Attempts: r.Attempts, HTTPStatus: r.HTTPStatus,
		KeywordFound: r.KeywordFound, Error: r.Error, CheckedAt: r.CheckedAt.UTC(),
		CertNotAfter: r.CertNotAfter, CertWarning: r.CertExpiresSoon,
	}
}

func (a *resultAttrs) result(checkID string) *algoitny.CheckResult {
	if a == nil {
		return nil
	}
	return &algoitny.CheckResult{
		CheckID: checkID, Seq: a.Seq, Status: algoitny.CheckResultStatus(a.Status), ResponseTimeMs: a.ResponseTime, Attempts: max(a.Attempts, 1),
		HTTPStatus: a.HTTPStatus, KeywordFound: a.KeywordFound, Error: a.Error, CheckedAt: a.CheckedAt,
		CertNotAfter: a.CertNotAfter, CertExpiresSoon: a.CertWarning,
	}
}

// msTime is the millisecond timestamp of t; 0 for nil.
func msTime(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}

func marshalCheck(c *algoitny.Check) (map[string]types.AttributeValue, error) {
	it := checkItem{
		PK: checkPK(c.ID), SK: skMetadata, EntityType: "Check",
		ID: c.ID, UserID: c.UserID, URL: c.URL, CheckType: string(c.Type), DelayMs: c.DelayMs, Status: string(c.Status),
		Attributes: checkAttributes{Keyword: c.Keyword, Invert: c.Invert}, Maintenance: toWindowAttrs(c.Maintenance),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, LastExecutedAt: c.LastExecutedAt, LastResult: toResultAttrs(c.LastResult),
		FailureReason: c.FailureReason, ConsecutiveFailures: c.ConsecutiveFailures, NextRunAt: msTime(c.NextRunAt),
		Runs: c.Runs, Version: c.Version, State: string(c.State), StateChangedAt: c.StateChangedAt, Silenced: toSilencedAttrs(c.Silenced),
		GSI1PK: gsiCheckUser(c.UserID), GSI1SK: gsiCheckUserSK(c.CreatedAt, c.ID),
		GSI2PK: gsiCheckType(string(c.Type)), GSI2SK: gsiCheckStatusSK(string(c.Status), c.CreatedAt, c.ID),
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode check")
	}
	return av, nil
}

func unmarshalCheck(av map[string]types.AttributeValue) (*algoitny.Check, error) {
	var it checkItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode check")
	}
	c := &algoitny.Check{
		ID: it.ID, UserID: it.UserID, URL: it.URL, Type: algoitny.CheckType(it.CheckType),
		Keyword: it.Attributes.Keyword, Invert: it.Attributes.Invert, DelayMs: it.DelayMs, Status: algoitny.CheckStatus(it.Status),
		FailureReason: it.FailureReason, ConsecutiveFailures: it.ConsecutiveFailures,
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, LastExecutedAt: it.LastExecutedAt,
		LastResult: it.LastResult.result(it.ID), Runs: it.Runs, Version: it.Version,
		State: algoitny.CheckState(it.State), StateChangedAt: it.StateChangedAt, Maintenance: fromWindowAttrs(it.Maintenance),
		Silenced: it.Silenced.change(),
	}
	if c.State == "" {
		c.State = algoitny.CheckStateUnknown // stored before states existed
	}
	if it.NextRunAt != 0 {
		t := time.UnixMilli(it.NextRunAt).UTC()
		c.NextRunAt = &t
	}
	return c, nil
}

func unmarshalCheckResult(av map[string]types.AttributeValue) (*algoitny.CheckResult, error) {
	var it checkResultItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode check result")
	}
	return it.resultAttrs.result(it.CheckID), nil
}

func checkNotFound() error { return algoitny.Errorf(algoitny.ENOTFOUND, "check not found") }

// checkKey returns the key of check id; ENOTFOUND for anything that is not a
// check id, so that garbage never reaches DynamoDB.
func checkKey(id string) (itemKey, error) {
	if _, err := uuid.Parse(id); err != nil {
		return itemKey{}, checkNotFound()
	}
	return itemKey{checkPK(id), skMetadata}, nil
}

// CreateCheck stores a new check: its id, CreatedAt, UpdatedAt and Version
// are assigned here, and an ACTIVE check without NextRunAt is due at once.
// The owner's check counter is raised in the same transaction with a
// conditional ADD, so that maxChecks (-1 = unlimited) holds exactly under
// concurrency. It returns ERATELIMITED (with the limit and the count) when
// the owner has maxChecks checks already.
func (db *DB) CreateCheck(ctx context.Context, c *algoitny.Check, maxChecks int) error {
	c.ID, c.CreatedAt = newID(db.now())
	c.UpdatedAt, c.Version, c.Runs = c.CreatedAt, 1, 0
	if c.Status == "" {
		c.Status = algoitny.CheckActive
	}
	if c.State == "" {
		c.State = algoitny.CheckStateUnknown
	}
	c.NextRunAt = normalizeNextRun(c, c.CreatedAt)
	av, err := marshalCheck(c)
	if err != nil {
		return err
	}
	limited := func() error {
		used, err := db.CountUserChecks(ctx, c.UserID)
		if err != nil {
			return err
		}
		return &algoitny.Error{Code: algoitny.ERATELIMITED, Message: "your plan's check limit is reached",
			RateLimit: &algoitny.RateLimit{Limit: maxChecks, Used: used}}
	}
	counter, ok := db.counterAdd(itemKey{userPK(c.UserID), skUserCheckCount}, "Count", 1, maxChecks, nil)
	if !ok {
		return limited()
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		counter,
		{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	if conditionFailedAt(err, 0) {
		return limited()
	}
	return translate(err, "create check")
}

// normalizeNextRun returns the NextRunAt to store: millisecond precision
// (the scheduler compares it for equality), nil unless ACTIVE, and def for
// an ACTIVE check without one.
func normalizeNextRun(c *algoitny.Check, def time.Time) *time.Time {
	if c.Status != algoitny.CheckActive {
		return nil
	}
	t := def
	if c.NextRunAt != nil {
		t = *c.NextRunAt
	}
	t = time.UnixMilli(t.UnixMilli()).UTC()
	return &t
}

// GetCheck returns a check by id (strongly consistent), or ENOTFOUND.
func (db *DB) GetCheck(ctx context.Context, id string) (*algoitny.Check, error) {
	k, err := checkKey(id)
	if err != nil {
		return nil, err
	}
	av, err := db.getItem(ctx, db.tables.Main, k)
	if err != nil {
		return nil, err
	}
	if av == nil {
		return nil, checkNotFound()
	}
	return unmarshalCheck(av)
}

// UpdateCheck stores what a user may change of c — url, type, attributes,
// delay, maintenance windows, status, failure reason and count, state,
// NextRunAt — if the stored version
// is still c.Version, and returns the new state (version + 1). Run fields
// (results, lease) are left alone; a run that was in progress cannot record
// its result afterwards. It returns ENOTFOUND when the check is gone and
// ECONFLICT when it changed since it was read.
func (db *DB) UpdateCheck(ctx context.Context, c *algoitny.Check) (*algoitny.Check, error) {
	k, err := checkKey(c.ID)
	if err != nil {
		return nil, err
	}
	attrs, err := attributevalue.Marshal(checkAttributes{Keyword: c.Keyword, Invert: c.Invert})
	if err != nil {
		return nil, algoitny.Internal(err, "encode check attributes")
	}
	upd := expression.Set(expression.Name("url"), expression.Value(c.URL)).
		Set(expression.Name("checkType"), expression.Value(string(c.Type))).
		Set(expression.Name("attributes"), expression.Value(attrs)).
		Set(expression.Name("delayMs"), expression.Value(c.DelayMs)).
		Set(expression.Name("status"), expression.Value(string(c.Status))).
		Set(expression.Name("consecutiveFailures"), expression.Value(c.ConsecutiveFailures)).
		Set(expression.Name("updatedAt"), expression.Value(db.now().UTC())).
		Set(expression.Name("version"), expression.Value(c.Version+1)).
		Set(expression.Name(attrGSI2PK), expression.Value(gsiCheckType(string(c.Type)))).
		Set(expression.Name(attrGSI2SK), expression.Value(gsiCheckStatusSK(string(c.Status), c.CreatedAt, c.ID)))
	upd = setOrRemove(upd, "failureReason", c.FailureReason, c.FailureReason != "")
	upd = setState(upd, c)
	if ws := toWindowAttrs(c.Maintenance); ws != nil {
		av, err := attributevalue.Marshal(ws)
		if err != nil {
			return nil, algoitny.Internal(err, "encode maintenance windows")
		}
		upd = upd.Set(expression.Name("maintenance"), expression.Value(av))
	} else {
		upd = upd.Remove(expression.Name("maintenance"))
	}
	next := normalizeNextRun(c, db.now())
	upd = setOrRemove(upd, "nextRunAt", msTime(next), next != nil)
	cond := expression.AttributeExists(expression.Name(attrPK)).And(expression.Name("version").Equal(expression.Value(c.Version)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return nil, algoitny.Internal(err, "build check update")
	}
	out, err := db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.tables.Main), Key: k.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && len(ccf.Item) == 0 {
			return nil, checkNotFound()
		}
		return nil, translate(err, "update check")
	}
	return unmarshalCheck(out.Attributes)
}

// setState sets the check's state and when it changed (UNKNOWN is stored
// as absent, as in items written before states existed).
func setState(upd expression.UpdateBuilder, c *algoitny.Check) expression.UpdateBuilder {
	known := c.State != "" && c.State != algoitny.CheckStateUnknown
	upd = setOrRemove(upd, "state", string(c.State), known)
	var changed time.Time
	if c.StateChangedAt != nil {
		changed = c.StateChangedAt.UTC()
	}
	return setOrRemove(upd, "stateChangedAt", changed, c.StateChangedAt != nil)
}

// setOrRemove sets attr to v when set is true and removes it otherwise.
func setOrRemove(upd expression.UpdateBuilder, attr string, v any, set bool) expression.UpdateBuilder {
	if set {
		return upd.Set(expression.Name(attr), expression.Value(v))
	}
	return upd.Remove(expression.Name(attr))
}

// DeleteCheck removes a check and lowers its owner's counter in one
// transaction, then deletes its results and hourly statistics (a crash in
// between leaves items that expire with their TTL). It returns the deleted check,
// or ENOTFOUND.
func (db *DB) DeleteCheck(ctx context.Context, id string) (*algoitny.Check, error) {
	c, err := db.GetCheck(ctx, id)
	if err != nil {
		return nil, err
	}
	counter, _ := db.counterAdd(itemKey{userPK(c.UserID), skUserCheckCount}, "Count", -1, algoitny.Unlimited, nil)
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: aws.String(db.tables.Main), Key: itemKey{checkPK(id), skMetadata}.av(),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		counter,
	}})
	if conditionFailedAt(err, 0) {
		return nil, checkNotFound()
	}
	if err != nil {
		return nil, translate(err, "delete check")
	}
	var rest []map[string]types.AttributeValue
	for _, prefix := range []string{skPrefixCheckResult, skPrefixCheckStats} {
		items, err := db.all(ctx, &query{list: "checkItems", table: db.tables.Main, pk: checkPK(id), skPrefix: prefix})
		if err != nil {
			return c, err
		}
		rest = append(rest, items...)
	}
	return c, db.deleteItems(ctx, rest)
}

// DeleteUserChecks deletes every check of a user with its results (account
// deletion) and returns how many it deleted. It reads the user's checks from
// the User-Check index, which is eventually consistent: call it after the
// user can no longer create checks.
func (db *DB) DeleteUserChecks(ctx context.Context, userID string) (int, error) {
	n := 0
	for {
		// Always the first page: deleted checks leave the index.
		page, err := db.ListUserChecks(ctx, userID, algoitny.PageRequest{First: algoitny.MaxPageSize})
		if err != nil {
			return n, err
		}
		deleted := 0
		for _, c := range page.Items {
			if _, err := db.DeleteCheck(ctx, c.ID); err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
				return n, err
			}
			deleted++
		}
		n += deleted
		if !page.HasNextPage || deleted == 0 {
			return n, nil
		}
	}
}

// ListUserChecks pages through a user's checks, newest first (seed 002's
// User-Check index; eventually consistent). It returns EINVALID for a bad
// page size or cursor.
func (db *DB) ListUserChecks(ctx context.Context, userID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	p, err := db.page(ctx, &query{list: "userChecks", table: db.tables.Main, index: indexGSI1, pk: gsiCheckUser(userID)}, page)
	if err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	return convertPage(p, unmarshalCheck)
}

// ListChecks pages through everyone's checks of f.Type, of f.Status if set
// (seed 002's Type-Status index), newest first within a status. It returns
// EINVALID for a bad page size or cursor.
func (db *DB) ListChecks(ctx context.Context, f algoitny.CheckFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	q := &query{list: "checksByType", table: db.tables.Main, index: indexGSI2, pk: gsiCheckType(string(f.Type))}
	if f.Status != nil {
		q.list, q.skPrefix = "checksByTypeStatus", gsiCheckStatusPrefix(string(*f.Status))
	}
	p, err := db.page(ctx, q, page)
	if err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	return convertPage(p, unmarshalCheck)
}

// ListOverdueChecks pages through the ACTIVE checks of type t whose next run
// was planned before `before` (the scheduler's sweep, from the Type-Status
// index; the time is a filter, so a page may hold fewer items than asked).
// It returns EINVALID for a bad page size or cursor.
func (db *DB) ListOverdueChecks(ctx context.Context, t algoitny.CheckType, before time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	overdue := expression.Name("nextRunAt").LessThan(expression.Value(before.UnixMilli()))
	p, err := db.page(ctx, &query{
		list: "overdueChecks", table: db.tables.Main, index: indexGSI2, pk: gsiCheckType(string(t)),
		skPrefix: gsiCheckStatusPrefix(string(algoitny.CheckActive)), filter: &overdue, forward: true,
	}, page)
	if err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	return convertPage(p, unmarshalCheck)
}

// CountUserChecks returns how many checks a user has (the counter that
// gates MaxChecks). It returns EINTERNAL only.
func (db *DB) CountUserChecks(ctx context.Context, userID string) (int, error) {
	av, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(userID), skUserCheckCount})
	if err != nil || av == nil {
		return 0, err
	}
	return intAttr(av, "Count"), nil
}

// ClaimCheckRun takes the run lease of check id for leaseFor, if the check
// is ACTIVE, its next run is planned at `planned` (to the millisecond) and
// no other run holds an unexpired lease; it returns the claimed state and
// the lease id. Two runs of one check can therefore not overlap, and a
// wake-up for a schedule that has moved on claims nothing. It returns
// ECONFLICT when the check cannot be claimed (or is gone).
func (db *DB) ClaimCheckRun(ctx context.Context, id string, planned time.Time, leaseFor time.Duration) (*algoitny.Check, string, error) {
	k, err := checkKey(id)
	if err != nil {
		return nil, "", err
	}
	now := db.now()
	lease := uuid.NewString()
	upd := expression.Set(expression.Name("leaseId"), expression.Value(lease)).
		Set(expression.Name("leaseUntil"), expression.Value(now.Add(leaseFor).UnixMilli()))
	cond := expression.AttributeExists(expression.Name(attrPK)).
		And(expression.Name("status").Equal(expression.Value(string(algoitny.CheckActive)))).
		And(expression.Name("nextRunAt").Equal(expression.Value(planned.UnixMilli()))).
		And(expression.Or(
			expression.AttributeNotExists(expression.Name("leaseUntil")),
			expression.Name("leaseUntil").LessThan(expression.Value(now.UnixMilli()))))
	av, err := db.update(ctx, db.tables.Main, k, upd, &cond)
	if isConditionFailed(err) {
		return nil, "", algoitny.Errorf(algoitny.ECONFLICT, "the check is not due or another run holds it")
	}
	if err != nil {
		return nil, "", translate(err, "claim check run")
	}
	c, err := unmarshalCheck(av)
	return c, lease, err
}

// RecordCheckRun stores a run: the check's new state (rec.Next: last result,
// run count, failures, status, next run; the lease released) if the check
// still holds rec.LeaseID and the version it was claimed with, the result
// item (expiring after algoitny.CheckResultRetention), the result added to
// its hour's statistics (checkStatsUpdate), the deletion of the result
// that falls out of the rec.Keep most recent, and rec.Alert, if any, added
// to the notification outbox (its ID and CreatedAt assigned) — one
// transaction, so a change of state is never stored unannounced. It returns
// ECONFLICT when the check was changed, paused or deleted during the run.
func (db *DB) RecordCheckRun(ctx context.Context, rec *algoitny.CheckRunRecord) error {
	n, r := rec.Next, rec.Result
	k, err := checkKey(n.ID)
	if err != nil {
		return err
	}
	last, err := attributevalue.Marshal(toResultAttrs(r))
	if err != nil {
		return algoitny.Internal(err, "encode check result")
	}
	upd := expression.Set(expression.Name("lastResult"), expression.Value(last)).
		Set(expression.Name("lastExecutedAt"), expression.Value(r.CheckedAt.UTC())).
		Set(expression.Name("runs"), expression.Value(n.Runs)).
		Set(expression.Name("version"), expression.Value(n.Version)).
		Set(expression.Name("consecutiveFailures"), expression.Value(n.ConsecutiveFailures)).
		Set(expression.Name("status"), expression.Value(string(n.Status))).
		Set(expression.Name(attrGSI2SK), expression.Value(gsiCheckStatusSK(string(n.Status), n.CreatedAt, n.ID))).
		Remove(expression.Name("leaseId")).
		Remove(expression.Name("leaseUntil"))
	upd = setOrRemove(upd, "failureReason", n.FailureReason, n.FailureReason != "")
	upd = setState(upd, n)
	upd = setOrRemove(upd, "silenced", toSilencedAttrs(n.Silenced), n.Silenced != nil)
	next := normalizeNextRun(n, db.now())
	upd = setOrRemove(upd, "nextRunAt", msTime(next), next != nil)
	cond := expression.Name("leaseId").Equal(expression.Value(rec.LeaseID)).
		And(expression.Name("version").Equal(expression.Value(rec.Claimed.Version)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return algoitny.Internal(err, "build check run")
	}
	item, err := attributevalue.MarshalMap(checkResultItem{
		PK: checkPK(n.ID), SK: checkResultSK(r.Seq), EntityType: "CheckResult", CheckID: n.ID,
		resultAttrs: *toResultAttrs(r), TTL: r.CheckedAt.Add(algoitny.CheckResultRetention).Unix(),
	})
	if err != nil {
		return algoitny.Internal(err, "encode check result")
	}
	items := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: aws.String(db.tables.Main), Key: k.av(),
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		}},
		{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: item}},
	}
	stats, err := db.checkStatsUpdate(n.ID, r)
	if err != nil {
		return err
	}
	items = append(items, stats)
	if rec.Alert != nil {
		alert, err := db.putAlert(rec.Alert)
		if err != nil {
			return err
		}
		items = append(items, alert)
	}
	if rec.Keep > 0 && r.Seq > int64(rec.Keep) {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(db.tables.Main), Key: itemKey{checkPK(n.ID), checkResultSK(r.Seq - int64(rec.Keep))}.av(),
		}})
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		return algoitny.Errorf(algoitny.ECONFLICT, "the check changed during the run")
	}
	return translate(err, "record check run")
}

// checkStatsUpdate adds result r to its hour's statistics item (created by
// the first run of the hour): runs, UP runs, and the latency histogram bin
// of a run that got an HTTP answer (attributes h00…h16, added to
// atomically). The item expires after algoitny.CheckStatsRetention.
func (db *DB) checkStatsUpdate(id string, r *algoitny.CheckResult) (types.TransactWriteItem, error) {
	up := 0
	if r.Status == algoitny.CheckUp {
		up = 1
	}
	hour := r.CheckedAt.UTC().Truncate(time.Hour)
	upd := expression.Add(expression.Name("runs"), expression.Value(1)).
		Add(expression.Name("up"), expression.Value(up)).
		Set(expression.Name("EntityType"), expression.Value("CheckStats")).
		Set(expression.Name("hour"), expression.Value(hour)).
		Set(expression.Name(attrTTL), expression.Value(hour.Add(algoitny.CheckStatsRetention).Unix()))
	if r.HTTPStatus > 0 {
		upd = upd.Add(expression.Name(latencyAttr(algoitny.LatencyBin(r.ResponseTimeMs))), expression.Value(1))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return types.TransactWriteItem{}, algoitny.Internal(err, "build check stats")
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: itemKey{checkPK(id), checkStatsSK(hour)}.av(),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// latencyAttr names the attribute of histogram bin i.
func latencyAttr(i int) string { return fmt.Sprintf("h%02d", i) }

// ListCheckStats returns a check's hourly statistics from the hour of
// `from` to the hour of `to`, oldest first, with one Query of the key
// range (at most 744 small items for 31 days). It returns ENOTFOUND for a
// malformed id.
func (db *DB) ListCheckStats(ctx context.Context, id string, from, to time.Time) ([]*algoitny.CheckHourStats, error) {
	if _, err := checkKey(id); err != nil {
		return nil, err
	}
	items, err := db.all(ctx, &query{list: "checkStats", table: db.tables.Main, pk: checkPK(id),
		skBetween: [2]string{checkStatsSK(from), checkStatsSK(to)}, forward: true})
	if err != nil {
		return nil, err
	}
	out := make([]*algoitny.CheckHourStats, 0, len(items))
	for _, av := range items {
		var it struct {
			Hour time.Time `dynamodbav:"hour"`
			Runs int       `dynamodbav:"runs"`
			Up   int       `dynamodbav:"up"`
		}
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode check stats")
		}
		h := &algoitny.CheckHourStats{Hour: it.Hour, Runs: it.Runs, Up: it.Up, Latency: make([]int, len(algoitny.LatencyBoundsMs)+1)}
		for i := range h.Latency {
			h.Latency[i] = intAttr(av, latencyAttr(i))
		}
		out = append(out, h)
	}
	return out, nil
}

// ReleaseCheckLease gives back a run's lease if leaseID still holds it (a
// run whose result could not be recorded), so that the next run need not
// wait for it to expire. A lease held by another run, or a deleted check, is
// left alone.
func (db *DB) ReleaseCheckLease(ctx context.Context, id, leaseID string) error {
	k, err := checkKey(id)
	if err != nil {
		return nil
	}
	upd := expression.Remove(expression.Name("leaseId")).Remove(expression.Name("leaseUntil"))
	cond := expression.Name("leaseId").Equal(expression.Value(leaseID))
	_, err = db.update(ctx, db.tables.Main, k, upd, &cond)
	if isConditionFailed(err) {
		return nil
	}
	return translate(err, "release check lease")
}

// ListCheckResults returns up to limit of a check's results, newest first,
// leaving out those past their TTL that DynamoDB has not deleted yet. It
// returns ENOTFOUND for a malformed id (and no results for an unknown one).
func (db *DB) ListCheckResults(ctx context.Context, id string, limit int) ([]*algoitny.CheckResult, error) {
	if _, err := checkKey(id); err != nil {
		return nil, err
	}
	live := expression.Name(attrTTL).GreaterThan(expression.Value(db.now().Unix()))
	q := &query{list: "checkResults", table: db.tables.Main, pk: checkPK(id), skPrefix: skPrefixCheckResult, filter: &live}
	var out []*algoitny.CheckResult
	var start map[string]types.AttributeValue
	for len(out) < limit {
		items, next, err := db.fetch(ctx, q, int32(limit-len(out)), start)
		if err != nil {
			return nil, err
		}
		for _, av := range items {
			r, err := unmarshalCheckResult(av)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if len(next) == 0 {
			break
		}
		start = next
	}
	return out, nil
}
