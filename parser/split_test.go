package parser

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	goparser "github.com/goccy/go-yaml/parser"
	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
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

// TestPreScanNodesNotBelowRealCount: the node estimate is an upper bound
// of the nodes go-yaml builds, for every corpus file and some shapes that
// pack many values into few lines.
func TestPreScanNodesNotBelowRealCount(t *testing.T) {
	docs := map[string]string{
		"flow sequence": "a: [1, 2, 3, [4, 5], {b: 6, c: [7]}]\n",
		"compact":       "- - - a\n  - b: {c: d, e: f}\n- ? k\n  : v\n",
		"quoted":        "a: \"x, [y], {z}: w\"\nb: 'p, q'\n",
		"multi-line":    "a: {b: 1,\n  c: 2,\n  d: [3,\n    4]}\n",
	}
	for _, p := range corpusFiles(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = string(src)
	}
	for name, src := range docs {
		for _, c := range splitDocuments([]byte(src)) {
			text := []byte(src[c.start:c.end])
			f, err := goparser.ParseBytes(text, 0)
			if err != nil {
				continue // not YAML: nothing to bound
			}
			real := 0
			for _, d := range f.Docs {
				ast.Walk(nodeCounter{&real}, d)
			}
			if est := preScan(text).nodes; est < real {
				t.Errorf("%s, document at line %d: node estimate %d < %d nodes", name, c.line, est, real)
			}
		}
	}
}

// nodeCounter counts the value nodes of a go-yaml tree: scalars,
// collections and aliases, not the mapping entries that pair them.
type nodeCounter struct{ n *int }

func (v nodeCounter) Visit(n ast.Node) ast.Visitor {
	switch n.(type) {
	case *ast.MappingValueNode, *ast.DocumentNode, *ast.CommentNode, *ast.CommentGroupNode, nil:
	default:
		*v.n++
	}
	return v
}

// TestTooLargeDocument: a document past maxNodes is refused without being
// parsed, at the line that crossed the limit, and the next document of the
// file is still parsed.
func TestTooLargeDocument(t *testing.T) {
	var b strings.Builder
	b.WriteString("steps:\n")
	for i := range maxNodes {
		fmt.Fprintf(&b, "  - {id: s%d}\n", i)
	}
	b.WriteString("---\nname: next\nsteps:\n  - {id: a, tool: b.c}\n")
	f, diags := Parse("big.yaml", []byte(b.String()))
	if len(diags) != 1 || diags[0].Code != CodeTooLarge {
		t.Fatalf("diagnostics = %v; want one %s", diags, CodeTooLarge)
	}
	// The root and "steps:" estimate at 3 nodes and each step's line at 4
	// (the line, "-", "{", ": "): the 5,000th step's line crosses 20,000.
	if got, want := diags[0].Pos, (ir.Pos{File: "big.yaml", Line: 1 + 5000, Col: 3}); got != want {
		t.Errorf("%s at %v; want %v", CodeTooLarge, got, want)
	}
	if len(f.Workflows) != 1 || f.Workflows[0].Name == nil {
		t.Errorf("workflows = %d; want the second document's", len(f.Workflows))
	}
}
