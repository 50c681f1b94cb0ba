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
	"github.com/google/uuid"
)

// planItem is a plan in the Plans table. GSI1 lists plans by activity, sorted by name.
type planItem struct {
	PK, SK              string
	EntityType          string
	PlanID              string
	Name                string
	Description         string
	MaxHintsPerDay      int
	MaxExecutionsPerDay int
	MaxProblems         int
	CanViewAllProblems  bool
	CanRegisterProblems bool
	PriceCents          int
	IsActive            bool
	MaxChecks           int
	MinCheckDelayMs     int
	// Absent on plans stored before code runs and counterexample searches
	// were metered: those get their plan's executions limit (unmarshalPlan)
	// until seed-plans fills them in.
	MaxCodeRunsPerDay        *int
	MaxCounterexamplesPerDay *int
	CreatedAt                time.Time
	UpdatedAt                time.Time
	GSI1PK, GSI1SK           string
}

func marshalPlan(p *algoitny.Plan) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMap(planItem{
		PK: planPK(p.Name), SK: skMetadata, EntityType: "SubscriptionPlan",
		PlanID: p.ID, Name: p.Name, Description: p.Description,
		MaxHintsPerDay: p.MaxHintsPerDay, MaxExecutionsPerDay: p.MaxExecutionsPerDay, MaxProblems: p.MaxProblems,
		CanViewAllProblems: p.CanViewAllProblems, CanRegisterProblems: p.CanRegisterProblems,
		PriceCents: p.PriceCents, IsActive: p.IsActive, MaxChecks: p.MaxChecks, MinCheckDelayMs: p.MinCheckDelayMs,
		MaxCodeRunsPerDay: &p.MaxCodeRunsPerDay, MaxCounterexamplesPerDay: &p.MaxCounterexamplesPerDay,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		GSI1PK: gsiPlanActive(p.IsActive), GSI1SK: p.Name,
	})
}

func unmarshalPlan(av map[string]types.AttributeValue) (*algoitny.Plan, error) {
	var it planItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode plan")
	}
	return &algoitny.Plan{
		ID: it.PlanID, Name: it.Name, Description: it.Description,
		MaxHintsPerDay: it.MaxHintsPerDay, MaxExecutionsPerDay: it.MaxExecutionsPerDay, MaxProblems: it.MaxProblems,
		CanViewAllProblems: it.CanViewAllProblems, CanRegisterProblems: it.CanRegisterProblems,
		PriceCents: it.PriceCents, IsActive: it.IsActive, MaxChecks: it.MaxChecks, MinCheckDelayMs: it.MinCheckDelayMs,
		MaxCodeRunsPerDay:        deref(cmpOrNil(it.MaxCodeRunsPerDay, &it.MaxExecutionsPerDay)),
		MaxCounterexamplesPerDay: deref(cmpOrNil(it.MaxCounterexamplesPerDay, &it.MaxExecutionsPerDay)),
		CreatedAt:                it.CreatedAt, UpdatedAt: it.UpdatedAt,
	}, nil
}

// cmpOrNil returns the first non-nil pointer.
func cmpOrNil[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// CreatePlan stores a new plan, assigning its id and timestamps. It returns
// ECONFLICT if a plan with the same name exists.
func (db *DB) CreatePlan(ctx context.Context, p *algoitny.Plan) error {
	now := db.now().UTC()
	p.ID, p.CreatedAt, p.UpdatedAt = uuid.NewString(), now, now
	av, err := marshalPlan(p)
	if err != nil {
		return algoitny.Internal(err, "encode plan")
	}
	_, err = db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(db.tables.Plans), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if isConditionFailed(err) {
		return algoitny.Errorf(algoitny.ECONFLICT, "plan %q already exists", p.Name)
	}
	return translate(err, "create plan")
}

// GetPlan returns the plan named name, or ENOTFOUND.
func (db *DB) GetPlan(ctx context.Context, name string) (*algoitny.Plan, error) {
	return getOne(ctx, db, db.tables.Plans, itemKey{planPK(name), skMetadata}, unmarshalPlan, "plan %q not found", name)
}

// GetPlans loads many plans in one BatchGetItem, strongly consistent, never
// from memory (a plan's limits are what charges are checked against);
// names without a plan are absent from the map, which is keyed by name.
func (db *DB) GetPlans(ctx context.Context, names []string) (map[string]*algoitny.Plan, error) {
	keys := make([]itemKey, len(names))
	for i, n := range names {
		keys[i] = itemKey{planPK(n), skMetadata}
	}
	return getMany(ctx, db, db.tables.Plans, keys, unmarshalPlan, func(p *algoitny.Plan) string { return p.Name })
}

// GetPlansForDisplay is GetPlans for the plans of users shown beside other
// people's items (GetUsersForDisplay): taken from memory when read for
// display in the last bound, forgotten at once when this process writes
// the plan. No limit is ever checked against what it returns.
func (db *DB) GetPlansForDisplay(ctx context.Context, names []string) (map[string]*algoitny.Plan, error) {
	return db.GetPlans(forDisplay(ctx), names)
}

// ListPlans returns the active plans sorted by name, followed by the inactive
// ones when includeInactive is set. Two Queries on GSI1, never a Scan.
func (db *DB) ListPlans(ctx context.Context, includeInactive bool) ([]*algoitny.Plan, error) {
	states := []bool{true}
	if includeInactive {
		states = append(states, false)
	}
	var plans []*algoitny.Plan
	for _, active := range states {
		items, err := db.all(ctx, &query{list: "plans", table: db.tables.Plans, index: indexGSI1, pk: gsiPlanActive(active), forward: true})
		if err != nil {
			return nil, err
		}
		for _, av := range items {
			p, err := unmarshalPlan(av)
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
		}
	}
	return plans, nil
}

// UpdatePlan changes the given fields of the plan named name and returns the
// result. It returns ENOTFOUND if there is no such plan.
func (db *DB) UpdatePlan(ctx context.Context, name string, u algoitny.PlanUpdate) (*algoitny.Plan, error) {
	upd := expression.Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC()))
	setIf := func(attr string, v any, ok bool) {
		if ok {
			upd = upd.Set(expression.Name(attr), expression.Value(v))
		}
	}
	setIf("Description", deref(u.Description), u.Description != nil)
	setIf("MaxHintsPerDay", deref(u.MaxHintsPerDay), u.MaxHintsPerDay != nil)
	setIf("MaxExecutionsPerDay", deref(u.MaxExecutionsPerDay), u.MaxExecutionsPerDay != nil)
	setIf("MaxProblems", deref(u.MaxProblems), u.MaxProblems != nil)
	setIf("CanViewAllProblems", deref(u.CanViewAllProblems), u.CanViewAllProblems != nil)
	setIf("CanRegisterProblems", deref(u.CanRegisterProblems), u.CanRegisterProblems != nil)
	setIf("PriceCents", deref(u.PriceCents), u.PriceCents != nil)
	setIf("MaxChecks", deref(u.MaxChecks), u.MaxChecks != nil)
	setIf("MinCheckDelayMs", deref(u.MinCheckDelayMs), u.MinCheckDelayMs != nil)
	setIf("MaxCodeRunsPerDay", deref(u.MaxCodeRunsPerDay), u.MaxCodeRunsPerDay != nil)
	setIf("MaxCounterexamplesPerDay", deref(u.MaxCounterexamplesPerDay), u.MaxCounterexamplesPerDay != nil)
	if u.IsActive != nil {
		upd = upd.Set(expression.Name("IsActive"), expression.Value(*u.IsActive)).
			Set(expression.Name(attrGSI1PK), expression.Value(gsiPlanActive(*u.IsActive)))
	}
	av, err := db.update(ctx, db.tables.Plans, itemKey{planPK(name), skMetadata}, upd, nil)
	if isConditionFailed(err) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "plan %q not found", name)
	}
	if err != nil {
		return nil, translate(err, "update plan")
	}
	return unmarshalPlan(av)
}

// SeedPlans creates the given plans where no plan of that name exists and, if
// overwrite is set, resets existing ones to the given values. It returns the
// names it created or reset. Safe to run any number of times.
func (db *DB) SeedPlans(ctx context.Context, plans []algoitny.Plan, overwrite bool) ([]string, error) {
	var changed []string
	for _, p := range plans {
		err := db.CreatePlan(ctx, &p)
		switch {
		case err == nil:
			changed = append(changed, p.Name)
		case algoitny.IsCode(err, algoitny.ECONFLICT) && overwrite:
			_, err := db.UpdatePlan(ctx, p.Name, algoitny.PlanUpdate{
				Description: &p.Description, MaxHintsPerDay: &p.MaxHintsPerDay, MaxExecutionsPerDay: &p.MaxExecutionsPerDay,
				MaxProblems: &p.MaxProblems, CanViewAllProblems: &p.CanViewAllProblems, CanRegisterProblems: &p.CanRegisterProblems,
				PriceCents: &p.PriceCents, IsActive: &p.IsActive, MaxChecks: &p.MaxChecks, MinCheckDelayMs: &p.MinCheckDelayMs,
				MaxCodeRunsPerDay: &p.MaxCodeRunsPerDay, MaxCounterexamplesPerDay: &p.MaxCounterexamplesPerDay,
			})
			if err != nil {
				return changed, err
			}
			changed = append(changed, p.Name)
		case algoitny.IsCode(err, algoitny.ECONFLICT):
			// Plans stored before a field existed get its default value;
			// values an operator set are never touched.
			filled, err := db.fillPlanFields(ctx, p)
			if err != nil {
				return changed, err
			}
			if filled {
				changed = append(changed, p.Name+" (new fields)")
			}
		default:
			return changed, err
		}
	}
	return changed, nil
}

// fillPlanFields sets the limits of a stored plan that predates them (the
// URL-watch limits; the code-run and counterexample quotas). It reports
// whether it changed the plan.
func (db *DB) fillPlanFields(ctx context.Context, p algoitny.Plan) (bool, error) {
	filled := false
	for _, fields := range [][]struct {
		name  string
		value int
	}{
		{{"MaxChecks", p.MaxChecks}, {"MinCheckDelayMs", p.MinCheckDelayMs}},
		{{"MaxCodeRunsPerDay", p.MaxCodeRunsPerDay}, {"MaxCounterexamplesPerDay", p.MaxCounterexamplesPerDay}},
	} {
		missing := expression.AttributeNotExists(expression.Name(fields[0].name))
		upd := expression.UpdateBuilder{}
		for _, f := range fields {
			upd = upd.Set(expression.Name(f.name), expression.Value(f.value))
		}
		_, err := db.update(ctx, db.tables.Plans, itemKey{planPK(p.Name), skMetadata}, upd, &missing)
		if isConditionFailed(err) {
			continue
		}
		if err != nil {
			return filled, translate(err, "fill plan fields")
		}
		filled = true
	}
	return filled, nil
}

// update applies upd to the existing item k (condition: it exists, and cond
// if given) and returns the new item. A failed condition is returned raw so
// that callers can say which entity was missing.
func (db *DB) update(ctx context.Context, table string, k itemKey, upd expression.UpdateBuilder, cond *expression.ConditionBuilder) (map[string]types.AttributeValue, error) {
	c := expression.AttributeExists(expression.Name(attrPK))
	if cond != nil {
		c = c.And(*cond)
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(c).Build()
	if err != nil {
		return nil, algoitny.Internal(err, "build update")
	}
	out, err := db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: k.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
