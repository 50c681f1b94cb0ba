package dynamo

import (
	"context"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// The records of judge workers (algoitny.Worker), one item each in the
// WORKERS partition of the main table (keys.go: pkWorkers, workerSK).

// workerTTL is how long after a record stopped counting DynamoDB may
// delete it; readers skip expired records themselves (TTL deletion is
// late by up to days).
const workerTTL = time.Hour

type workerItem struct {
	PK, SK     string
	EntityType string
	ID         string
	Host       string `dynamodbav:",omitempty"`
	Languages  []workerLanguageItem
	StartedAt  time.Time
	SeenAt     time.Time
	ExpiresAt  time.Time
	TTL        int64 // the table's TTL attribute (attrTTL)
}

type workerLanguageItem struct {
	Language string
	Name     string `dynamodbav:",omitempty"`
	Version  string `dynamodbav:",omitempty"`
}

// PutWorker stores (or renews) a worker's record: a PutItem of the whole
// record, so that a renewal also updates its languages.
func (db *DB) PutWorker(ctx context.Context, w *algoitny.Worker) error {
	it := workerItem{PK: pkWorkers, SK: workerSK(w.ID), EntityType: "Worker", ID: w.ID, Host: w.Host,
		StartedAt: w.StartedAt.UTC(), SeenAt: w.SeenAt.UTC(), ExpiresAt: w.ExpiresAt.UTC(), TTL: w.ExpiresAt.Add(workerTTL).Unix()}
	for _, l := range w.Languages {
		it.Languages = append(it.Languages, workerLanguageItem{Language: string(l.Language), Name: l.Name, Version: l.Version})
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return algoitny.Internal(err, "encode worker")
	}
	_, err = db.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.tables.Main), Item: av})
	return translate(err, "store worker")
}

// ListWorkers returns the records of the workers live now (one strongly
// consistent Query of their partition; expired records are skipped). None
// is an empty list, not an error.
func (db *DB) ListWorkers(ctx context.Context) ([]*algoitny.Worker, error) {
	items, err := db.all(ctx, &query{list: "workers", table: db.tables.Main, pk: pkWorkers, skPrefix: skPrefixWorker, forward: true})
	if err != nil {
		return nil, err
	}
	now := db.now()
	out := make([]*algoitny.Worker, 0, len(items))
	for _, av := range items {
		var it workerItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode worker")
		}
		w := &algoitny.Worker{ID: it.ID, Host: it.Host, StartedAt: it.StartedAt, SeenAt: it.SeenAt, ExpiresAt: it.ExpiresAt}
		for _, l := range it.Languages {
			w.Languages = append(w.Languages, algoitny.LanguageOffer{Language: algoitny.Language(l.Language), Name: l.Name, Version: l.Version})
		}
		if w.Live(now) {
			out = append(out, w)
		}
	}
	return out, nil
}
