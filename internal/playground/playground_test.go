package playground_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/playground"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Every example operation is valid against the schema, and its variables
// are the operation's own.
func TestExamplesValidate(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	examples := playground.Examples()
	if len(examples) < 8 {
		t.Fatalf("%d examples", len(examples))
	}
	for _, ex := range examples {
		doc, errs := gqlparser.LoadQuery(schema, ex.Query)
		if len(errs) > 0 {
			t.Errorf("%s: %v", ex.Name, errs)
			continue
		}
		if len(doc.Operations) != 1 {
			t.Errorf("%s: %d operations, want one per tab", ex.Name, len(doc.Operations))
			continue
		}
		vars := map[string]any{}
		if ex.Variables != "" {
			if err := json.Unmarshal([]byte(ex.Variables), &vars); err != nil {
				t.Errorf("%s: variables: %v", ex.Name, err)
			}
		}
		defs := doc.Operations[0].VariableDefinitions
		if len(defs) != len(vars) {
			t.Errorf("%s: variables %v for definitions %v", ex.Name, vars, defs)
		}
		for _, d := range defs {
			if _, ok := vars[d.Variable]; !ok {
				t.Errorf("%s: no variable %s in %s", ex.Name, d.Variable, ex.Variables)
			}
		}
		if !strings.HasPrefix(ex.Query, "# ") {
			t.Errorf("%s: no explaining comment", ex.Name)
		}
	}
}
