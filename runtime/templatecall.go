package runtime

// The query shortcut: a Single template that is exactly one query of a
// field chain, '{{query "EXPR" .steps.x.output}}', the form a workflow
// uses for every projection it passes on (the CMDB sync makes one per
// backend call). On the typed path (template.go, case 2) text/template
// calls query, __typed encodes the result as JSON and decodeTyped parses
// it again: about a fifth of the engine's CPU in that sync, for a value
// the query had already built.
//
// Here the chain is resolved as a chain template's is, the same query
// function is called (the engine's, with its cache and limits), and the
// result is copied the way the JSON round trip would have rebuilt it:
// fresh maps and slices, and each number as decodeTyped reads back the
// text encoding/json prints for it (an integer that fits int64 as
// int64, any other as float64). Anything the round trip would treat
// otherwise (a number JSON cannot hold, a string that is not UTF-8, a
// type JSON does not have, a value nested too deep or too long as text)
// and every error (a missing field, a failed query) takes the typed path
// instead, which then gives its usual value or its usual error, so the
// shortcut changes no result and no message: TestQueryShortcutIsTheTypedPath
// holds the two paths to the same values.

// The collection shortcut: a forEach collection that is exactly
// '{{json .steps.x.output.items}}', the form ToolHive's workflows need
// (its loops read a rendered JSON array) and so every workflow written
// for both engines. On the typed path json encodes the array, __typed
// encodes that text as a JSON string, decodeTyped reads the string back
// and the loop parses the string as its array: four passes over the
// items for a value the chain already holds. collectionValue copies the
// chain's value with jsonCopy instead, which is what those passes give
// back, when the result is an array and its JSON text is surely within
// the template limit even once escaped as a string; anything else (an
// object, a value jsonCopy refuses, a failed chain, a large array) takes
// the typed path with its usual value or error. TestCollectionShortcut-
// IsTheTypedPath holds the two paths to the same items and messages.

import (
	"math"
	"strconv"
	"text/template/parse"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/ir"
)

// queryCall is a template's query shortcut: the expression, the chain it
// queries (a chain template of its own) and the engine's query cache.
type queryCall struct {
	expr  string
	arg   *tmpl
	cache *queryCache
	// checkText is set when a query result may be longer as JSON than a
	// template may render (limits.maxResultBytes above the 10 MB
	// template limit): the result is then measured before it is used.
	checkText bool
}

// parseQueryCall returns the shortcut of t when its single action is
// exactly `query "EXPR" .field.chain`; nil otherwise.
func parseQueryCall(t *tmpl, action *parse.ActionNode, q *queryCache) *queryCall {
	args := callArgs(action, ir.FuncQuery, 2)
	if args == nil {
		return nil
	}
	expr, ok := args[0].(*parse.StringNode)
	if !ok {
		return nil
	}
	arg := chainArg(t, args[1])
	if arg == nil {
		return nil
	}
	return &queryCall{expr: expr.Text, arg: arg, cache: q, checkText: q.resultBytes() > maxTemplateOutput}
}

// callArgs returns the n arguments of action when it is exactly one call
// of the function name; nil otherwise.
func callArgs(action *parse.ActionNode, name string, n int) []parse.Node {
	if len(action.Pipe.Cmds) != 1 {
		return nil
	}
	args := action.Pipe.Cmds[0].Args
	if len(args) != n+1 {
		return nil
	}
	if id, ok := args[0].(*parse.IdentifierNode); !ok || id.Ident != name {
		return nil
	}
	return args[1:]
}

// chainArg is a call's argument n as a chain template of t's source when
// it is a field chain; nil otherwise.
func chainArg(t *tmpl, n parse.Node) *tmpl {
	f, ok := n.(*parse.FieldNode)
	if !ok {
		return nil
	}
	return &tmpl{src: t.src, chain: f.Ident, chainPos: nodeOffset(t.src.Source, int(f.Position()), f.String())}
}

// value is the query's result as the typed path would give it; ok is
// false when the typed path must decide (see the top of the file).
func (q *queryCall) value(data map[string]any) (any, bool) {
	v, err := q.arg.resolveChain(data)
	if err != nil {
		return nil, false
	}
	out, err := q.cache.query(q.expr, v)
	if err != nil {
		return nil, false
	}
	if q.checkText && jmes.CheckResult(out, maxTemplateOutput) != nil {
		return nil, false
	}
	return jsonCopy(out, 0)
}

// jsonCopy copies v as encoding it as JSON and decoding it with
// decodeTyped would; ok is false when that round trip would not give
// back the same value or would fail.
func jsonCopy(v any, d int) (any, bool) {
	if d > maxArgumentDepth {
		return nil, false
	}
	switch x := v.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		if x != math.Trunc(x) {
			return x, true
		}
		if math.Abs(x) < 1<<53 { // printed exactly
			return int64(x), true
		}
		// encoding/json prints the shortest decimal that reads back as x,
		// and decodeTyped reads that text as an integer if it can.
		if i, err := strconv.ParseInt(strconv.FormatFloat(x, 'f', -1, 64), 10, 64); err == nil {
			return i, true
		}
		return x, true
	case int64:
		return x, true
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := jsonCopy(e, d+1)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			c, ok := jsonCopy(e, d+1)
			if !ok {
				return nil, false
			}
			s[i] = c
		}
		return s, true
	}
	return nil, false
}

// parseJSONOf returns the chain of t when its single action is exactly
// `json .field.chain`; nil otherwise.
func parseJSONOf(t *tmpl, action *parse.ActionNode) *tmpl {
	if args := callArgs(action, ir.FuncJSON, 1); args != nil {
		return chainArg(t, args[0])
	}
	return nil
}

// shortcutCollectionBytes bounds the JSON size of a collection the
// shortcut takes: escaped as a JSON string, each byte of JSON text takes
// at most six (\u00XX), plus the quotes, so the typed path's text would
// be within maxTemplateOutput too.
const shortcutCollectionBytes = (maxTemplateOutput - 2) / 6

// collectionValue is t's value as a forEach collection: the value, or for
// '{{json .chain}}' the array the JSON text holds, read without the text
// when it can be (see the top of the file).
func (t *tmpl) collectionValue(data map[string]any) (any, error) {
	if t.jsonOf != nil {
		if v, err := t.jsonOf.resolveChain(data); err == nil {
			if arr, ok := v.([]any); ok && jmes.CheckResult(arr, shortcutCollectionBytes) == nil {
				if c, ok := jsonCopy(arr, 0); ok {
					return c, nil
				}
			}
		}
	}
	return t.value(data)
}
