package runtime

// Named query inputs and the query functions.
//
// {{query EXPR VALUE NAME1 VALUE1 NAME2 VALUE2 ...}} binds each VALUEi to
// the JMESPath variable $NAMEi before EXPR is evaluated over VALUE, as if
// the expression were written inside `let $NAME1 = ..., $NAME2 = ... in`.
// This is how two steps' outputs meet in one query: the data of one is
// the value, the other a variable that filters and projections can read
// at any depth. The checker has already checked a literal call (the
// names, that the expression reads every input and defines every
// variable it reads); these checks repeat only what a computed call or a
// hand-built plan can still get wrong, with errors that show no value.
//
// QueryFunctions lists the names of internal/jmes's function table (the
// one every query is evaluated with), for the guide's test that keeps
// the documented function list equal to it.

import (
	"fmt"

	"github.com/jmespath-community/go-jmespath/pkg/binding"

	"github.com/vmcp-dev/vmcp/internal/jmes"
)

// QueryFunctions returns the names of the JMESPath functions a query
// expression may call, sorted.
func QueryFunctions() []string { return jmes.Names() }

// queryBindings turns the named inputs of a query call (name, value,
// name, value, ...) into JMESPath variable bindings; nil when there are
// none.
func queryBindings(named []any) (binding.Bindings, error) {
	if len(named) == 0 {
		return nil, nil
	}
	if len(named)%2 != 0 {
		return nil, fmt.Errorf("query takes an expression, a value, then name-value pairs; the last name (argument %d) has no value", len(named)+2)
	}
	b := binding.NewBindings()
	seen := make(map[string]bool, len(named)/2)
	for i := 0; i < len(named); i += 2 {
		name, ok := named[i].(string)
		if !ok || !jmes.IsVarName(name) {
			return nil, fmt.Errorf("argument %d of query must name a JMESPath variable (letters, digits and _, not starting with a digit), as in \"roles\" for $roles", i+3)
		}
		if seen[name] {
			return nil, fmt.Errorf("query input %q is given twice", name)
		}
		seen[name] = true
		b = b.Register("$"+name, jmespathValue(named[i+1], 0))
	}
	return b, nil
}
