package jmes

// Bounding what a query builds. The library's functions build their
// result without asking how big it will be: pad_left('a', `1e12`) asks
// strings.Repeat for a terabyte, and Go's out of memory is a fatal error,
// not a panic, so no recover saves the process. So every search has a
// budget, the bound its caller passes (the run's limits.maxResultBytes;
// DefaultMaxBytes when none), and every function call is charged what it
// builds, counted as the JSON text of the new part of its result (a
// string's bytes, an array's brackets and commas; elements the result
// shares with the arguments are not counted again). A call whose charge
// is more than the budget has left fails, naming the function, and the
// search ends with that error. The operators that build arrays are
// charged from the same budget (guard.go), and Search's caller may bound
// the JSON size of the result (CheckResult).
//
// Two kinds of function:
//
//   - Those whose result can be far bigger than their arguments have the
//     size of their result computed from the arguments before the library
//     builds anything (sizeCheck): pad_left and pad_right (the width),
//     replace (the replacement times the matches), join (the separator
//     times the elements), split (an element per piece), to_string (the
//     text of a value whose parts may be shared, so that its text can be
//     exponentially longer than its memory: it is measured with a walk
//     that stops at the budget) and zip (the arrays times the shortest
//     length).
//   - The others build at most about what they read (upper, sort, items,
//     map, ...); their result is measured after the call and charged, so
//     that many calls of one evaluation (map(&upper($big), ...)) cannot add
//     up past the budget either.
//
// The numeric arguments of these functions are checked first, because the
// library converts a float64 to int without looking (`1e300` becomes a
// negative int, NaN any int): a width or a count must be a whole number
// from 0 up (a count past the matches is the same as no count, and is
// lowered to it), and the start and end of find_first and find_last are
// whole numbers, clamped to the string (a start past the end finds
// nothing, where the library would panic).

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// DefaultMaxBytes is the budget of a search whose caller passes none: the
// default of limits.maxResultBytes (10 MiB).
const DefaultMaxBytes = 10 << 20

// budget is what a search may still build, in bytes, and the first
// charge it refused (kept, since some operators drop their operand's
// error: guard.go).
type budget struct {
	limit, left int
	err         *Error
}

func newBudget(limit int) *budget {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	return &budget{limit: limit, left: limit}
}

// charge takes n bytes from the budget for what builds them (a
// function's name with its parentheses, or an operator).
func (b *budget) charge(what string, n int) *Error {
	if n > b.left {
		return b.fail(errOverBudget(what, b.limit))
	}
	b.left -= n
	return nil
}

// fail keeps e as the search's error, unless one is kept already, and
// returns it.
func (b *budget) fail(e *Error) *Error {
	if b.err == nil {
		b.err = e
	}
	return e
}

// sizeCheck checks the arguments of a call before the library runs it:
// it returns the bytes the result will take (charged before the call),
// or an error. It may rewrite args (a clamped number). It returns ok
// false, and no error, when the arguments do not have the types the
// function takes: the library's type check then words the error.
type sizeCheck func(args []any, limit int) (n int, err *Error, ok bool)

// sizeChecks are the functions whose result can be far bigger than their
// arguments (see the file comment).
var sizeChecks = map[string]sizeCheck{
	"pad_left":   padSize("pad_left"),
	"pad_right":  padSize("pad_right"),
	"replace":    replaceSize,
	"join":       joinSize,
	"split":      splitSize,
	"to_string":  toStringSize,
	"zip":        zipSize,
	"find_first": findArgs("find_first"),
	"find_last":  findArgs("find_last"),
}

// measured are the functions whose new result is measured after the
// call: they build about what they read.
var measured = map[string]bool{
	"upper": true, "lower": true, "trim": true, "trim_left": true, "trim_right": true,
	"reverse": true, "sort": true, "keys": true, "values": true, "items": true,
	"map": true, "merge": true, "from_items": true, "group_by": true,
}

// builtSize is the charge of a measured function's result: a string's
// text, an array's or object's brackets and separators (each item of
// items() is a new pair).
func builtSize(name string, v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		if name == "items" {
			return 2 + 6*len(x)
		}
		return 2 + len(x)
	case map[string]any:
		n := 2
		for k := range x {
			n += len(k) + 4
		}
		return n
	}
	return 0
}

// wholeArg checks numeric argument pos (1-based) of fn, named what: a
// finite whole number, from 0 up when nonNegative.
func wholeArg(fn, what string, pos int, v float64, nonNegative bool) *Error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return errNumberArg(fn, what, pos, "is not a finite number", nonNegative)
	case v != math.Trunc(v):
		return errNumberArg(fn, what, pos, "is not a whole number", nonNegative)
	case nonNegative && v < 0:
		return errNumberArg(fn, what, pos, "is negative", nonNegative)
	}
	return nil
}

// padSize: pad_left(s, width, pad?) and pad_right take a whole width from
// 0 up; the result is the longer of s and width bytes (the library pads
// by bytes, with a pad of at most one byte).
func padSize(fn string) sizeCheck {
	return func(args []any, limit int) (int, *Error, bool) {
		if len(args) < 2 || len(args) > 3 {
			return 0, nil, false
		}
		s, ok1 := args[0].(string)
		w, ok2 := args[1].(float64)
		if !ok1 || !ok2 {
			return 0, nil, false
		}
		if e := wholeArg(fn, "width", 2, w, true); e != nil {
			return 0, e, true
		}
		if w > float64(limit) && w > float64(len(s)) {
			return 0, errPadOver(fn, limit), true
		}
		return max(len(s), int(w)), nil, true
	}
}

// replaceSize: replace(subject, old, new, count?) puts new in at each
// of the first count matches of old (all of them without a count; old ""
// matches before each rune and at the end).
func replaceSize(args []any, limit int) (int, *Error, bool) {
	if len(args) < 3 || len(args) > 4 {
		return 0, nil, false
	}
	s, ok1 := args[0].(string)
	old, ok2 := args[1].(string)
	repl, ok3 := args[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return 0, nil, false
	}
	n := strings.Count(s, old)
	if len(args) == 4 {
		c, ok := args[3].(float64)
		if !ok {
			return 0, nil, false
		}
		if e := wholeArg("replace", "count", 4, c, true); e != nil {
			return 0, e, true
		}
		if c > float64(n) {
			args[3] = float64(n) // the same result, as an int the library can take
		} else {
			n = int(c)
		}
	}
	size := len(s) + n*(len(repl)-len(old))
	if size > limit {
		return 0, errReplaceOver(limit), true
	}
	return size, nil, true
}

// joinSize: join(sep, array) is the elements with sep between them.
func joinSize(args []any, limit int) (int, *Error, bool) {
	if len(args) != 2 {
		return 0, nil, false
	}
	sep, ok1 := args[0].(string)
	arr, ok2 := args[1].([]any)
	if !ok1 || !ok2 {
		return 0, nil, false
	}
	size := 0
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return 0, nil, false
		}
		size += len(s)
	}
	if len(arr) > 1 {
		size += (len(arr) - 1) * len(sep)
	}
	if size > limit {
		return 0, errJoinOver(limit), true
	}
	return size, nil, true
}

// splitSize: split(s, sep, count?) makes an array of pieces (a piece per
// rune with sep ""); count, a whole number from 0 up, bounds the splits.
func splitSize(args []any, limit int) (int, *Error, bool) {
	if len(args) < 2 || len(args) > 3 {
		return 0, nil, false
	}
	s, ok1 := args[0].(string)
	sep, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return 0, nil, false
	}
	pieces := strings.Count(s, sep) + 1
	if sep == "" {
		pieces = utf8.RuneCountInString(s)
	}
	if len(args) == 3 {
		c, ok := args[2].(float64)
		if !ok {
			return 0, nil, false
		}
		if e := wholeArg("split", "count", 3, c, true); e != nil {
			return 0, e, true
		}
		if c >= float64(pieces) {
			args[2] = float64(pieces) // the same result, as an int the library can take
		} else {
			pieces = int(c) + 1
		}
	}
	// Each piece is a string in the array: its text, quotes and comma.
	size := len(s) + 3*pieces
	if size > limit {
		return 0, errSplitOver(limit), true
	}
	return size, nil, true
}

// toStringSize: to_string(v) is v itself when it is a string, else its
// JSON text, measured without building it.
func toStringSize(args []any, limit int) (int, *Error, bool) {
	if len(args) != 1 {
		return 0, nil, false
	}
	if _, ok := args[0].(string); ok {
		return 0, nil, true
	}
	n := jsonSize(args[0], limit)
	if n > limit {
		return 0, errToStringOver(limit), true
	}
	return n, nil, true
}

// zipSize: zip(a, b, ...) is an array of the shortest length of arrays
// of one element of each argument.
func zipSize(args []any, limit int) (int, *Error, bool) {
	if len(args) < 2 {
		return 0, nil, false
	}
	count := math.MaxInt
	for _, a := range args {
		arr, ok := a.([]any)
		if !ok {
			return 0, nil, false
		}
		count = min(count, len(arr))
	}
	// count arrays, each with brackets and an element and a comma per argument.
	if count > 0 && (2+2*len(args)) > limit/count {
		return 0, errZipOver(limit), true
	}
	return count * (2 + 2*len(args)), nil, true
}

// findArgs: find_first(s, sub, start?, end?) and find_last take whole
// numbers for start and end, clamped here to the string, and find
// nothing (null) when start is past end.
func findArgs(fn string) sizeCheck {
	return func(args []any, limit int) (int, *Error, bool) {
		if len(args) < 3 || len(args) > 4 {
			return 0, nil, false
		}
		s, ok1 := args[0].(string)
		_, ok2 := args[1].(string)
		if !ok1 || !ok2 {
			return 0, nil, false
		}
		for i, what := range []string{"start", "end"} {
			if 2+i >= len(args) {
				break
			}
			v, ok := args[2+i].(float64)
			if !ok {
				return 0, nil, false
			}
			if e := wholeArg(fn, what, 3+i, v, false); e != nil {
				return 0, e, true
			}
			args[2+i] = math.Max(0, math.Min(v, float64(len(s))))
		}
		if len(args) == 4 && args[2].(float64) > args[3].(float64) {
			args[2] = args[3] // an empty range: the library finds nothing in it
		}
		return 0, nil, true
	}
}

// jsonSize is the size of v as JSON text as encoding/json writes it (a
// float64 as strconv's shortest 'g' form, which is within a few bytes of
// json's); it stops as soon as the size passes limit, so a value whose
// parts are shared many times costs no more than the limit to measure.
func jsonSize(v any, limit int) int {
	n := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil:
			n += 4
		case bool:
			n += 4
			if !x {
				n++
			}
		case float64:
			var buf [32]byte
			n += len(strconv.AppendFloat(buf[:0], x, 'g', -1, 64))
		case string:
			n += quotedLen(x)
		case []any:
			n += 1 + len(x)
			for _, e := range x {
				if n > limit || !walk(e) {
					return false
				}
			}
		case map[string]any:
			n += 1 + len(x)
			for k, e := range x {
				n += quotedLen(k) + 1
				if n > limit || !walk(e) {
					return false
				}
			}
		default:
			n += 4
		}
		return n <= limit
	}
	walk(v)
	return n
}

// quotedLen is the length of s as a JSON string as encoding/json writes
// it: quotes, two bytes for \" \\ \n \r \t, six for the other control
// characters, for <, > and & (HTML-safe), U+2028, U+2029 and each byte of
// invalid UTF-8 (\ufffd).
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// CheckResult returns an *Error when v, a search's result, is more than
// limit bytes as JSON: a result whose parts are shared ([@, @] | [@, @]
// | ...) is small in memory, but whoever writes it out writes each part
// every time. The measure stops at the limit.
func CheckResult(v any, limit int) error {
	if jsonSize(v, limit) > limit {
		return errResultOver(limit)
	}
	return nil
}

// numberArgs are the numeric arguments that wholeArg checks at run time:
// the function, the argument's 1-based position, its name, and whether
// it must be from 0 up.
var numberArgs = map[string][]struct {
	pos         int
	what        string
	nonNegative bool
}{
	"pad_left":   {{2, "width", true}},
	"pad_right":  {{2, "width", true}},
	"replace":    {{4, "count", true}},
	"split":      {{3, "count", true}},
	"find_first": {{3, "start", false}, {4, "end", false}},
	"find_last":  {{3, "start", false}, {4, "end", false}},
}

// CheckLiterals returns the first numeric argument of a function call in
// ast (the tree of expr) that is written as a literal (`1.5`, `-2`) and
// that no run accepts, as the error it would fail with, placed at the
// function's name; nil when there is none. A literal width over a run's
// limit is not one: the limit is the server's.
func CheckLiterals(expr string, ast parsing.ASTNode) *Error {
	if ast.NodeType == parsing.ASTFunctionExpression {
		name, _ := ast.Value.(string)
		for _, a := range numberArgs[name] {
			if a.pos > len(ast.Children) || ast.Children[a.pos-1].NodeType != parsing.ASTLiteral {
				continue
			}
			if v, ok := ast.Children[a.pos-1].Value.(float64); ok {
				if e := wholeArg(name, a.what, a.pos, v, a.nonNegative); e != nil {
					e.Off = max(strings.Index(expr, name+"("), 0)
					return e
				}
			}
		}
	}
	for _, c := range ast.Children {
		if e := CheckLiterals(expr, c); e != nil {
			return e
		}
	}
	return nil
}
