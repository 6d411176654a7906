package jmes

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmespath-community/go-jmespath/pkg/binding"
)

// search parses and evaluates expr over data within limit bytes, with
// $n bound to n.
func search(t *testing.T, expr string, data any, limit int, n float64) (any, error) {
	t.Helper()
	ast, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	return Search(ast, data, binding.NewBindings().Register("$n", n), limit)
}

// doubled is a pipe that doubles its value's tree n times, as [@, @]:
// the tree has 2^n leaves, its memory n arrays.
func doubled(n int) string {
	return strings.Repeat("[@, @] | ", n)
}

// Every function whose result can outgrow its arguments refuses, before
// it builds, a result over the search's limit, with an error that names
// the function, the argument and the limit; a numeric argument that is
// not a whole number (NaN, infinite, a fraction, negative where a size is
// meant) is refused by name too. Within the limit the results are the
// library's.
func TestSearchLimits(t *testing.T) {
	const limit = 1000
	long := strings.Repeat("ab", 300) // 600 bytes
	many := make([]any, 200)
	for i := range many {
		many[i] = float64(i)
	}
	data := map[string]any{"long": long, "letters": []any{"a", "b", "c", "d"}, "many": many}
	for _, c := range []struct {
		expr string
		n    float64 // $n
		want any     // the result, when err is ""
		err  string
	}{
		// The query: a terabyte asked for, refused at once.
		{expr: "pad_left('a', `1e12`)", err: "pad_left(): the padded string would be over the query limit of 1000 bytes (limits.maxResultBytes): its width (argument 2) asks for that many bytes; pad to a smaller width, or raise limits.maxResultBytes in vmcp.yaml"},
		{expr: "pad_right('a', `1e300`, '')", err: "pad_right(): the padded string would be over the query limit of 1000 bytes"},
		{expr: "pad_left('a', `1001`)", err: "pad_left(): the padded string would be over the query limit of 1000 bytes"},
		{expr: "pad_left('a', $n)", n: math.NaN(), err: "pad_left(): its width (argument 2) must be a whole number from 0 up, but it is not a finite number; check the arithmetic"},
		{expr: "pad_left('a', `1` / `0`)", err: "pad_left(): its width (argument 2) must be a whole number from 0 up, but it is not a finite number"},
		{expr: "pad_right('a', `-3`)", err: "pad_right(): its width (argument 2) must be a whole number from 0 up, but it is negative; keep it at 0 or more, as in max([n, `0`])"},
		{expr: "pad_right('a', `2.5`)", err: "pad_right(): its width (argument 2) must be a whole number from 0 up, but it is not a whole number; round it with floor() or ceil()"},
		{expr: "pad_left('ab', `1000`, '.')", want: strings.Repeat(".", 998) + "ab"},
		{expr: "pad_right('ab', `4`)", want: "ab  "},
		// A pad width under the string's length leaves it as it is, however long.
		{expr: "pad_left(long, `3`)", want: long},
		// The wrong type is still the library's type check.
		{expr: "pad_left('a', '5')", err: "pad_left(): an argument has the wrong type; it must be \"number\""},

		{expr: "replace(long, 'a', 'xxx')", err: "replace(): the result would be over the query limit of 1000 bytes (limits.maxResultBytes): the replacement (argument 3) is put in at every match of argument 2; replace fewer matches with a count (argument 4)"},
		{expr: "replace('ab', '', '-')", want: "-a-b-"},
		{expr: "replace('aaaa', 'a', 'b', `1e300`)", want: "bbbb"},
		{expr: "replace('aaaa', 'a', 'b', `2`)", want: "bbaa"},
		{expr: "replace(long, 'a', 'xxx', `100`)", want: strings.Replace(long, "a", "xxx", 100)},
		{expr: "replace('aaaa', 'a', 'b', $n)", n: math.Inf(-1), err: "replace(): its count (argument 4) must be a whole number from 0 up, but it is not a finite number"},
		// Growth by nesting: each replace multiplies the length by 4.
		{expr: "replace(replace(replace(replace(replace('ab', 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa'), 'a', 'aaaa')", err: "replace(): the result would be over the query limit of 1000 bytes"},

		{expr: "join(long, letters)", err: "join(): the joined string would be over the query limit of 1000 bytes (limits.maxResultBytes): it holds every element of the array (argument 2) with the separator (argument 1) between them"},
		{expr: "join('-', letters)", want: "a-b-c-d"},

		{expr: "split(long, '')", err: "split(): the array of pieces would be over the query limit of 1000 bytes (limits.maxResultBytes)"},
		{expr: "split(long, '', `2`)", want: []any{"a", "b", long[2:]}},
		{expr: "split('a-b-c', '-', `1e300`)", want: []any{"a", "b", "c"}},
		{expr: "split('a-b-c', '-', `-1`)", err: "split(): its count (argument 3) must be a whole number from 0 up, but it is negative"},

		// A value whose parts are shared: 2^40 leaves in 40 arrays.
		{expr: doubled(40) + "to_string(@)", err: "to_string(): the JSON text of its argument would be over the query limit of 1000 bytes (limits.maxResultBytes)"},
		{expr: "[letters, letters] | to_string(@)", want: `[["a","b","c","d"],["a","b","c","d"]]`},
		{expr: "to_string(letters)", want: `["a","b","c","d"]`},

		{expr: "zip(many, many, many)", err: "zip(): the result would be over the query limit of 1000 bytes"},
		{expr: "zip(letters, letters)", want: []any{[]any{"a", "a"}, []any{"b", "b"}, []any{"c", "c"}, []any{"d", "d"}}},

		// find_first and find_last: whole numbers, clamped to the string;
		// the library would panic on a start past the end.
		{expr: "find_first('abc', 'c', `99`)", want: nil},
		{expr: "find_first('abcabc', 'c', `-5`, `1e300`)", want: 2.0},
		{expr: "find_last('abcabc', 'c', `0`, `4`)", want: 2.0},
		{expr: "find_last('abcabc', 'c', `5`, `2`)", want: nil},
		{expr: "find_first('abc', 'b', $n)", n: math.NaN(), err: "find_first(): its start (argument 3) must be a whole number, but it is not a finite number"},
		{expr: "find_last('abc', 'b', `0`, `1.5`)", err: "find_last(): its end (argument 4) must be a whole number, but it is not a whole number"},

		// What many calls build adds up: each pad is under the limit, the
		// fourth takes the total over it.
		{expr: "map(&pad_left(@, `300`), letters)", err: "pad_left(): with what the query built before it, the query would build more than its limit of 1000 bytes (limits.maxResultBytes); select the part of the data you need first, or raise limits.maxResultBytes in vmcp.yaml"},
		{expr: "map(&pad_left(@, `3`), letters)", want: []any{"  a", "  b", "  c", "  d"}},
		{expr: "[upper(long), lower(long)]", err: "lower(): with what the query built before it"},
	} {
		got, err := search(t, c.expr, data, limit, c.n)
		if c.want != nil || c.err == "" {
			if err != nil {
				t.Errorf("Search(%q) failed: %v", c.expr, err)
			} else if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", c.expr, diff)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("Search(%q) = %.200v, %v; want an *Error starting %q", c.expr, got, err, c.err)
		}
	}
}

// A budget belongs to one search: the same query runs again within the
// same limit, and a limit of 0 is DefaultMaxBytes.
func TestSearchLimitPerSearch(t *testing.T) {
	for range 3 {
		if _, err := search(t, "pad_left('a', `700`)", nil, 1000, 0); err != nil {
			t.Fatalf("second search over the same limit: %v", err)
		}
	}
	if _, err := search(t, "pad_left('a', `10485760`)", nil, 0, 0); err != nil {
		t.Errorf("pad to DefaultMaxBytes with limit 0: %v", err)
	}
	_, err := search(t, "pad_left('a', `10485761`)", nil, 0, 0)
	if err == nil || !strings.Contains(err.Error(), "over the query limit of 10485760 bytes") {
		t.Errorf("pad past DefaultMaxBytes with limit 0: %v; want the 10485760-byte limit", err)
	}
}

// jsonSize counts a value as JSON without building it, and stops past
// the limit.
func TestJSONSize(t *testing.T) {
	v := map[string]any{"a": []any{1.5, true, nil, "xy"}}
	if got, want := jsonSize(v, 1000), len(`{"a":[1.5,true,null,"xy"]}`); got != want {
		t.Errorf("jsonSize(%v) = %d; want %d", v, got, want)
	}
	var shared any = "x"
	for range 60 {
		shared = []any{shared, shared}
	}
	if n := jsonSize(shared, 1000); n <= 1000 || n > 1100 {
		t.Errorf("jsonSize(2^60 shared leaves, 1000) = %d; want just over 1000", n)
	}
}

// quotedLen is the length encoding/json gives a string.
func TestQuotedLen(t *testing.T) {
	for _, s := range []string{"", "plain", `"q" \ b`, "\n\r\t\x00\x1f", "<a&b>", "é€😀", "\u2028\u2029", "bad\xff\xfeutf8", "\xe2\x82"} {
		want, _ := json.Marshal(s)
		if got := quotedLen(s); got != len(want) {
			t.Errorf("quotedLen(%q) = %d; want %d (%s)", s, got, len(want), want)
		}
	}
}

// CheckLiterals finds a literal numeric argument that no run accepts, at
// its function's name, and leaves computed numbers and sizes (a limit is
// the server's) to the run.
func TestCheckLiterals(t *testing.T) {
	for _, c := range []struct {
		expr string
		off  int
		msg  string // "" for none
	}{
		{"pad_left(name, `1.5`)", 0, "pad_left(): its width (argument 2) must be a whole number from 0 up, but it is not a whole number"},
		{"a[].replace(@, 'x', 'y', `-1`)", 4, "replace(): its count (argument 4) must be a whole number from 0 up, but it is negative"},
		{"find_last(s, 'x', `0`, `2.5`)", 0, "find_last(): its end (argument 4) must be a whole number, but it is not a whole number"},
		{"find_first(s, 'x', `-3`)", 0, ""},
		{"pad_left(name, `1e12`)", 0, ""},
		{"pad_left(name, width)", 0, ""},
		{"pad_left(name, `1` / `0`)", 0, ""},
	} {
		ast, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		e := CheckLiterals(c.expr, ast)
		switch {
		case c.msg == "" && e != nil:
			t.Errorf("CheckLiterals(%q) = %v; want none", c.expr, e)
		case c.msg != "" && (e == nil || e.Msg != c.msg || e.Off != c.off):
			t.Errorf("CheckLiterals(%q) = %+v; want %q at %d", c.expr, e, c.msg, c.off)
		}
	}
}
