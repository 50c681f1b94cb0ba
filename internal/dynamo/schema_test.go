package dynamo_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SchemaMatchesDesign", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		infos := algoitnytest.Must[[]dynamo.TableInfo](t)(db.Describe(ctx))
		want := map[string]struct {
			indexes []string
			ttl     string
		}{
			db.Tables().Main:  {[]string{"GSI1", "GSI2", "GSI3"}, "TTL"},
			db.Tables().Users: {[]string{"GSI1", "GSI2", "GSI3"}, "TTL"},
			db.Tables().Plans: {[]string{"GSI1"}, ""},
		}
		if len(infos) != 3 {
			t.Fatalf("got %d tables", len(infos))
		}
		for _, info := range infos {
			w, found := want[info.Name]
			if !found {
				t.Fatalf("unexpected table %s", info.Name)
			}
			if !slices.Equal(info.Keys, []string{"PK HASH", "SK RANGE"}) {
				t.Errorf("%s keys = %v", info.Name, info.Keys)
			}
			if len(info.Indexes) != len(w.indexes) {
				t.Errorf("%s indexes = %v, want %v", info.Name, info.Indexes, w.indexes)
			}
			for _, ix := range w.indexes {
				if got, want := info.Indexes[ix], []string{ix + "PK HASH", ix + "SK RANGE", "ALL"}; !slices.Equal(got, want) {
					t.Errorf("%s %s = %v, want %v", info.Name, ix, got, want)
				}
			}
			if info.TTLAttribute != w.ttl {
				t.Errorf("%s TTL = %q, want %q", info.Name, info.TTLAttribute, w.ttl)
			}
		}
	})

	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		rep := algoitnytest.Must[dynamo.MigrateReport](t)(db.Migrate(ctx))
		if len(rep.Created)+len(rep.IndexesAdded)+len(rep.TTLEnabled) != 0 {
			t.Fatalf("second migrate changed something: %+v", rep)
		}
	})

	t.Run("AddsMissingIndex", func(t *testing.T) {
		t.Parallel()
		// A DynamoDB Local of its own: the shared one (make test) answers
		// UpdateTable's new index with InternalFailure, eight attempts in a
		// row, while other packages' tests keep it busy (reproduced with
		// two loads of this package beside this test; real DynamoDB has
		// no such lock).
		endpoint := dynamotest.Endpoint() // the shared one, where Java or the jar is missing
		ddb, err := devstack.StartDynamo(ctx, devstack.DynamoOptions{})
		var missing *devstack.MissingToolError
		switch {
		case errors.As(err, &missing):
			t.Logf("on the shared DynamoDB (%v)", err)
		case err != nil:
			t.Fatal(err)
		default:
			t.Cleanup(ddb.Stop)
			endpoint = ddb.Endpoint
		}
		prefix := "legacy-" + dynamotest.Prefix()
		tables := dynamo.TablesWithPrefix(prefix)
		raw := dynamodb.New(dynamodb.Options{
			BaseEndpoint: aws.String(endpoint), Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		})
		// An old Main table with only GSI1, as an earlier version might have made.
		_, err = raw.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:   aws.String(tables.Main),
			BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String("GSI1SK"), AttributeType: types.ScalarAttributeTypeS},
			},
			KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String("GSI1"),
				KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
			}},
		})
		algoitnytest.OK(t, err)
		db := algoitnytest.Must[*dynamo.DB](t)(dynamo.Open(ctx, dynamo.Config{Endpoint: endpoint, TablePrefix: prefix}))
		t.Cleanup(func() { db.DropTables(context.Background()) })
		rep := algoitnytest.Must[dynamo.MigrateReport](t)(db.Migrate(ctx))
		if !slices.Equal(rep.IndexesAdded, []string{tables.Main + "/GSI2", tables.Main + "/GSI3"}) {
			t.Fatalf("indexes added = %v", rep.IndexesAdded)
		}
		if !slices.Equal(rep.Created, []string{tables.Users, tables.Plans}) {
			t.Fatalf("created = %v", rep.Created)
		}
		infos := algoitnytest.Must[[]dynamo.TableInfo](t)(db.Describe(ctx))
		if n := len(infos[0].Indexes); n != 3 {
			t.Fatalf("main table has %d indexes after upgrade", n)
		}
	})
}
