package dynamo

import (
	"context"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DeleteAccount erases every item of a user in every table: their partition
// of the main table (history — so public items leave the feed — usage logs,
// quota counters, job pointers, idempotency keys, the problem counter), their
// jobs with their progress, and finally the user item and Google id marker.
// The user item goes last so that an interrupted deletion can be retried by
// the same user; deleting again after success is a no-op. Problems the user
// registered stay: they are shared content.
//
// Unfinished jobs are cancelled before the partition is read: a worker
// judging one of them can then no longer add an execution to the partition
// (CreateHistory checks that its job is PROCESSING) after it was emptied.
func (db *DB) DeleteAccount(ctx context.Context, u *algoitny.User) error {
	items, err := db.all(ctx, &query{list: "account", table: db.tables.Main, pk: userPK(u.ID), forward: true})
	if err != nil {
		return err
	}
	cancelled := false
	for _, it := range items {
		sk := stringAttr(it, attrSK)
		if !strings.HasPrefix(sk, skPrefixUserJob) || algoitny.JobStatus(stringAttr(it, "Status")).Final() {
			continue
		}
		if err := db.stopJob(ctx, strings.TrimPrefix(sk, skPrefixUserJob)); err != nil {
			return err
		}
		cancelled = true
	}
	if cancelled { // read again: executions may have been stored meanwhile
		if items, err = db.all(ctx, &query{list: "account", table: db.tables.Main, pk: userPK(u.ID), forward: true}); err != nil {
			return err
		}
	}
	var jobIDs []string
	for _, it := range items {
		if sk := stringAttr(it, attrSK); strings.HasPrefix(sk, skPrefixUserJob) {
			jobIDs = append(jobIDs, strings.TrimPrefix(sk, skPrefixUserJob))
		}
	}
	for _, id := range jobIDs {
		jobItems, err := db.all(ctx, &query{list: "jobItems", table: db.tables.Main, pk: jobPK(id), forward: true})
		if err != nil {
			return err
		}
		if err := db.deleteItems(ctx, jobItems); err != nil {
			return err
		}
	}
	// The pointers go after their jobs, so a retry still finds the jobs.
	err = db.deleteItems(ctx, items)
	if err != nil {
		return err
	}
	if err := db.UnlinkAtCoder(ctx, u.ID); err != nil { // USER_AC#{id}: link and AC list
		return err
	}
	if _, err := db.DeleteUserChecks(ctx, u.ID); err != nil { // CHECK#{id} items and their results
		return err
	}
	return db.DeleteUser(ctx, u.Email)
}

// stopJob cancels a job unless it is final already.
func (db *DB) stopJob(ctx context.Context, id string) error {
	msg := "the account was deleted"
	for {
		_, err := db.TransitionJob(ctx, id, algoitny.JobTransition{Status: algoitny.JobCancelled, ErrorMessage: &msg})
		if err == nil || algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return nil
		}
		if !algoitny.IsCode(err, algoitny.ECONFLICT) {
			return err
		}
		// Final already, or it moved on between our read and write.
		cur, err := db.GetJob(ctx, id)
		if algoitny.IsCode(err, algoitny.ENOTFOUND) || (err == nil && cur.Status.Final()) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func (db *DB) deleteItems(ctx context.Context, items []map[string]types.AttributeValue) error {
	writes := make([]types.WriteRequest, len(items))
	for i, it := range items {
		writes[i] = deleteRequest(keyOf(it))
	}
	return db.batchWrite(ctx, db.tables.Main, writes)
}

// CountUserItems counts the items left in a user's partition (tests of
// account deletion use it to assert nothing is left).
func (db *DB) CountUserItems(ctx context.Context, userID string) (int, error) {
	items, err := db.all(ctx, &query{list: "account", table: db.tables.Main, pk: userPK(userID), forward: true})
	return len(items), err
}
