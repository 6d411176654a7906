package runtime

import (
	"context"
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
// at the character of the printf format in the file that the problem
// comes from (the format's closing quote when the expression ends too
// soon); never the data.
func TestQueryComputedSyntaxError(t *testing.T) {
	for _, c := range []struct {
		name, src string
		col       int // on line 7; the template starts at column 12
		errHas    []string
	}{
		{"bracket", `{{query (printf "items[?name == '%s'" .params.n) .params.data}}`, 48,
			[]string{"does not parse (at the end of the expression): expected ']' but the query ended; close it with ']'"}},
		{"literal", "{{query (printf \"items[?kind == `%s`]\" .params.n) .params.data}}", 44,
			[]string{"does not parse (at column 16 of the expression): the text between backticks is not JSON; a `JSON literal` holds"}},
		// Refused before the search, as at compile time, even where the
		// library would not reach the variable (no items here).
		{"variable", `{{query (printf "let $a = '%s', $b = items[?name == $a] in $b" .params.n) .params.data}}`, 64,
			[]string{"reads a variable it does not define (at column 40 of the expression): variable $a is not defined here; pass it as a named input after the value (\"a\" VALUE), or bind it with let $a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := build("q", tool("a", "svc.x", M{"v": c.src}))
			w.Steps[0].Arguments.Fields[0].Value.Template.Pos = at(7, 12)
			pos := at(7, c.col)
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

// formatOffset maps an offset of printf's output back to the format: in
// the format's own text, to the verb whose text it is in, at the end; and
// refuses output the format cannot have given.
func TestFormatOffset(t *testing.T) {
	for _, c := range []struct {
		f, s    string
		off     int
		want    int
		matches bool
	}{
		{"items[?name == '%s'", "items[?name == 'x'", 18, 19, true},   // the end
		{"items[?name == '%s'", "items[?name == 'abc'", 17, 16, true}, // inside the verb's text
		{"items[?name == '%s'", "items[?name == 'abc'", 19, 18, true}, // the quote after it
		{"a[?k == `%s`]", "a[?k == `Pod`]", 8, 8, true},
		{"%d%%|%v]", "12%|x]", 3, 4, true}, // after "%%"
		{"%d%%|%v]", "12%|x]", 2, 2, true}, // "%%" itself
		{"items[%d]", "other[1]", 0, 0, false},
		{"items[%d]", "items[1]x", 0, 0, false},
	} {
		got, ok := formatOffset(c.f, c.s, c.off)
		if ok != c.matches || (ok && got != c.want) {
			t.Errorf("formatOffset(%q, %q, %d) = %d, %v; want %d, %v", c.f, c.s, c.off, got, ok, c.want, c.matches)
		}
	}
}

// A query within Options.MaxResultBytes runs; past it, the step fails
// with an error that names the function, the argument and the limit, and
// the engine goes on to the next run. A result whose parts are shared
// ([@, @] forty times over: small in memory, 2^40 leaves as text) fails
// at the bound of a value instead of being written out.
func TestQueryLimitsInARun(t *testing.T) {
	for _, c := range []struct {
		name, expr, want string
	}{
		{"pad", "pad_left('a', `2048`)", "pad_left(): the padded string would be over the query limit of 1024 bytes (limits.maxResultBytes): its width (argument 2)"},
		{"huge", "pad_left('a', `1e12`)", "pad_left(): the padded string would be over the query limit of 1024 bytes"},
		{"nan", "pad_right('a', `0` / `0`)", "pad_right(): its width (argument 2) must be a whole number from 0 up, but it is not a finite number"},
		{"flat", "[@, @, @, @][] | [@, @, @, @][] | [@, @, @, @][] | [@, @, @, @][] | [@, @, @, @][] | [@, @, @, @][] | length(@)", "with what the query built before it, the query would build more than its limit of 1024 bytes (limits.maxResultBytes)"},
		{"shared", strings.Repeat("[@, @] | ", 40) + "@", "the query's result is more than 10485760 bytes as JSON, the most a value may hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := build("q", tool("a", "svc.x", M{"v": "{{query \"" + strings.ReplaceAll(c.expr, `"`, `\"`) + "\" .params}}"}))
			fb := newFake(nil)
			e := mustEngine(t, plan(w), Options{Backend: fb, MaxResultBytes: 1024})
			run, err := e.Run(context.Background(), "q", M{}, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != RunFailed || run.Error == nil || !strings.Contains(run.Error.Msg, c.want) {
				t.Errorf("run of query %.60q = %s, %v; want failed with %q", c.expr, run.Status, run.Error, c.want)
			}
			if len(fb.Calls()) != 0 {
				t.Errorf("the backend was called %d times; want 0", len(fb.Calls()))
			}
		})
	}
	// Within the limit the same engine runs the query.
	w := build("ok", tool("a", "svc.x", M{"v": "{{query \"pad_left('a', `1024`)\" .params}}"}))
	fb := newFake(nil)
	e := mustEngine(t, plan(w), Options{Backend: fb, MaxResultBytes: 1024})
	run, err := e.Run(context.Background(), "ok", M{}, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("run within the limit = %v, %v", run, err)
	}
	if calls := fb.CallsTo("a"); len(calls) != 1 || len(calls[0].Arguments["v"].(string)) != 1024 {
		t.Errorf("calls = %v; want one with a 1024-byte v", len(calls))
	}
}
