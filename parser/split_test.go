package parser

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitDocuments(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each document's text
		line []int    // each document's first line
	}{
		{"single bare", "a: 1\nb: 2\n", []string{"a: 1\nb: 2\n"}, []int{1}},
		{"comments before the first marker", "# c\n\n---\na: 1\n", []string{"# c\n\n---\na: 1\n"}, []int{1}},
		{"directive before the marker", "%YAML 1.2\n---\na: 1\n", []string{"%YAML 1.2\n---\na: 1\n"}, []int{1}},
		{"bare then explicit", "a: 1\n---\nb: 2\n", []string{"a: 1\n", "---\nb: 2\n"}, []int{1, 2}},
		{"content on the marker line", "--- |\n  x\n--- {a: 1}\n", []string{"--- |\n  x\n", "--- {a: 1}\n"}, []int{1, 3}},
		{"empty explicit documents", "---\n---\n", []string{"---\n", "---\n"}, []int{1, 2}},
		{"document end marker", "a: 1\n...\n# trailing comment\n---\nb: 2\n...\n", []string{"a: 1\n...\n", "# trailing comment\n---\nb: 2\n...\n"}, []int{1, 3}},
		{"dashes that are not markers", "a: ---x\n----\n -- \n", []string{"a: ---x\n----\n -- \n"}, []int{1}},
		{"marker with a tab and CR", "a: 1\n---\t\nb: 1\n---\r\nc: 1\n", []string{"a: 1\n", "---\t\nb: 1\n", "---\r\nc: 1\n"}, []int{1, 2, 4}},
		{"no final newline", "a: 1\n---\nb: 2", []string{"a: 1\n", "---\nb: 2"}, []int{1, 2}},
		{"comments only", "# a\n# b\n", nil, nil},
		{"empty", "", nil, nil},
	}
	for _, tc := range tests {
		var got []string
		var lines []int
		for _, c := range splitDocuments([]byte(tc.src)) {
			got = append(got, tc.src[c.start:c.end])
			lines = append(lines, c.line)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: splitDocuments(%q) (-want +got):\n%s", tc.name, tc.src, diff)
		}
		if diff := cmp.Diff(tc.line, lines); diff != "" {
			t.Errorf("%s: splitDocuments(%q) first lines (-want +got):\n%s", tc.name, tc.src, diff)
		}
	}
}

func TestNestingBound(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{"a: 1\n", 2},
		{"a:\n  b:\n    c: 1\n", 4},
		{"a: [[1, [2]], {b: [3]}]\n", 6}, // an estimate: "b: " inside the flow counts too
		{"a: '[[[[['\nb: \"{{{{\"\n", 2},
		{"a: 1 # [[[[[\n", 2},
		{"- - - - x\n", 5},
	}
	for _, tc := range tests {
		if got, _ := nestingBound([]byte(tc.src)); got != tc.want {
			t.Errorf("nestingBound(%q) = %d; want %d", tc.src, got, tc.want)
		}
	}
}
