package problempkg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// maxYAMLBytes bounds a package's YAML files: metadata, never data.
const maxYAMLBytes = 1 << 20

// yamlMap is a YAML mapping read from a package file.
type yamlMap map[string]any

// readYAML reads the YAML mapping in the file rel under root; a missing
// file is an empty map. Anchors and aliases are refused: metadata has no
// use for them, and expanding them is how a few bytes become gigabytes.
func readYAML(root, rel string) (yamlMap, bool, error) {
	return readYAMLWith(root, rel, nil)
}

// readYAMLWith is readYAML with the file's text passed through rewrite
// (when not nil) before it is parsed.
func readYAMLWith(root, rel string, rewrite func([]byte) []byte) (yamlMap, bool, error) {
	if !exists(joinRel(root, rel)) {
		return yamlMap{}, false, nil
	}
	data, err := readInside(root, rel)
	if err != nil {
		return nil, false, err
	}
	if rewrite != nil {
		data = rewrite(data)
	}
	if len(data) > maxYAMLBytes {
		return nil, false, errorf(rel, "larger than %d bytes", maxYAMLBytes)
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, false, errorf(rel, "not valid YAML: %v", firstLineOf(err.Error()))
	}
	for _, doc := range file.Docs {
		if hasAlias(doc.Body) {
			return nil, false, errorf(rel, "YAML anchors and aliases are not supported")
		}
	}
	m := yamlMap{}
	if strings.TrimSpace(string(data)) == "" {
		return m, true, nil
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, false, errorf(rel, "not a YAML mapping: %v", firstLineOf(err.Error()))
	}
	return m, true, nil
}

// hasAlias says the node or one below it is an alias or an anchor.
func hasAlias(n ast.Node) bool {
	found := false
	ast.Walk(visitorFunc(func(n ast.Node) bool {
		switch n.(type) {
		case *ast.AliasNode, *ast.AnchorNode:
			found = true
		}
		return !found
	}), n)
	return found
}

type visitorFunc func(ast.Node) bool

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// str reads key as a string ("" when absent); numbers and booleans are
// written as YAML wrote them.
func (m yamlMap) str(key string) string {
	switch v := m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// has says key is present.
func (m yamlMap) has(key string) bool {
	_, ok := m[key]
	return ok
}

// num reads key as a number; ok is false when it is absent or not one.
func (m yamlMap) num(key string) (float64, bool) {
	switch v := m[key].(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	}
	return 0, false
}

// list reads key as a list of strings: a YAML sequence, or a string split
// at whitespace (the legacy format's "space separated" values).
func (m yamlMap) list(key string) []string {
	return asList(m[key])
}

func asList(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	default:
		return []string{fmt.Sprint(v)}
	}
}

// sub reads key as a mapping (empty when absent or not one).
func (m yamlMap) sub(key string) yamlMap {
	if v, ok := m[key].(map[string]any); ok {
		return yamlMap(v)
	}
	return yamlMap{}
}
