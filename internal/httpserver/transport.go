package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Media types of the GraphQL-over-HTTP specification.
const (
	mediaGraphQLResponse = "application/graphql-response+json"
	mediaJSON            = "application/json"
)

// httpTransport serves GraphQL over HTTP GET and POST following the
// GraphQL-over-HTTP specification, where gqlgen's stock transports deviate:
//
//   - The response media type is negotiated from Accept:
//     application/graphql-response+json when the client accepts it,
//     application/json otherwise (also when Accept is missing); 406 when the
//     client accepts neither.
//   - With application/json every well-formed request gets 200, whatever its
//     GraphQL errors; with application/graphql-response+json a request that
//     fails before execution (parse, validation, variables, limits) gets 400.
//     A body that is not a GraphQL request gets 400 either way.
//   - A response to a request that failed before execution has no "data"
//     entry at all (gqlgen writes "data": null).
//   - GET runs queries only: a mutation over GET is 405 with "Allow: POST".
//   - POST needs a JSON body (Content-Type application/json); anything a
//     browser could send cross-site without a preflight (form-encoded,
//     multipart, text/plain) is refused with 415, which closes the CSRF door.
//   - A JSON array body is a batch of operations, at most MaxBatch of them.
type httpTransport struct {
	// MaxBatch caps the operations of one batched request.
	MaxBatch int
	// Observe, if set, learns each operation's name and whether it failed
	// before execution (for logs and metrics).
	Observe func(ctx context.Context, operation string)
	// Budget bounds the bytes of a request's answers, its batch together.
	Budget ResponseBudget
}

var _ graphql.Transport = httpTransport{}

// Supports implements graphql.Transport: every GET and POST that is not a
// websocket upgrade. Unsupported content types are answered by Do, with a
// proper status, rather than by gqlgen's generic "transport not supported".
func (t httpTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && (r.Method == http.MethodGet || r.Method == http.MethodPost)
}

// response is a GraphQL response as the specification wants it: "data"
// present (possibly null) once execution started, absent before — a nil
// Data is omitted, json.RawMessage("null") is written (appendJSON).
type response struct {
	Errors     gqlerror.List
	Data       json.RawMessage
	Extensions map[string]any
}

// executed marks a response whose operation was executed: its data key must
// stay even when null.
func executed(resp *graphql.Response) response {
	data := resp.Data
	if data == nil {
		data = json.RawMessage("null")
	}
	return response{Errors: resp.Errors, Data: data, Extensions: resp.Extensions}
}

// Do implements graphql.Transport.
func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		http.Error(w, "Not Acceptable: accept application/graphql-response+json or application/json", http.StatusNotAcceptable)
		return
	}
	h := w.Header()
	h["Content-Type"] = contentTypes[media]
	if _, ok := h["Vary"]; ok {
		h.Add("Vary", "Accept")
	} else {
		h["Vary"] = varyAccept
	}

	var batch []*graphql.RawParams
	var isBatch bool
	var err error
	if r.Method == http.MethodGet {
		var p *graphql.RawParams
		p, err = paramsFromQuery(r)
		batch = []*graphql.RawParams{p}
	} else {
		switch ct := r.Header.Get("Content-Type"); {
		case jsonContentType(ct):
			batch, isBatch, err = paramsFromBody(r, t.MaxBatch)
		case uploadAllowed(r):
			batch, isBatch, err = paramsFromMultipart(requestBody(r), ct, t.MaxBatch)
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			http.Error(w, "Unsupported Media Type: send the request as application/json (uploads: multipart/form-data with an Authorization or GraphQL-Preflight header)", http.StatusUnsupportedMediaType)
			return
		}
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		status := http.StatusBadRequest
		if errors.As(err, &tooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeResponse(w, status, response{Errors: gqlerror.List{requestError(err.Error())}})
		return
	}

	ctx := r.Context()
	if ri := requestInfoFrom(ctx); ri != nil && ri.stop != nil {
		ctx = withBudgetIn(ctx, &ri.budget, t.Budget.For(ctx), ri.stop) // ended with the request
	} else {
		var stop context.CancelFunc
		ctx, stop = withBudget(ctx, t.Budget.For(ctx))
		defer stop()
	}
	results := make([]response, len(batch))
	status := http.StatusOK
	for i, params := range batch {
		params.Headers = r.Header
		res, failedEarly, methodNotAllowed := t.run(ctx, r.Method, params, exec)
		if methodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
			writeResponse(w, http.StatusMethodNotAllowed, res)
			return
		}
		if failedEarly && media == mediaGraphQLResponse && !isBatch {
			status = http.StatusBadRequest
		}
		results[i] = res
	}
	if isBatch {
		writeBatch(w, status, results)
		return
	}
	writeResponse(w, status, results[0])
}

// run executes one operation. failedEarly reports a request error (nothing
// executed); methodNotAllowed a mutation or subscription over GET. An
// operation of a request that has ended (its time up, its client gone, its
// budget spent by an earlier operation of the batch) is not started.
func (t httpTransport) run(ctx context.Context, method string, params *graphql.RawParams, exec graphql.GraphExecutor) (res response, failedEarly, methodNotAllowed bool) {
	if ctx.Err() != nil {
		return response{Errors: gqlerror.List{abortError(ctx)}}, true, false
	}
	start := graphql.Now()
	params.ReadTime = graphql.TraceTiming{Start: start, End: start}
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if t.Observe != nil {
		name := params.OperationName
		if errs == nil && opCtx.Operation.Name != "" {
			name = opCtx.Operation.Name
		}
		t.Observe(ctx, name)
	}
	if errs != nil {
		ctx = graphql.WithOperationContext(ctx, opCtx)
		resp := exec.DispatchError(ctx, errs)
		return response{Errors: resp.Errors, Extensions: withCost(ctx, resp.Extensions)}, true, false
	}
	if opCtx.Operation.Operation != ast.Query && method == http.MethodGet {
		return response{Errors: gqlerror.List{requestError("GET requests may only run queries; send mutations with POST")}}, true, true
	}
	if opCtx.Operation.Operation == ast.Subscription {
		return response{Errors: gqlerror.List{requestError("subscriptions need a websocket connection to /query")}}, true, false
	}
	handler, ctx := exec.DispatchOperation(ctx, opCtx)
	return executed(handler(ctx)), false, false
}

// requestError is an error about the HTTP request itself.
func requestError(msg string) *gqlerror.Error {
	return apierror.New(apierror.BadRequest, msg)
}

// writeResponse writes one response.
func writeResponse(w http.ResponseWriter, status int, r response) {
	b, err := r.appendJSON(make([]byte, 0, len(r.Data)+64))
	writeBody(w, status, b, err)
}

// writeBatch writes the responses of a batch as a JSON array (of one, too).
func writeBatch(w http.ResponseWriter, status int, batch []response) {
	b := []byte{'['}
	var err error
	for i, r := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = r.appendJSON(b); err != nil {
			break
		}
	}
	writeBody(w, status, append(b, ']'), err)
}

// internalErrorBody answers a request whose response cannot be encoded:
// {"errors":[{"message":"internal error","extensions":{"code":"INTERNAL"}}]}.
var internalErrorBody = mustJSON(map[string]gqlerror.List{"errors": {apierror.New(apierror.Internal, "internal error")}})

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeBody(w http.ResponseWriter, status int, b []byte, err error) {
	if err != nil {
		status = http.StatusInternalServerError
		b = internalErrorBody
	}
	if len(b) > smallBody { // net/http sets it itself below
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.WriteHeader(status)
	w.Write(b)
}

// appendJSON appends r's JSON encoding to b. Data is gqlgen's own encoding
// and goes in as it is: json.Marshal would scan (and re-escape) the whole of
// it again, which for a page of test cases is most of the transport's work.
func (r response) appendJSON(b []byte) ([]byte, error) {
	var errs, ext []byte
	var err error
	if len(r.Errors) > 0 {
		errs, err = json.Marshal(r.Errors)
	}
	if err == nil && len(r.Extensions) > 0 {
		ext, err = marshalExtensions(r.Extensions)
	}
	if err != nil {
		return nil, err
	}
	b = append(b, '{')
	for _, m := range [...]struct {
		name  string
		value []byte
	}{{"errors", errs}, {"data", r.Data}, {"extensions", ext}} {
		if len(m.value) == 0 {
			continue
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		b = append(b, m.value...)
	}
	return append(b, '}'), nil
}

// marshalExtensions is json.Marshal(ext), without reflection for the
// usual answer's only extension, its cost (reflecting over the map costs
// about as much as the rest of the transport for a small answer).
func marshalExtensions(ext map[string]any) ([]byte, error) {
	c, ok := ext["cost"].(costExtension)
	if !ok || len(ext) != 1 {
		return json.Marshal(ext)
	}
	b := append(make([]byte, 0, 48), `{"cost":{"cost":`...)
	b = strconv.AppendInt(b, int64(c.Cost), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(c.Limit), 10)
	return append(b, "}}"...), nil
}

// The headers every response sets, shared (net/http only reads them; an Add
// appends to a copy, as their capacity is their length).
var (
	contentTypes = map[string][]string{
		mediaJSON:            {mediaJSON + "; charset=utf-8"},
		mediaGraphQLResponse: {mediaGraphQLResponse + "; charset=utf-8"},
	}
	varyAccept = []string{"Accept"}
)

// smallBody is the size up to which net/http writes a body written at once
// with its Content-Length (its buffer before chunking); a larger one needs
// the header set, or it would be sent chunked.
const smallBody = 2048

// setErrorMediaType sets the Content-Type of an error answered before the
// transport runs (the admission's 429 and 503, authentication's 401, a body
// that cannot be read): the media type the client accepts, as the
// transport's own answers have, so that a client that asked for
// application/graphql-response+json reads extensions.code from the body
// (application/json when it accepts neither).
func setErrorMediaType(w http.ResponseWriter, r *http.Request) {
	media, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		media = mediaJSON
	}
	h := w.Header()
	h["Content-Type"] = contentTypes[media]
	h.Add("Vary", "Accept")
}

// negotiate picks the response media type from an Accept header.
func negotiate(accept string) (string, bool) {
	switch accept {
	case "", mediaJSON, "*/*":
		return mediaJSON, true
	case mediaGraphQLResponse:
		return mediaGraphQLResponse, true
	}
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	best, bestQ := "", -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if v, err := strconv.ParseFloat(qs, 64); err == nil {
				q = v
			} else {
				q = 0
			}
		}
		if q <= 0 {
			continue
		}
		var candidate string
		switch mt {
		case mediaGraphQLResponse:
			candidate = mediaGraphQLResponse
		case mediaJSON:
			candidate = mediaJSON
		case "application/*", "*/*":
			candidate = mediaJSON
		default:
			continue
		}
		// Prefer the higher q; on a tie prefer graphql-response+json.
		if q > bestQ || (q == bestQ && candidate == mediaGraphQLResponse) {
			best, bestQ = candidate, q
		}
	}
	return best, best != ""
}

func jsonContentType(ct string) bool {
	switch ct {
	case mediaJSON, "application/json; charset=utf-8", "application/json;charset=utf-8":
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != mediaJSON {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// paramsFromQuery reads a GET request's query, operationName, variables and
// extensions parameters.
func paramsFromQuery(r *http.Request) (*graphql.RawParams, error) {
	q := r.URL.Query()
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	// Numbers stay json.Number, as in a POST body (decodeParams): the
	// schema types them, so that an Int! variable over GET (urql's default,
	// Apollo's useGETForQueries) is an Int, not a float64 refused as one.
	if v := q.Get("variables"); v != "" {
		if err := decodeNumbers(json.RawMessage(v), &p.Variables); err != nil {
			return nil, errors.New("the variables parameter is not a JSON object")
		}
	}
	if e := q.Get("extensions"); e != "" {
		if err := decodeNumbers(json.RawMessage(e), &p.Extensions); err != nil {
			return nil, errors.New("the extensions parameter is not a JSON object")
		}
	}
	liftParamDocumentID(p, q.Get("documentId"))
	if p.Query == "" && p.Extensions == nil {
		return nil, errors.New("a GraphQL request needs a query or a documentId parameter")
	}
	return p, nil
}

// paramsFromBody decodes a POST body: one request object or a batch array.
// The body was read by readBody, or is read here when the transport runs
// on its own (tests).
// requestBody is the body readBody read (nil when it read none).
func requestBody(r *http.Request) []byte {
	if ri := requestInfoFrom(r.Context()); ri != nil && ri.body != nil {
		return ri.body.Bytes()
	}
	return nil
}

func paramsFromBody(r *http.Request, maxBatch int) ([]*graphql.RawParams, bool, error) {
	var raw []byte
	if ri := requestInfoFrom(r.Context()); ri != nil && ri.body != nil {
		raw = ri.body.Bytes()
	} else {
		buf, err := readAll(r.Body)
		if err != nil {
			return nil, false, err
		}
		defer putBody(buf)
		raw = buf.Bytes()
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false, errors.New("the request body is empty; send {\"query\": \"...\"}")
	}
	if raw[0] != '[' {
		p, err := decodeParams(raw)
		if err != nil {
			return nil, false, err
		}
		return []*graphql.RawParams{p}, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, true, errors.New("the request body is not a JSON array of GraphQL requests")
	}
	if len(items) == 0 || len(items) > maxBatch {
		return nil, true, errors.New("a batch holds 1 to " + strconv.Itoa(maxBatch) + " operations")
	}
	out := make([]*graphql.RawParams, len(items))
	var err error
	for i, it := range items {
		if out[i], err = decodeParams(it); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}

var errNotGraphQLRequest = errors.New("the request body is not a JSON GraphQL request")

// decodeParams decodes one GraphQL request object. Numbers in variables and
// extensions stay json.Number (an Int beyond 2^53 is not rounded); the
// rest is decoded without a json.Decoder, which most requests (no
// variables) need not pay for.
func decodeParams(b []byte) (*graphql.RawParams, error) {
	var req struct {
		Query         string          `json:"query"`
		OperationName string          `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    json.RawMessage `json:"extensions"`
		DocumentID    string          `json:"documentId"`
	}
	bad := errNotGraphQLRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, bad
	}
	p := &graphql.RawParams{Query: req.Query, OperationName: req.OperationName}
	if err := decodeNumbers(req.Variables, &p.Variables); err != nil {
		return nil, bad
	}
	if err := decodeNumbers(req.Extensions, &p.Extensions); err != nil {
		return nil, bad
	}
	liftParamDocumentID(p, req.DocumentID)
	if p.Query == "" && p.Extensions == nil {
		return nil, errors.New("a GraphQL request needs a query or a documentId")
	}
	return p, nil
}

// liftParamDocumentID puts a request's documentId (the GraphQL-over-HTTP
// persisted-documents member) where TrustedDocuments reads it.
func liftParamDocumentID(p *graphql.RawParams, id string) {
	if id == "" {
		return
	}
	if p.Extensions == nil {
		p.Extensions = map[string]any{}
	}
	p.Extensions[documentIDKey] = id
}

// decodeNumbers decodes a JSON object (or null, or nothing) into m with
// numbers as json.Number; anything after the object is an error.
func decodeNumbers(raw json.RawMessage, m *map[string]any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(m); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF { // a GET parameter may hold more
		return errors.New("more than one JSON value")
	}
	return nil
}
