package runtime

import (
	"strings"
	"testing"
)

// contains() compares arrays and objects by content, as == does
// (JMESPath equality), where the library's compared them with Go's ==
// and panicked: "runtime error: comparing uncomparable type []interface {}".
func TestQueryContainsDeepEquality(t *testing.T) {
	data := M{"pairs": A{A{int64(1), int64(2)}, A{int64(3)}}, "labels": A{M{"app": "web"}}, "names": A{"a", "b"}}
	q := newQueryCache()
	for _, c := range []struct {
		expr string
		want bool
	}{
		{"contains(`[[1, 2]]`, `[1, 2]`)", true},
		{"contains(`[[1, 2]]`, `[2, 1]`)", false},
		{"contains(pairs, `[1, 2]`)", true}, // plan integers against a literal
		{"contains(pairs, `[3, 4]`)", false},
		{"contains(labels, `{\"app\": \"web\"}`)", true},
		{"contains(labels, `{\"app\": \"db\"}`)", false},
		{"contains(names, 'b')", true},
		{"contains('abc', 'bc')", true},
		{"contains('abc', `1`)", false},
		{"length(pairs[?contains(`[[1, 2], [5]]`, @)])", true},
	} {
		got, err := q.query(c.expr, data)
		if err != nil {
			t.Errorf("query(%q) failed: %v", c.expr, err)
			continue
		}
		if n, ok := got.(float64); ok {
			got = n == 1
		}
		if got != c.want {
			t.Errorf("query(%q) = %v; want %v", c.expr, got, c.want)
		}
	}
}

// A library function that panics on its arguments (reverse, map, sort_by,
// group_by and zip assume a []any and are given a Go []string) fails the
// query with an error that names the function, never Go's runtime error.
func TestQueryFunctionPanicNamesTheFunction(t *testing.T) {
	q := newQueryCache()
	for _, fn := range []string{"reverse(@)", "map(&@, @)", "sort_by(@, &@)", "group_by(@, &@)", "zip(@, @)"} {
		_, err := q.query(fn, []string{"s3cr3t"})
		if err == nil {
			t.Errorf("query(%q) succeeded; want an error", fn)
			continue
		}
		name := fn[:strings.IndexByte(fn, '(')]
		if msg := err.Error(); !strings.Contains(msg, name+"() cannot take these arguments") || strings.Contains(msg, "runtime error") || strings.Contains(msg, "s3cr3t") {
			t.Errorf("query(%q) error = %q; want %s() named, without Go's text or the value", fn, msg, name)
		}
	}
}

// An expression built with printf that does not parse fails the step in
// the workflow's terms: where in the expression (it exists only at run
// time), what was expected in characters, not the library's token names,
// at the position of the query call in the file; never the data.
func TestQueryComputedSyntaxError(t *testing.T) {
	for _, c := range []struct {
		name, src string
		errHas    []string
	}{
		{"bracket", `{{query (printf "items[?name == '%s'" .params.n) .params.data}}`,
			[]string{"does not parse (at the end of the expression): expected ']' but the query ended; close it with ']'"}},
		{"literal", "{{query (printf \"items[?kind == `%s`]\" .params.n) .params.data}}",
			[]string{"does not parse (at column 16 of the expression): the text between backticks is not JSON; a `JSON literal` holds"}},
		// Refused before the search, as at compile time, even where the
		// library would not reach the variable (no items here).
		{"variable", `{{query (printf "let $a = '%s', $b = items[?name == $a] in $b" .params.n) .params.data}}`,
			[]string{"reads a variable it does not define (at column 40 of the expression): variable $a is not defined here; bind it with let"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := build("q", tool("a", "svc.x", M{"v": c.src}))
			w.Steps[0].Arguments.Fields[0].Value.Template.Pos = at(7, 12)
			pos := at(7, 14)
			runCase{
				wf:     w,
				params: M{"n": "s3cr3t", "data": M{"items": A{}}},
				status: RunFailed,
				errPos: &pos,
				errHas: append([]string{`step "a"`, "query"}, c.errHas...),
				check: func(t *testing.T, run *Run, fb *fakeBackend) {
					msg := run.Error.Error()
					for _, bad := range []string{"s3cr3t", "TOK", "offset"} {
						if strings.Contains(msg, bad) {
							t.Errorf("error %q shows %q", msg, bad)
						}
					}
				},
			}.run(t)
		})
	}
}
