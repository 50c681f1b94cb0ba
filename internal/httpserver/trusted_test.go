package httpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
)

func TestLoadTrustedDocuments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := "query A { __typename }"
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	docs, err := LoadTrustedDocuments(write("ok.json", `{"sha256:`+strings.ToUpper(documentHash(doc))+`": "query A { __typename }"}`))
	if err != nil || docs[documentHash(doc)] != doc {
		t.Fatalf("a prefixed upper-case key: %v %v", docs, err)
	}
	if _, err := LoadTrustedDocuments(write("bad.json", `{"`+documentHash(doc)+`": "query B { __typename }"}`)); err == nil || !strings.Contains(err.Error(), "is not the SHA-256") {
		t.Fatalf("a key of another text: %v", err)
	}
	if _, err := LoadTrustedDocuments(write("list.json", `[]`)); err == nil {
		t.Fatal("a JSON array was taken")
	}
}

// TestTrustedOnlyExemptsStaff: in trusted-only mode staff run any
// document (the playground), others the manifest's only.
func TestTrustedOnlyExemptsStaff(t *testing.T) {
	t.Parallel()
	doc := "query A { __typename }"
	ext := trustedDocuments{TrustedDocuments{Docs: map[string]string{documentHash(doc): doc}, Only: true}}
	staff := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "s", IsStaff: true}})
	user := algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "u"}})
	for _, c := range []struct {
		name string
		ctx  context.Context
		p    graphql.RawParams
		code string
	}{
		{"user, manifest text", user, graphql.RawParams{Query: doc}, ""},
		{"user, other text", user, graphql.RawParams{Query: "{ x }"}, codeNotTrusted},
		{"staff, other text", staff, graphql.RawParams{Query: "{ x }"}, ""},
		{"user, id", user, graphql.RawParams{Extensions: map[string]any{documentIDKey: "sha256:" + documentHash(doc)}}, ""},
		{"staff, unknown id", staff, graphql.RawParams{Extensions: map[string]any{documentIDKey: "sha256:" + documentHash("x")}}, codeNotFound},
	} {
		p := c.p
		err := ext.MutateOperationParameters(c.ctx, &p)
		switch {
		case c.code == "" && err != nil, c.code != "" && (err == nil || err.Extensions["code"] != c.code):
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		case c.code == "" && p.Query == "":
			t.Errorf("%s: no query", c.name)
		}
	}
}
