package jmes

// Variable scopes, resolved before a query runs.
//
// A JMESPath variable is defined only inside the body of the let that
// binds it: in `let $a = x, $b = y in body` the bindings are evaluated in
// the scope around the let, so $b's expression cannot read $a (the
// letexpr compliance case "Bindings only visible within expression
// clause", and what the library does: it registers the bindings only
// after evaluating them all), and body sees both. A let inside body
// shadows an outer binding of the same name. Outer names are the
// variables defined around the whole expression (a query call's named
// inputs): a variable that no let binds reads the outer name, so the
// variables Undefined finds without outer names are exactly those the
// expression reads from outside it (Unread, an unused named input).
//
// The walk visits the tree in source order (a filter projection keeps
// its condition last; it is written before the right-hand side), so the
// n-th variable node it meets is the n-th $name token of the text (see
// scan.go), which gives each variable its offset; a let node likewise
// pairs with the n-th let keyword.

import (
	"slices"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// Var is a variable read outside every let that binds it: its name (with
// the $) and its byte offset in the expression.
type Var struct {
	Name string
	Off  int
}

// scopeWalk is one walk of a tree: the scanned tokens, how many variables
// and lets it has passed, and what it found.
type scopeWalk struct {
	vars, lets []tok
	nv, nl     int
	undefined  []Var
	bad        *Error // the first let binding that is not $name = expression
}

func newScopeWalk(expr string) *scopeWalk {
	w := &scopeWalk{}
	for _, t := range scan(expr) {
		switch t.kind {
		case tokVar:
			w.vars = append(w.vars, t)
		case tokLet:
			w.lets = append(w.lets, t)
		}
	}
	return w
}

// Undefined returns the variables that ast (the tree of expr) reads where
// no let binds them and outer does not name them (names with the $), in
// source order.
func Undefined(expr string, ast parsing.ASTNode, outer []string) []Var {
	w := newScopeWalk(expr)
	scope := map[string]bool{}
	for _, name := range outer {
		scope[name] = true
	}
	w.node(ast, scope)
	return w.undefined
}

// Unread returns the names of outer (with the $) that ast never reads:
// every read of the name is inside a let that binds it again, or there
// is none. A name is read where Undefined, without outer, finds it.
func Unread(expr string, ast parsing.ASTNode, outer []string) []string {
	free := Undefined(expr, ast, nil)
	var unread []string
	for _, name := range outer {
		if !slices.ContainsFunc(free, func(v Var) bool { return v.Name == name }) {
			unread = append(unread, name)
		}
	}
	return unread
}

// checkBindings returns an error for the first let binding of ast that
// is not `$name = expression` (the library's interpreter would panic on
// it), or for a `$name = expression` outside a let, or nil.
func checkBindings(expr string, ast parsing.ASTNode) *Error {
	w := newScopeWalk(expr)
	w.node(ast, map[string]bool{})
	return w.bad
}

func (w *scopeWalk) node(n parsing.ASTNode, scope map[string]bool) {
	switch n.NodeType {
	case parsing.ASTVariable:
		name, _ := n.Value.(string)
		off := w.varOffset(name)
		if !scope[name] {
			w.undefined = append(w.undefined, Var{Name: name, Off: off})
		}
	case parsing.ASTLetExpression:
		w.let(n, scope)
	case parsing.ASTBinding:
		// $name = expression outside the bindings of a let (the
		// library cannot evaluate it).
		if w.bad == nil {
			w.bad = errStrayBinding(w.peekOffset())
		}
		for _, c := range n.Children {
			w.node(c, scope)
		}
	case parsing.ASTFilterProjection:
		// left[?condition]right: children are left, right, condition.
		w.node(n.Children[0], scope)
		w.node(n.Children[2], scope)
		w.node(n.Children[1], scope)
	default:
		for _, c := range n.Children {
			w.node(c, scope)
		}
	}
}

// let walks a let expression: the bindings' expressions in scope, then
// the body in scope plus the bound names.
func (w *scopeWalk) let(n parsing.ASTNode, scope map[string]bool) {
	off := 0
	if w.nl < len(w.lets) {
		off = w.lets[w.nl].off
	}
	w.nl++
	inner := make(map[string]bool, len(scope)+len(n.Children[0].Children))
	for name := range scope {
		inner[name] = true
	}
	for _, b := range n.Children[0].Children {
		if b.NodeType != parsing.ASTBinding || b.Children[0].NodeType != parsing.ASTVariable {
			if w.bad == nil {
				w.bad = errBadBinding(off)
			}
			w.node(b, scope)
			continue
		}
		name, _ := b.Children[0].Value.(string)
		w.varOffset(name) // the bound name is not a read
		w.node(b.Children[1], scope)
		inner[name] = true
	}
	w.node(n.Children[1], inner)
}

// peekOffset returns the offset of the next variable token, or 0.
func (w *scopeWalk) peekOffset() int {
	if w.nv < len(w.vars) {
		return w.vars[w.nv].off
	}
	return 0
}

// varOffset returns the offset of the next variable token, which is the
// variable node being visited; if the text and the tree ever disagree,
// the first token of that name, else 0.
func (w *scopeWalk) varOffset(name string) int {
	i := w.nv
	w.nv++
	if i < len(w.vars) && w.vars[i].text == name {
		return w.vars[i].off
	}
	for _, t := range w.vars {
		if t.text == name {
			return t.off
		}
	}
	return 0
}
