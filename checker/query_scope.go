package checker

// Variable scopes of a literal query expression. A variable is defined
// by a named input of the call ({{query EXPR VALUE "roles" ...}} defines
// $roles for the whole expression) or, inside the body of a let, by the
// let that binds it; the bindings of one let do not see each other
// (internal/jmes/scope.go resolves them the way the library evaluates
// them). A variable read anywhere else is a compile-time error at the
// variable (query_variable), where at run time it would fail the step;
// so is a named input that the expression never reads (a typo, or a let
// of the same name that hides it), at the input's name, unless an
// undefined variable is already reported as its typo.

import (
	"strings"
	"text/template/parse"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/internal/spell"
)

// queryScopes reports each variable that the literal expression lit
// (parsed into ast by checkQueryExpr) reads where it is not defined, and
// each of the call's named inputs that it does not read.
func (wk *refWalker) queryScopes(lit *parse.StringNode, ast parsing.ASTNode, inputs []queryInput) {
	names := make([]string, len(inputs)) // without the $
	outer := make([]string, len(inputs)) // with it
	for i, in := range inputs {
		names[i], outer[i] = in.name, "$"+in.name
	}
	var typos []string // inputs an undefined variable is a typo of
	for _, v := range jmes.Undefined(lit.Text, ast, outer) {
		wk.queries = append(wk.queries, queryProblem{
			off:  int(lit.Pos) + queryLiteralOffset(lit.Quoted, v.Off),
			kind: queryUndefinedVar, text: v.Name, fix: jmes.ErrUndefined(v).Fix, inputs: names,
		})
		typos = append(typos, "$"+spell.Suggest(strings.TrimPrefix(v.Name, "$"), names))
	}
	unread := jmes.Unread(lit.Text, ast, outer)
	for i, name := range outer {
		if contains(unread, name) && !contains(typos, name) {
			wk.queries = append(wk.queries, queryProblem{off: inputs[i].off, kind: queryInputUnused, text: inputs[i].name})
		}
	}
}
