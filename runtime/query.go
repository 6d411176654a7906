package runtime

// The query template function: {{query EXPR VALUE}} evaluates the
// JMESPath expression EXPR (jmespath-community/go-jmespath, the dialect
// with let, with vmcp's function table: internal/jmes) over VALUE and
// returns the result with its type, so a single-action template passes
// an array or object on as one. Named inputs may follow ({{query EXPR
// VALUE "roles" .steps.r.output}}): each is bound to a JMESPath variable
// ($roles) for the whole expression (see query_inputs.go).
//
// The library's functions and comparisons work on float64 numbers, while
// plan values hold integers as int64 (ir.NormalizeNumbers); jmespathValue
// gives the value with every number as float64 first, so that
// `[?size > `1`]` and sum() see the numbers. The result is returned
// as it comes; the typed-template path turns integral numbers back into
// int64. What the search builds is bounded (internal/jmes limits.go), and
// so is its result as JSON (resultBytes): a result whose parts are shared
// can be small in memory and exponentially long as text.
//
// Parsed expressions are kept in a cache per function map (one per
// engine), with the variables they read outside their lets: each must be
// a named input of the call, else it is an error before the search, as
// at compile time (a variable no let binds reads the name defined around
// the whole expression, so the check needs no second walk of the tree
// per call). The checker has already parsed every literal expression,
// and a literal is parsed once here. The cache is bounded, so
// expressions computed from data cannot grow it without limit; past the
// bound they are compiled on each call.

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/jmespath-community/go-jmespath/pkg/binding"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/ir"
)

// maxCachedQueries bounds the compiled-expression cache of one engine.
const maxCachedQueries = 1024

type queryCache struct {
	mu    sync.RWMutex
	exprs map[string]queryExpr
	// maxBytes bounds what one evaluation's functions build
	// (Options.MaxResultBytes; 0 is jmes.DefaultMaxBytes).
	maxBytes int
}

// queryExpr is a parsed expression and the variables it reads where no
// let binds them (jmes.Undefined without outer names).
type queryExpr struct {
	ast  parsing.ASTNode
	free []jmes.Var
}

// unbound returns the first variable of q.free that vars does not bind.
func (q queryExpr) unbound(vars binding.Bindings) (jmes.Var, bool) {
	for _, v := range q.free {
		if vars == nil {
			return v, true
		}
		if _, err := vars.Get(v.Name); err != nil {
			return v, true
		}
	}
	return jmes.Var{}, false
}

func newQueryCache() *queryCache {
	return &queryCache{exprs: map[string]queryExpr{}}
}

func (c *queryCache) compile(expr string) (queryExpr, error) {
	c.mu.RLock()
	q, ok := c.exprs[expr]
	c.mu.RUnlock()
	if ok {
		return q, nil
	}
	ast, err := jmes.Parse(expr)
	if err != nil {
		return queryExpr{}, err
	}
	q = queryExpr{ast: ast, free: jmes.Undefined(expr, ast, nil)}
	c.mu.Lock()
	if len(c.exprs) < maxCachedQueries {
		c.exprs[expr] = q
	}
	c.mu.Unlock()
	return q, nil
}

// query is the template function: the expression, the value, then the
// named inputs as name-value pairs. Its errors never show a value (see
// queryfuncs.go for their wording).
func (c *queryCache) query(expr string, v any, named ...any) (any, error) {
	vars, err := queryBindings(named)
	if err != nil {
		return nil, err
	}
	q, err := c.compile(expr)
	if err != nil {
		return nil, queryParseError(expr, err)
	}
	if u, ok := q.unbound(vars); ok {
		return nil, queryParseError(expr, jmes.ErrUndefined(u))
	}
	data := jmespathValue(v, 0)
	out, err := jmes.Search(q.ast, data, vars, c.maxBytes)
	if err == nil {
		err = jmes.CheckResult(out, c.resultBytes())
	}
	if err != nil {
		return nil, querySearchError(err)
	}
	return out, nil
}

// resultBytes bounds the JSON size of a query's result: the query's own
// limit, and never less than what a value may hold anyway
// (ir.MaxValueBytes), so a result that was fine to pass on stays fine.
func (c *queryCache) resultBytes() int {
	n := c.maxBytes
	if n <= 0 {
		n = jmes.DefaultMaxBytes
	}
	return max(n, ir.MaxValueBytes)
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
