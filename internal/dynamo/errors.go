package dynamo

import (
	"errors"
	"fmt"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// translate is the one place DynamoDB errors become algoitny errors. op says
// what we were doing, for logs. Errors that are already *algoitny.Error pass
// through unchanged.
func translate(err error, op string) error {
	if err == nil {
		return nil
	}
	var ae *algoitny.Error
	if errors.As(err, &ae) {
		return err
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &algoitny.Error{Code: algoitny.ECONFLICT, Message: "the item was changed concurrently or already exists", Err: err}
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if r.Code != nil && *r.Code == "ConditionalCheckFailed" {
				return &algoitny.Error{Code: algoitny.ECONFLICT, Message: "the item was changed concurrently or already exists", Err: err}
			}
		}
		// TransactionConflict and friends, still there after the SDK's
		// retries (retryTransactionConflict): nothing the caller did wrong.
		return algoitny.Internal(fmt.Errorf("%s: %w", op, err), "storage is busy; retry")
	}
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return algoitny.Internal(err, "%s: table not found (run `algoitny migrate`)", op)
	}
	return algoitny.Internal(fmt.Errorf("%s: %w", op, err), "storage error")
}

// cancellationCodes returns the per-item reasons of a cancelled transaction
// ("None" for items that did not fail), or nil if err is not one.
func cancellationCodes(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	codes := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		codes[i] = "None"
		if r.Code != nil {
			codes[i] = *r.Code
		}
	}
	return codes
}

// conditionFailedAt reports whether the transaction of err was cancelled
// because the condition of item i failed.
func conditionFailedAt(err error, i int) bool {
	codes := cancellationCodes(err)
	return i < len(codes) && codes[i] == "ConditionalCheckFailed"
}

// isConditionFailed reports whether err is a failed condition of a single-item write.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// retryTransactionConflict makes the SDK retry a transaction that was
// cancelled only because another transaction held one of its items
// (reasons TransactionConflict or None): its conditions are evaluated
// again, so a retry is safe. A cancellation with a failed condition is an
// answer, not a transient error.
func retryTransactionConflict(err error) aws.Ternary {
	codes := cancellationCodes(err)
	conflict := false
	for _, c := range codes {
		switch c {
		case "TransactionConflict":
			conflict = true
		case "None":
		default:
			return aws.UnknownTernary
		}
	}
	if conflict {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}
