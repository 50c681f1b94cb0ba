package dynamo

import (
	"context"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type usageItem struct {
	PK, SK     string
	EntityType string
	LogID      string
	UserID     string
	Action     string
	ProblemPK  string `dynamodbav:",omitempty"`
	HistoryID  string `dynamodbav:",omitempty"`
	JobID      string `dynamodbav:",omitempty"`
	CreatedAt  time.Time
	TTL        int64
}

func unmarshalUsage(av map[string]types.AttributeValue) (*algoitny.UsageLog, error) {
	var it usageItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode usage log")
	}
	l := &algoitny.UsageLog{
		ID: it.LogID, UserID: it.UserID, Action: algoitny.UsageAction(it.Action), HistoryID: it.HistoryID, JobID: it.JobID,
		CreatedAt: it.CreatedAt, ExpiresAt: time.Unix(it.TTL, 0).UTC(),
	}
	if it.ProblemPK != "" {
		l.Platform, l.ProblemID = parseProblemPK(it.ProblemPK)
	}
	return l, nil
}

// ConsumeQuota records one use of log.Action by log.UserID if today's count
// is below limit (-1 = unlimited), and refuses it otherwise. The counter
// increment (conditional) and the usage log are one transaction, so N
// concurrent calls against limit L admit exactly L. Quota days are UTC days
// (algoitny.UsageDay). On success log gets its id, time and expiry (90 days).
// It returns ERATELIMITED, with the limit, the count and the reset time.
//
// A use that pays for a job is charged with CreateChargedJob instead, in
// the job's own transaction: with ConsumeQuota a failure between the charge
// and the job would leave one without the other.
func (db *DB) ConsumeQuota(ctx context.Context, log *algoitny.UsageLog, limit int) error {
	c := &algoitny.Charge{Log: log, Limit: limit}
	items, err := db.usageItems(ctx, c)
	if err != nil {
		return err
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		return db.rateLimited(ctx, c) // nothing written: nothing to tell
	}
	return translate(err, "consume quota")
}

// planLimitAttr is the plan attribute that holds the daily limit of action.
func planLimitAttr(action algoitny.UsageAction) string {
	switch action {
	case algoitny.ActionHint:
		return "MaxHintsPerDay"
	case algoitny.ActionCodeRun:
		return "MaxCodeRunsPerDay"
	case algoitny.ActionCounterexample:
		return "MaxCounterexamplesPerDay"
	}
	return "MaxExecutionsPerDay"
}

// planCheck is the condition, in a charge's transaction, that c.Plan still
// holds c.Limit for the action: DynamoDB serialises the transaction with
// UpdatePlan, so a charge written after a change of the plan returned was
// judged by the new limit, or it is refused at this item and made again
// (CreateChargedJob) with the limit read anew.
func (db *DB) planCheck(c *algoitny.Charge) types.TransactWriteItem {
	attr := planLimitAttr(c.Log.Action)
	cond := expression.Name(attr).Equal(expression.Value(c.Limit))
	if attr != "MaxExecutionsPerDay" && attr != "MaxHintsPerDay" {
		// A plan stored before these limits existed falls back to its
		// executions limit (planFromItem) until seed-plans fills them in.
		cond = cond.Or(expression.Name(attr).AttributeNotExists().And(expression.Name("MaxExecutionsPerDay").Equal(expression.Value(c.Limit))))
	}
	expr, _ := expression.NewBuilder().WithCondition(cond).Build() // static: always builds
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(db.tables.Plans), Key: itemKey{planPK(c.Plan), skMetadata}.av(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}
}

// planLimitNow reads c.Plan anew (strongly consistent) and sets c.Limit to
// what it says now (0: the plan is gone, as for a user without one).
func (db *DB) planLimitNow(ctx context.Context, c *algoitny.Charge) error {
	p, err := db.GetPlan(fresh(ctx), c.Plan)
	switch {
	case algoitny.IsCode(err, algoitny.ENOTFOUND):
		c.Limit = 0
	case err != nil:
		return err
	default:
		c.Limit = p.DailyLimit(c.Log.Action)
	}
	return nil
}

// chargeItems returns the writes that charge c for job j (CreateChargedJob):
// the counter's conditional ADD (first) and the usage log naming j, which
// is told the log (PaidWith). It returns ERATELIMITED for a limit below one
// use.
func (db *DB) chargeItems(ctx context.Context, j *algoitny.Job, c *algoitny.Charge) ([]types.TransactWriteItem, error) {
	if c.Log.UserID == "" {
		return nil, algoitny.Internal(nil, "a charge needs its payer")
	}
	c.Log.JobID = j.ID
	items, err := db.usageItems(ctx, c)
	if err != nil {
		return nil, err
	}
	j.PaidWith = &algoitny.UsageRef{UserID: c.Log.UserID, Action: c.Log.Action, ID: c.Log.ID}
	return items, nil
}

// usageItems returns the writes of one use: the counter's ADD, conditional
// on c.Limit (first), the usage log and, if c names its plan, the check
// that the plan still says c.Limit (planCheck, third). c.Log gets its id,
// time and expiry.
// It returns ERATELIMITED for a limit below one use (nothing to write).
func (db *DB) usageItems(ctx context.Context, c *algoitny.Charge) ([]types.TransactWriteItem, error) {
	log := c.Log
	log.ID, log.CreatedAt = newID(db.now())
	log.ExpiresAt = log.CreatedAt.Add(algoitny.UsageDayRetention)
	day := algoitny.UsageDay(log.CreatedAt)
	it := usageItem{
		PK: userPK(log.UserID), SK: usageSK(day, log.Action, log.CreatedAt, log.ID), EntityType: "UsageLog",
		LogID: log.ID, UserID: log.UserID, Action: string(log.Action), HistoryID: log.HistoryID, JobID: log.JobID,
		CreatedAt: log.CreatedAt, TTL: log.ExpiresAt.Unix(),
	}
	if log.ProblemID != "" {
		it.ProblemPK = problemPK(log.Platform, log.ProblemID)
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode usage log")
	}
	counter, ok := db.counterAdd(itemKey{userPK(log.UserID), quotaSK(day)}, quotaCountAttr(log.Action), 1, c.Limit, &log.ExpiresAt)
	if !ok {
		return nil, db.rateLimited(ctx, c)
	}
	items := []types.TransactWriteItem{counter, {Put: &types.Put{TableName: aws.String(db.tables.Main), Item: av}}}
	if c.Plan != "" {
		items = append(items, db.planCheck(c))
	}
	return items, nil
}

// rateLimited is the ERATELIMITED error of a refused charge, with the count
// read from DynamoDB itself (not a cache).
func (db *DB) rateLimited(ctx context.Context, c *algoitny.Charge) error {
	log := c.Log
	used, err := db.usageCount(fresh(ctx), log.UserID, algoitny.UsageDay(log.CreatedAt), log.Action)
	if err != nil {
		return err
	}
	return &algoitny.Error{
		Code:      algoitny.ERATELIMITED,
		Message:   "daily " + string(log.Action) + " limit reached",
		RateLimit: &algoitny.RateLimit{Action: log.Action, Limit: c.Limit, Used: used, ResetAt: algoitny.NextReset(log.CreatedAt)},
	}
}

// ReleaseQuota gives back a use recorded by ConsumeQuota: the log is
// deleted and the counter lowered in one transaction. Releasing twice is a
// no-op. (A job's use is never given back on its own: see CreateChargedJob.)
func (db *DB) ReleaseQuota(ctx context.Context, log *algoitny.UsageLog) error {
	day := algoitny.UsageDay(log.CreatedAt)
	counter, _ := db.counterAdd(itemKey{userPK(log.UserID), quotaSK(day)}, quotaCountAttr(log.Action), -1, algoitny.Unlimited, nil)
	_, err := db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: aws.String(db.tables.Main), Key: itemKey{userPK(log.UserID), usageSK(day, log.Action, log.CreatedAt, log.ID)}.av(),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}},
		counter,
	}})
	if conditionFailedAt(err, 0) {
		return nil
	}
	return translate(err, "release quota")
}

func (db *DB) usageCount(ctx context.Context, userID, day string, action algoitny.UsageAction) (int, error) {
	counts, err := db.UsageCounts(ctx, userID, day)
	return counts[action], err
}

// UsageCounts returns how many of each action a user has used on day (a
// UsageDay string): one GetItem of the day's counter item (seed pattern #14
// without counting logs), display data a serve replica may keep for the
// display bound (display.go).
func (db *DB) UsageCounts(ctx context.Context, userID, day string) (map[algoitny.UsageAction]int, error) {
	av, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(userID), quotaSK(day)})
	if err != nil {
		return nil, err
	}
	return usageCounts(av), nil
}

// usageCounts decodes a quota counter item (nil: nothing used).
func usageCounts(av map[string]types.AttributeValue) map[algoitny.UsageAction]int {
	counts := make(map[algoitny.UsageAction]int, len(algoitny.UsageActions))
	for _, a := range algoitny.UsageActions {
		counts[a] = intAttr(av, quotaCountAttr(a))
	}
	return counts
}

// ListUsageLogs pages through a user's usage logs from fromDay to toDay
// inclusive (UsageDay strings), newest first. Logs past their TTL are
// filtered out even before DynamoDB deletes them (which can take days).
func (db *DB) ListUsageLogs(ctx context.Context, userID, fromDay, toDay string, page algoitny.PageRequest) (algoitny.Page[*algoitny.UsageLog], error) {
	if fromDay > toDay {
		return algoitny.Page[*algoitny.UsageLog]{}, algoitny.Invalid("from", "from must not be after to")
	}
	live := expression.Name(attrTTL).GreaterThan(expression.Value(db.now().Unix()))
	p, err := db.page(ctx, &query{
		list: "usageLogs", table: db.tables.Main, pk: userPK(userID),
		skBetween: [2]string{usageDayPrefix(fromDay), usageDayPrefix(toDay) + "\uffff"},
		filter:    &live,
	}, page)
	if err != nil {
		return algoitny.Page[*algoitny.UsageLog]{}, err
	}
	return convertPage(p, unmarshalUsage)
}

// GetUsageLog returns one usage log by its owner, action and id, or
// ENOTFOUND (also once it has expired).
func (db *DB) GetUsageLog(ctx context.Context, userID string, action algoitny.UsageAction, id string) (*algoitny.UsageLog, error) {
	t, err := idTime(id)
	if err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "usage log not found")
	}
	av, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(userID), usageSK(algoitny.UsageDay(t), action, t, id)})
	if err != nil {
		return nil, err
	}
	if av == nil || int64(intAttr(av, attrTTL)) <= db.now().Unix() {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "usage log not found")
	}
	return unmarshalUsage(av)
}
