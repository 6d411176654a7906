package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// offsetCases cover every scalar style. Each marker appears verbatim both
// in the source and in the value; OffsetPos of the marker's offset in the
// value must be the marker's position in the source.
var offsetCases = []struct {
	name    string
	src     string
	path    string
	style   Style
	value   string // expected value; empty means do not check
	markers []string
}{
	{"plain", "v: hello {{.a}}\n", "v", Plain, "hello {{.a}}", []string{"{{.a}}", "hello"}},
	{"plain non-ASCII", "v: héllo wörld ☃ {{.a}}\n", "v", Plain, "héllo wörld ☃ {{.a}}", []string{"{{.a}}", "wörld"}},
	{"plain after comment line", "# ☃☃☃\nv: x {{.a}} # {{.c}}\n", "v", Plain, "x {{.a}}", []string{"{{.a}}"}},
	{"plain multi-line", "v: first {{.a}}\n  second {{.b}}\n\n  fourth  {{.c}}\n", "v", Plain,
		"first {{.a}} second {{.b}}\nfourth  {{.c}}", []string{"{{.a}}", "{{.b}}", "{{.c}}", "second", "fourth"}},
	{"plain multi-line trailing blanks", "v: één {{.a}}   \n   twee {{.b}}\n", "v", Plain,
		"één {{.a}} twee {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"plain in flow sequence", "v: [a, b $a, c]\n", "v[1]", Plain, "b $a", []string{"$a"}},
	{"plain in flow mapping", "v: {k: é $a, l: 2}\n", "v.k", Plain, "é $a", []string{"$a"}},
	{"plain multi-line in flow", "v: [a, b\n  $a ☃ $b, c]\n", "v[1]", Plain, "b $a ☃ $b", []string{"$a", "$b"}},
	{"plain in block sequence", "v:\n  - x\n  - ü {{.a}}\n", "v[1]", Plain, "ü {{.a}}", []string{"{{.a}}"}},
	{"plain after tab", "v:\tx {{.a}}\n", "v", Plain, "x {{.a}}", []string{"{{.a}}"}},
	{"single-quoted", "v: 'it''s {{.a}} ''x'' {{.b}}'\n", "v", SingleQuoted, "it's {{.a}} 'x' {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"single-quoted non-ASCII", "v: '日本語 {{.a}}'\n", "v", SingleQuoted, "日本語 {{.a}}", []string{"{{.a}}"}},
	{"single-quoted multi-line", "v: 'one {{.a}}  \n    two ''{{.b}}''\n\n    four {{.c}}'\n", "v", SingleQuoted,
		"one {{.a}} two '{{.b}}'\nfour {{.c}}", []string{"{{.a}}", "{{.b}}", "{{.c}}"}},
	{"double-quoted", `v: "say \"hi\" {{.a}}"` + "\n", "v", DoubleQuoted, `say "hi" {{.a}}`, []string{"{{.a}}"}},
	{"double-quoted escapes", `v: "a\tb\\c\u00e9\x41\U0001F600 {{.a}} \/ {{.b}}"` + "\n", "v", DoubleQuoted,
		"a\tb\\cé" + "A\U0001F600 {{.a}} / {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"double-quoted non-ASCII", `v: "ß → {{.a}}"` + "\n", "v", DoubleQuoted, "ß → {{.a}}", []string{"{{.a}}"}},
	{"double-quoted multi-line", "v: \"one {{.a}}\n  two {{.b}}\\\n  three {{.c}}\n\n  five\\n{{.d}}\"\n", "v", DoubleQuoted,
		"one {{.a}} two {{.b}}three {{.c}}\nfive\n{{.d}}", []string{"{{.a}}", "{{.b}}", "{{.c}}", "{{.d}}"}},
	{"double-quoted in JSON", "{\n  \"v\": \"x \\\"q\\\" {{.a}}\",\n  \"w\": 1\n}\n", "v", DoubleQuoted, `x "q" {{.a}}`, []string{"{{.a}}"}},
	{"double-quoted after tab", "v:\t\"{{.a}}\"\n", "v", DoubleQuoted, "{{.a}}", []string{"{{.a}}"}},
	{"literal", "v: |\n  line one\n  é {{.a}}\n    indented {{.b}}\n\n  last {{.c}}\n", "v", Literal,
		"line one\né {{.a}}\n  indented {{.b}}\n\nlast {{.c}}\n", []string{"{{.a}}", "{{.b}}", "{{.c}}", "indented"}},
	{"literal strip", "v: |-\n  a {{.a}}\n  b {{.b}}\n\nw: 1\n", "v", Literal, "a {{.a}}\nb {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"literal keep", "v: |+\n  a {{.a}}\n\n\nw: 1\n", "v", Literal, "a {{.a}}\n\n\n", []string{"{{.a}}"}},
	{"literal indentation indicator", "v: |2\n    lead {{.a}}\n  base {{.b}}\n", "v", Literal,
		"  lead {{.a}}\nbase {{.b}}\n", []string{"{{.a}}", "{{.b}}"}},
	{"literal indicator and chomping", "v: |-2 # comment\n   x {{.a}}\n", "v", Literal, " x {{.a}}", []string{"{{.a}}"}},
	{"literal leading empty lines", "v: |\n\n  after {{.a}}\n", "v", Literal, "\nafter {{.a}}\n", []string{"{{.a}}"}},
	{"literal in sequence", "steps:\n  - args:\n      body: |\n        ☃ {{.a}}\n        {{.b}}\n", "steps[0].args.body", Literal,
		"☃ {{.a}}\n{{.b}}\n", []string{"{{.a}}", "{{.b}}"}},
	{"literal at end of file", "v: |\n  a {{.a}} \n  b {{.b}}  ", "v", Literal, "", []string{"{{.a}}", "{{.b}}"}},
	{"folded", "v: >\n  one {{.a}}\n  two {{.b}}\n\n  four {{.c}}\n", "v", Folded,
		"one {{.a}} two {{.b}}\nfour {{.c}}\n", []string{"{{.a}}", "{{.b}}", "{{.c}}"}},
	{"folded strip", "v: >-\n  ä {{.a}}\n  ö {{.b}}\n", "v", Folded, "ä {{.a}} ö {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"folded more-indented", "v: >\n  one {{.a}}\n    more {{.b}}\n  back {{.c}}\n", "v", Folded,
		"one {{.a}}\n  more {{.b}}\nback {{.c}}\n", []string{"{{.a}}", "{{.b}}", "{{.c}}"}},
	{"folded trailing spaces kept", "v: >-\n  a {{.a}}  \n  b {{.b}}\n", "v", Folded, "a {{.a}}   b {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"second document", "a: 1\n---\n# c\nv: 'x {{.a}}'\n", "v", SingleQuoted, "x {{.a}}", []string{"{{.a}}"}},
	{"CRLF", "v: >-\r\n  a {{.a}}\r\n  b {{.b}}\r\nw: 'p\r\n  {{.c}}'\r\n", "v", Folded, "a {{.a}} b {{.b}}", []string{"{{.a}}", "{{.b}}"}},
	{"CRLF single-quoted", "v: 'p\r\n  {{.c}}'\r\n", "v", SingleQuoted, "p {{.c}}", []string{"{{.c}}"}},
	{"anchor", "v: &x \"é {{.a}}\"\nw: *x\n", "w", DoubleQuoted, "é {{.a}}", []string{"{{.a}}"}},
	{"tagged", "v: !!str 'x {{.a}}'\n", "v", SingleQuoted, "x {{.a}}", []string{"{{.a}}"}},
}

func TestOffsetPos(t *testing.T) {
	for _, tc := range offsetCases {
		t.Run(tc.name, func(t *testing.T) {
			docs, diags, inexact := parseTree(t, tc.src)
			if len(diags) > 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			if inexact != 0 {
				t.Errorf("%d scalars fell back to an inexact position mapping", inexact)
			}
			var n *Node
			for _, d := range docs {
				if n = find(d, tc.path); n != nil {
					break
				}
			}
			if n == nil {
				t.Fatalf("no node at path %q", tc.path)
			}
			s, ok := n.Str()
			if !ok {
				t.Fatalf("node at %q is a %v, want a string", tc.path, n.Kind)
			}
			if tc.value != "" && s != tc.value {
				t.Errorf("value = %q; want %q", s, tc.value)
			}
			if n.Style != tc.style {
				t.Errorf("style = %v; want %v", n.Style, tc.style)
			}
			for _, m := range tc.markers {
				off := strings.Index(s, m)
				if off < 0 {
					t.Fatalf("marker %q not in value %q", m, s)
				}
				if got, want := n.OffsetPos(off), posOf(t, tc.src, m); got != want {
					t.Errorf("OffsetPos(%d) for %q = %v; want %v", off, m, got, want)
				}
			}
			checkMapping(t, tc.src, n)
		})
	}
}

// checkMapping checks every rune of a string node's value against the
// source rune at its OffsetPos: it must be the same rune, or the backslash
// of an escape, or (for spaces and newlines made by folding) a line end.
// Positions must never go backwards. The template the compiler makes
// from the node (its Segments) must map every offset the same way, since
// the runtime has only that.
func checkMapping(t *testing.T, src string, n *Node) {
	t.Helper()
	s, _ := n.Str()
	tp := &ir.Template{Source: s, Pos: n.OffsetPos(0), Segments: n.Segments()}
	var prev ir.Pos
	for off, r := range s {
		p := n.OffsetPos(off)
		if tp.OffsetPos(off) != p {
			t.Errorf("ir.Template.OffsetPos(%d) = %v; want %v, as Node.OffsetPos", off, tp.OffsetPos(off), p)
		}
		if p.Line < prev.Line || (p.Line == prev.Line && p.Col < prev.Col) {
			t.Errorf("OffsetPos(%d) = %v goes back from %v", off, p, prev)
		}
		prev = p
		got := runeAt(src, p)
		switch {
		case got == r:
		case got == '\\' && n.Style == DoubleQuoted:
		case got == '\n' && (r == ' ' || r == '\n'):
		default:
			t.Errorf("value rune %q at offset %d maps to %v, which holds %q", r, off, p, got)
		}
	}
}

func TestOffsetPosBounds(t *testing.T) {
	docs, _, _ := parseTree(t, "v: 'abc'\nw: 1\n")
	n := find(docs[0], "v")
	tests := []struct {
		off  int
		want ir.Pos
	}{
		{-5, ir.Pos{File: "test.yaml", Line: 1, Col: 5}},
		{0, ir.Pos{File: "test.yaml", Line: 1, Col: 5}},
		{3, ir.Pos{File: "test.yaml", Line: 1, Col: 8}}, // the closing quote
		{100, ir.Pos{File: "test.yaml", Line: 1, Col: 8}},
	}
	for _, tc := range tests {
		if got := n.OffsetPos(tc.off); got != tc.want {
			t.Errorf("OffsetPos(%d) = %v; want %v", tc.off, got, tc.want)
		}
	}
	var nilNode *Node
	if got := nilNode.OffsetPos(3); got != (ir.Pos{}) {
		t.Errorf("nil.OffsetPos(3) = %v; want the zero Pos", got)
	}
}

// TestOneRunIsTheWalk parses the corpus, the examples and the offset cases
// with scalarSegments' shortcut (oneRun) and without it: every string
// scalar must get the same value, style, position and segments, and as
// many must fall back to an inexact mapping.
func TestOneRunIsTheWalk(t *testing.T) {
	type scalar struct {
		Path  string
		Value string
		Style Style
		Pos   ir.Pos
		Segs  []ir.Segment
	}
	collect := func(src string) ([]scalar, int) {
		docs, _, inexact, err := convertAll(src)
		if err != nil {
			return nil, -1
		}
		var out []scalar
		for _, d := range docs {
			walk(d, func(n *Node) {
				if s, ok := n.Str(); ok {
					out = append(out, scalar{n.Path, s, n.Style, n.Pos, n.lines})
				}
			})
		}
		return out, inexact
	}
	srcs := map[string]string{}
	for _, c := range offsetCases {
		srcs["offset case "+c.name] = c.src
	}
	files := corpusFiles(t)
	examples, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example workflows: %v", err)
	}
	for _, p := range append(files, examples...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs[p] = string(b)
	}
	t.Cleanup(func() { scalarShortcut = true })
	scalars := 0
	for name, src := range srcs {
		scalarShortcut = true
		with, inexactWith := collect(src)
		scalarShortcut = false
		without, inexactWithout := collect(src)
		if diff := cmp.Diff(without, with); diff != "" || inexactWith != inexactWithout {
			t.Errorf("%s: with the shortcut (-walk +oneRun), inexact %d -> %d:\n%s", name, inexactWithout, inexactWith, diff)
		}
		scalars += len(with)
	}
	if scalars < 1000 {
		t.Fatalf("compared %d string scalars; want the whole corpus", scalars)
	}
}

// TestOneRun shows which scalars take the shortcut: one line, written as
// it reads.
func TestOneRun(t *testing.T) {
	for _, c := range []struct {
		src   string // the scalar as written, at offset 0
		st    Style
		v     string
		taken bool
	}{
		{"hello {{.a}}", Plain, "hello {{.a}}", true},
		{`"hello"`, DoubleQuoted, "hello", true},
		{`'it is'`, SingleQuoted, "it is", true},
		{`""`, DoubleQuoted, "", true},
		{`"tab\there"`, DoubleQuoted, "tab\there", false}, // an escape
		{`'it''s'`, SingleQuoted, "it's", false},          // a doubled quote
		{"first\n  second", Plain, "first second", false}, // folded lines
		{`"a`, DoubleQuoted, "a", false},                  // no closing quote
		{"|\n  text\n", Literal, "text\n", false},
	} {
		s := newSource("f", []byte(c.src))
		at, ok := s.oneRun(c.st, 0, c.v)
		if ok != c.taken {
			t.Errorf("oneRun(%q as %v) taken = %v, want %v", c.src, c.st, ok, c.taken)
			continue
		}
		if ok {
			walked, wok := s.walkSegments(c.st, 0, c.v)
			if want := s.segment(0, at); !wok || len(walked) != 1 || walked[0] != want {
				t.Errorf("oneRun(%q) = segment %v; the walk gives %v (ok %v)", c.src, want, walked, wok)
			}
		}
	}
}
