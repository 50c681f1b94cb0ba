package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// jobItem is a job's METADATA item: GSI1 by type (sorted by creation), GSI2
// by status (sorted by last update, so stale PROCESSING jobs are a key
// range), GSI3 by River job id once it is known.
type jobItem struct {
	PK, SK         string
	EntityType     string
	JobID          string
	JobType        string
	Status         string
	UserID         string `dynamodbav:",omitempty"`
	UserEmail      string `dynamodbav:",omitempty"`
	RiverJobID     int64  `dynamodbav:",omitempty"`
	IdempotencyKey string `dynamodbav:",omitempty"`
	Platform       string `dynamodbav:",omitempty"`
	ProblemID      string `dynamodbav:",omitempty"`
	Title          string `dynamodbav:",omitempty"`
	ProblemURL     string `dynamodbav:",omitempty"`
	Tags           []string
	SolutionCode   string     `dynamodbav:",omitempty"`
	Language       string     `dynamodbav:",omitempty"`
	Constraints    string     `dynamodbav:",omitempty"`
	HistoryID      string     `dynamodbav:",omitempty"`
	IsCodePublic   bool       `dynamodbav:",omitempty"`
	GeneratorCode  string     `dynamodbav:",omitempty"`
	Params         string     `dynamodbav:",omitempty"`
	UsageUserID    string     `dynamodbav:",omitempty"`
	UsageAction    string     `dynamodbav:",omitempty"`
	UsageLogID     string     `dynamodbav:",omitempty"`
	Result         string     `dynamodbav:",omitempty"`
	ErrorMessage   string     `dynamodbav:",omitempty"`
	Attempt        int        `dynamodbav:",omitempty"`
	CreatedAt      time.Time  //
	UpdatedAt      time.Time  //
	StartedAt      *time.Time `dynamodbav:",omitempty"`
	FinishedAt     *time.Time `dynamodbav:",omitempty"`
	GSI1PK, GSI1SK string
	GSI2PK, GSI2SK string
	GSI3PK, GSI3SK string `dynamodbav:",omitempty"`
}

// userJobItem points from a user's partition to one of their jobs; it
// mirrors the job's type and status so that "my jobs" can be filtered.
type userJobItem struct {
	PK, SK     string
	EntityType string
	JobID      string
	JobType    string
	Status     string
}

type jobProgressItem struct {
	PK, SK     string
	EntityType string
	ProgressID string
	JobID      string
	Step       string
	Message    string `dynamodbav:",omitempty"`
	Status     string
	Percent    int
	CreatedAt  time.Time
}

func marshalJob(j *algoitny.Job) (map[string]types.AttributeValue, error) {
	it := jobItem{
		PK: jobPK(j.ID), SK: skMetadata, EntityType: "Job",
		JobID: j.ID, JobType: string(j.Type), Status: string(j.Status), UserID: j.UserID, UserEmail: j.UserEmail, RiverJobID: j.RiverJobID,
		IdempotencyKey: j.IdempotencyKey, Platform: string(j.Platform), ProblemID: j.ProblemID, Title: j.Title,
		ProblemURL: j.ProblemURL, Tags: j.Tags, SolutionCode: j.SolutionCode, Language: string(j.Language),
		Constraints: j.Constraints, HistoryID: j.HistoryID, IsCodePublic: j.IsCodePublic, GeneratorCode: j.GeneratorCode, Params: j.Params, Result: j.Result,
		ErrorMessage: j.ErrorMessage, Attempt: j.Attempt, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
		StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
		GSI1PK: gsiJobType(j.Type), GSI1SK: keyTime(j.CreatedAt),
		GSI2PK: gsiJobStatus(j.Status), GSI2SK: keyTime(j.UpdatedAt),
	}
	if j.RiverJobID != 0 {
		it.GSI3PK, it.GSI3SK = gsiJobTask(j.RiverJobID), skMetadata
	}
	if u := j.PaidWith; u != nil {
		it.UsageUserID, it.UsageAction, it.UsageLogID = u.UserID, string(u.Action), u.ID
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode job")
	}
	return av, nil
}

func unmarshalJob(av map[string]types.AttributeValue) (*algoitny.Job, error) {
	var it jobItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode job")
	}
	var paid *algoitny.UsageRef
	if it.UsageLogID != "" {
		paid = &algoitny.UsageRef{UserID: it.UsageUserID, Action: algoitny.UsageAction(it.UsageAction), ID: it.UsageLogID}
	}
	return &algoitny.Job{
		ID: it.JobID, Type: algoitny.JobType(it.JobType), Status: algoitny.JobStatus(it.Status), UserID: it.UserID, UserEmail: it.UserEmail,
		RiverJobID: it.RiverJobID, IdempotencyKey: it.IdempotencyKey, Platform: algoitny.Platform(it.Platform),
		ProblemID: it.ProblemID, Title: it.Title, ProblemURL: it.ProblemURL, Tags: it.Tags, SolutionCode: it.SolutionCode,
		Language: algoitny.Language(it.Language), Constraints: it.Constraints, HistoryID: it.HistoryID, IsCodePublic: it.IsCodePublic,
		GeneratorCode: it.GeneratorCode, Params: it.Params, Result: it.Result, ErrorMessage: it.ErrorMessage, Attempt: it.Attempt,
		PaidWith:  paid,
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, StartedAt: it.StartedAt, FinishedAt: it.FinishedAt,
	}, nil
}

// idempotencyTTL is how long an idempotency key keeps returning its job.
const idempotencyTTL = 24 * time.Hour

// settleTimeout bounds the read that settles a job write whose answer was
// lost (CreateChargedJob).
const settleTimeout = 2 * time.Second

// CreateJob stores a new PENDING job that costs nothing: CreateChargedJob
// without a charge.
func (db *DB) CreateJob(ctx context.Context, j *algoitny.Job) (job *algoitny.Job, created bool, err error) {
	return db.CreateChargedJob(ctx, j, nil)
}

// CreateChargedJob stores a new PENDING job (seed pattern #19), its pointer
// in the owner's partition, a marker reserving its IdempotencyKey for 24
// hours and, with a charge, the use that pays for it (the day's counter
// raised only while it is below charge.Limit, and the usage log) — all in
// one transaction. So the job and its use exist together or not at all,
// whatever fails and whenever a process dies: there is nothing to undo. The
// log names the job (UsageLog.JobID) and the job its log (Job.PaidWith).
// N concurrent calls against limit L admit exactly L. A charge naming its
// plan is written only while the plan still says charge.Limit: after a
// change of the plan returned, every charge is judged by the new limit
// (the transaction is made again, up to maxPlanRetries times, with the
// limit read anew).
//
// If the key was already used by the same user, the earlier job is returned
// with created=false and nothing is charged. A transaction whose answer is
// lost (a connection cut after DynamoDB applied it) is settled by reading
// the job back: it exists only if the transaction was applied. It returns
// ERATELIMITED (with the limit, the count and the reset time), ECONFLICT
// (the key is being reused as it expires) or EINTERNAL (DynamoDB failed or
// is unreachable: the job may still have been stored — with its charge —
// and is queued later by the reaper).
func (db *DB) CreateChargedJob(ctx context.Context, j *algoitny.Job, charge *algoitny.Charge) (job *algoitny.Job, created bool, err error) {
	for range maxPlanRetries {
		job, created, err = db.createChargedJob(ctx, j, charge)
		if !errors.Is(err, errPlanChanged) {
			return job, created, err
		}
		if err := db.planLimitNow(ctx, charge); err != nil {
			return nil, false, err
		}
	}
	return nil, false, algoitny.Errorf(algoitny.ECONFLICT, "the plan's limits are changing; try again")
}

// maxPlanRetries bounds how often CreateChargedJob makes its transaction
// again because the payer's plan changed under it.
const maxPlanRetries = 3

// errPlanChanged is createChargedJob's answer when the plan no longer says
// the charge's limit: nothing was written.
var errPlanChanged = errors.New("the plan's limit changed")

// createChargedJob is one transaction of CreateChargedJob.
func (db *DB) createChargedJob(ctx context.Context, j *algoitny.Job, charge *algoitny.Charge) (job *algoitny.Job, created bool, err error) {
	j.ID, j.CreatedAt = newID(db.now())
	j.UpdatedAt, j.Status = j.CreatedAt, algoitny.JobPending
	var usage []types.TransactWriteItem
	if charge != nil {
		if usage, err = db.chargeItems(ctx, j, charge); err != nil {
			return nil, false, err
		}
	}
	items, markerAt, err := db.jobItems(j)
	if err != nil {
		return nil, false, err
	}
	counterAt := len(items)
	items = append(items, usage...)
	wctx, attempts := withAttempts(ctx)
	_, err = db.client.TransactWriteItems(wctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	switch {
	case err == nil:
		return j, true, nil
	case conditionFailedAt(err, 0):
		// The id is new: only this call can have written it, in an attempt
		// whose answer was lost before the SDK retried.
		return j, true, nil
	case markerAt >= 0 && conditionFailedAt(err, markerAt):
		return db.jobOfKey(ctx, j)
	case charge != nil && charge.Plan != "" && conditionFailedAt(err, counterAt+2):
		return nil, false, errPlanChanged // judged by a limit the plan no longer says
	case charge != nil && conditionFailedAt(err, counterAt):
		// A repeat of a charged request gets its job, not a refusal (a
		// backstop: DynamoDB Local reports the marker's failure as well).
		if j.IdempotencyKey != "" {
			if existing, gerr := db.GetJobByIdempotencyKey(fresh(ctx), j.UserID, j.IdempotencyKey); gerr == nil {
				return existing, existing.ID == j.ID, nil
			}
		}
		return nil, false, db.rateLimited(ctx, charge)
	case mayHaveLanded(err, attempts.Load()):
		// Applied or not? The job tells (the log and the counter went
		// with it). Unreadable too: the reaper finds it if it exists.
		sctx, cancel := context.WithTimeout(fresh(context.WithoutCancel(ctx)), settleTimeout)
		defer cancel()
		if stored, gerr := db.GetJob(sctx, j.ID); gerr == nil {
			return stored, true, nil
		}
	}
	return nil, false, translate(err, "create job")
}

// jobItems returns the writes of a new job: the job (first), the owner's
// pointer and the idempotency marker (at markerAt; -1 without a key).
func (db *DB) jobItems(j *algoitny.Job) (items []types.TransactWriteItem, markerAt int, err error) {
	av, err := marshalJob(j)
	if err != nil {
		return nil, -1, err
	}
	items = []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}}
	if j.UserID != "" {
		ptr, err := attributevalue.MarshalMap(userJobItem{PK: userPK(j.UserID), SK: userJobSK(j.ID), EntityType: "UserJob", JobID: j.ID, JobType: string(j.Type), Status: string(j.Status)})
		if err != nil {
			return nil, -1, algoitny.Internal(err, "encode job pointer")
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: ptr}})
	}
	markerAt = -1
	if j.IdempotencyKey != "" {
		marker, err := attributevalue.MarshalMap(map[string]any{
			attrPK: userPK(j.UserID), attrSK: idempotencySK(j.IdempotencyKey), "EntityType": "IdempotencyKey",
			"JobID": j.ID, attrTTL: j.CreatedAt.Add(idempotencyTTL).Unix(),
		})
		if err != nil {
			return nil, -1, algoitny.Internal(err, "encode idempotency key")
		}
		markerAt = len(items)
		// An expired marker (TTL passed, not yet deleted) may be replaced.
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(db.tables.Main), Item: marker,
			ConditionExpression:       aws.String("attribute_not_exists(PK) OR #ttl < :now"),
			ExpressionAttributeNames:  map[string]string{"#ttl": attrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: itoa(db.now().Unix())}},
		}})
	}
	return items, markerAt, nil
}

// jobOfKey returns the job that holds j's idempotency key (created=false),
// or j itself when an earlier attempt of this call stored it.
func (db *DB) jobOfKey(ctx context.Context, j *algoitny.Job) (*algoitny.Job, bool, error) {
	marker, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(j.UserID), idempotencySK(j.IdempotencyKey)})
	if err != nil {
		return nil, false, err
	}
	if marker == nil { // expired and deleted in between: let the client retry
		return nil, false, algoitny.Errorf(algoitny.ECONFLICT, "idempotency key is being reused; retry")
	}
	existing, err := db.GetJob(ctx, stringAttr(marker, "JobID"))
	if err != nil {
		return nil, false, err
	}
	return existing, existing.ID == j.ID, nil
}

// ReleaseIdempotencyKey frees a user's idempotency key if it still names
// jobID, so that a request retried with the same key after its job could not
// be queued creates a new job instead of returning the failed one.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, userID, key, jobID string) error {
	_, err := db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(db.tables.Main), Key: itemKey{userPK(userID), idempotencySK(key)}.av(),
		ConditionExpression:       aws.String("JobID = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: jobID}},
	})
	if isConditionFailed(err) {
		return nil // gone, or another job's by now
	}
	return translate(err, "release idempotency key")
}

// GetJob returns a job by id (#20), or ENOTFOUND.
func (db *DB) GetJob(ctx context.Context, id string) (*algoitny.Job, error) {
	return getOne(ctx, db, db.tables.Main, itemKey{jobPK(id), skMetadata}, unmarshalJob, "job not found")
}

// GetJobByIdempotencyKey returns the job a user created with an idempotency
// key in the last 24 hours, or ENOTFOUND.
func (db *DB) GetJobByIdempotencyKey(ctx context.Context, userID, key string) (*algoitny.Job, error) {
	marker, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(userID), idempotencySK(key)})
	if err != nil {
		return nil, err
	}
	if marker == nil || int64(intAttr(marker, attrTTL)) < db.now().Unix() {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	return db.GetJob(ctx, stringAttr(marker, "JobID"))
}

// GetJobs loads many jobs with BatchGetItem; missing ones are absent.
func (db *DB) GetJobs(ctx context.Context, ids []string) (map[string]*algoitny.Job, error) {
	keys := make([]itemKey, len(ids))
	for i, id := range ids {
		keys[i] = itemKey{jobPK(id), skMetadata}
	}
	return getMany(ctx, db, db.tables.Main, keys, unmarshalJob, func(j *algoitny.Job) string { return j.ID })
}

// GetJobByRiverID returns the job linked to a River job (GSI3, the seed's
// Celery task lookup), or ENOTFOUND.
func (db *DB) GetJobByRiverID(ctx context.Context, riverJobID int64) (*algoitny.Job, error) {
	items, err := db.all(ctx, &query{list: "jobByTask", table: db.tables.Main, index: indexGSI3, pk: gsiJobTask(riverJobID)})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	return unmarshalJob(items[0])
}

// SetRiverJobID links a job to its River job. ENOTFOUND for an unknown job.
func (db *DB) SetRiverJobID(ctx context.Context, id string, riverJobID int64) (*algoitny.Job, error) {
	av, err := db.update(ctx, db.tables.Main, itemKey{jobPK(id), skMetadata}, expression.
		Set(expression.Name("RiverJobID"), expression.Value(riverJobID)).
		Set(expression.Name(attrGSI3PK), expression.Value(gsiJobTask(riverJobID))).
		Set(expression.Name(attrGSI3SK), expression.Value(skMetadata)), nil)
	if isConditionFailed(err) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	if err != nil {
		return nil, translate(err, "link River job")
	}
	return unmarshalJob(av)
}

// TransitionJob moves a job to t.Status with the fields that change with it
// (#22). The write is conditional on the current status being one from which
// t.Status may be reached (algoitny.JobStatus.CanTransition), so two workers
// can never both complete a job or revive a cancelled one. The owner's
// pointer follows in the same transaction. It returns ENOTFOUND for an
// unknown job and ECONFLICT when the transition is not allowed.
func (db *DB) TransitionJob(ctx context.Context, id string, t algoitny.JobTransition) (*algoitny.Job, error) {
	cur, err := db.GetJob(ctx, id)
	if err != nil {
		return nil, err
	}
	return db.TransitionJobFrom(ctx, cur, t)
}

// TransitionJobFrom is TransitionJob for a caller that has just read the
// job: the write is conditional on cur's status (ECONFLICT if it changed
// since), which saves reading it again. The job returned is cur with the
// transition applied: the write changes nothing else. It returns ENOTFOUND
// when the owner's pointer is gone (the account was deleted).
func (db *DB) TransitionJobFrom(ctx context.Context, cur *algoitny.Job, t algoitny.JobTransition) (*algoitny.Job, error) {
	if !cur.Status.CanTransition(t.Status) {
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "job is %s and cannot become %s", cur.Status, t.Status)
	}
	now := db.now().UTC()
	next, sets := applyTransition(cur, t, now)
	items, err := db.transitionItems(cur, t.Status, sets)
	if err != nil {
		return nil, err
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		now, gerr := db.GetJob(ctx, cur.ID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "job changed concurrently: it is %s and cannot become %s", now.Status, t.Status)
	}
	if conditionFailedAt(err, 1) { // pointer gone: the owner deleted their account
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
	}
	if err != nil {
		return nil, translate(err, "transition job")
	}
	return &next, nil
}

// attrSet is one attribute an update sets.
type attrSet struct {
	attr string
	v    any
}

// applyTransition returns cur after t at now and the attributes the update
// sets for it. Both come from one list of fields, so the job returned is the
// job stored.
func applyTransition(cur *algoitny.Job, t algoitny.JobTransition, now time.Time) (algoitny.Job, []attrSet) {
	next := *cur
	sets := []attrSet{{"Status", string(t.Status)}, {"UpdatedAt", now}, {attrGSI2PK, gsiJobStatus(t.Status)}, {attrGSI2SK, keyTime(now)}}
	set := func(attr string, v any) { sets = append(sets, attrSet{attr, v}) }
	next.Status, next.UpdatedAt = t.Status, now
	switch {
	case t.Status == algoitny.JobProcessing:
		next.StartedAt = &now
		set("StartedAt", now)
	case t.Status.Final():
		next.FinishedAt = &now
		set("FinishedAt", now)
	}
	if t.RiverJobID != nil {
		next.RiverJobID = *t.RiverJobID
		set("RiverJobID", *t.RiverJobID)
		set(attrGSI3PK, gsiJobTask(*t.RiverJobID))
		set(attrGSI3SK, skMetadata)
	}
	if t.Problem != nil {
		next.Platform, next.ProblemID = t.Problem.Platform, t.Problem.ProblemID
		set("Platform", string(t.Problem.Platform))
		set("ProblemID", t.Problem.ProblemID)
	}
	if t.HistoryID != nil {
		next.HistoryID = *t.HistoryID
		set("HistoryID", *t.HistoryID)
	}
	if t.GeneratorCode != nil {
		next.GeneratorCode = *t.GeneratorCode
		set("GeneratorCode", *t.GeneratorCode)
	}
	if t.Result != nil {
		next.Result = *t.Result
		set("Result", *t.Result)
	}
	if t.ErrorMessage != nil {
		next.ErrorMessage = *t.ErrorMessage
		set("ErrorMessage", *t.ErrorMessage)
	}
	if t.Attempt != nil {
		next.Attempt = *t.Attempt
		set("Attempt", *t.Attempt)
	}
	return next, sets
}

// transitionItems are the writes of a transition: the job's update,
// conditional on the status cur was read with (a concurrent transition makes
// it fail), and the status on the owner's pointer, which must exist.
func (db *DB) transitionItems(cur *algoitny.Job, status algoitny.JobStatus, sets []attrSet) ([]types.TransactWriteItem, error) {
	upd := expression.Set(expression.Name(sets[0].attr), expression.Value(sets[0].v))
	for _, s := range sets[1:] {
		upd = upd.Set(expression.Name(s.attr), expression.Value(s.v))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).
		WithCondition(expression.Name("Status").Equal(expression.Value(string(cur.Status)))).Build()
	if err != nil {
		return nil, algoitny.Internal(err, "build transition")
	}
	items := []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: itemKey{jobPK(cur.ID), skMetadata}.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}}
	if cur.UserID != "" {
		items = append(items, types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(db.tables.Main), Key: itemKey{userPK(cur.UserID), userJobSK(cur.ID)}.av(),
			UpdateExpression:          aws.String("SET #s = :s"),
			ConditionExpression:       aws.String("attribute_exists(PK)"),
			ExpressionAttributeNames:  map[string]string{"#s": "Status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: string(status)}},
		}})
	}
	return items, nil
}

// ListJobs pages through jobs, newest first. With a UserID it lists that
// user's jobs (their pointers, then one BatchGetItem), filtered by type and
// status; otherwise by type (GSI1, #21) or by status (GSI2), one of which is
// then required. EINVALID if neither a user, a type nor a status is given.
func (db *DB) ListJobs(ctx context.Context, f algoitny.JobFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
	var conds []expression.ConditionBuilder
	if f.UserID != "" {
		if f.Type != nil {
			conds = append(conds, expression.Name("JobType").Equal(expression.Value(string(*f.Type))))
		}
		if f.Status != nil {
			conds = append(conds, expression.Name("Status").Equal(expression.Value(string(*f.Status))))
		}
		p, err := db.page(ctx, &query{list: "userJobs", table: db.tables.Main, pk: userPK(f.UserID), skPrefix: skPrefixUserJob, filter: andAll(conds)}, page)
		if err != nil {
			return algoitny.Page[*algoitny.Job]{}, err
		}
		ids := make([]string, len(p.items))
		for i, it := range p.items {
			ids[i] = stringAttr(it, "JobID")
		}
		jobs, err := db.GetJobs(ctx, ids)
		if err != nil {
			return algoitny.Page[*algoitny.Job]{}, err
		}
		out := positioned(p, algoitny.Page[*algoitny.Job]{})
		for i, id := range ids {
			if j, ok := jobs[id]; ok {
				out.Items = append(out.Items, j)
				out.Cursors = append(out.Cursors, p.cursors[i])
			}
		}
		return out, nil
	}
	q := &query{table: db.tables.Main}
	switch {
	case f.Type != nil:
		q.list, q.index, q.pk = "jobsByType", indexGSI1, gsiJobType(*f.Type)
		if f.Status != nil {
			conds = append(conds, expression.Name("Status").Equal(expression.Value(string(*f.Status))))
		}
	case f.Status != nil:
		q.list, q.index, q.pk = "jobsByStatus", indexGSI2, gsiJobStatus(*f.Status)
	default:
		return algoitny.Page[*algoitny.Job]{}, algoitny.Invalid("type", "listing all jobs needs a type or a status")
	}
	q.filter = andAll(conds)
	p, err := db.page(ctx, q, page)
	if err != nil {
		return algoitny.Page[*algoitny.Job]{}, err
	}
	return convertPage(p, unmarshalJob)
}

// ListStaleJobs returns up to limit jobs in status that have not been updated
// since before cutoff, oldest first (seed 003 "find stale jobs", as a key
// range of GSI2 rather than a filter).
func (db *DB) ListStaleJobs(ctx context.Context, status algoitny.JobStatus, cutoff time.Time, limit int) ([]*algoitny.Job, error) {
	p, err := db.ListStaleJobsPage(ctx, status, cutoff, algoitny.PageRequest{First: min(max(limit, 1), algoitny.MaxPageSize)})
	return p.Items, err
}

// ListStaleJobsPage is ListStaleJobs one page at a time, so that a sweep
// can look past a page of jobs that only wait their turn (the reaper). It
// returns EINVALID for a forged cursor.
func (db *DB) ListStaleJobsPage(ctx context.Context, status algoitny.JobStatus, cutoff time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error) {
	p, err := db.page(ctx, &query{list: "staleJobs", table: db.tables.Main, index: indexGSI2, pk: gsiJobStatus(status), skBefore: keyTime(cutoff), forward: true}, page)
	if err != nil {
		return algoitny.Page[*algoitny.Job]{}, err
	}
	return convertPage(p, unmarshalJob)
}

// AddJobProgress appends a progress step to a job's history (seed 003
// JobProgressHistory). The step is truncated to 100 characters as the seed
// says. The id and timestamp are assigned here unless the caller took them
// from NewJobProgressID (to publish the step before it is stored).
func (db *DB) AddJobProgress(ctx context.Context, p *algoitny.JobProgress) error {
	if p.ID == "" {
		p.ID, p.CreatedAt = newID(db.now())
	}
	av, err := marshalProgress(p)
	if err != nil {
		return err
	}
	_, err = db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.tables.Main), Item: av})
	return translate(err, "add job progress")
}

func marshalProgress(p *algoitny.JobProgress) (map[string]types.AttributeValue, error) {
	if r := []rune(p.Step); len(r) > 100 {
		p.Step = string(r[:100])
	}
	av, err := attributevalue.MarshalMap(jobProgressItem{
		PK: jobPK(p.JobID), SK: progressSK(p.CreatedAt, p.ID), EntityType: "JobProgress",
		ProgressID: p.ID, JobID: p.JobID, Step: p.Step, Message: p.Message, Status: string(p.Status), Percent: p.Percent, CreatedAt: p.CreatedAt,
	})
	if err != nil {
		return nil, algoitny.Internal(err, "encode job progress")
	}
	return av, nil
}

// NewJobProgressID returns a fresh progress id and its creation time.
func (db *DB) NewJobProgressID() (string, time.Time) { return newID(db.now()) }

func unmarshalProgress(av map[string]types.AttributeValue) (*algoitny.JobProgress, error) {
	var it jobProgressItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode job progress")
	}
	return &algoitny.JobProgress{ID: it.ProgressID, JobID: it.JobID, Step: it.Step, Message: it.Message, Status: algoitny.JobStatus(it.Status), Percent: it.Percent, CreatedAt: it.CreatedAt}, nil
}

// ListJobProgress pages through a job's progress steps, oldest first.
func (db *DB) ListJobProgress(ctx context.Context, jobID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.JobProgress], error) {
	p, err := db.page(ctx, &query{list: "jobProgress", table: db.tables.Main, pk: jobPK(jobID), skPrefix: skPrefixProgress, forward: true}, page)
	if err != nil {
		return algoitny.Page[*algoitny.JobProgress]{}, err
	}
	return convertPage(p, unmarshalProgress)
}

// LatestJobProgress returns a job's most recent progress step, or ENOTFOUND
// if it has none.
func (db *DB) LatestJobProgress(ctx context.Context, jobID string) (*algoitny.JobProgress, error) {
	p, err := db.page(ctx, &query{list: "jobProgress", table: db.tables.Main, pk: jobPK(jobID), skPrefix: skPrefixProgress}, algoitny.PageRequest{First: 1})
	if err != nil {
		return nil, err
	}
	if len(p.items) == 0 {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "no progress yet")
	}
	return unmarshalProgress(p.items[0])
}

// GetJobProgress returns one progress step of a job, or ENOTFOUND.
func (db *DB) GetJobProgress(ctx context.Context, jobID, id string) (*algoitny.JobProgress, error) {
	t, err := idTime(id)
	if err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "progress not found")
	}
	return getOne(ctx, db, db.tables.Main, itemKey{jobPK(jobID), progressSK(t, id)}, unmarshalProgress, "progress not found")
}
