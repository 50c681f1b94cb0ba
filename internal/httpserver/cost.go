package httpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Codes of the errors that stop a request while it runs.
const (
	// codeTooLarge: the response would hold more bytes than the request's
	// budget (ResponseBudget), or a test case is too large to read in full.
	codeTooLarge = "RESPONSE_TOO_LARGE"
	// codeTimeout: the request ran longer than its timeout.
	codeTimeout = "REQUEST_TIMEOUT"
	// codeCancelled: the client went away (nobody reads the answer).
	codeCancelled = "REQUEST_CANCELLED"
)

// errRequestTimeout is the cause (context.Cause) of a request whose time
// is up; a request whose budget is spent is stopped with its budget over.
var errRequestTimeout = errors.New("the request timed out")

// ResponseBudget bounds the bytes a request makes the server hold for its
// answer: the field values it resolves (strings by their length, every
// other field by its name and a few bytes) are counted as they resolve,
// and past the budget the request is stopped — its context is cancelled,
// so reads in flight end and no further field resolves — and answered
// with one RESPONSE_TOO_LARGE error and no data. An HTTP request's batch
// shares one budget; on a websocket each operation (each event of a
// subscription) has its own.
//
// Test cases are the bulk of what a response can hold: lists serve the
// first algoitny.TestCasePreviewBytes of each input and output
// (TestCase.truncated), and a request reads at most one test case larger
// than that in full (node), only if its stored size fits what is left of
// the budget, checked before its data is read (algoitny.WithFullReadCheck).
type ResponseBudget struct {
	// SignedOut is the budget of a request without a session, SignedIn of
	// one with a session (default 16 MB and 80 MB: a signed-in author can
	// read any test case, up to the store's 64 MB, in full).
	SignedOut, SignedIn int64
}

// DefaultResponseBudget is the production budget.
var DefaultResponseBudget = ResponseBudget{SignedOut: 16 << 20, SignedIn: 80 << 20}

// For returns the budget of a request made by the actor in ctx.
func (b ResponseBudget) For(ctx context.Context) int64 {
	if algoitny.SignedInFrom(ctx) {
		return b.SignedIn
	}
	return b.SignedOut
}

// budget is one request's running count.
type budget struct {
	limit int64
	spent atomic.Int64
	stop  context.CancelFunc // ends the request
	// fullRead is set once a large test case has been read in full.
	fullRead atomic.Bool
}

type budgetKey struct{}

// withBudget returns a context that carries a budget of limit bytes and is
// cancelled when the budget is spent; call stop when the request ends.
func withBudget(ctx context.Context, limit int64) (context.Context, context.CancelFunc) {
	ctx, stop := context.WithCancel(ctx)
	return withBudgetIn(ctx, &budget{}, limit, stop), stop
}

// withBudgetIn is withBudget on a context that stop ends already (an HTTP
// request's, see Config.query), with the budget kept in b (its
// requestInfo: no allocation of its own).
func withBudgetIn(ctx context.Context, b *budget, limit int64, stop context.CancelFunc) context.Context {
	b.limit, b.stop = limit, stop
	ctx = context.WithValue(ctx, budgetKey{}, b)
	return algoitny.WithFullReadCheck(ctx, b)
}

func budgetFrom(ctx context.Context) *budget {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b
}

// charge counts n bytes; the first charge past the limit stops the request.
func (b *budget) charge(n int64) {
	if after := b.spent.Add(n); after > b.limit && after-n <= b.limit {
		b.stop()
	}
}

// over reports whether the budget is spent.
func (b *budget) over() bool { return b.spent.Load() > b.limit }

// CheckFullRead (algoitny.FullReadChecker) is asked before a test case's
// data is read in full: size is its input and output in bytes (-1 when
// storage does not know it).
// Small ones (no list truncates them) are free; of the others a request
// reads one, and only if it fits what is left of the budget.
func (b *budget) CheckFullRead(size int) error {
	if size >= 0 && size <= algoitny.TestCasePreviewBytes {
		return nil
	}
	if !b.fullRead.CompareAndSwap(false, true) {
		return apierror.New(codeTooLarge, fmt.Sprintf("a request reads at most one test case larger than %d bytes in full; read the others in requests of their own", algoitny.TestCasePreviewBytes))
	}
	if left := b.limit - b.spent.Load(); int64(size) > left {
		return apierror.New(codeTooLarge, fmt.Sprintf("the test case holds %d bytes, more than this request may still return (%d of a budget of %d bytes)", size, max(left, 0), b.limit))
	}
	return nil
}

// budgetFields is field middleware: a field of a stopped request fails at
// once without resolving (the response is replaced anyway, see
// abortedResponse), and every resolved value is charged to the budget.
func budgetFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if ctx.Err() != nil {
		return nil, abortError(ctx)
	}
	res, err := next(ctx)
	if b := budgetFrom(ctx); b != nil {
		b.charge(valueBytes(graphql.GetFieldContext(ctx), res))
	}
	return res, err
}

// valueBytes approximates what a field adds to the response: its name and
// punctuation, and a string's bytes (JSON escaping aside). Objects and
// lists of objects count through their own fields.
func valueBytes(fc *graphql.FieldContext, v any) int64 {
	n := int64(8)
	if fc != nil && fc.Field.Field != nil {
		n += int64(len(fc.Field.Alias))
	}
	switch v := v.(type) {
	case nil:
	case string:
		n += int64(len(v))
	case *string:
		if v != nil {
			n += int64(len(*v))
		}
	case []string:
		for _, s := range v {
			n += int64(len(s)) + 3
		}
	default:
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.String { // enums and other named strings
			n += int64(rv.Len())
		}
	}
	return n
}

// abortError is the error of a request whose context has ended: its budget
// spent, its time up, or its client gone.
func abortError(ctx context.Context) *gqlerror.Error {
	// The first end wins: a spent budget ends the request with
	// context.Canceled, a timeout with its own cause (fields still running
	// when the time is up may spend the budget after it).
	cause := context.Cause(ctx)
	switch b := budgetFrom(ctx); {
	case errors.Is(cause, errRequestTimeout), errors.Is(cause, context.DeadlineExceeded):
		return apierror.New(codeTimeout, "the request took longer than the server allows and was stopped")
	case b != nil && b.over():
		return apierror.New(codeTooLarge, fmt.Sprintf("the response would hold more than %d bytes and was stopped; select fewer or smaller fields, or page with a smaller first", b.limit))
	default:
		return apierror.New(codeCancelled, "the request was cancelled")
	}
}

// abortedResponse replaces the response of a request stopped while it ran
// (budget, timeout, client gone) by the one error that says why: the
// fields it did resolve, and the errors of those it did not, say nothing.
func abortedResponse(ctx context.Context, resp *graphql.Response) *graphql.Response {
	if resp == nil || ctx.Err() == nil {
		return resp
	}
	return &graphql.Response{Errors: gqlerror.List{abortError(ctx)}, Extensions: resp.Extensions}
}
