package fuzzkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` runs scripts/fuzz.sh, and the
// script's list of targets is every fuzz target of the module (each
// top-level func FuzzX(*testing.F) of a _test.go file, found here with
// go/parser).
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("make", "-n", "-C", root, "fuzz").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scripts/fuzz.sh") {
		t.Fatalf("make -n fuzz = %v:\n%s\nwant it to run scripts/fuzz.sh", err, out)
	}
	out, err = exec.Command(filepath.Join(root, "scripts", "fuzz.sh"), "--list").Output()
	if err != nil {
		t.Fatalf("fuzz.sh --list: %v", err)
	}
	listed := strings.Split(strings.TrimSpace(string(out)), "\n")
	if want := fuzzTargets(t, root); !slices.Equal(listed, want) {
		t.Errorf("fuzz.sh --list = %q; want every fuzz target %q", listed, want)
	}
}

// fuzzTargets are the module's fuzz targets as "dir name", sorted.
func fuzzTargets(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && takesF(fn) {
				out = append(out, filepath.ToSlash(dir)+" "+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// takesF reports whether fn's one parameter is a *testing.F.
func takesF(fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if len(params) != 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}
