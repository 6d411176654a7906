package ir

import "testing"

// TestOffsetPos maps offsets of values the way the parser's segment tables
// describe them: one run of text, an escape that is two source bytes for
// one value byte, a block scalar whose lines are indented, and non-ASCII
// text (columns count runes).
func TestOffsetPos(t *testing.T) {
	tests := []struct {
		name  string
		value string
		segs  []Segment
		off   int
		want  Pos
	}{
		{"one run", "ab {{.x}}", []Segment{{0, 3, 7}}, 3, Pos{"f.yaml", 3, 10}},
		// "a\"b {{.x}}": the escape is its own segment at the backslash,
		// and the copy after it restarts two columns on.
		{"after an escape", `a"b {{.x}}`, []Segment{{0, 1, 5}, {1, 1, 6}, {2, 1, 8}}, 4, Pos{"f.yaml", 1, 10}},
		{"escape itself", `a"b`, []Segment{{0, 1, 5}, {1, 1, 6}, {2, 1, 8}}, 1, Pos{"f.yaml", 1, 6}},
		// v: |\n    first\n    x {{.y}}: each line starts at column 5.
		{"block line", "first\nx {{.y}}", []Segment{{0, 2, 5}, {5, 2, 10}, {6, 3, 5}}, 8, Pos{"f.yaml", 3, 7}},
		{"non-ASCII", "é {{.x}}", []Segment{{0, 1, 4}}, 3, Pos{"f.yaml", 1, 6}},
		{"past the end", "ab", []Segment{{0, 1, 1}}, 9, Pos{"f.yaml", 1, 3}},
		{"no segments", "ab", nil, 1, Pos{}},
	}
	for _, tt := range tests {
		if got := OffsetPos("f.yaml", tt.segs, tt.value, tt.off); got != tt.want {
			t.Errorf("%s: OffsetPos(%q, %d) = %v; want %v", tt.name, tt.value, tt.off, got, tt.want)
		}
	}
}

func TestTemplateOffsetPos(t *testing.T) {
	plain := &Template{Source: "x {{.a}}", Pos: Pos{"f.yaml", 4, 8}}
	if got, want := plain.OffsetPos(2), (Pos{"f.yaml", 4, 10}); got != want {
		t.Errorf("template without segments: OffsetPos(2) = %v; want %v (one run from Pos)", got, want)
	}
	block := &Template{Source: "a\n{{.b}}", Pos: Pos{"f.yaml", 2, 7}, Segments: []Segment{{0, 2, 7}, {1, 2, 8}, {2, 3, 7}}}
	if got, want := block.OffsetPos(4), (Pos{"f.yaml", 3, 9}); got != want {
		t.Errorf("block template: OffsetPos(4) = %v; want %v", got, want)
	}
	unknown := &Template{Source: "{{.a}}"}
	if got := unknown.OffsetPos(3); got != (Pos{}) {
		t.Errorf("template without a position: OffsetPos(3) = %v; want the zero Pos", got)
	}
}
