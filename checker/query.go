package checker

// The query function: {{query EXPR VALUE}} runs the JMESPath expression
// EXPR (the jmespath-community dialect, which has let) over VALUE. When
// EXPR is a string literal it is parsed here, by the same code the
// runtime evaluates it with (internal/jmes), so a syntax error, an
// unknown function, a literal numeric argument that no run accepts
// (pad_left('a', `1.5`): internal/jmes checks the same at run time) or a
// variable that no let and no named input defines (query_scope.go) is a
// compile-time error. A syntax error comes with the byte offset of
// the token that is wrong in the expression text, and a fix; the
// expression is a Go string literal inside the template, so that offset
// is mapped through the literal's escapes (queryLiteralOffset) to an
// offset in the template source, which parser.Node.OffsetPos then maps
// to the file. An unknown function has no offset in the library's tree,
// so it is placed at the first "name(" in the expression.
//
// A call's arity is checked too: query takes the expression and the
// value, then any number of named inputs as name-value pairs, and in a
// pipeline ({{.x | query "a"}}) the piped value is the last argument.
// The named inputs are checked in query_inputs.go, and the variables
// the expression reads against them and its lets in query_scope.go.

import (
	"errors"
	"strings"
	"text/template/parse"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/ir"
)

// queryProblem is a query call that cannot work: where (a byte offset in
// the template) and what (errQuery words it).
type queryProblem struct {
	off  int
	kind queryProblemKind
	// syntax: the message (internal/jmes words it); unknown function:
	// the name; undefined variable: the variable, with its $.
	text string
	// syntax, undefined variable: how to fix it ("" when there is no
	// one fix).
	fix string
	// arity: the number of arguments given.
	args int
	// undefined variable: the call's named inputs (without their $), for
	// a suggestion.
	inputs []string
}

type queryProblemKind int

const (
	querySyntax queryProblemKind = iota
	queryUnknownFunc
	queryArity
	queryNotString
	queryUndefinedVar // see query_scope.go
	queryFuncArgument // a literal numeric argument no run accepts (pad_left('a', `-1`))
)

// jmespathFuncs are the names of the functions a JMESPath expression may
// call, sorted.
var jmespathFuncs = jmes.Names()

// queryCall checks one call of query. args are the command's arguments,
// args[0] being the identifier; piped says whether the command receives
// a piped value.
func (wk *refWalker) queryCall(args []parse.Node, piped bool) {
	n := len(args) - 1
	if piped {
		n++
	}
	if n < 2 || n%2 != 0 {
		wk.queries = append(wk.queries, queryProblem{off: int(args[0].Position()), kind: queryArity, args: n})
		return
	}
	switch args[1].(type) {
	case *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		wk.queries = append(wk.queries, queryProblem{off: int(args[1].Position()), kind: queryNotString})
		return
	}
	inputs, inputsOK := wk.queryInputs(args)
	lit, ok := args[1].(*parse.StringNode)
	if !ok {
		return // a computed expression is parsed when it runs
	}
	ast, p, bad := checkQueryExpr(lit.Text)
	if bad {
		p.off = int(lit.Pos) + queryLiteralOffset(lit.Quoted, p.off)
		wk.queries = append(wk.queries, p)
		return
	}
	if inputsOK {
		wk.queryScopes(lit, ast, inputs)
	}
}

// checkQueryExpr parses a JMESPath expression and checks the functions it
// calls; it returns the tree, which the scope check reads too. The offset
// of a problem is in expr.
func checkQueryExpr(expr string) (parsing.ASTNode, queryProblem, bool) {
	ast, err := jmes.Parse(expr)
	if err != nil {
		var e *jmes.Error
		if errors.As(err, &e) {
			msg, fix := e.InSource()
			return ast, queryProblem{off: max(e.Off, 0), kind: querySyntax, text: msg, fix: fix}, true
		}
		return ast, queryProblem{off: 0, kind: querySyntax, text: err.Error()}, true
	}
	if name, ok := unknownJMESPathFunc(ast); ok {
		off := strings.Index(expr, name+"(")
		if off < 0 {
			off = 0
		}
		return ast, queryProblem{off: off, kind: queryUnknownFunc, text: name}, true
	}
	if e := jmes.CheckLiterals(expr, ast); e != nil {
		return ast, queryProblem{off: e.Off, kind: queryFuncArgument, text: e.Msg, fix: e.Fix}, true
	}
	return ast, queryProblem{}, false
}

// unknownJMESPathFunc returns the first function the tree calls that the
// library does not define.
func unknownJMESPathFunc(n parsing.ASTNode) (string, bool) {
	if n.NodeType == parsing.ASTFunctionExpression {
		if name, ok := n.Value.(string); ok && !jmes.Known(name) {
			return name, true
		}
	}
	for _, c := range n.Children {
		if name, ok := unknownJMESPathFunc(c); ok {
			return name, ok
		}
	}
	return "", false
}

// queryLiteralOffset maps a byte offset in the value of a Go string
// literal to the offset in its quoted form (ir.LiteralOffset).
func queryLiteralOffset(quoted string, off int) int { return ir.LiteralOffset(quoted, off) }
