package jmes

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jmespath-community/go-jmespath/pkg/binding"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
)

// FuzzParse: Parse and Search never panic, their errors are *Error in
// vmcp's words with an offset inside the expression, and every undefined
// variable's offset points at its $name.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"items[].n", "a[*][0]", "{x: items[0], y: [a, @]}[]", "items[?n > `0`].kind", "items[0].*", "items[::-1]", "items[?kind == `Pod`]", "let $a = 'x', $b = $a in $b", "a[?x == $p].b[?$q]", "`{bad`", "let $a in $a", "'unclosed", "contains(`[[1]]`, `[1]`)", "reverse(@)"} {
		f.Add(s)
	}
	data := map[string]any{"items": []any{map[string]any{"kind": "Pod", "n": 1.0}}, "a": []any{[]any{1.0}}}
	f.Fuzz(func(t *testing.T, expr string) {
		ast, err := Parse(expr)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T is not *Error", expr, err)
			}
			if e.Off < 0 || e.Off > len(expr) || strings.Contains(e.Msg, "TOK") {
				t.Errorf("Parse(%q) = %+v: offset outside the expression or token names", expr, e)
			}
			return
		}
		for _, v := range Undefined(expr, ast, nil) {
			if !strings.HasPrefix(expr[v.Off:], v.Name) {
				t.Errorf("Undefined(%q): %s at %d is not there", expr, v.Name, v.Off)
			}
		}
		got, err := Search(ast, data, nil, 0)
		if err != nil && (strings.Contains(err.Error(), "runtime error") || strings.Contains(err.Error(), "AST")) {
			t.Errorf("Search(%q) error %q shows Go's or the library's internals", expr, err)
		}
		// The tree Parse rewrites (guard.go) means what the library's does.
		// An object's values (*, values(), items(), keys()) come in any
		// order, and so does what a query picks among them ([0]).
		mapOrder := strings.ContainsAny(expr, "*") || strings.Contains(expr, "values") || strings.Contains(expr, "items(") || strings.Contains(expr, "keys")
		if want, werr, ok := libraryResult(expr, data); ok && !mapOrder && err == nil && werr == nil {
			// An expression reference (&x) does not compare.
			g, gerr := canonical(got)
			w, _ := canonical(want)
			if gerr == nil && g != w {
				t.Errorf("Search(%q) = %s; the library's tree gives %s", expr, g, w)
			}
		}
	})
}

// canonical is v's JSON text with every array's elements sorted.
func canonical(v any) (string, error) {
	if arr, ok := v.([]any); ok {
		parts := make([]string, len(arr))
		for i, e := range arr {
			p, err := canonical(e)
			if err != nil {
				return "", err
			}
			parts[i] = p
		}
		slices.Sort(parts)
		return "[" + strings.Join(parts, ",") + "]", nil
	}
	if m, ok := v.(map[string]any); ok {
		keys := slices.Sorted(maps.Keys(m))
		parts := make([]string, len(keys))
		for i, k := range keys {
			p, err := canonical(m[k])
			if err != nil {
				return "", err
			}
			parts[i] = strconv.Quote(k) + ":" + p
		}
		return "{" + strings.Join(parts, ",") + "}", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// libraryResult is librarySearch, with ok false when the library panics.
func libraryResult(expr string, data any) (out any, err error, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	out, err = librarySearch(expr, data)
	return out, err, true
}

// numberQueries are calls of every function that takes a numeric argument
// or whose result can outgrow its arguments, with $n and $m the numbers
// and $s the string that FuzzQueryNumbers is given.
var numberQueries = []string{
	"pad_left($s, $n)", "pad_right($s, $n, '.')", "pad_left($s, $n, '')",
	"replace($s, 'a', $s, $n)", "replace($s, '', $s)", "split($s, '', $n)", "split($s, 'a', $m)",
	"find_first($s, 'a', $n)", "find_last($s, 'a', $n, $m)", "find_first($s, '', $m, $n)",
	"join($s, split($s, ''))", "zip(split($s, ''), split($s, ''), split($s, 'a'))",
	"map(&pad_right(@, $n), split($s, ''))", "to_string([$s, $s] | [@, @] | [@, @])",
	"pad_left(pad_left($s, $n), $m)", "replace(pad_right($s, $m, 'a'), 'a', pad_left($s, $n, 'a'))",
	"pad_left($s, $n * $m)", "pad_left($s, $n / $m)", "split($s, '', $n % $m)",
}

// FuzzQueryNumbers: whatever the numbers (NaN, infinities, fractions,
// negative or huge), a query of the functions that build from them stays
// within its limit: it fails with an *Error that names the function, or
// returns a result no bigger than the limit; never a panic of the
// library, never an out of memory (which would end the fuzzer).
func FuzzQueryNumbers(f *testing.F) {
	for _, seed := range []struct {
		q    uint8
		n, m float64
		s    string
	}{{0, 1e12, 0, "a"}, {1, -1, 2, "ab"}, {3, 1e300, 1, "banana"}, {7, 99, -99, "abc"}, {8, 2, 1, "aaa"}, {12, 3, 0, "xy"}, {15, 1000, 1000, "a"}, {16, 1e6, 1e6, "a"}} {
		f.Add(seed.q, seed.n, seed.m, seed.s)
	}
	const limit = 1 << 16
	asts := make([]parsing.ASTNode, len(numberQueries))
	for i, q := range numberQueries {
		ast, err := Parse(q)
		if err != nil {
			f.Fatalf("Parse(%q): %v", q, err)
		}
		asts[i] = ast
	}
	f.Fuzz(func(t *testing.T, q uint8, n, m float64, s string) {
		if len(s) > fuzzkit.MaxInput {
			return
		}
		i := int(q) % len(numberQueries)
		vars := binding.NewBindings().Register("$n", n).Register("$m", m).Register("$s", s)
		out, err := Search(asts[i], nil, vars, limit)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Msg, "(): ") || strings.Contains(e.Msg, "cannot take these arguments") || strings.Contains(e.Msg, "runtime error") {
				t.Errorf("Search(%q) with $n=%v $m=%v: error %T %q; want a function's own *Error", numberQueries[i], n, m, err, err)
			}
			return
		}
		if size := textBytes(out, 4*limit); size > limit {
			t.Errorf("Search(%q) with $n=%v $m=%v: a result of %d bytes of text; want at most the limit, %d", numberQueries[i], n, m, size, limit)
		}
	})
}

// textBytes adds up the bytes of the strings in v, stopping past limit.
func textBytes(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, e := range x {
			if n += textBytes(e, limit-n); n > limit {
				break
			}
		}
		return n
	}
	return 0
}
