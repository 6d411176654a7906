package jmes

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Undefined finds each variable read outside the let that binds it, at
// its byte offset, with the bindings of one let evaluated in the scope
// around it (as the library evaluates them).
func TestUndefined(t *testing.T) {
	for _, c := range []struct {
		expr  string
		outer []string
		want  []Var
	}{
		// The query: $b's binding cannot see $a.
		{"let $a = 'admin', $b = items[?metadata.name == $a] in $b", nil, []Var{{"$a", 47}}},
		{"let $a = 'admin' in let $b = items[?metadata.name == $a] in $b", nil, nil},
		{"let $a = 'top-a' in let $a = 'in-a', $b = $a in $b", nil, nil},
		{"[let $scope = 'foo' in [$scope], $scope]", nil, []Var{{"$scope", 33}}},
		{"let $a = $a in $a", nil, []Var{{"$a", 9}}},
		// A filter's condition is written before its right-hand side.
		{"a[?x == $p].b[?$q].c", nil, []Var{{"$p", 8}, {"$q", 15}}},
		{"a[?x == $p].b[?$q].c", []string{"$p"}, []Var{{"$q", 15}}},
		// Literals are not variables; $ alone is the root.
		{"'$no' == `\"$no\"` && \"$no\" == $.x && $yes", nil, []Var{{"$yes", 36}}},
		{"$noexist", nil, []Var{{"$noexist", 0}}},
	} {
		ast, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		if diff := cmp.Diff(c.want, Undefined(c.expr, ast, c.outer)); diff != "" {
			t.Errorf("Undefined(%q, %v) mismatch (-want +got):\n%s", c.expr, c.outer, diff)
		}
	}
}

// A let binding that is not $name = expression is a parse error at its
// let (the library's interpreter panics on it), and $name = expression
// outside a let one at its variable (the library fails on it with
// "Unknown AST node").
func TestParseBadBinding(t *testing.T) {
	for _, c := range []struct {
		expr string
		off  int
	}{
		{"let $a in $a", 0},
		{"x || let $a = `1`, b in $a", 5},
		{"items[?a == `1`] | $x = b", 19},
	} {
		_, err := Parse(c.expr)
		e, ok := err.(*Error)
		if !ok || e.Off != c.off || !strings.Contains(e.Msg, "let") {
			t.Errorf("Parse(%q) = %v; want a binding error at offset %d", c.expr, err, c.off)
		}
	}
}

// Unread finds each outer name that the expression never reads outside a
// let that binds the same name again.
func TestUnread(t *testing.T) {
	for _, c := range []struct {
		expr  string
		outer []string
		want  []string
	}{
		{"items[?contains($roles, role)]", []string{"$roles"}, nil},
		{"items", []string{"$roles"}, []string{"$roles"}},
		// A let of the same name hides the outer one.
		{"let $r = `1` in $r", []string{"$r"}, []string{"$r"}},
		// A binding's expression is evaluated outside its let, so it
		// reads the outer name.
		{"let $r = $r in $r", []string{"$r"}, nil},
		{"[$a, let $b = `1` in $b]", []string{"$a", "$b", "$c"}, []string{"$b", "$c"}},
		// Literals are not reads.
		{"'$a' == `\"$a\"`", []string{"$a"}, []string{"$a"}},
	} {
		ast, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		if diff := cmp.Diff(c.want, Unread(c.expr, ast, c.outer)); diff != "" {
			t.Errorf("Unread(%q, %v) mismatch (-want +got):\n%s", c.expr, c.outer, diff)
		}
	}
}
