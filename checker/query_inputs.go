package checker

// Named query inputs: {{query EXPR VALUE "roles" .steps.r.output ...}}
// binds each value after VALUE to the JMESPath variable named before it
// ($roles), so that two steps' outputs meet in one expression. The values
// are ordinary template arguments: their .steps references are collected
// by the template walk like any other, so each step they read must be a
// dependency (missing_dependency) and the defaultResults rule applies.
//
// Here the names are checked (a quoted identifier, written without "$",
// each once), and, when EXPR is a literal, the variables it reads are
// resolved as the library evaluates them: a let's bindings are all
// evaluated in the scope around the let (they do not see each other),
// and its body sees them. Every variable the expression reads and no let
// defines must be a named input (query_variable, undefined), and every
// named input must be read (query_variable, unused: a typo or a
// shadowing let). A variable's position is that of its first "$name"
// outside the expression's string and JSON literals.

import (
	"strings"
	"text/template/parse"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/ir"
)

// Problems with named inputs (see queryProblem). text is the name,
// args the argument's number (for queryInputName).
const (
	queryInputName queryProblemKind = iota + 100
	queryInputTwice
	queryVarUndefined
	queryInputUnused
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
		case !isStr || !ir.IsQueryVarName(strings.TrimPrefix(name, "$")):
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

// queryVariables checks a literal expression's variables against the
// call's named inputs. The expression has parsed already.
func (wk *refWalker) queryVariables(lit *parse.StringNode, inputs []queryInput) {
	ast, err := parsing.NewParser().Parse(lit.Text)
	if err != nil {
		return
	}
	free := freeQueryVars(ast, nil, nil)
	names := inputNames(inputs)
	var suggested []string // inputs an undefined variable is a typo of
	for _, name := range free {
		if !containsInput(inputs, name) {
			off := int(lit.Pos) + queryLiteralOffset(lit.Quoted, queryVarOffset(lit.Text, name))
			wk.queries = append(wk.queries, queryProblem{off: off, kind: queryVarUndefined, text: name, inputs: names})
			suggested = append(suggested, suggest(name, names))
		}
	}
	for _, in := range inputs {
		if !contains(free, in.name) && !contains(suggested, in.name) {
			wk.queries = append(wk.queries, queryProblem{off: in.off, kind: queryInputUnused, text: in.name})
		}
	}
}

func inputNames(inputs []queryInput) []string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.name
	}
	return names
}

// freeQueryVars appends to free, in order of first use and once each,
// the variables (without "$") that n reads and that no let around them
// defines; bound holds the names the enclosing lets define.
func freeQueryVars(n parsing.ASTNode, bound map[string]bool, free []string) []string {
	switch n.NodeType {
	case parsing.ASTVariable:
		name, _ := n.Value.(string)
		name = strings.TrimPrefix(name, "$")
		if !bound[name] && !contains(free, name) {
			free = append(free, name)
		}
		return free
	case parsing.ASTLetExpression:
		if len(n.Children) != 2 {
			break
		}
		inner := make(map[string]bool, len(bound)+len(n.Children[0].Children))
		for k := range bound {
			inner[k] = true
		}
		for _, b := range n.Children[0].Children { // ASTBinding: variable, value
			if len(b.Children) != 2 {
				continue
			}
			free = freeQueryVars(b.Children[1], bound, free)
			if name, ok := b.Children[0].Value.(string); ok {
				inner[strings.TrimPrefix(name, "$")] = true
			}
		}
		return freeQueryVars(n.Children[1], inner, free)
	}
	for _, c := range n.Children {
		free = freeQueryVars(c, bound, free)
	}
	return free
}

// queryVarOffset is the offset of the first "$name" in expr that is not
// inside a quoted identifier, a raw string or a JSON literal, is not
// the start of a longer name and is not where a let defines it; 0 when
// there is none.
func queryVarOffset(expr, name string) int {
	want := "$" + name
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case strings.HasPrefix(expr[i:], want):
			end := i + len(want)
			if (end == len(expr) || !ir.IsQueryVarName("a"+expr[end:end+1])) && !isLetBinding(expr[end:]) {
				return i
			}
		}
	}
	return 0
}

// isLetBinding reports whether the text after a variable starts a let
// binding ("= value", not "== value").
func isLetBinding(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\n")
	return strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "==")
}
