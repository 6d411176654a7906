package runtime

// The query template function: {{query EXPR VALUE}} evaluates the
// JMESPath expression EXPR (jmespath-community/go-jmespath, the dialect
// with let, with vmcp's function table: internal/jmes) over VALUE and
// returns the result with its type, so a single-action template passes
// an array or object on as one.
//
// The library's functions and comparisons work on float64 numbers, while
// plan values hold integers as int64 (ir.NormalizeNumbers); jmespathValue
// gives the value with every number as float64 first, so that
// `[?size > `1`]` and sum() see the numbers. The result is returned
// as it comes; the typed-template path turns integral numbers back into
// int64.
//
// Parsed expressions are kept in a cache per function map (one per
// engine), with the variables they read outside their lets (an error
// before the search, as at compile time): the checker has already
// parsed every literal expression, and a literal is parsed once here.
// The cache is bounded, so expressions computed from data cannot grow
// it without limit; past the bound they are compiled on each call.

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/jmes"
)

// maxCachedQueries bounds the compiled-expression cache of one engine.
const maxCachedQueries = 1024

type queryCache struct {
	mu    sync.RWMutex
	exprs map[string]queryExpr
}

// queryExpr is a parsed expression and the variables it reads where no
// let binds them.
type queryExpr struct {
	ast       parsing.ASTNode
	undefined []jmes.Var
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
	q = queryExpr{ast: ast, undefined: jmes.Undefined(expr, ast, nil)}
	c.mu.Lock()
	if len(c.exprs) < maxCachedQueries {
		c.exprs[expr] = q
	}
	c.mu.Unlock()
	return q, nil
}

// query is the template function. Its errors never show the value (see
// queryfuncs.go for their wording).
func (c *queryCache) query(expr string, v any) (any, error) {
	q, err := c.compile(expr)
	if err != nil {
		return nil, queryParseError(expr, err)
	}
	if len(q.undefined) > 0 {
		return nil, queryParseError(expr, jmes.ErrUndefined(q.undefined[0]))
	}
	data := jmespathValue(v, 0)
	out, err := jmes.Search(q.ast, data, nil)
	if err != nil {
		return nil, querySearchError(err)
	}
	return out, nil
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
