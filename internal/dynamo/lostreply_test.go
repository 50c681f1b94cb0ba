package dynamo_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
)

// lostReply is a reverse proxy to DynamoDB Local that, for the first request
// of one operation (X-Amz-Target), passes it on — DynamoDB makes the write —
// and answers the client with a server error, as when a reply is lost.
func lostReply(t *testing.T, op string) string {
	t.Helper()
	target, err := url.Parse(dynamotest.Endpoint())
	algoitnytest.OK(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var lost atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) && lost.CompareAndSwap(false, true) {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // DynamoDB makes the write
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"the reply was lost"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
