package checker

// Named query inputs: {{query EXPR VALUE "roles" .steps.r.output ...}}
// binds each value after VALUE to the JMESPath variable named before it
// ($roles), so that two steps' outputs meet in one expression. The values
// are ordinary template arguments: their .steps references are collected
// by the template walk like any other, so each step they read must be a
// dependency (missing_dependency) and the defaultResults rule applies.
//
// Here the names are checked (a quoted identifier, written without "$",
// each once: query_arguments). When they are all usable and EXPR is a
// literal, query_scope.go checks the variables it reads against them.

import (
	"strings"
	"text/template/parse"

	"github.com/vmcp-dev/vmcp/internal/jmes"
)

// Problems with named inputs (see queryProblem). text is the name,
// args the argument's number (for queryInputName).
const (
	queryInputName queryProblemKind = iota + 100
	queryInputTwice
	queryInputUnused // see query_scope.go
)

// queryInput is one named input of a query call.
type queryInput struct {
	name string
	off  int // the name literal's offset in the template
}

// queryInputs checks the names of a call's named inputs: args[3],
// args[5], ... (args[0] is query, args[1] the expression, args[2] the
// value; a piped value comes last, after the names). ok is false when a
// name is not usable, so the expression's variables are not checked.
func (wk *refWalker) queryInputs(args []parse.Node) (inputs []queryInput, ok bool) {
	ok = true
	for i := 3; i < len(args); i += 2 {
		s, isStr := args[i].(*parse.StringNode)
		name := ""
		if isStr {
			name = s.Text
		}
		switch {
		case !isStr || !jmes.IsVarName(strings.TrimPrefix(name, "$")):
			wk.queries = append(wk.queries, queryProblem{off: argStart(args[i]), kind: queryInputName, text: name, args: i})
			ok = false
		case strings.HasPrefix(name, "$"):
			wk.queries = append(wk.queries, queryProblem{off: int(s.Pos), kind: queryInputName, text: name, args: i})
			ok = false
		case containsInput(inputs, name):
			wk.queries = append(wk.queries, queryProblem{off: int(s.Pos), kind: queryInputTwice, text: name})
			ok = false
		default:
			inputs = append(inputs, queryInput{name: name, off: int(s.Pos)})
		}
	}
	return inputs, ok
}

// argStart is the offset of an argument's first character (a field or
// variable chain records the position of its second component).
func argStart(n parse.Node) int {
	switch x := n.(type) {
	case *parse.FieldNode:
		return chainStart(int(x.Pos), x.Ident, 1)
	case *parse.VariableNode:
		return chainStart(int(x.Pos), x.Ident, 0)
	}
	return int(n.Position())
}

func containsInput(inputs []queryInput, name string) bool {
	for _, in := range inputs {
		if in.name == name {
			return true
		}
	}
	return false
}
