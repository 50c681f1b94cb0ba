package httpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Codes of the errors that refuse a document by its id or its text.
const (
	// codeNotFound: the request names a document (documentId, or Apollo's
	// extensions.persistedQuery) the server does not know. Apollo Client
	// then sends the document's text, as it does for automatic persisted
	// queries.
	codeNotFound = "PERSISTED_QUERY_NOT_FOUND"
	// codeNotTrusted: trusted-only mode, and the request's document is in
	// no manifest.
	codeNotTrusted = "DOCUMENT_NOT_TRUSTED"
)

// documentIDKey is where the transports put a request's `documentId` (the
// GraphQL-over-HTTP persisted-documents member, top level in a POST body,
// a GET parameter or a websocket subscribe payload) for TrustedDocuments:
// gqlgen's request parameters have no member of their own for it.
const documentIDKey = "documentId"

// TrustedDocuments are the documents a front-end build shipped (its
// persisted-documents manifest): a request may name one by id instead of
// sending its text, and with Only set no other document runs. Without a
// manifest, Only refuses every document but those of staff.
type TrustedDocuments struct {
	// Docs maps a document's SHA-256 (lower-case hex) to its text.
	Docs map[string]string
	// Only refuses documents that are in no manifest, for everyone but
	// staff (the playground, operators' tools): DOCUMENT_NOT_TRUSTED.
	Only bool
}

// LoadTrustedDocuments reads a manifest: a JSON object mapping each
// document's SHA-256 in hex (optionally "sha256:"-prefixed) to its text, as
// graphql-codegen's persisted documents and relay-compiler's local
// persistence (algorithm SHA256) write it. Each key must be the hash of its
// text, so that an id means one document wherever it is computed.
func LoadTrustedDocuments(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of hash → document text: %v", path, err)
	}
	docs := make(map[string]string, len(m))
	for k, text := range m {
		h := strings.ToLower(strings.TrimPrefix(k, "sha256:"))
		if sum := documentHash(text); sum != h {
			return nil, fmt.Errorf("%s: key %q is not the SHA-256 of its document (%s)", path, k, sum)
		}
		docs[h] = text
	}
	return docs, nil
}

// documentHash is a document's id: the SHA-256 of its text, in hex.
func documentHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// trustedDocuments is the extension: it runs before the automatic
// persisted queries (which it leaves the ids it does not know, unless Only
// is set) and before the document limits.
type trustedDocuments struct{ TrustedDocuments }

var (
	_ graphql.HandlerExtension          = trustedDocuments{}
	_ graphql.OperationParameterMutator = trustedDocuments{}
)

func (trustedDocuments) ExtensionName() string                     { return "TrustedDocuments" }
func (trustedDocuments) Validate(graphql.ExecutableSchema) error   { return nil }
func (t trustedDocuments) exempt(ctx context.Context) bool         { return algoitny.ActorFrom(ctx).IsStaff() }
func (t trustedDocuments) refuse(code, msg string) *gqlerror.Error { return apierror.New(code, msg) }
func (t trustedDocuments) trusted(text string) bool                { _, ok := t.Docs[documentHash(text)]; return ok }

// MutateOperationParameters puts the text of the document a request names
// in its query, and in trusted-only mode refuses any other document.
func (t trustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id, apq, err := requestedDocument(p.Extensions)
	if err != nil {
		return err
	}
	if id != "" {
		if text, ok := t.Docs[id]; ok {
			p.Query = text
			delete(p.Extensions, "persistedQuery")
			delete(p.Extensions, documentIDKey)
			return nil
		}
		if !apq || (t.Only && !t.exempt(ctx) && p.Query == "") {
			// Apollo's link sends the text next (refused below when
			// it is not trusted); documentId has no such fallback.
			return t.refuse(codeNotFound, "PersistedQueryNotFound: no trusted document has the id "+id)
		}
		// An automatic persisted query: the APQ extension's business.
	}
	if t.Only && p.Query != "" && !t.trusted(p.Query) && !t.exempt(ctx) {
		return t.refuse(codeNotTrusted, "this server runs only trusted documents (its front-end's persisted documents): send a documentId of the manifest")
	}
	return nil
}

// requestedDocument reads the id a request names its document by: the
// GraphQL-over-HTTP `documentId` ("sha256:<hex>") or Apollo's
// `extensions.persistedQuery` ({version: 1, sha256Hash}, apq set). "" when
// it names none.
func requestedDocument(ext map[string]any) (id string, apq bool, err *gqlerror.Error) {
	if v, ok := ext[documentIDKey]; ok {
		s, _ := v.(string)
		h, found := strings.CutPrefix(s, "sha256:")
		if !found || !isSHA256Hex(h) {
			return "", false, apierror.New(codeNotFound, `documentId must be "sha256:" followed by 64 hex digits`)
		}
		return strings.ToLower(h), false, nil
	}
	pq, ok := ext["persistedQuery"].(map[string]any)
	if !ok {
		return "", false, nil
	}
	h, _ := pq["sha256Hash"].(string)
	if !isSHA256Hex(h) {
		return "", false, nil // the APQ extension answers it
	}
	return strings.ToLower(h), true, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// liftDocumentID moves a websocket subscribe payload's `documentId` into
// its extensions (documentIDKey), where TrustedDocuments reads it: gqlgen
// decodes the payload into its request parameters, which have no such
// member. Other payloads are returned as they are.
func liftDocumentID(payload json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(payload, []byte(`"documentId"`)) {
		return payload, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil || m[documentIDKey] == nil {
		return payload, false
	}
	ext := map[string]json.RawMessage{}
	if raw := m["extensions"]; len(raw) > 0 && string(raw) != "null" {
		if json.Unmarshal(raw, &ext) != nil {
			return payload, false
		}
	}
	ext[documentIDKey] = m[documentIDKey]
	delete(m, documentIDKey)
	m["extensions"] = mustJSON(ext)
	return mustJSON(m), true
}
