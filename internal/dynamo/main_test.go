package dynamo_test

import (
	"testing"

	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// newDB returns a DB on freshly migrated tables of the test's own.
func newDB(t testing.TB) *dynamo.DB { return dynamotest.NewDB(t) }
