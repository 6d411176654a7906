package jmes

// Bounding what the operators build. Besides functions (limits.go), three
// kinds of operator make new arrays: a flatten ([]) holds every element of
// every array it flattens, a projection ([*], [?...], *, a slice) holds
// one element per element it goes over, and a multi-select ([a, b] or
// {a: x}) one per part. Values share their parts, so [@, @] | [@, @] | ...
// doubles a tree in one new array, and a flatten or a nested projection
// of it ([@, @][] | [@, @][] | ..., or [*][*][*]... over it) copies it
// out: forty of them ask for 2^40 elements. The library's interpreter
// builds these without a hook, so Parse rewrites its tree: the operand of
// each flatten and each projection (for a slice, what is sliced), and
// each multi-select itself, become a call of an internal function (a name
// that no query can write, \x00...) that charges the search's budget what
// the operator is about to hold (the flatten, the projection: one element
// per element it goes over), or the new array or object (the
// multi-select), and gives back its argument unchanged. Nested
// projections are charged each time the inner one runs, so what a chain
// of them visits adds up. The tree means the same query; the library sees a
// function call where vmcp counts.
//
// The flatten, the filter projection and the value projection drop an
// error of their left-hand side (the result is null); so a charge over the
// budget is also kept in the budget, and Search fails with it whatever
// the interpreter made of it.

import (
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// The internal functions of the rewritten tree.
const (
	guardFlatten = "\x00flatten" // charges what flattening its argument holds
	guardProject = "\x00project" // charges the elements a projection goes over
	guardBuilt   = "\x00built"   // charges a new multi-select array or object
)

// isGuard reports whether name is an internal function of the rewritten
// tree (Known says so too, for the checker's unknown-function check).
func isGuard(name string) bool {
	return name == guardFlatten || name == guardProject || name == guardBuilt
}

// guard rewrites the tree in place (see the file comment) and returns it.
func guard(n parsing.ASTNode) parsing.ASTNode {
	for i, c := range n.Children {
		n.Children[i] = guard(c)
	}
	switch n.NodeType {
	case parsing.ASTFlatten:
		n.Children[0] = guardCall(guardFlatten, n.Children[0])
	case parsing.ASTProjection:
		// The interpreter slices a string only when the left-hand side is
		// this shape, so the charge goes on what is sliced.
		if l := n.Children[0]; l.NodeType == parsing.ASTIndexExpression && len(l.Children) > 1 && l.Children[1].NodeType == parsing.ASTSlice {
			l.Children[0] = guardCall(guardProject, l.Children[0])
		} else {
			n.Children[0] = guardCall(guardProject, n.Children[0])
		}
	case parsing.ASTFilterProjection, parsing.ASTValueProjection:
		n.Children[0] = guardCall(guardProject, n.Children[0])
	case parsing.ASTMultiSelectList, parsing.ASTMultiSelectHash:
		return guardCall(guardBuilt, n)
	}
	return n
}

func guardCall(name string, arg parsing.ASTNode) parsing.ASTNode {
	return parsing.ASTNode{NodeType: parsing.ASTFunctionExpression, Value: name, Children: []parsing.ASTNode{arg}}
}

// callGuard runs an internal function: it charges b, and returns its
// argument.
func callGuard(b *budget, name string, args []any) (any, error) {
	v := args[0]
	n := 1
	switch name {
	case guardFlatten:
		if arr, ok := v.([]any); ok {
			n = 2
			for _, e := range arr {
				if sub, ok := e.([]any); ok {
					n += len(sub)
				} else {
					n++
				}
			}
		}
	case guardProject:
		switch x := v.(type) {
		case []any:
			n += len(x)
		case map[string]any:
			n += len(x)
		}
	case guardBuilt:
		n = builtSize("", v)
	}
	if e := b.charge(guardLabel(name), n); e != nil {
		return nil, e
	}
	return v, nil
}

// guardLabel names what an internal function counts, in errOverBudget.
func guardLabel(name string) string {
	switch name {
	case guardFlatten:
		return "a flatten ([])"
	case guardProject:
		return "a projection ([*], [?...], * or a slice)"
	}
	return "a multi-select ([a, b] or {k: a})"
}
