package dynamo

import (
	"context"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The finished tests of a running CODE_EXECUTION job, one item per test in
// the job's partition (JOB#{id} / TEST#{index, 5 digits}), so that
// executionProgress can replay to a subscriber who joins a running job the
// tests finished before it came, and a job rescued after its worker died
// resumes with the tests already judged instead of judging them (and
// announcing them) again. The execution (SearchHistory) stays the record:
// these items only matter while the job runs, and expire a day after they
// are written. Their keys are in keys.go (executionTestSK).

// executionTestTTL is how long a finished test is kept for replay and
// resumption: far longer than a job can run, retries and rescue included.
const executionTestTTL = 24 * time.Hour

type executionTestItem struct {
	PK, SK     string
	EntityType string
	JobID      string
	Index      int
	Total      int
	TestCaseID string
	Verdict    string
	// Output and Stderr are the judge's previews (1 KiB each), Message one
	// line: an item stays a few KB, one write unit or a few per test.
	Output   string `dynamodbav:",omitempty"`
	Stderr   string `dynamodbav:",omitempty"`
	TimeMs   int
	MemoryKB int
	Message  string   `dynamodbav:",omitempty"`
	Points   *float64 `dynamodbav:",omitempty"`
	TTL      int64    // the table's TTL attribute (attrTTL)
}

// PutExecutionTest stores one finished test of a running execution job (a
// PutItem of a few KB; storing the same index again replaces it). Store it
// before publishing its event: a subscriber reads the stored tests after
// subscribing, so every test is either read or received.
func (db *DB) PutExecutionTest(ctx context.Context, ev algoitny.ExecutionEvent) error {
	av, err := db.marshalExecutionTest(ev)
	if err != nil {
		return err
	}
	_, err = db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.tables.Main), Item: av})
	return translate(err, "store execution test")
}

// PutExecutionTests stores several finished tests of running execution
// jobs with BatchWriteItem (25 a call, unprocessed items retried), for a
// worker that announces its tests in batches. Every test is stored when
// it returns nil; after an error some may be (each is whole: an item is
// written entirely or not at all). Publish them after it returns.
func (db *DB) PutExecutionTests(ctx context.Context, evs []algoitny.ExecutionEvent) error {
	writes := make([]types.WriteRequest, len(evs))
	for i, ev := range evs {
		av, err := db.marshalExecutionTest(ev)
		if err != nil {
			return err
		}
		writes[i] = putRequest(av)
	}
	return db.batchWrite(ctx, db.tables.Main, writes)
}

func (db *DB) marshalExecutionTest(ev algoitny.ExecutionEvent) (map[string]types.AttributeValue, error) {
	r := ev.Result
	av, err := attributevalue.MarshalMap(executionTestItem{
		PK: jobPK(ev.JobID), SK: executionTestSK(ev.Index), EntityType: "ExecutionTest",
		JobID: ev.JobID, Index: ev.Index, Total: ev.Total, TestCaseID: r.TestCaseID, Verdict: string(r.Verdict),
		Output: r.Output, Stderr: r.Stderr, TimeMs: r.TimeMs, MemoryKB: r.MemoryKB, Message: r.Message, Points: r.Points,
		TTL: db.now().Add(executionTestTTL).Unix(),
	})
	if err != nil {
		return nil, algoitny.Internal(err, "encode execution test")
	}
	return av, nil
}

// ListExecutionTests returns the stored finished tests of an execution job,
// by index. The read is strongly consistent: every test stored before it is
// in the result. None is an empty list, not an error.
func (db *DB) ListExecutionTests(ctx context.Context, jobID string) ([]algoitny.ExecutionEvent, error) {
	items, err := db.all(ctx, &query{list: "executionTests", table: db.tables.Main, pk: jobPK(jobID), skPrefix: skPrefixExecutionTest, forward: true})
	if err != nil {
		return nil, err
	}
	out := make([]algoitny.ExecutionEvent, 0, len(items))
	for _, av := range items {
		var it executionTestItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode execution test")
		}
		out = append(out, algoitny.ExecutionEvent{JobID: it.JobID, Index: it.Index, Total: it.Total, Result: algoitny.TestResult{
			TestCaseID: it.TestCaseID, Verdict: algoitny.Verdict(it.Verdict), Output: it.Output, Stderr: it.Stderr,
			TimeMs: it.TimeMs, MemoryKB: it.MemoryKB, Message: it.Message, Points: it.Points,
		}})
	}
	return out, nil
}
