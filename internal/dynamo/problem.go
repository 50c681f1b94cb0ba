package dynamo

import (
	"context"
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

// problemItem is a problem's METADATA item. Its three GSI keys (by platform,
// by completion, by language) are removed on soft delete so that the problem
// leaves every list but stays readable by key.
type problemItem struct {
	PK, SK          string
	EntityType      string
	InternalID      string
	Platform        string
	ProblemID       string
	Title           string
	TitleLower      string
	ProblemURL      string
	Tags            []string
	SolutionCode    string
	Language        string
	Constraints     string
	Statement       string  `dynamodbav:",omitempty"`
	CheckerKind     string  `dynamodbav:",omitempty"`
	CheckerEpsilon  float64 `dynamodbav:",omitempty"`
	CheckerCode     string  `dynamodbav:",omitempty"`
	CheckerLanguage string  `dynamodbav:",omitempty"`
	// A checker's further files and arguments (a problem package's
	// multi-file validator, its flags).
	CheckerFiles map[string]string `dynamodbav:",omitempty"`
	CheckerArgs  []string          `dynamodbav:",omitempty"`
	// CheckerPoints is algoitny.Problem.CheckerPoints, absent for the
	// default (a fraction of the test) and on items written before it.
	CheckerPoints string `dynamodbav:",omitempty"`
	// ValidationPasses is algoitny.Problem.ValidationPasses, absent for a
	// problem of one pass.
	ValidationPasses int `dynamodbav:",omitempty"`
	// The programs of the current production run and its number
	// (algoitny.Problem.Generator, Validator, Production). Each program is
	// at most 64 KB like SolutionCode and CheckerCode (problems.MaxCodeBytes),
	// so that the item stays far below DynamoDB's 400 KB with all four.
	// The counter that numbers runs, ProductionSeq (attrProductionSeq), is
	// only ever ADDed to (StartProduction) and is not part of this struct.
	GeneratorCode     string            `dynamodbav:",omitempty"`
	GeneratorLanguage string            `dynamodbav:",omitempty"`
	ValidatorCode     string            `dynamodbav:",omitempty"`
	ValidatorLanguage string            `dynamodbav:",omitempty"`
	GeneratorFiles    map[string]string `dynamodbav:",omitempty"`
	ValidatorFiles    map[string]string `dynamodbav:",omitempty"`
	Production        int               `dynamodbav:",omitempty"`
	TimeLimitMs       int
	MemoryLimitMB     int
	IsCompleted       bool
	IsDeleted         bool
	DeletedAt         *time.Time `dynamodbav:",omitempty"`
	DeletedReason     string     `dynamodbav:",omitempty"`
	TestCaseCount     int
	NeedsReview       bool       `dynamodbav:",omitempty"`
	ReviewNotes       string     `dynamodbav:",omitempty"`
	VerifiedByAdmin   bool       `dynamodbav:",omitempty"`
	ReviewedAt        *time.Time `dynamodbav:",omitempty"`
	CreatedBy         string     `dynamodbav:",omitempty"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
	GSI1PK, GSI1SK    string `dynamodbav:",omitempty"`
	GSI2PK, GSI2SK    string `dynamodbav:",omitempty"`
	GSI3PK, GSI3SK    string `dynamodbav:",omitempty"`

	// The interactor of an interactive problem (algoitny.Problem.Interactor),
	// at most 64 KB like the programs above.
	InteractorCode     string            `dynamodbav:",omitempty"`
	InteractorLanguage string            `dynamodbav:",omitempty"`
	InteractorFiles    map[string]string `dynamodbav:",omitempty"`
	InteractorArgs     []string          `dynamodbav:",omitempty"`
	InteractorProtocol string            `dynamodbav:",omitempty"`
	// Subtasks are algoitny.Problem.Subtasks (at most 100, validated by
	// problems), a list attribute of the problem item.
	Subtasks []subtaskItem `dynamodbav:",omitempty"`
}

type subtaskItem struct {
	Name      string
	Points    float64
	Mode      string
	TestIDs   []string
	DependsOn []string `dynamodbav:",omitempty"`
}

func marshalSubtasks(subtasks []algoitny.Subtask) []subtaskItem {
	if len(subtasks) == 0 {
		return nil
	}
	out := make([]subtaskItem, len(subtasks))
	for i, st := range subtasks {
		out[i] = subtaskItem{Name: st.Name, Points: st.Points, Mode: string(st.Mode), TestIDs: st.TestIDs, DependsOn: st.DependsOn}
	}
	return out
}

func unmarshalSubtasks(items []subtaskItem) []algoitny.Subtask {
	if len(items) == 0 {
		return nil
	}
	out := make([]algoitny.Subtask, len(items))
	for i, it := range items {
		out[i] = algoitny.Subtask{Name: it.Name, Points: it.Points, Mode: algoitny.ScoringMode(it.Mode), TestIDs: it.TestIDs, DependsOn: it.DependsOn}
	}
	return out
}

func marshalProblem(p *algoitny.Problem) (map[string]types.AttributeValue, error) {
	it := problemItem{
		PK: problemPK(p.Platform, p.ProblemID), SK: skMetadata, EntityType: "Problem",
		InternalID: p.InternalID, Platform: string(p.Platform), ProblemID: p.ProblemID,
		Title: p.Title, TitleLower: strings.ToLower(p.Title), ProblemURL: p.ProblemURL, Tags: p.Tags,
		SolutionCode: p.SolutionCode, Language: string(p.Language), Constraints: p.Constraints, Statement: p.Statement,
		CheckerKind: string(p.Checker.Kind), CheckerEpsilon: p.Checker.Epsilon, CheckerCode: p.Checker.Code, CheckerLanguage: string(p.Checker.Language),
		CheckerFiles: p.Checker.Files, CheckerArgs: p.Checker.Args, CheckerPoints: string(p.CheckerPoints),
		ValidationPasses: p.ValidationPasses,
		GeneratorCode:    p.Generator.Code, GeneratorLanguage: string(p.Generator.Language), GeneratorFiles: p.Generator.Files,
		ValidatorCode: p.Validator.Code, ValidatorLanguage: string(p.Validator.Language), ValidatorFiles: p.Validator.Files, Production: p.Production,
		InteractorCode: p.Interactor.Code, InteractorLanguage: string(p.Interactor.Language),
		InteractorFiles: p.Interactor.Files, InteractorArgs: p.Interactor.Args, InteractorProtocol: string(p.Interactor.Protocol),
		Subtasks:    marshalSubtasks(p.Subtasks),
		TimeLimitMs: p.TimeLimitMs, MemoryLimitMB: p.MemoryLimitMB,
		IsCompleted: p.IsCompleted, IsDeleted: p.IsDeleted, DeletedAt: p.DeletedAt, DeletedReason: p.DeletedReason,
		TestCaseCount: p.TestCaseCount, CreatedBy: p.CreatedBy, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		NeedsReview: p.NeedsReview, ReviewNotes: p.ReviewNotes, VerifiedByAdmin: p.VerifiedByAdmin, ReviewedAt: p.ReviewedAt,
	}
	if !p.IsDeleted {
		created := keyTime(p.CreatedAt)
		it.GSI1PK, it.GSI1SK = gsiProblemPlatform(p.Platform), created
		it.GSI2PK, it.GSI2SK = gsiProblemCompleted(p.IsCompleted), created
		it.GSI3PK, it.GSI3SK = gsiProblemLanguage(p.Language), created
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode problem")
	}
	return av, nil
}

func unmarshalProblem(av map[string]types.AttributeValue) (*algoitny.Problem, error) {
	var it problemItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode problem")
	}
	return &algoitny.Problem{
		Platform: algoitny.Platform(it.Platform), ProblemID: it.ProblemID, InternalID: it.InternalID,
		Title: it.Title, ProblemURL: it.ProblemURL, Tags: it.Tags, SolutionCode: it.SolutionCode,
		Language: algoitny.Language(it.Language), Constraints: it.Constraints, Statement: it.Statement,
		Checker: algoitny.Checker{Kind: algoitny.CheckerKind(it.CheckerKind), Epsilon: it.CheckerEpsilon, Code: it.CheckerCode,
			Language: algoitny.Language(it.CheckerLanguage), Files: it.CheckerFiles, Args: it.CheckerArgs},
		CheckerPoints: algoitny.PointsScale(it.CheckerPoints), ValidationPasses: it.ValidationPasses,
		Generator:  algoitny.Program{Language: algoitny.Language(it.GeneratorLanguage), Code: it.GeneratorCode, Files: it.GeneratorFiles},
		Validator:  algoitny.Program{Language: algoitny.Language(it.ValidatorLanguage), Code: it.ValidatorCode, Files: it.ValidatorFiles},
		Production: it.Production,
		Interactor: algoitny.Program{Language: algoitny.Language(it.InteractorLanguage), Code: it.InteractorCode,
			Files: it.InteractorFiles, Args: it.InteractorArgs, Protocol: algoitny.Protocol(it.InteractorProtocol)},
		Subtasks:    unmarshalSubtasks(it.Subtasks),
		TimeLimitMs: it.TimeLimitMs, MemoryLimitMB: it.MemoryLimitMB,
		IsCompleted: it.IsCompleted, IsDeleted: it.IsDeleted, DeletedAt: it.DeletedAt, DeletedReason: it.DeletedReason,
		TestCaseCount: it.TestCaseCount, CreatedBy: it.CreatedBy, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
		NeedsReview: it.NeedsReview, ReviewNotes: it.ReviewNotes, VerifiedByAdmin: it.VerifiedByAdmin, ReviewedAt: it.ReviewedAt,
	}, nil
}

// CreateProblem stores a new problem (its id, timestamps and test case count
// are assigned here). When the problem has a CreatedBy user and maxProblems
// is not -1, the user's problem counter is raised in the same transaction, so
// that a plan's MaxProblems holds exactly under concurrency. It returns
// ECONFLICT if the problem exists and ERATELIMITED if the user is at the limit.
func (db *DB) CreateProblem(ctx context.Context, p *algoitny.Problem, maxProblems int) error {
	now := db.now().UTC()
	p.InternalID, p.CreatedAt, p.UpdatedAt, p.TestCaseCount = uuid.NewString(), now, now, 0
	p.IsDeleted, p.DeletedAt, p.DeletedReason = false, nil, ""
	av, err := marshalProblem(p)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(db.tables.Main), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}}
	limited := &algoitny.Error{Code: algoitny.ERATELIMITED, Message: "your plan's problem limit is reached",
		RateLimit: &algoitny.RateLimit{Limit: maxProblems, Used: maxProblems}}
	if p.CreatedBy != "" {
		counter, ok := db.counterAdd(itemKey{userPK(p.CreatedBy), skUserProblemCount}, "Count", 1, maxProblems, nil)
		if !ok {
			return limited
		}
		items = append(items, counter)
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		return algoitny.Errorf(algoitny.ECONFLICT, "problem %s/%s already exists", p.Platform, p.ProblemID)
	}
	if conditionFailedAt(err, 1) {
		return limited
	}
	return translate(err, "create problem")
}

// counterAdd is a transaction item adding delta to the count attribute of
// the counter item k, refused (ConditionalCheckFailed) when the new count
// would pass limit; a negative limit means unlimited. ok is false when delta
// alone passes the limit, so that no write can succeed. ttl, if set, expires
// the counter.
func (db *DB) counterAdd(k itemKey, count string, delta, limit int, ttl *time.Time) (item types.TransactWriteItem, ok bool) {
	if limit >= 0 && delta > limit {
		return types.TransactWriteItem{}, false
	}
	upd := expression.Add(expression.Name(count), expression.Value(delta)).
		Set(expression.Name("EntityType"), expression.Value("Counter"))
	if ttl != nil {
		upd = upd.Set(expression.Name(attrTTL), expression.Value(ttl.Unix()))
	}
	b := expression.NewBuilder().WithUpdate(upd)
	if limit >= 0 {
		b = b.WithCondition(expression.AttributeNotExists(expression.Name(count)).
			Or(expression.Name(count).LessThanEqual(expression.Value(limit - delta))))
	}
	expr, _ := b.Build() // static expressions always build
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: k.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, true
}

// GetProblem returns a problem by platform and problem id (seed patterns #1,
// #2), including a soft-deleted one (IsDeleted tells). ENOTFOUND if absent.
func (db *DB) GetProblem(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	return getOne(ctx, db, db.tables.Main, itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}, unmarshalProblem, "problem %s/%s not found", ref.Platform, ref.ProblemID)
}

// GetProblems loads many problems with BatchGetItem (100 keys per call,
// unprocessed keys retried). Missing problems are absent from the map.
func (db *DB) GetProblems(ctx context.Context, refs []algoitny.ProblemRef) (map[algoitny.ProblemRef]*algoitny.Problem, error) {
	keys := make([]itemKey, len(refs))
	for i, r := range refs {
		keys[i] = itemKey{problemPK(r.Platform, r.ProblemID), skMetadata}
	}
	return getMany(ctx, db, db.tables.Main, keys, unmarshalProblem, (*algoitny.Problem).Ref)
}

// ListProblems pages through problems, newest first (seed patterns #3–#5).
// A platform filter queries GSI1, a language filter GSI3 (problems only, see
// gsiProblemLanguage), otherwise GSI2 by completion; the remaining criteria
// are filters. Soft-deleted problems are in no index and never listed.
func (db *DB) ListProblems(ctx context.Context, f algoitny.ProblemFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error) {
	completed := true
	if f.Completed != nil {
		completed = *f.Completed
	}
	q := &query{list: "problems", table: db.tables.Main}
	var conds []expression.ConditionBuilder
	switch {
	case f.Platform != nil:
		q.list, q.index, q.pk = "problemsByPlatform", indexGSI1, gsiProblemPlatform(*f.Platform)
		conds = append(conds, expression.Name("IsCompleted").Equal(expression.Value(completed)))
		if f.Language != nil {
			conds = append(conds, expression.Name("Language").Equal(expression.Value(string(*f.Language))))
		}
	case f.Language != nil:
		q.list, q.index, q.pk = "problemsByLanguage", indexGSI3, gsiProblemLanguage(*f.Language)
		conds = append(conds, expression.Name("IsCompleted").Equal(expression.Value(completed)))
	default:
		q.list, q.index, q.pk = "problemsByCompletion", indexGSI2, gsiProblemCompleted(completed)
	}
	if f.NeedsReview != nil {
		// Missing means false: only extracted/generated problems carry it.
		review := expression.Name("NeedsReview").Equal(expression.Value(true))
		if !*f.NeedsReview {
			review = expression.AttributeNotExists(expression.Name("NeedsReview")).Or(expression.Name("NeedsReview").Equal(expression.Value(false)))
		}
		conds = append(conds, review)
	}
	if t := strings.ToLower(strings.TrimSpace(f.TitleContains)); t != "" {
		conds = append(conds, expression.Contains(expression.Name("TitleLower"), t))
	}
	if f.CreatedBy != "" {
		conds = append(conds, expression.Name("CreatedBy").Equal(expression.Value(f.CreatedBy)))
	}
	q.filter = andAll(conds)
	p, err := db.page(ctx, q, page)
	if err != nil {
		return algoitny.Page[*algoitny.Problem]{}, err
	}
	return convertPage(p, unmarshalProblem)
}

// andAll joins conditions with AND; nil for none.
func andAll(conds []expression.ConditionBuilder) *expression.ConditionBuilder {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return &conds[0]
	}
	c := expression.And(conds[0], conds[1], conds[2:]...)
	return &c
}

// setJudging adds to upd what u changes of how the problem is judged: its
// checker, its interactor and its subtasks (none removes the attribute).
func setJudging(upd expression.UpdateBuilder, u algoitny.ProblemUpdate) expression.UpdateBuilder {
	set := func(attr string, v any) { upd = upd.Set(expression.Name(attr), expression.Value(v)) }
	if u.Checker != nil {
		set("CheckerKind", string(u.Checker.Kind))
		set("CheckerEpsilon", u.Checker.Epsilon)
		set("CheckerCode", u.Checker.Code)
		set("CheckerLanguage", string(u.Checker.Language))
		upd = setOrRemove(upd, "CheckerFiles", u.Checker.Files, len(u.Checker.Files) > 0)
		upd = setOrRemove(upd, "CheckerArgs", u.Checker.Args, len(u.Checker.Args) > 0)
	}
	if u.Interactor != nil {
		set("InteractorCode", u.Interactor.Code)
		set("InteractorLanguage", string(u.Interactor.Language))
		upd = setOrRemove(upd, "InteractorFiles", u.Interactor.Files, len(u.Interactor.Files) > 0)
		upd = setOrRemove(upd, "InteractorArgs", u.Interactor.Args, len(u.Interactor.Args) > 0)
		upd = setOrRemove(upd, "InteractorProtocol", string(u.Interactor.Protocol), len(u.Interactor.Protocol) > 0)
	}
	if u.Subtasks != nil {
		if len(*u.Subtasks) == 0 {
			upd = upd.Remove(expression.Name("Subtasks"))
		} else {
			set("Subtasks", marshalSubtasks(*u.Subtasks))
		}
	}
	return upd
}

// UpdateProblem changes the given fields of a live problem, moving it between
// index partitions when its language or completion changes. It returns
// ENOTFOUND for a missing or deleted problem, and ECONFLICT when u makes a
// production run current (u.Production) that is not newer than the
// current one, or the current one is not u.ReplacesProduction: another run
// finished first, and its tests stay. ECONFLICT too when the problem was written
// since u.IfUnchangedSince.
func (db *DB) UpdateProblem(ctx context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error) {
	upd, cond := problemUpdateExpr(u, db.now().UTC())
	av, err := db.update(ctx, db.tables.Main, itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}, upd, &cond)
	if isConditionFailed(err) {
		if u.Production != nil || u.IfUnchangedSince != nil {
			if p, gerr := db.GetProblem(fresh(ctx), ref); gerr == nil && !p.IsDeleted {
				if u.Production == nil {
					return nil, algoitny.Errorf(algoitny.ECONFLICT, "problem %s/%s changed meanwhile (its test cases, perhaps); try again", ref.Platform, ref.ProblemID)
				}
				return nil, algoitny.Errorf(algoitny.ECONFLICT, "production run %d of problem %s/%s cannot replace the current one (%d): another run finished first",
					*u.Production, ref.Platform, ref.ProblemID, p.Production)
			}
		}
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	if err != nil {
		return nil, translate(err, "update problem")
	}
	return unmarshalProblem(av)
}

// problemUpdateExpr is the update of UpdateProblem: the attributes u sets
// (and the index keys that follow them) and the condition of the write,
// a live problem and, for a production run, one not older than the
// current one.
func problemUpdateExpr(u algoitny.ProblemUpdate, now time.Time) (expression.UpdateBuilder, expression.ConditionBuilder) {
	upd := expression.Set(expression.Name("UpdatedAt"), expression.Value(now))
	set := func(attr string, v any) { upd = upd.Set(expression.Name(attr), expression.Value(v)) }
	if u.Title != nil {
		set("Title", *u.Title)
		set("TitleLower", strings.ToLower(*u.Title))
	}
	if u.ProblemURL != nil {
		set("ProblemURL", *u.ProblemURL)
	}
	if u.Tags != nil {
		set("Tags", *u.Tags)
	}
	if u.SolutionCode != nil {
		set("SolutionCode", *u.SolutionCode)
	}
	if u.Language != nil {
		set("Language", string(*u.Language))
		set(attrGSI3PK, gsiProblemLanguage(*u.Language))
	}
	if u.Constraints != nil {
		set("Constraints", *u.Constraints)
	}
	upd = setJudging(upd, u)
	if u.TimeLimitMs != nil {
		set("TimeLimitMs", *u.TimeLimitMs)
	}
	if u.MemoryLimitMB != nil {
		set("MemoryLimitMB", *u.MemoryLimitMB)
	}
	if u.Unreviewed {
		set("NeedsReview", true)
		set("VerifiedByAdmin", false)
	}
	if u.IsCompleted != nil {
		set("IsCompleted", *u.IsCompleted)
		set(attrGSI2PK, gsiProblemCompleted(*u.IsCompleted))
	}
	if u.Generator != nil {
		set("GeneratorCode", u.Generator.Code)
		set("GeneratorLanguage", string(u.Generator.Language))
		upd = setOrRemove(upd, "GeneratorFiles", u.Generator.Files, len(u.Generator.Files) > 0)
	}
	if u.Validator != nil {
		set("ValidatorCode", u.Validator.Code)
		set("ValidatorLanguage", string(u.Validator.Language))
		upd = setOrRemove(upd, "ValidatorFiles", u.Validator.Files, len(u.Validator.Files) > 0)
	}
	cond := expression.Name("IsDeleted").Equal(expression.Value(false))
	if u.IfUnchangedSince != nil {
		cond = cond.And(expression.Name("UpdatedAt").Equal(expression.Value(*u.IfUnchangedSince)))
	}
	if u.Production != nil {
		set("Production", *u.Production)
		// Only forward: of two runs the later-numbered one stays current
		// whichever finishes last (algoitny.Problem.Production).
		cond = cond.And(expression.AttributeNotExists(expression.Name("Production")).
			Or(expression.Name("Production").LessThan(expression.Value(*u.Production))))
		if r := u.ReplacesProduction; r != nil && *r == 0 {
			cond = cond.And(expression.AttributeNotExists(expression.Name("Production")))
		} else if r != nil {
			cond = cond.And(expression.Name("Production").Equal(expression.Value(*r)))
		}
	}
	return upd, cond
}

// attrProductionSeq is the problem item's counter of production runs.
const attrProductionSeq = "ProductionSeq"

// StartProduction numbers a new production run of a live problem (see
// algoitny.Problem.Production): it adds one to the problem's counter of
// runs and returns the new value, higher than every number given before,
// whatever the clocks of the servers say. ENOTFOUND for a missing or
// deleted problem.
func (db *DB) StartProduction(ctx context.Context, ref algoitny.ProblemRef) (int, error) {
	upd := expression.Add(expression.Name(attrProductionSeq), expression.Value(1))
	live := expression.Name("IsDeleted").Equal(expression.Value(false))
	av, err := db.update(ctx, db.tables.Main, itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}, upd, &live)
	if isConditionFailed(err) {
		return 0, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	if err != nil {
		return 0, translate(err, "start production")
	}
	return intAttr(av, attrProductionSeq), nil
}

// ReviewProblem records a staff review (seed 003's needs_review,
// review_notes, verified_by_admin, reviewed_at): the problem no longer needs
// review. It returns ENOTFOUND for a missing or deleted problem.
func (db *DB) ReviewProblem(ctx context.Context, ref algoitny.ProblemRef, r algoitny.ProblemReview) (*algoitny.Problem, error) {
	now := db.now().UTC()
	upd := expression.Set(expression.Name("NeedsReview"), expression.Value(false)).
		Set(expression.Name("VerifiedByAdmin"), expression.Value(r.Verified)).
		Set(expression.Name("ReviewNotes"), expression.Value(r.Notes)).
		Set(expression.Name("ReviewedAt"), expression.Value(now)).
		Set(expression.Name("UpdatedAt"), expression.Value(now))
	live := expression.Name("IsDeleted").Equal(expression.Value(false))
	av, err := db.update(ctx, db.tables.Main, itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}, upd, &live)
	if isConditionFailed(err) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	if err != nil {
		return nil, translate(err, "review problem")
	}
	return unmarshalProblem(av)
}

// DeleteProblem soft-deletes a problem: it is marked deleted with a reason and
// its index keys are removed (sparse indexes), so it leaves every list but
// stays readable by key. The creator's problem counter goes down with it.
// It returns ENOTFOUND for a missing or already deleted problem.
func (db *DB) DeleteProblem(ctx context.Context, ref algoitny.ProblemRef, reason string) error {
	p, err := db.GetProblem(fresh(ctx), ref) // the write depends on what it reads
	if err != nil {
		return err
	}
	if p.IsDeleted {
		return algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	now := db.now().UTC()
	upd := expression.Set(expression.Name("IsDeleted"), expression.Value(true)).
		Set(expression.Name("DeletedAt"), expression.Value(now)).
		Set(expression.Name("DeletedReason"), expression.Value(reason)).
		Set(expression.Name("UpdatedAt"), expression.Value(now))
	for _, a := range []string{attrGSI1PK, attrGSI1SK, attrGSI2PK, attrGSI2SK, attrGSI3PK, attrGSI3SK} {
		upd = upd.Remove(expression.Name(a))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).
		WithCondition(expression.AttributeExists(expression.Name(attrPK)).And(expression.Name("IsDeleted").Equal(expression.Value(false)))).Build()
	if err != nil {
		return algoitny.Internal(err, "build delete")
	}
	items := []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}}
	if p.CreatedBy != "" {
		counter, _ := db.counterAdd(itemKey{userPK(p.CreatedBy), skUserProblemCount}, "Count", -1, algoitny.Unlimited, nil)
		items = append(items, counter)
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		return algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	return translate(err, "delete problem")
}

// DiscardProblem undoes a CreateProblem whose test cases could not be
// stored: the problem's item goes (not soft-deleted: nothing was ever
// visible but an empty draft) and its creator's counter goes down with it,
// so that the creator may simply try again. It applies only to a draft of
// createdBy without test cases, not deleted; ECONFLICT otherwise, ENOTFOUND
// if there is no such problem. (Parts of test cases written before the failure stay,
// invisible, like those of any interrupted write.)
func (db *DB) DiscardProblem(ctx context.Context, ref algoitny.ProblemRef, createdBy string) error {
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name(attrPK)).
		And(expression.Name("TestCaseCount").Equal(expression.Value(0))).
		And(expression.Name("IsCompleted").Equal(expression.Value(false))).
		And(expression.Name("IsDeleted").Equal(expression.Value(false))). // DeleteProblem already gave the slot back
		And(expression.Name("CreatedBy").Equal(expression.Value(createdBy)))).Build()
	if err != nil {
		return algoitny.Internal(err, "build discard")
	}
	items := []types.TransactWriteItem{{Delete: &types.Delete{
		TableName: aws.String(db.tables.Main), Key: itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}.av(),
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values(),
	}}}
	if createdBy != "" {
		counter, _ := db.counterAdd(itemKey{userPK(createdBy), skUserProblemCount}, "Count", -1, algoitny.Unlimited, nil)
		items = append(items, counter)
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		if _, gerr := db.GetProblem(fresh(ctx), ref); gerr != nil {
			return gerr
		}
		return algoitny.Errorf(algoitny.ECONFLICT, "problem %s/%s is not an empty draft of its creator", ref.Platform, ref.ProblemID)
	}
	return translate(err, "discard problem")
}

// CountUserProblems returns how many live problems a user has registered.
func (db *DB) CountUserProblems(ctx context.Context, userID string) (int, error) {
	av, err := db.getItem(ctx, db.tables.Main, itemKey{userPK(userID), skUserProblemCount})
	if err != nil || av == nil {
		return 0, err
	}
	return intAttr(av, "Count"), nil
}

func intAttr(item map[string]types.AttributeValue, name string) int {
	var n int
	if v, ok := item[name]; ok {
		_ = attributevalue.Unmarshal(v, &n)
	}
	return n
}
