package jmes

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: Parse and Search never panic, their errors are *Error in
// vmcp's words with an offset inside the expression, and every undefined
// variable's offset points at its $name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"items[?kind == `Pod`]", "let $a = 'x', $b = $a in $b", "a[?x == $p].b[?$q]", "`{bad`", "let $a in $a", "'unclosed", "contains(`[[1]]`, `[1]`)", "reverse(@)"} {
		f.Add(s)
	}
	data := map[string]any{"items": []any{map[string]any{"kind": "Pod", "n": 1.0}}, "a": []any{[]any{1.0}}}
	f.Fuzz(func(t *testing.T, expr string) {
		ast, err := Parse(expr)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T is not *Error", expr, err)
			}
			if e.Off < 0 || e.Off > len(expr) || strings.Contains(e.Msg, "TOK") {
				t.Errorf("Parse(%q) = %+v: offset outside the expression or token names", expr, e)
			}
			return
		}
		for _, v := range Undefined(expr, ast, nil) {
			if !strings.HasPrefix(expr[v.Off:], v.Name) {
				t.Errorf("Undefined(%q): %s at %d is not there", expr, v.Name, v.Off)
			}
		}
		if _, err := Search(ast, data, nil, 0); err != nil && (strings.Contains(err.Error(), "runtime error") || strings.Contains(err.Error(), "AST")) {
			t.Errorf("Search(%q) error %q shows Go's or the library's internals", expr, err)
		}
	})
}
