package dynamo_test

import (
	"testing"

	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB { return dynamotest.NewDB(t) }

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// errCode fails the test unless err carries code.
func errCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := codeOf(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}
