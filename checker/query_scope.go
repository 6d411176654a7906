package checker

// Variable scopes of a literal query expression: a variable is defined
// only inside the body of the let that binds it, and the bindings of one
// let do not see each other (internal/jmes/scope.go resolves them the way
// the library evaluates them). A variable read anywhere else is a
// compile-time error at the variable, where at run time it would fail
// the step with "variable not defined".

import (
	"text/template/parse"

	"github.com/vmcp-dev/vmcp/internal/jmes"
)

// queryScopes reports each variable that the literal expression lit reads
// where it is not defined. outer are the variables defined around the
// whole expression, with their $.
func (wk *refWalker) queryScopes(lit *parse.StringNode, outer []string) {
	ast, err := jmes.Parse(lit.Text)
	if err != nil {
		return // reported by checkQueryExpr
	}
	for _, v := range jmes.Undefined(lit.Text, ast, outer) {
		e := jmes.ErrUndefined(v)
		wk.queries = append(wk.queries, queryProblem{
			off:  int(lit.Pos) + queryLiteralOffset(lit.Quoted, v.Off),
			kind: queryUndefinedVar, text: v.Name, fix: e.Fix,
		})
	}
}
