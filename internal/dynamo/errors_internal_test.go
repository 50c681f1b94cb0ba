package dynamo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func cancelled(codes ...string) error {
	tce := &types.TransactionCanceledException{}
	for _, c := range codes {
		tce.CancellationReasons = append(tce.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
	}
	return fmt.Errorf("operation error: %w", tce)
}

// A transaction that lost a race with another one is retried by the SDK and,
// if it still loses, is a storage error — not the caller's conflict. A
// failed condition is an answer and is never retried.
func TestTransactionCancellations(t *testing.T) {
	cases := []struct {
		err   error
		retry aws.Ternary
		code  string
	}{
		{cancelled("None", "TransactionConflict"), aws.TrueTernary, algoitny.EINTERNAL},
		{cancelled("TransactionConflict", "ConditionalCheckFailed"), aws.UnknownTernary, algoitny.ECONFLICT},
		{cancelled("ConditionalCheckFailed", "None"), aws.UnknownTernary, algoitny.ECONFLICT},
		{cancelled("None", "None"), aws.UnknownTernary, algoitny.EINTERNAL},
		{errors.New("other"), aws.UnknownTernary, algoitny.EINTERNAL},
	}
	for i, c := range cases {
		if got := retryTransactionConflict(c.err); got != c.retry {
			t.Errorf("%d: retry %v, want %v", i, got, c.retry)
		}
		if got := algoitny.ErrorCode(translate(c.err, "test")); got != c.code {
			t.Errorf("%d: code %q, want %q", i, got, c.code)
		}
	}
}
