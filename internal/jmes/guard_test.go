package jmes

import (
	"errors"
	"strings"
	"testing"

	"github.com/jmespath-community/go-jmespath/pkg/interpreter"
	"github.com/jmespath-community/go-jmespath/pkg/parsing"
)

// librarySearch is the library's own evaluation of expr (its parser, its
// interpreter, vmcp's table without the budget), to compare with Search.
func librarySearch(expr string, data any) (any, error) {
	ast, err := parsing.NewParser().Parse(expr)
	if err != nil {
		return nil, err
	}
	return interpreter.NewInterpreter(data, interpreter.NewFunctionCaller(table...), nil).Execute(ast, data)
}

// guardData is the value the guard tests search.
var guardData = map[string]any{
	"items": []any{
		map[string]any{"name": "a", "tags": []any{"x", "y"}, "n": 1.0},
		map[string]any{"name": "b", "tags": []any{}, "n": 2.0},
		map[string]any{"name": "c", "tags": []any{"z", []any{"deep"}}, "n": 3.0},
	},
	"m":    map[string]any{"k1": []any{1.0, 2.0}, "k2": []any{3.0}},
	"s":    "hello",
	"nums": []any{5.0, 1.0, 4.0},
}

// The rewritten tree means what the library's does: operators, their
// nulls, slices of strings and arrays, and errors that a flatten drops.
func TestGuardKeepsMeaning(t *testing.T) {
	for _, expr := range []string{
		"items[].tags[]", "items[*].name", "items[?n > `1`].name", "m.*", "m.*[]", "items[].tags[][]",
		"s[0:3]", "s[::-1]", "nums[0:2]", "nums[::2]", "items[1:].name", "[items[0].name, s]", "{a: s, b: nums[0]}",
		"items[*].[name, n]", "items[*].{n: name}", "nums[?@ > `2`]", "abs(s)[]", "items[?abs(name)].name", "[]", "@[]",
		"items[*].tags[*]", "let $x = items[*].n in $x[?@ > `1`]", "map(&[@, @], nums)", "sort_by(items, &n)[].name",
		"items[0].tags[0]", "nums[-1]", "`[[1, [2]], 3]`[]", "m.k1[*] | [@, @][]", "length(items[*])",
	} {
		ast, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		got, gerr := Search(ast, guardData, nil, 0)
		want, werr := librarySearch(expr, guardData)
		if (gerr != nil) != (werr != nil) {
			t.Errorf("Search(%q) error %v; the library's %v", expr, gerr, werr)
			continue
		}
		g, _ := canonical(got) // an object's values (*) come in any order
		w, _ := canonical(want)
		if g != w {
			t.Errorf("Search(%q) = %s; the library's tree gives %s", expr, g, w)
		}
	}
}

// The operators build within the budget: a tree doubled forty times is
// refused when a flatten, a nested projection or a multi-select would
// copy it out, long before the memory it would take; within the limit
// the same queries run.
func TestGuardBoundsOperators(t *testing.T) {
	const limit = 1 << 16
	nested := func(levels int) string { return strings.Repeat("[*]", levels) }
	for _, c := range []struct{ expr, err string }{
		// [@, @][] is a projection of a flatten: either may pass the budget first.
		{strings.Repeat("[@, @][] | ", 40) + "length(@)", "a projection ([*], [?...], * or a slice)"},
		{doubled(40) + "@" + nested(40), "a projection ([*], [?...], * or a slice)"},
		{doubled(40) + "@" + nested(39) + ".[@, @]", "a projection ([*], [?...], * or a slice)"},
		// The flatten drops its operand's error; the search still fails.
		{doubled(40) + "@" + nested(40) + "[]", "a projection ([*], [?...], * or a slice)"},
		{doubled(40) + "@[?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@][?@]", "a projection ([*], [?...], * or a slice)"},
	} {
		ast, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		_, err = Search(ast, "x", nil, limit)
		var e *Error
		want := c.err + ": with what the query built before it, the query would build more than its limit of 65536 bytes (limits.maxResultBytes)"
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Search(%.60q...) = %v; want an *Error starting %q", c.expr, err, want)
		}
	}
	// A flatten is charged before it copies: two arrays of 40,000.
	wide := make([]any, 40000)
	ast, err := Parse("[@, @][]")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Search(ast, wide, nil, limit)
	if want := "a flatten ([]): with what the query built before it"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Search([@, @][]) over 40,000 elements = %v; want an error starting %q", err, want)
	}
	// A multi-select is charged its new array: 40,000 of them.
	if ast, err = Parse("[*].[@, @]"); err != nil {
		t.Fatal(err)
	}
	_, err = Search(ast, wide, nil, limit)
	if want := "a multi-select ([a, b] or {k: a}): with what the query built before it"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Search([*].[@, @]) over 40,000 elements = %v; want an error starting %q", err, want)
	}
	for _, expr := range []string{strings.Repeat("[@, @][] | ", 10) + "length(@)", doubled(10) + "@" + nested(10)} {
		ast, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Search(ast, "x", nil, limit); err != nil {
			t.Errorf("Search(%.60q...) with 2^10 leaves: %v", expr, err)
		}
	}
}

// Known is true for the table's functions and the internal ones of the
// rewritten tree, and for nothing else.
func TestKnown(t *testing.T) {
	for _, name := range append(Names(), guardFlatten, guardProject, guardBuilt) {
		if !Known(name) {
			t.Errorf("Known(%q) = false", name)
		}
	}
	for _, name := range []string{"pad", "flatten", "", "\x00other"} {
		if Known(name) {
			t.Errorf("Known(%q) = true", name)
		}
	}
}
