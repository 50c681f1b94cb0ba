package dynamo

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Config says where the tables are.
type Config struct {
	// Endpoint is a DynamoDB-compatible endpoint URL (DynamoDB Local, ScyllaDB
	// Alternator); empty means AWS.
	Endpoint string
	// Region defaults to us-east-1.
	Region string
	// TablePrefix prefixes the three table names; defaults to "AlgoItny-".
	TablePrefix string
	// MaxAttempts bounds the SDK's retries of throttled or failed calls (default 8).
	MaxAttempts int
}

// ConfigFromEnv reads DYNAMODB_ENDPOINT, AWS_REGION and DYNAMODB_TABLE_PREFIX.
func ConfigFromEnv() Config {
	return Config{
		Endpoint:    os.Getenv("DYNAMODB_ENDPOINT"),
		Region:      os.Getenv("AWS_REGION"),
		TablePrefix: os.Getenv("DYNAMODB_TABLE_PREFIX"),
	}
}

// Tables holds the three table names.
type Tables struct {
	Main, Users, Plans string
}

// TablesWithPrefix returns the table names for prefix ("AlgoItny-" if empty).
func TablesWithPrefix(prefix string) Tables {
	if prefix == "" {
		prefix = "AlgoItny-"
	}
	return Tables{Main: prefix + "Main", Users: prefix + "Users", Plans: prefix + "Plans"}
}

// DB is a connection to the three tables. It is safe for concurrent use; the
// repositories are methods on it.
type DB struct {
	// client is the write path (writes.go): the only way to DynamoDB.
	client dynamoAPI
	tables Tables
	// now is the clock, replaceable in tests.
	now func() time.Time
	// requests counts every DynamoDB API call made through this DB.
	requests atomic.Int64
	// filtered bounds the reads of a filtered page (query.go), and
	// maxCasePageBytes the inputs and outputs of a page of test cases
	// (testcase.go); replaceable in tests.
	filtered         filteredReads
	maxCasePageBytes int

	// partitions keeps display data (display.go); nil: everything is read
	// from DynamoDB.
	partitions *memo[*partition]

	// solved remembers solved markers known to exist (solvedWrites).
	solved knownKeys
}

// Open connects to DynamoDB. It makes no request; call Ping to check the
// connection or Migrate to create the tables.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	attempts := cfg.MaxAttempts
	if attempts == 0 {
		attempts = 8
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = attempts
				o.MaxBackoff = 2 * time.Second
				o.Retryables = append(slices.Clone(o.Retryables), retry.IsErrorRetryableFunc(retryTransactionConflict))
			})
		}),
	}
	// A local emulator accepts any credentials; don't make developers set them.
	if cfg.Endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	db := &DB{tables: TablesWithPrefix(cfg.TablePrefix), now: time.Now, filtered: defaultFilteredReads, maxCasePageBytes: 16 << 20}
	sdk := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
			// DynamoDB Local sends CRC32 headers that do not match some
			// bodies; the SDK would log a warning per response.
			o.DisableValidateResponseChecksum = true
		}
		o.APIOptions = append(o.APIOptions, db.countRequests, countAttempts)
	})
	db.client = localWrites{Client: sdk, db: db}
	return db, nil
}

// Tables returns the table names this DB uses.
func (db *DB) Tables() Tables { return db.tables }

// SetClock replaces the clock (tests only).
func (db *DB) SetClock(now func() time.Time) { db.now = now }

// Requests returns how many DynamoDB API calls this DB has made.
func (db *DB) Requests() int64 { return db.requests.Load() }

// Ping checks that the main table is reachable. It returns EINTERNAL if not.
func (db *DB) Ping(ctx context.Context) error {
	_, err := db.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(db.tables.Main)})
	return translate(err, "ping DynamoDB")
}

type requestCounterKey struct{}

// RequestCounter counts the DynamoDB calls made on behalf of one context, e.g.
// one GraphQL request, so that N+1 patterns show up in responses and tests.
type RequestCounter struct{ n atomic.Int64 }

// Count returns the number of calls counted so far.
func (c *RequestCounter) Count() int64 { return c.n.Load() }

// WithRequestCounter returns a context whose DynamoDB calls are counted by the
// returned counter (and by any counter of a parent context).
func WithRequestCounter(ctx context.Context) (context.Context, *RequestCounter) {
	c := &RequestCounter{}
	parents, _ := ctx.Value(requestCounterKey{}).([]*RequestCounter)
	all := append(append([]*RequestCounter(nil), parents...), c)
	return context.WithValue(ctx, requestCounterKey{}, all), c
}

// countRequests is SDK middleware: it runs once per API operation (not per
// retry attempt) and bumps the DB's and the context's counters.
func (db *DB) countRequests(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("algoitnyCountRequests",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			db.requests.Add(1)
			if counters, ok := ctx.Value(requestCounterKey{}).([]*RequestCounter); ok {
				for _, c := range counters {
					c.n.Add(1)
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}

// RequestCounterFrom returns the innermost counter of ctx, nil if none.
func RequestCounterFrom(ctx context.Context) *RequestCounter {
	counters, _ := ctx.Value(requestCounterKey{}).([]*RequestCounter)
	if len(counters) == 0 {
		return nil
	}
	return counters[len(counters)-1]
}
