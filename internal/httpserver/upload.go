package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// Uploads follow the GraphQL multipart request specification
// (github.com/jaydenseric/graphql-multipart-request-spec): a
// multipart/form-data body with an "operations" part (the JSON request,
// or a batch), a "map" part (which file goes to which variable, e.g.
// {"0": ["variables.file"]}) and the files. A browser may send such a body
// cross-site without a preflight, so it is taken only from a request that
// could not have been: one with an Authorization header (a browser adds
// none on its own) or a preflight header (GraphQL-Preflight,
// Apollo-Require-Preflight, X-Apollo-Operation-Name, as Apollo's and the
// spec's clients send). Anything else multipart is refused with 415, like
// other non-JSON bodies.

// DefaultMaxUploadBytes bounds a multipart request's body (Config.MaxUploadBytes).
const DefaultMaxUploadBytes = 33 << 20

// uploadAllowed says r may carry an upload.
func uploadAllowed(r *http.Request) bool {
	if !multipartContentType(r.Header.Get("Content-Type")) {
		return false
	}
	for _, h := range []string{"Authorization", "GraphQL-Preflight", "Apollo-Require-Preflight", "X-Apollo-Operation-Name"} {
		if strings.TrimSpace(r.Header.Get(h)) != "" {
			return true
		}
	}
	return false
}

func multipartContentType(ct string) bool {
	// Most requests are JSON: only a multipart type is worth parsing.
	if t := strings.TrimSpace(ct); len(t) < len("multipart/") || !strings.EqualFold(t[:len("multipart/")], "multipart/") {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "multipart/form-data"
}

// maxUploadParts bounds the parts of one upload (operations, map, files).
const maxUploadParts = 12

// paramsFromMultipart reads a GraphQL multipart request: its operations,
// with each file placed at the variables its map names.
func paramsFromMultipart(body []byte, contentType string, maxBatch int) ([]*graphql.RawParams, bool, error) {
	_, ctParams, err := mime.ParseMediaType(contentType)
	if err != nil || ctParams["boundary"] == "" {
		return nil, false, errors.New("a multipart body needs a boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), ctParams["boundary"])
	var operations, fileMap []byte
	files := map[string]graphql.Upload{}
	for n := 0; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("the multipart body cannot be read: %v", err)
		}
		if n >= maxUploadParts {
			return nil, false, fmt.Errorf("at most %d parts", maxUploadParts)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, false, fmt.Errorf("the multipart body cannot be read: %v", err)
		}
		switch name := part.FormName(); {
		case name == "operations":
			operations = data
		case name == "map":
			fileMap = data
		case operations == nil || fileMap == nil:
			return nil, false, errors.New(`the "operations" and "map" parts come before the files`)
		default:
			files[name] = graphql.Upload{File: bytes.NewReader(data), Filename: part.FileName(), Size: int64(len(data)),
				ContentType: part.Header.Get("Content-Type")}
		}
	}
	if operations == nil || fileMap == nil {
		return nil, false, errors.New(`a multipart request needs its "operations" and "map" parts`)
	}
	batch, isBatch, err := decodeOperations(operations, maxBatch)
	if err != nil {
		return nil, isBatch, err
	}
	var paths map[string][]string
	if err := json.Unmarshal(fileMap, &paths); err != nil {
		return nil, isBatch, errors.New(`the "map" part is not a JSON object of file names to variable paths`)
	}
	for key, targets := range paths {
		f, ok := files[key]
		if !ok {
			return nil, isBatch, fmt.Errorf("the map names the file %q, which the request does not have", key)
		}
		for _, target := range targets {
			if err := placeUpload(batch, isBatch, target, f); err != nil {
				return nil, isBatch, err
			}
		}
	}
	return batch, isBatch, nil
}

// decodeOperations reads the "operations" part: one request or a batch.
func decodeOperations(raw []byte, maxBatch int) ([]*graphql.RawParams, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || len(items) == 0 || len(items) > maxBatch {
			return nil, true, errors.New(`the "operations" part is not a batch of 1 to ` + strconv.Itoa(maxBatch) + " requests")
		}
		out := make([]*graphql.RawParams, len(items))
		for i, it := range items {
			p, err := decodeParams(it)
			if err != nil {
				return nil, true, err
			}
			out[i] = p
		}
		return out, true, nil
	}
	p, err := decodeParams(raw)
	return []*graphql.RawParams{p}, false, err
}

// placeUpload sets the variable at target ("variables.file",
// "variables.files.0", "0.variables.file" in a batch) to f.
func placeUpload(batch []*graphql.RawParams, isBatch bool, target string, f graphql.Upload) error {
	parts := strings.Split(target, ".")
	op := 0
	if isBatch {
		i, err := strconv.Atoi(parts[0])
		if err != nil || i < 0 || i >= len(batch) {
			return fmt.Errorf("the map's path %q names no operation", target)
		}
		op, parts = i, parts[1:]
	}
	if len(parts) < 2 || parts[0] != "variables" {
		return fmt.Errorf("the map's path %q is not a variable", target)
	}
	if batch[op].Variables == nil {
		batch[op].Variables = map[string]any{}
	}
	var cur any = batch[op].Variables
	for i, key := range parts[1:] {
		last := i == len(parts)-2
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[key] = f
				return nil
			}
			cur = c[key]
		case []any:
			j, err := strconv.Atoi(key)
			if err != nil || j < 0 || j >= len(c) {
				return fmt.Errorf("the map's path %q names no variable", target)
			}
			if last {
				c[j] = f
				return nil
			}
			cur = c[j]
		default:
			return fmt.Errorf("the map's path %q names no variable", target)
		}
	}
	return fmt.Errorf("the map's path %q names no variable", target)
}
