package archtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of hand-written code may be,
// counted from the line of `func` to that of its closing brace: about a
// screen. A longer one has missed a seam (prepare / run / summarise).
const maxFuncLines = 80

// longFuncsAllowed are functions that may still exceed maxFuncLines, keyed
// by "file:Func" (methods as "file:Type.Method"), each with the reason. The
// test fails on an entry that is no longer too long, so the list only
// shrinks: delete the entry with the split.
var longFuncsAllowed = map[string]string{}

// moduleRoot is the module's directory, two up from this package's.
const moduleRoot = "../.."

// longFunc is one function declaration longer than maxFuncLines.
type longFunc struct {
	key   string // "file:Func" or "file:Type.Method"
	lines int
}

// handWritten reports whether a parsed file is hand-written: not a test
// and not generated (`// Code generated … DO NOT EDIT.`, as gqlgen writes).
func handWritten(path string, f *ast.File) bool {
	return !strings.HasSuffix(path, "_test.go") && !ast.IsGenerated(f)
}

// funcName returns "Func" or "Type.Method" for a declaration.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch t := typ.(type) {
	case *ast.IndexExpr: // generic receiver T[P]
		typ = t.X
	case *ast.IndexListExpr: // generic receiver T[P, Q]
		typ = t.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// findLongFuncs parses every hand-written .go file below root (skipping
// hidden directories, testdata and vendor) and returns the function
// declarations longer than maxFuncLines, sorted by key.
func findLongFuncs(root string) ([]longFunc, error) {
	var out []longFunc
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if !handWritten(path, f) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if lines > maxFuncLines {
				out = append(out, longFunc{filepath.ToSlash(rel) + ":" + funcName(fd), lines})
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b longFunc) int { return strings.Compare(a.key, b.key) })
	return out, err
}

// TestFunctionLength fails naming every function of hand-written, non-test
// code longer than maxFuncLines that longFuncsAllowed does not list, and
// every entry of longFuncsAllowed that is no longer too long.
func TestFunctionLength(t *testing.T) {
	t.Parallel()
	long, err := findLongFuncs(moduleRoot)
	if err != nil {
		t.Fatalf("reading the module: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range long {
		if _, ok := longFuncsAllowed[f.key]; ok {
			seen[f.key] = true
			continue
		}
		t.Errorf("%s is %d lines, more than %d: split it along its steps", f.key, f.lines, maxFuncLines)
	}
	for key, why := range longFuncsAllowed {
		if !seen[key] {
			t.Errorf("%s (%s) is no longer over %d lines: delete its entry in longFuncsAllowed", key, why, maxFuncLines)
		}
	}
}
