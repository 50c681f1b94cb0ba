package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
		{"unencodable", nil, response{Extensions: map[string]any{"x": make(chan int)}},
			`{"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}]}`},
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
		if cl := w.Header().Get("Content-Length"); !json.Valid(w.Body.Bytes()) || cl != "" && cl != strconv.Itoa(w.Body.Len()) {
			t.Errorf("%s: invalid JSON or Content-Length %q for %d bytes", c.name, w.Header().Get("Content-Length"), w.Body.Len())
		}
	}
}

// TestResponseLength: over a real connection every answer, small or large,
// arrives with its Content-Length and is not chunked (writeBody sets the
// header only where net/http would not).
func TestResponseLength(t *testing.T) {
	for _, n := range []int{10, smallBody - 20, smallBody + 1, 100_000} {
		data := json.RawMessage(`"` + strings.Repeat("x", n) + `"`)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeResponse(w, http.StatusOK, response{Data: data})
		}))
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 || !json.Valid(body) {
			t.Errorf("%d bytes of data: Content-Length %d, Transfer-Encoding %v, body %d bytes", n, resp.ContentLength, resp.TransferEncoding, len(body))
		}
	}
}
