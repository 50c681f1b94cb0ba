package dynamo

import (
	"context"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PutOrphanPart writes a test case part whose test case does not exist, as a
// crash between the two writes of AddTestCases would leave it.
func (db *DB) PutOrphanPart(ctx context.Context, ref algoitny.ProblemRef, at time.Time) error {
	id, t := newID(at)
	_, err := db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.tables.Main), Item: map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: problemPK(ref.Platform, ref.ProblemID)},
		attrSK: &types.AttributeValueMemberS{Value: testCasePartSK(testCaseSK(t, id), 0)},
		"Data": &types.AttributeValueMemberB{Value: []byte("garbage")},
	}})
	return err
}

// ItemCount counts the raw items of a partition of the main table.
func ItemCount(ctx context.Context, db *DB, pk string) (int, error) {
	n := 0
	var start map[string]types.AttributeValue
	for {
		out, err := db.client.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(db.tables.Main), KeyConditionExpression: aws.String("PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
			Select:                    types.SelectCount, ExclusiveStartKey: start,
		})
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		start = out.LastEvaluatedKey
	}
}

// ProblemPK exposes the key builder for tests that count raw items.
func ProblemPK(ref algoitny.ProblemRef) string { return problemPK(ref.Platform, ref.ProblemID) }

// RemovePlanAttribute deletes one attribute of a stored plan, as a plan
// written by an older version would lack it.
func (db *DB) RemovePlanAttribute(ctx context.Context, name, attr string) error {
	_, err := db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.tables.Plans), Key: itemKey{planPK(name), skMetadata}.av(),
		UpdateExpression: aws.String("REMOVE #a"), ExpressionAttributeNames: map[string]string{"#a": attr},
	})
	return err
}

// GoogleIDMarkerExists reports whether the uniqueness marker of a Google id
// is stored (read from DynamoDB itself).
func GoogleIDMarkerExists(ctx context.Context, db *DB, googleID string) (bool, error) {
	item, err := db.getItem(fresh(ctx), db.tables.Users, itemKey{googleIDMarkerPK(googleID), skUnique})
	return item != nil, err
}

// ForgetProblemPartition drops a problem's partition from db's cache, as a
// write of this process would.
func ForgetProblemPartition(db *DB, ref algoitny.ProblemRef) {
	db.partitions.Forget(partitionKey(db.tables.Main, problemPK(ref.Platform, ref.ProblemID)))
}

// BoundFilteredReads makes db's filtered pages read ahead `ahead` items per
// call and make at most `calls` calls.
func BoundFilteredReads(db *DB, ahead, calls int) {
	db.filtered = filteredReads{ahead: ahead, calls: calls}
}

// BoundCasePages makes db's pages of test cases hold at most n bytes of
// inputs and outputs (but always one case).
func BoundCasePages(db *DB, n int) { db.maxCasePageBytes = n }

// StoredItem is one raw item of a table.
type StoredItem struct {
	Table, PK, SK string
	Item          map[string]types.AttributeValue
}

// Snapshot returns every item of db's three tables, by "table|PK|SK".
func Snapshot(ctx context.Context, db *DB) (map[string]StoredItem, error) {
	out := map[string]StoredItem{}
	for _, table := range []string{db.tables.Main, db.tables.Users, db.tables.Plans} {
		var start map[string]types.AttributeValue
		for {
			page, err := db.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), ExclusiveStartKey: start, ConsistentRead: aws.Bool(true)})
			if err != nil {
				return nil, err
			}
			for _, it := range page.Items {
				pk, sk := stringAttr(it, attrPK), stringAttr(it, attrSK)
				out[table+"|"+pk+"|"+sk] = StoredItem{Table: table, PK: pk, SK: sk, Item: it}
			}
			if len(page.LastEvaluatedKey) == 0 {
				break
			}
			start = page.LastEvaluatedKey
		}
	}
	return out, nil
}

// spyClient passes every call through, telling batchGets of the
// BatchGetItem inputs it sees.
type spyClient struct {
	dynamoAPI
	batchGets func(*dynamodb.BatchGetItemInput)
}

func (s spyClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	s.batchGets(in)
	return s.dynamoAPI.BatchGetItem(ctx, in, opts...)
}

// SpyBatchGets calls f with every BatchGetItem input db sends from now on.
func SpyBatchGets(db *DB, f func(*dynamodb.BatchGetItemInput)) {
	db.client = spyClient{dynamoAPI: db.client, batchGets: f}
}

// RemovalRace deletes the test case id as DeleteTestCases does, but runs
// between (a concurrent write) after the problem's subtasks were read and
// before the transaction: it reports whether the problem's condition
// refused the transaction (nothing is written then).
func (db *DB) RemovalRace(ctx context.Context, ref algoitny.ProblemRef, id string, between func()) (refused bool, err error) {
	removal, err := db.testCasesRemoval(ctx, ref, 1, map[string]string{id: ""})
	if err != nil {
		return false, err
	}
	between()
	t, err := idTime(id)
	if err != nil {
		return false, err
	}
	_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{removal, {Delete: &types.Delete{
		TableName: aws.String(db.tables.Main), Key: itemKey{problemPK(ref.Platform, ref.ProblemID), testCaseSK(t, id)}.av(),
		ConditionExpression: aws.String("attribute_exists(PK)"),
	}}}})
	if conditionFailedAt(err, 0) {
		return true, nil
	}
	return false, err
}
