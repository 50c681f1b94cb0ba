package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// minDescription is the shortest description that can say something (what
// a field is, its unit or who may see it); shorter ones are placeholders.
const minDescription = 10

// TestSchemaIsDocumented walks the schema the server serves — the one
// introspection shows, embedded in the generated code — and fails on every
// type, field, argument, input field, enum value and directive of ours
// that has no description, or one too short to mean anything. GraphiQL's
// documentation pane is what front-end developers read: nothing in the
// contract may be left undescribed. Only the built-ins of the GraphQL
// specification (String, Int, Float, Boolean, ID, the __ introspection
// types, @skip, @include, @deprecated, @specifiedBy, @oneOf, @defer) are
// skipped.
func TestSchemaIsDocumented(t *testing.T) {
	schema := NewExecutableSchema(Config{Resolvers: &Resolver{}}).Schema()
	problems := undocumented(schema)
	if len(problems) > 0 {
		t.Errorf("%d schema elements lack a description of at least %d characters (write one in schema.graphqls, then `make generate`):\n  %s",
			len(problems), minDescription, strings.Join(problems, "\n  "))
	}
	// The walk must have seen the schema, not an empty one.
	if len(schema.Types) < 50 || schema.Query == nil || schema.Mutation == nil || schema.Subscription == nil {
		t.Fatalf("the schema walked looks incomplete: %d types", len(schema.Types))
	}
}

// TestUndocumentedFindsEveryKind checks the walk itself on a small schema
// with one undescribed element of each kind: were it to skip a kind, the
// test above would pass with that kind undescribed.
func TestUndocumentedFindsEveryKind(t *testing.T) {
	src := `
"A scalar with a description."
scalar Described
scalar Bare
"A type with a description."
type Query {
  "A field with a description."
  ok(
    "An argument with a description."
    a: Int
    b: Int
  ): Int
  bare: Int
  short: Int @deprecated(reason: "gone")
}
enum Color {
  "A value with a description."
  RED
  GREEN
}
"An input with a description."
input Filter {
  "An input field with a description."
  x: Int
  y: Int
}
"An interface with a description."
interface Thing {
  id: ID
}
union Any = Query
directive @ours(arg: Int) on FIELD_DEFINITION
`
	schema := mustLoad(t, src)
	got := undocumented(schema)
	want := []string{
		"type Query.bare",
		"type Query.ok(b)",
		"type Query.short",
		"enum Color",
		"enum Color.GREEN",
		"input Filter.y",
		"interface Thing.id",
		"union Any",
		"scalar Bare",
		"directive @ours",
		"directive @ours(arg)",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w+":") }) {
			t.Errorf("the walk did not report %q; it reported:\n  %s", w, strings.Join(got, "\n  "))
		}
	}
	if len(got) != len(want) {
		t.Errorf("the walk reported %d elements, want %d:\n  %s", len(got), len(want), strings.Join(got, "\n  "))
	}
	// Too short is reported like missing.
	short := mustLoad(t, `"The root of queries." type Query { "Count." n: Int }`)
	if got := undocumented(short); !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, "type Query.n: too short") }) {
		t.Errorf("a 6-character description was not reported as too short: %q", got)
	}
}

// undocumented lists every element of schema outside the specification's
// built-ins whose description is missing or shorter than minDescription:
// types by kind and name, their fields, arguments and values in schema
// order, then directives by name.
func undocumented(schema *ast.Schema) []string {
	var out []string
	check := func(what, desc string) {
		switch d := strings.TrimSpace(desc); {
		case d == "":
			out = append(out, what+": no description")
		case utf8.RuneCountInString(d) < minDescription:
			out = append(out, fmt.Sprintf("%s: too short (%q)", what, d))
		}
	}
	checkArgs := func(owner string, args ast.ArgumentDefinitionList) {
		for _, a := range args {
			check(fmt.Sprintf("%s(%s)", owner, a.Name), a.Description)
		}
	}
	// Types in a stable order: kinds as a reader meets them, then by name.
	kinds := []ast.DefinitionKind{ast.Object, ast.Interface, ast.Union, ast.Enum, ast.InputObject, ast.Scalar}
	for _, kind := range kinds {
		var names []string
		for name, def := range schema.Types {
			if def.Kind == kind && !builtInType(def) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			def := schema.Types[name]
			owner := kindNames[def.Kind] + " " + name
			check(owner, def.Description)
			for _, f := range def.Fields {
				if strings.HasPrefix(f.Name, "__") { // __typename, __schema, __type
					continue
				}
				check(owner+"."+f.Name, f.Description)
				checkArgs(owner+"."+f.Name, f.Arguments)
			}
			for _, v := range def.EnumValues {
				check(owner+"."+v.Name, v.Description)
			}
		}
	}
	var directives []string
	for name, d := range schema.Directives {
		if !builtInDirective(d) {
			directives = append(directives, name)
		}
	}
	slices.Sort(directives)
	for _, name := range directives {
		d := schema.Directives[name]
		check("directive @"+name, d.Description)
		checkArgs("directive @"+name, d.Arguments)
	}
	return out
}

// kindNames are the keywords that declare each kind in SDL.
var kindNames = map[ast.DefinitionKind]string{
	ast.Object: "type", ast.Interface: "interface", ast.Union: "union",
	ast.Enum: "enum", ast.InputObject: "input", ast.Scalar: "scalar",
}

// builtInType says whether def comes from the specification's prelude
// (String, Int, Float, Boolean, ID, the __ introspection types), which the
// specification describes.
func builtInType(def *ast.Definition) bool {
	return def.BuiltIn || strings.HasPrefix(def.Name, "__")
}

// builtInDirective says whether d comes from the prelude (@skip, @include,
// @deprecated, @specifiedBy, @oneOf, @defer).
func builtInDirective(d *ast.DirectiveDefinition) bool {
	return d.Position != nil && d.Position.Src != nil && d.Position.Src.BuiltIn
}

func mustLoad(t *testing.T, src string) *ast.Schema {
	t.Helper()
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "test.graphqls", Input: src})
	if err != nil {
		t.Fatalf("load schema: %v", err)
	}
	return schema
}
