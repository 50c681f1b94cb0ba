package devstack

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A persistent DynamoDB Local keeps its tables across restarts: the second
// `make run` finds the first one's data.
func TestDynamoPersistsAcrossRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	start := func() (*Dynamo, *dynamodb.Client) {
		d, err := StartDynamo(ctx, DynamoOptions{DBPath: dir})
		if err != nil {
			t.Fatal(err)
		}
		return d, dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(d.Endpoint), Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	}
	d, c := start()
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String("kept"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Stop()
	d, c = start()
	defer d.Stop()
	// Other credentials, same data: -sharedDb.
	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 1 || out.TableNames[0] != "kept" {
		t.Fatalf("after restart: %v, %v", out, err)
	}
}

// Without any reachable server a private cluster is made with initdb/pg_ctl,
// reused on the next start, and stopped by Stop.
func TestPrivateCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "algoitny-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_ = os.Chmod(dir, 0o755) // the postgres user must reach its data dir
	for run := range 2 {
		pg, err := startPrivateCluster(ctx, PostgresOptions{Database: "algoitny_private", ClusterDir: dir + "/pg"})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if err := ping(ctx, pg.URL); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		pg.Stop()
		if ping(ctx, pg.URL) == nil {
			t.Fatalf("run %d: still up after Stop", run)
		}
	}
}

func TestMissingTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no java, no npm, no postgres
	t.Setenv("DYNAMODB_LOCAL_DIR", "")
	_, err := StartDynamo(context.Background(), DynamoOptions{})
	if got := Describe(err); got != "Java 17+ (needed to run DynamoDB Local) is not installed; install it with: apt-get install -y openjdk-17-jre-headless" {
		t.Fatalf("got %q", got)
	}
	if _, err := exec.LookPath("initdb"); err == nil {
		t.Fatal("PATH not emptied")
	}
}
