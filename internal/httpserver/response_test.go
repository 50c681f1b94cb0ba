package httpserver

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse: the hand-written encoding is the JSON the
// GraphQL-over-HTTP rules want — data kept when null, absent before
// execution, errors and extensions only when present — with gqlgen's data
// passed through byte for byte, and a batch as an array.
func TestWriteResponse(t *testing.T) {
	data := json.RawMessage(`{"a":"<b>&","n":[1,2]}`)
	for _, c := range []struct {
		name   string
		batch  []response // nil: single is written alone
		single response
		want   string
	}{
		{"data only", nil, response{Data: data}, `{"data":{"a":"<b>&","n":[1,2]}}`},
		{"executed, data null", nil, executed(&graphql.Response{}), `{"data":null}`},
		{"failed before execution", nil, response{Errors: gqlerror.List{{Message: "bad"}}}, `{"errors":[{"message":"bad"}]}`},
		{"everything", nil, response{Errors: gqlerror.List{{Message: "x", Extensions: map[string]any{"code": "NOT_FOUND"}}}, Data: json.RawMessage(`{"p":null}`), Extensions: map[string]any{"dynamodbRequests": 2}},
			`{"errors":[{"message":"x","extensions":{"code":"NOT_FOUND"}}],"data":{"p":null},"extensions":{"dynamodbRequests":2}}`},
		{"batch", []response{{Data: json.RawMessage(`{"x":1}`)}, {Errors: gqlerror.List{{Message: "y"}}}}, response{}, `[{"data":{"x":1}},{"errors":[{"message":"y"}]}]`},
		{"batch of one", []response{{Data: json.RawMessage(`{"x":1}`)}}, response{}, `[{"data":{"x":1}}]`},
	} {
		w := httptest.NewRecorder()
		if c.batch != nil {
			writeBatch(w, 200, c.batch)
		} else {
			writeResponse(w, 200, c.single)
		}
		if got := w.Body.String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if !json.Valid(w.Body.Bytes()) || w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
			t.Errorf("%s: invalid JSON or Content-Length %q for %d bytes", c.name, w.Header().Get("Content-Length"), w.Body.Len())
		}
	}
}
