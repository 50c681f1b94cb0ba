package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/algoitny/api/internal/algoitny"
)

// uploadPartBytes is the most of an upload one item holds, well below
// DynamoDB's 400 KB an item.
const uploadPartBytes = 350 << 10

// uploadTTL is how long an upload is kept: its job reads it within
// minutes (and deletes it); a job that never ran leaves it to expire.
const uploadTTL = 24 * time.Hour

// uploadItem is one part of a job's upload.
type uploadItem struct {
	PK, SK     string
	EntityType string
	JobID      string
	Part       int
	Parts      int
	Data       []byte
	TTL        int64
}

// PutJobUpload stores data (a file a job works on, such as a problem
// package to import) with the job, split into parts of at most 350 KB
// written with BatchWriteItem. It returns EINTERNAL when storage fails
// (some parts may then be written: they expire after a day).
func (db *DB) PutJobUpload(ctx context.Context, jobID string, data []byte) error {
	parts := (len(data) + uploadPartBytes - 1) / uploadPartBytes
	parts = max(parts, 1)
	writes := make([]types.WriteRequest, 0, parts)
	ttl := db.now().Add(uploadTTL).Unix()
	for i := range parts {
		chunk := data[min(i*uploadPartBytes, len(data)):min((i+1)*uploadPartBytes, len(data))]
		av, err := attributevalue.MarshalMap(uploadItem{PK: jobPK(jobID), SK: uploadSK(i), EntityType: "JobUpload",
			JobID: jobID, Part: i, Parts: parts, Data: chunk, TTL: ttl})
		if err != nil {
			return algoitny.Internal(err, "encode upload")
		}
		writes = append(writes, putRequest(av))
	}
	return db.batchWrite(ctx, db.tables.Main, writes)
}

// GetJobUpload returns a job's upload whole; ENOTFOUND when there is none
// (or when parts are missing: it expired, or its write failed halfway).
func (db *DB) GetJobUpload(ctx context.Context, jobID string) ([]byte, error) {
	items, err := db.all(ctx, &query{list: "jobUpload", table: db.tables.Main, pk: jobPK(jobID), skPrefix: skPrefixUpload, forward: true})
	if err != nil {
		return nil, err
	}
	var data []byte
	for i, av := range items {
		var it uploadItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode upload")
		}
		if it.Part != i || it.Parts != len(items) {
			return nil, algoitny.Errorf(algoitny.ENOTFOUND, "the upload of job %s is incomplete", jobID)
		}
		data = append(data, it.Data...)
	}
	if len(items) == 0 {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job %s has no upload", jobID)
	}
	return data, nil
}

// DeleteJobUpload removes a job's upload (done with it); EINTERNAL when
// storage fails.
func (db *DB) DeleteJobUpload(ctx context.Context, jobID string) error {
	items, err := db.all(ctx, &query{list: "jobUpload", table: db.tables.Main, pk: jobPK(jobID), skPrefix: skPrefixUpload, forward: true,
		project: []string{"Part"}})
	if err != nil {
		return err
	}
	writes := make([]types.WriteRequest, 0, len(items))
	for _, av := range items {
		writes = append(writes, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"PK": av["PK"], "SK": av["SK"]}}})
	}
	return db.batchWrite(ctx, db.tables.Main, writes)
}
