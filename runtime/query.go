package runtime

// The query template function: {{query EXPR VALUE}} evaluates the
// JMESPath expression EXPR (jmespath-community/go-jmespath, the dialect
// with let) over VALUE and returns the result with its type, so a
// single-action template passes an array or object on as one. Named
// inputs may follow ({{query EXPR VALUE "roles" .steps.r.output}}): each
// is bound to a JMESPath variable ($roles) for the whole expression (see
// query_inputs.go).
//
// The library's functions and comparisons work on float64 numbers, while
// plan values hold integers as int64 (ir.NormalizeNumbers); jmespathValue
// gives the value with every number as float64 first, so that
// `[?size > `1`]` and sum() see the numbers. The result is returned
// as it comes; the typed-template path turns integral numbers back into
// int64.
//
// Parsed expressions are kept in a cache per function map (one per
// engine): the checker has already parsed every literal expression, and
// a literal is parsed once here; it is evaluated by the library's
// interpreter with the functions of queryCaller. The cache is bounded, so expressions
// computed from data cannot grow it without limit; past the bound they
// are compiled on each call.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/jmespath-community/go-jmespath"
	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// maxCachedQueries bounds the compiled-expression cache of one engine.
const maxCachedQueries = 1024

type queryCache struct {
	mu    sync.RWMutex
	exprs map[string]parsing.ASTNode
}

func newQueryCache() *queryCache {
	return &queryCache{exprs: map[string]parsing.ASTNode{}}
}

func (c *queryCache) compile(expr string) (parsing.ASTNode, error) {
	c.mu.RLock()
	ast, ok := c.exprs[expr]
	c.mu.RUnlock()
	if ok {
		return ast, nil
	}
	ast, err := parsing.NewParser().Parse(expr)
	if err != nil {
		return parsing.ASTNode{}, err
	}
	c.mu.Lock()
	if len(c.exprs) < maxCachedQueries {
		c.exprs[expr] = ast
	}
	c.mu.Unlock()
	return ast, nil
}

// query is the template function: the expression, the value, then the
// named inputs as name-value pairs. Its errors never show a value.
func (c *queryCache) query(expr string, v any, named ...any) (any, error) {
	vars, err := queryBindings(named)
	if err != nil {
		return nil, err
	}
	ast, err := c.compile(expr)
	if err != nil {
		var se jmespath.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("the JMESPath expression does not parse at offset %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "SyntaxError: "))
		}
		return nil, fmt.Errorf("the JMESPath expression does not parse: %v", err)
	}
	data := jmespathValue(v, 0)
	out, err := interpreter.NewInterpreter(data, queryCaller, vars).Execute(ast, data)
	if err != nil {
		return nil, fmt.Errorf("the JMESPath expression failed: %s", hideQueryValue(err.Error()))
	}
	return out, nil
}

// hideQueryValue drops the argument value from the library's type error
// ("invalid type for: <value>, expected: []functions.JpType{"number"}"):
// errors never show data, which may hold secrets.
func hideQueryValue(msg string) string {
	const prefix, sep = "invalid type for: ", ", expected: "
	i := strings.LastIndex(msg, sep)
	if !strings.HasPrefix(msg, prefix) || i < 0 {
		return msg
	}
	want := strings.TrimSuffix(strings.TrimPrefix(msg[i+len(sep):], "[]functions.JpType{"), "}")
	return "a function argument has the wrong type; it must be " + strings.ReplaceAll(want, ", ", " or ")
}

// jmespathValue returns v with every number as float64 (see the file
// comment). It copies only the maps and slices that hold a number of
// another type, so a backend's output (JSON numbers are float64 already)
// is searched as it is. Values nested deeper than maxArgumentDepth are
// left as they are; plan values never are.
func jmespathValue(v any, d int) any {
	out, _ := floatNumbers(v, d)
	return out
}

// floatNumbers is jmespathValue; changed reports whether the result is
// a new value.
func floatNumbers(v any, d int) (out any, changed bool) {
	if d > maxArgumentDepth {
		return v, false
	}
	switch x := v.(type) {
	case float64, string, bool, nil:
		return v, false
	case map[string]any:
		var m map[string]any
		for k, e := range x {
			if ne, ch := floatNumbers(e, d+1); ch {
				if m == nil {
					m = maps.Clone(x)
				}
				m[k] = ne
			}
		}
		if m == nil {
			return v, false
		}
		return m, true
	case []any:
		var s []any
		for i, e := range x {
			if ne, ch := floatNumbers(e, d+1); ch {
				if s == nil {
					s = slices.Clone(x)
				}
				s[i] = ne
			}
		}
		if s == nil {
			return v, false
		}
		return s, true
	case json.Number:
		f, _ := x.Float64()
		return f, true
	}
	if i, f, isInt, ok := number(v); ok {
		if isInt {
			return float64(i), true
		}
		return f, true
	}
	return v, false
}
