package dynamo

import (
	"context"
	"errors"
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

const entityUser = "User"

// userItem is a user in the Users table: PK USER#{email}, GSI1 by Google id,
// GSI2 by plan (sorted by creation), GSI3 by user id.
type userItem struct {
	PK, SK               string
	EntityType           string
	UserID               string
	Email                string
	Name                 string
	Picture              string
	GoogleID             string `dynamodbav:",omitempty"`
	IsActive             bool
	IsStaff              bool
	SubscriptionPlanID   string
	SubscriptionPlanName string
	CreatedAt            time.Time
	UpdatedAt            time.Time
	LastLogin            *time.Time `dynamodbav:",omitempty"`
	GSI1PK, GSI1SK       string     `dynamodbav:",omitempty"`
	GSI2PK, GSI2SK       string
	GSI3PK, GSI3SK       string
}

// googleMarker reserves a Google id for one user (see googleIDMarkerPK).
type googleMarker struct {
	PK, SK     string
	EntityType string
	Email      string
	UserID     string
}

func marshalUser(u *algoitny.User) (map[string]types.AttributeValue, error) {
	it := userItem{
		PK: userEmailPK(u.Email), SK: skMetadata, EntityType: entityUser,
		UserID: u.ID, Email: u.Email, Name: u.Name, Picture: u.Picture, GoogleID: u.GoogleID,
		IsActive: u.IsActive, IsStaff: u.IsStaff, SubscriptionPlanID: u.PlanID, SubscriptionPlanName: u.PlanName,
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, LastLogin: u.LastLogin,
		GSI2PK: gsiUserPlan(u.PlanID), GSI2SK: keyTime(u.CreatedAt),
		GSI3PK: gsiUserID(u.ID), GSI3SK: skMetadata,
	}
	if u.GoogleID != "" {
		it.GSI1PK, it.GSI1SK = gsiUserGoogleID(u.GoogleID), skMetadata
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode user")
	}
	return av, nil
}

func unmarshalUser(av map[string]types.AttributeValue) (*algoitny.User, error) {
	var it userItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode user")
	}
	return &algoitny.User{
		ID: it.UserID, Email: it.Email, Name: it.Name, Picture: it.Picture, GoogleID: it.GoogleID,
		IsActive: it.IsActive, IsStaff: it.IsStaff, PlanID: it.SubscriptionPlanID, PlanName: it.SubscriptionPlanName,
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, LastLogin: it.LastLogin,
	}, nil
}

func (db *DB) googleMarkerPut(googleID, email, userID string) (types.TransactWriteItem, error) {
	av, err := attributevalue.MarshalMap(googleMarker{PK: googleIDMarkerPK(googleID), SK: skUnique, EntityType: "GoogleIDMarker", Email: email, UserID: userID})
	if err != nil {
		return types.TransactWriteItem{}, algoitny.Internal(err, "encode marker")
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(db.tables.Users), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}, nil
}

// newUser fills the server-assigned fields of a user about to be created.
func (db *DB) newUser(u *algoitny.User, plan *algoitny.Plan) {
	now := db.now().UTC()
	u.ID, u.CreatedAt, u.UpdatedAt = uuid.NewString(), now, now
	u.Email = strings.TrimSpace(u.Email)
	if plan != nil {
		u.PlanID, u.PlanName = plan.ID, plan.Name
	}
}

// CreateUser stores a new user on the given plan (with a Google id marker if
// the user has a Google id). It returns ECONFLICT if the email or the Google
// id is taken.
func (db *DB) CreateUser(ctx context.Context, u *algoitny.User, plan *algoitny.Plan) error {
	db.newUser(u, plan)
	av, err := marshalUser(u)
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(db.tables.Users), Item: av,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}}}
	if u.GoogleID != "" {
		m, err := db.googleMarkerPut(u.GoogleID, u.Email, u.ID)
		if err != nil {
			return err
		}
		items = append(items, m)
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if conditionFailedAt(err, 0) {
		return &algoitny.Error{Code: algoitny.ECONFLICT, Field: "email", Message: "a user with this email already exists"}
	}
	if conditionFailedAt(err, 1) {
		return &algoitny.Error{Code: algoitny.ECONFLICT, Field: "googleId", Message: "the Google account is linked to another user"}
	}
	return translate(err, "create user")
}

// SignInWithGoogle returns the user of a verified Google profile, creating it
// on plan when this is its first sign-in, or refreshing name, picture and last
// login otherwise. It also links a Google id to an existing user of the same
// email who has none yet. One Google id maps to one user even under
// concurrent first sign-ins: creation writes a uniqueness marker in the same
// transaction and the losers of the race read the winner's user. It returns
// ECONFLICT when the email belongs to a user linked to another Google account.
func (db *DB) SignInWithGoogle(ctx context.Context, p algoitny.GoogleProfile, plan *algoitny.Plan) (u *algoitny.User, created bool, err error) {
	for attempt := 0; attempt < 5; attempt++ {
		marker, err := db.getItem(ctx, db.tables.Users, itemKey{googleIDMarkerPK(p.GoogleID), skUnique})
		if err != nil {
			return nil, false, err
		}
		if marker != nil {
			email := stringAttr(marker, "Email")
			u, err := db.touchLogin(ctx, email, p)
			return u, false, err
		}
		u := &algoitny.User{Email: p.Email, Name: p.Name, Picture: p.Picture, GoogleID: p.GoogleID, IsActive: true}
		now := db.now().UTC()
		u.LastLogin = &now
		err = db.CreateUser(ctx, u, plan)
		switch {
		case err == nil:
			return u, true, nil
		case conflictOn(err, "googleId"):
			continue // a concurrent sign-in won; read its user
		case conflictOn(err, "email"):
			// The email exists without this Google id: link it if it has none.
			if err := db.linkGoogleID(ctx, p); err != nil {
				if algoitny.IsCode(err, algoitny.ECONFLICT) && attempt < 4 {
					continue
				}
				return nil, false, err
			}
			u, err := db.touchLogin(ctx, p.Email, p)
			return u, false, err
		default:
			return nil, false, err
		}
	}
	return nil, false, algoitny.Errorf(algoitny.ECONFLICT, "sign-in raced with another one too often; retry")
}

// linkGoogleID sets the Google id of the user with p's email, who must have none.
func (db *DB) linkGoogleID(ctx context.Context, p algoitny.GoogleProfile) error {
	current, err := db.GetUserByEmail(fresh(ctx), p.Email)
	if err != nil {
		return err
	}
	if current.GoogleID != "" && current.GoogleID != p.GoogleID {
		return algoitny.Errorf(algoitny.ECONFLICT, "the email %q is linked to another Google account", p.Email)
	}
	m, err := db.googleMarkerPut(p.GoogleID, current.Email, current.ID)
	if err != nil {
		return err
	}
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("GoogleID"), expression.Value(p.GoogleID)).
			Set(expression.Name(attrGSI1PK), expression.Value(gsiUserGoogleID(p.GoogleID))).
			Set(expression.Name(attrGSI1SK), expression.Value(skMetadata))).
		WithCondition(expression.AttributeExists(expression.Name(attrPK)).And(expression.AttributeNotExists(expression.Name("GoogleID")))).
		Build()
	if err != nil {
		return algoitny.Internal(err, "build link")
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: aws.String(db.tables.Users), Key: itemKey{userEmailPK(p.Email), skMetadata}.av(),
			UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		}},
		m,
	}})
	return translate(err, "link Google id")
}

// touchLogin refreshes a signing-in user's profile and last login time.
func (db *DB) touchLogin(ctx context.Context, email string, p algoitny.GoogleProfile) (*algoitny.User, error) {
	now := db.now().UTC()
	upd := expression.Set(expression.Name("LastLogin"), expression.Value(now)).
		Set(expression.Name("UpdatedAt"), expression.Value(now))
	if p.Name != "" {
		upd = upd.Set(expression.Name("Name"), expression.Value(p.Name))
	}
	if p.Picture != "" {
		upd = upd.Set(expression.Name("Picture"), expression.Value(p.Picture))
	}
	return db.updateUser(ctx, email, upd)
}

func (db *DB) updateUser(ctx context.Context, email string, upd expression.UpdateBuilder) (*algoitny.User, error) {
	av, err := db.update(ctx, db.tables.Users, itemKey{userEmailPK(email), skMetadata}, upd, nil)
	if isConditionFailed(err) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "user %q not found", email)
	}
	if err != nil {
		return nil, translate(err, "update user")
	}
	return unmarshalUser(av)
}

// GetUserByEmail returns the user with the given email, or ENOTFOUND.
func (db *DB) GetUserByEmail(ctx context.Context, email string) (*algoitny.User, error) {
	return getOne(ctx, db, db.tables.Users, itemKey{userEmailPK(email), skMetadata}, unmarshalUser, "user not found")
}

// GetUserByGoogleID returns the user linked to a Google id (seed pattern #25),
// or ENOTFOUND. It reads the uniqueness marker (strongly consistent) rather
// than the eventually consistent GSI1.
func (db *DB) GetUserByGoogleID(ctx context.Context, googleID string) (*algoitny.User, error) {
	marker, err := db.getItem(ctx, db.tables.Users, itemKey{googleIDMarkerPK(googleID), skUnique})
	if err != nil {
		return nil, err
	}
	if marker == nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "user not found")
	}
	return db.GetUserByEmail(ctx, stringAttr(marker, "Email"))
}

// GetUserByID returns the user with the given internal id through GSI3, or ENOTFOUND.
func (db *DB) GetUserByID(ctx context.Context, id string) (*algoitny.User, error) {
	items, err := db.all(ctx, &query{list: "userById", table: db.tables.Users, index: indexGSI3, pk: gsiUserID(id)})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "user not found")
	}
	// The index is eventually consistent: it finds the email, the table's
	// item (strict in the cache, read consistently otherwise) says what
	// the user is now — active, staff, plan.
	listed, err := unmarshalUser(items[0])
	if err != nil {
		return nil, err
	}
	u, err := db.GetUserByEmail(ctx, listed.Email)
	if err == nil && u.ID != id { // the email now belongs to another account
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "user not found")
	}
	return u, err
}

// GetUsersByEmail loads many users in BatchGetItem calls of 100 keys,
// strongly consistent, never from memory: for what is decided on a user's
// flags or plan. Emails without a user are absent from the map, which is
// keyed by lower-case email.
func (db *DB) GetUsersByEmail(ctx context.Context, emails []string) (map[string]*algoitny.User, error) {
	keys := make([]itemKey, len(emails))
	for i, e := range emails {
		keys[i] = itemKey{userEmailPK(e), skMetadata}
	}
	return getMany(ctx, db, db.tables.Users, keys, unmarshalUser, func(u *algoitny.User) string { return strings.ToLower(u.Email) })
}

// GetUsersForDisplay is GetUsersByEmail for users shown beside other
// people's items (authors of a history page, the leaderboard): on a serve
// process (CacheDisplayData) a user read for display in the last bound is
// taken from memory — at most the bound old, and forgotten at once when
// this process writes the user — so a warm page of fifty authors costs no
// request. Nothing a request may do is decided on what it returns.
func (db *DB) GetUsersForDisplay(ctx context.Context, emails []string) (map[string]*algoitny.User, error) {
	return db.GetUsersByEmail(forDisplay(ctx), emails)
}

// ListUsers pages through all users (seed pattern #23). It is the one Scan the
// seed allows, for the admin dashboard; uniqueness markers are filtered out.
func (db *DB) ListUsers(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error) {
	f := expression.Name("EntityType").Equal(expression.Value(entityUser))
	p, err := db.page(ctx, &query{list: "users", table: db.tables.Users, scan: true, filter: &f}, page)
	if err != nil {
		return algoitny.Page[*algoitny.User]{}, err
	}
	return convertPage(p, unmarshalUser)
}

// ListUsersByPlan pages through the users of a plan, newest first (#27, GSI2).
func (db *DB) ListUsersByPlan(ctx context.Context, planID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error) {
	p, err := db.page(ctx, &query{list: "usersByPlan", table: db.tables.Users, index: indexGSI2, pk: gsiUserPlan(planID)}, page)
	if err != nil {
		return algoitny.Page[*algoitny.User]{}, err
	}
	return convertPage(p, unmarshalUser)
}

// SetUserPlan moves a user to plan (#26): the GSI2 membership and the
// denormalized plan name change together. It returns ENOTFOUND for an unknown user.
func (db *DB) SetUserPlan(ctx context.Context, email string, plan *algoitny.Plan) (*algoitny.User, error) {
	return db.updateUser(ctx, email, expression.
		Set(expression.Name("SubscriptionPlanID"), expression.Value(plan.ID)).
		Set(expression.Name("SubscriptionPlanName"), expression.Value(plan.Name)).
		Set(expression.Name(attrGSI2PK), expression.Value(gsiUserPlan(plan.ID))).
		Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC())))
}

// SetUserActive activates or deactivates a user. It returns ENOTFOUND for an unknown user.
func (db *DB) SetUserActive(ctx context.Context, email string, active bool) (*algoitny.User, error) {
	return db.updateUser(ctx, email, expression.
		Set(expression.Name("IsActive"), expression.Value(active)).
		Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC())))
}

// SetUserStaff grants or revokes staff rights. It returns ENOTFOUND for an unknown user.
func (db *DB) SetUserStaff(ctx context.Context, email string, staff bool) (*algoitny.User, error) {
	return db.updateUser(ctx, email, expression.
		Set(expression.Name("IsStaff"), expression.Value(staff)).
		Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC())))
}

// DeleteUser removes the user item and its Google id marker. Deleting a user
// that does not exist is not an error, so account deletion can be retried.
func (db *DB) DeleteUser(ctx context.Context, email string) error {
	u, err := db.GetUserByEmail(fresh(ctx), email) // its Google id decides what to delete
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil
	}
	if err != nil {
		return err
	}
	items := []types.TransactWriteItem{{Delete: &types.Delete{TableName: aws.String(db.tables.Users), Key: itemKey{userEmailPK(email), skMetadata}.av()}}}
	if u.GoogleID != "" {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(db.tables.Users), Key: itemKey{googleIDMarkerPK(u.GoogleID), skUnique}.av()}})
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return translate(err, "delete user")
}

// conflictOn reports whether err is an ECONFLICT about the given field.
func conflictOn(err error, field string) bool {
	var e *algoitny.Error
	return errors.As(err, &e) && e.Code == algoitny.ECONFLICT && e.Field == field
}

// AuthLookup reads what authenticating a session needs — the user, the
// session's logout marker, the plan the request names and, if asked, the
// user's quota counter of the day — in one strongly consistent
// BatchGetItem over the three tables, so no replica can act on an old
// value; only a user whose plan is not the one named costs a second read
// (of their plan). It returns ENOTFOUND if the user no longer exists.
func (db *DB) AuthLookup(ctx context.Context, r algoitny.AuthRequest) (*algoitny.AuthSnapshot, error) {
	userKey, revokedKey := itemKey{userEmailPK(r.Email), skMetadata}, itemKey{sessionRevokedPK(r.SessionID), skRevoked}
	keys := map[string][]itemKey{db.tables.Users: {userKey, revokedKey}}
	if r.PlanName != "" {
		keys[db.tables.Plans] = []itemKey{{planPK(r.PlanName), skMetadata}}
	}
	counterKey := itemKey{userPK(r.UserID), quotaSK(r.UsageDay)}
	if r.UsageDay != "" && r.UserID != "" {
		keys[db.tables.Main] = []itemKey{counterKey}
	}
	got, err := db.batchGetTables(ctx, keys, true)
	if err != nil {
		return nil, err
	}
	av, ok := got[db.tables.Users][userKey]
	if !ok {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "user not found")
	}
	snap := &algoitny.AuthSnapshot{}
	if snap.User, err = unmarshalUser(av); err != nil {
		return nil, err
	}
	// A marker past its TTL is ignored even before DynamoDB deletes it.
	if m, ok := got[db.tables.Users][revokedKey]; ok {
		snap.Revoked = int64(intAttr(m, attrTTL)) > db.now().Unix()
	}
	if snap.Plan, err = db.authPlan(ctx, snap.User.PlanName, r.PlanName, got[db.tables.Plans]); err != nil {
		return nil, err
	}
	if r.UsageDay != "" && r.UserID == snap.User.ID {
		snap.Usage = &algoitny.DailyUsage{Day: r.UsageDay, Counts: usageCounts(got[db.tables.Main][counterKey]), ReadAt: db.now()}
	}
	return snap, nil
}

// authPlan is the user's plan (name) for AuthLookup: the one read beside
// the user if it was the one asked for, else read now; nil if the user has
// none or it does not exist.
func (db *DB) authPlan(ctx context.Context, name, asked string, read map[itemKey]map[string]types.AttributeValue) (*algoitny.Plan, error) {
	if name == "" {
		return nil, nil
	}
	av, ok := read[itemKey{planPK(name), skMetadata}]
	if name != asked {
		var err error
		if av, err = db.getItem(ctx, db.tables.Plans, itemKey{planPK(name), skMetadata}); err != nil {
			return nil, err
		}
		ok = av != nil
	}
	if !ok {
		return nil, nil
	}
	return unmarshalPlan(av)
}

// RevokeSession marks a session as logged out until expiresAt, when its token
// stops being accepted anyway and DynamoDB's TTL removes the marker.
func (db *DB) RevokeSession(ctx context.Context, sessionID string, expiresAt time.Time) error {
	_, err := db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.tables.Users), Item: map[string]types.AttributeValue{
		attrPK:       &types.AttributeValueMemberS{Value: sessionRevokedPK(sessionID)},
		attrSK:       &types.AttributeValueMemberS{Value: skRevoked},
		"EntityType": &types.AttributeValueMemberS{Value: "RevokedSession"},
		attrTTL:      &types.AttributeValueMemberN{Value: itoa(expiresAt.Unix())},
	}})
	return translate(err, "revoke session")
}
