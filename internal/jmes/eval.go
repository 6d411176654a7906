package jmes

// Parsing and evaluation. Parse is the library's parser plus the checks
// the library leaves to run time (or to a panic): literals that do not
// decode are placed at their token, and every let binding must be
// `$name = expression`; the tree it returns counts what its operators
// build (guard.go). Search runs the library's interpreter with vmcp's
// function table (functions.go), within a budget of bytes (limits.go).

import (
	"encoding/json"
	"errors"

	"github.com/jmespath-community/go-jmespath/pkg/binding"
	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// Parse parses expr. Its error is an *Error with the offset in expr.
func Parse(expr string) (parsing.ASTNode, error) {
	for _, t := range scan(expr) {
		if t.kind == tokU0080 {
			return parsing.ASTNode{}, errUnexpectedChar(t.off)
		}
	}
	ast, err := parsing.NewParser().Parse(expr)
	if err != nil {
		var se parsing.SyntaxError
		if errors.As(err, &se) {
			return parsing.ASTNode{}, syntaxError(expr, se)
		}
		if e, ok := literalError(expr); ok {
			return parsing.ASTNode{}, e
		}
		return parsing.ASTNode{}, &Error{Off: 0, Msg: err.Error()}
	}
	if e := checkBindings(expr, ast); e != nil {
		return parsing.ASTNode{}, e
	}
	return guard(ast), nil
}

// Search evaluates a tree that Parse returned over data, with vars (nil
// for none) bound around it. Its functions may build at most maxBytes
// (the run's limits.maxResultBytes; DefaultMaxBytes when it is 0 or
// less) in all (limits.go). Its error is an *Error, which never shows
// data.
func Search(ast parsing.ASTNode, data any, vars binding.Bindings, maxBytes int) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errPanic()
		}
	}()
	b := newBudget(maxBytes)
	out, err = interpreter.NewInterpreter(data, namedCaller{inner: tableCaller, budget: b}, vars).Execute(ast, data)
	if b.err != nil {
		return nil, b.err
	}
	if err != nil {
		return nil, searchError(err)
	}
	return out, nil
}

func isJSON(s string) bool {
	var v any
	return json.Unmarshal([]byte(s), &v) == nil
}
