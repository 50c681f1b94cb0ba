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

// channelItem is a user's notification channel, in the user's partition.
type channelItem struct {
	PK, SK     string
	EntityType string
	ID         string    `dynamodbav:"id"`
	UserID     string    `dynamodbav:"userid"`
	Kind       string    `dynamodbav:"kind"`
	URL        string    `dynamodbav:"url"`
	Secret     string    `dynamodbav:"secret"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
}

// deliveryItem is one notification to one channel and its log, in the
// channel's delivery partition.
type deliveryItem struct {
	PK, SK     string
	EntityType string
	ID         string    `dynamodbav:"id"`
	ChannelID  string    `dynamodbav:"channelId"`
	UserID     string    `dynamodbav:"userid"`
	CheckID    string    `dynamodbav:"checkId"`
	State      string    `dynamodbav:"state"`
	Status     string    `dynamodbav:"status"`
	Attempts   int       `dynamodbav:"attempts"`
	LastError  string    `dynamodbav:"lastError,omitempty"`
	Payload    []byte    `dynamodbav:"payload"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	UpdatedAt  time.Time `dynamodbav:"updatedAt"`
	TTL        int64
}

func unmarshalChannel(av map[string]types.AttributeValue) (*algoitny.NotificationChannel, error) {
	var it channelItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode notification channel")
	}
	return &algoitny.NotificationChannel{ID: it.ID, UserID: it.UserID, Kind: algoitny.ChannelKind(it.Kind), URL: it.URL, Secret: it.Secret, CreatedAt: it.CreatedAt}, nil
}

func unmarshalDelivery(av map[string]types.AttributeValue) (*algoitny.NotificationDelivery, error) {
	var it deliveryItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode notification delivery")
	}
	return &algoitny.NotificationDelivery{
		ID: it.ID, ChannelID: it.ChannelID, UserID: it.UserID, CheckID: it.CheckID, State: algoitny.CheckState(it.State),
		Status: algoitny.DeliveryStatus(it.Status), Attempts: it.Attempts, LastError: it.LastError, Payload: it.Payload,
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt,
	}, nil
}

func channelNotFound() error {
	return algoitny.Errorf(algoitny.ENOTFOUND, "notification channel not found")
}

// channelKey returns the key of a user's channel id; ENOTFOUND for anything
// that is not an id, so that garbage never reaches DynamoDB.
func channelKey(userID, id string) (itemKey, error) {
	if _, err := uuid.Parse(id); err != nil || userID == "" {
		return itemKey{}, channelNotFound()
	}
	return itemKey{userPK(userID), notifyChannelSK(id)}, nil
}

// CreateNotificationChannel stores a new channel of ch.UserID, assigning
// its id and CreatedAt, if the user has fewer than maxChannels (a counter
// raised in the same transaction, so the limit holds under concurrency). It
// returns ERATELIMITED when the limit is reached.
func (db *DB) CreateNotificationChannel(ctx context.Context, ch *algoitny.NotificationChannel, maxChannels int) error {
	ch.ID, ch.CreatedAt = newID(db.now())
	av, err := attributevalue.MarshalMap(channelItem{
		PK: userPK(ch.UserID), SK: notifyChannelSK(ch.ID), EntityType: "NotificationChannel",
		ID: ch.ID, UserID: ch.UserID, Kind: string(ch.Kind), URL: ch.URL, Secret: ch.Secret, CreatedAt: ch.CreatedAt,
	})
	if err != nil {
		return algoitny.Internal(err, "encode notification channel")
	}
	limited := &algoitny.Error{Code: algoitny.ERATELIMITED, Message: "you have the most notification channels allowed",
		RateLimit: &algoitny.RateLimit{Limit: maxChannels, Used: maxChannels}}
	counter, ok := db.counterAdd(itemKey{userPK(ch.UserID), skUserChannelCount}, "Count", 1, maxChannels, nil)
	if !ok {
		return limited
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		counter,
		{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
	}})
	if conditionFailedAt(err, 0) {
		return limited
	}
	return translate(err, "create notification channel")
}

// GetNotificationChannel returns a user's channel, or ENOTFOUND.
func (db *DB) GetNotificationChannel(ctx context.Context, userID, id string) (*algoitny.NotificationChannel, error) {
	k, err := channelKey(userID, id)
	if err != nil {
		return nil, err
	}
	av, err := db.getItem(ctx, db.tables.Main, k)
	if err != nil {
		return nil, err
	}
	if av == nil {
		return nil, channelNotFound()
	}
	return unmarshalChannel(av)
}

// ListNotificationChannels returns all of a user's channels, oldest first
// (a user has a handful). It returns EINTERNAL only.
func (db *DB) ListNotificationChannels(ctx context.Context, userID string) ([]*algoitny.NotificationChannel, error) {
	items, err := db.all(ctx, &query{list: "notifyChannels", table: db.tables.Main, pk: userPK(userID), skPrefix: skPrefixNotifyChannel, forward: true})
	if err != nil {
		return nil, err
	}
	out := make([]*algoitny.NotificationChannel, 0, len(items))
	for _, av := range items {
		ch, err := unmarshalChannel(av)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

// DeleteNotificationChannel removes a user's channel and lowers the user's
// count in one transaction; its delivery log expires with its TTL, and
// queued deliveries find the channel gone. It returns ENOTFOUND.
func (db *DB) DeleteNotificationChannel(ctx context.Context, userID, id string) error {
	k, err := channelKey(userID, id)
	if err != nil {
		return err
	}
	counter, _ := db.counterAdd(itemKey{userPK(userID), skUserChannelCount}, "Count", -1, algoitny.Unlimited, nil)
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(db.tables.Main), Key: k.av(), ConditionExpression: aws.String("attribute_exists(PK)")}},
		counter,
	}})
	if conditionFailedAt(err, 0) {
		return channelNotFound()
	}
	return translate(err, "delete notification channel")
}

// CreateDelivery stores a PENDING delivery of d.Payload to d.ChannelID,
// assigning its times, and its id unless it has one (the id of the alert it
// announces: see algoitny.CheckAlert); it expires after
// algoitny.DeliveryRetention. It returns ECONFLICT when a delivery with that
// id already exists on the channel (it is left as it is), else EINTERNAL
// only.
func (db *DB) CreateDelivery(ctx context.Context, d *algoitny.NotificationDelivery) error {
	if d.ID == "" {
		d.ID, d.CreatedAt = newID(db.now())
	} else if d.CreatedAt.IsZero() {
		d.CreatedAt = db.now().UTC()
	}
	d.UpdatedAt, d.Status = d.CreatedAt, algoitny.DeliveryPending
	av, err := attributevalue.MarshalMap(toDeliveryItem(d))
	if err != nil {
		return algoitny.Internal(err, "encode notification delivery")
	}
	_, err = db.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if isConditionFailed(err) {
		return algoitny.Errorf(algoitny.ECONFLICT, "the delivery exists")
	}
	return translate(err, "create notification delivery")
}

func toDeliveryItem(d *algoitny.NotificationDelivery) deliveryItem {
	return deliveryItem{
		PK: deliveryPK(d.ChannelID), SK: deliverySK(d.ID), EntityType: "NotificationDelivery",
		ID: d.ID, ChannelID: d.ChannelID, UserID: d.UserID, CheckID: d.CheckID, State: string(d.State),
		Status: string(d.Status), Attempts: d.Attempts, LastError: d.LastError, Payload: d.Payload,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, TTL: d.CreatedAt.Add(algoitny.DeliveryRetention).Unix(),
	}
}

// GetDelivery returns a delivery of a channel, or ENOTFOUND.
func (db *DB) GetDelivery(ctx context.Context, channelID, id string) (*algoitny.NotificationDelivery, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "delivery not found")
	}
	return getOne(ctx, db, db.tables.Main, itemKey{deliveryPK(channelID), deliverySK(id)}, unmarshalDelivery, "delivery not found")
}

// RecordDeliveryAttempt stores a delivery's status, attempts and last
// error (UpdatedAt set here). It returns ENOTFOUND when the delivery
// expired.
func (db *DB) RecordDeliveryAttempt(ctx context.Context, d *algoitny.NotificationDelivery) error {
	d.UpdatedAt = db.now().UTC()
	upd := expression.Set(expression.Name("status"), expression.Value(string(d.Status))).
		Set(expression.Name("attempts"), expression.Value(d.Attempts)).
		Set(expression.Name("updatedAt"), expression.Value(d.UpdatedAt))
	upd = setOrRemove(upd, "lastError", d.LastError, d.LastError != "")
	_, err := db.update(ctx, db.tables.Main, itemKey{deliveryPK(d.ChannelID), deliverySK(d.ID)}, upd, nil)
	if isConditionFailed(err) {
		return algoitny.Errorf(algoitny.ENOTFOUND, "delivery not found")
	}
	return translate(err, "record notification delivery")
}

// ListDeliveries pages through a channel's delivery log, newest first. It
// returns EINVALID for a bad page size or cursor.
func (db *DB) ListDeliveries(ctx context.Context, channelID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.NotificationDelivery], error) {
	p, err := db.page(ctx, &query{list: "deliveries", table: db.tables.Main, pk: deliveryPK(channelID), skPrefix: skPrefixDelivery}, page)
	if err != nil {
		return algoitny.Page[*algoitny.NotificationDelivery]{}, err
	}
	return convertPage(p, unmarshalDelivery)
}

// alertItem is a change of a check's state waiting in the notification
// outbox (algoitny.CheckAlert).
type alertItem struct {
	PK, SK     string
	EntityType string
	ID         string    `dynamodbav:"id"`
	UserID     string    `dynamodbav:"userid"`
	CheckID    string    `dynamodbav:"checkId"`
	State      string    `dynamodbav:"state"`
	Payload    []byte    `dynamodbav:"payload"`
	CreatedAt  time.Time `dynamodbav:"createdAt"`
	TTL        int64
}

// putAlert is the write that adds a to the outbox, assigning its id and
// CreatedAt (RecordCheckRun adds it to the run's transaction).
func (db *DB) putAlert(a *algoitny.CheckAlert) (types.TransactWriteItem, error) {
	a.ID, a.CreatedAt = newID(db.now())
	av, err := attributevalue.MarshalMap(alertItem{
		PK: pkAlertOutbox, SK: alertSK(a.ID), EntityType: "CheckAlert",
		ID: a.ID, UserID: a.UserID, CheckID: a.CheckID, State: string(a.State), Payload: a.Payload,
		CreatedAt: a.CreatedAt, TTL: a.CreatedAt.Add(algoitny.AlertRetention).Unix(),
	})
	if err != nil {
		return types.TransactWriteItem{}, algoitny.Internal(err, "encode check alert")
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: av}}, nil
}

// ListCheckAlerts returns up to limit alerts of the outbox, oldest first:
// those not dispatched yet (in flight, or left behind by a crash). after is
// the id of the last alert of the previous page ("" for the first), so a
// reader goes on past alerts it could not dispatch. It reads DynamoDB
// itself, never a cache. It returns EINTERNAL only.
func (db *DB) ListCheckAlerts(ctx context.Context, after string, limit int) ([]*algoitny.CheckAlert, error) {
	var start map[string]types.AttributeValue
	if after != "" {
		start = itemKey{pkAlertOutbox, alertSK(after)}.av()
	}
	items, _, err := db.query(ctx, &query{list: "alerts", table: db.tables.Main, pk: pkAlertOutbox, skPrefix: skPrefixAlert, forward: true}, int32(max(limit, 1)), start)
	if err != nil {
		return nil, err
	}
	out := make([]*algoitny.CheckAlert, 0, len(items))
	for _, av := range items {
		var it alertItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode check alert")
		}
		out = append(out, &algoitny.CheckAlert{ID: it.ID, UserID: it.UserID, CheckID: it.CheckID,
			State: algoitny.CheckState(it.State), Payload: it.Payload, CreatedAt: it.CreatedAt})
	}
	return out, nil
}

// DeleteCheckAlert removes a dispatched alert from the outbox; deleting
// one already gone is not an error. It returns EINTERNAL only.
func (db *DB) DeleteCheckAlert(ctx context.Context, id string) error {
	_, err := db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(db.tables.Main), Key: itemKey{pkAlertOutbox, alertSK(id)}.av(),
	})
	return translate(err, "delete check alert")
}
