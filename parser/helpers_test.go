package parser

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	goparser "github.com/goccy/go-yaml/parser"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// parseTree converts every document of src in full (not only workflows),
// for tests of values, positions and paths. It also returns how many string
// scalars fell back to an inexact position mapping.
func parseTree(t *testing.T, src string) ([]*Node, diag.List, int) {
	t.Helper()
	docs, diags, inexact, err := convertAll(src)
	if err != nil {
		t.Fatalf("go-yaml rejected test input %q: %v", src, err)
	}
	return docs, diags, inexact
}

// convertAll is parseTree without a test: it returns go-yaml's error.
func convertAll(src string) ([]*Node, diag.List, int, error) {
	var diags diag.List
	s := newSource("test.yaml", []byte(strings.ReplaceAll(src, "\r\n", "\n")))
	b := newBuilder(s, &diags)
	var docs []*Node
	for _, c := range splitDocuments(s.src) {
		b.lineBase = c.line - 1
		b.aliases = map[*ast.AliasNode]ast.Node{}
		b.depthHit = false
		if d, _ := nestingBound(s.src[c.start:c.end]); d > preParseDepth {
			return nil, nil, 0, fmt.Errorf("nesting too deep")
		}
		af, err := goparser.ParseBytes(s.src[c.start:c.end], 0, goparser.AllowDuplicateMapKey())
		if err != nil {
			return nil, nil, 0, err
		}
		for _, d := range af.Docs {
			if d.Body == nil {
				continue
			}
			b.collectAnchors(d.Body, map[string]ast.Node{})
			docs = append(docs, b.node(d.Body, "", 0, s.pos(c.start)))
		}
	}
	return docs, diags, b.inexact, nil
}

// find returns the node whose Path is path, searching depth-first.
func find(n *Node, path string) *Node {
	if n == nil {
		return nil
	}
	if n.Path == path {
		return n
	}
	for _, f := range n.Fields {
		if m := find(f.Value, path); m != nil {
			return m
		}
	}
	for _, it := range n.Items {
		if m := find(it, path); m != nil {
			return m
		}
	}
	return nil
}

// posOf returns the file position of the first occurrence of marker in
// src, counting columns in runes.
func posOf(t *testing.T, src, marker string) ir.Pos {
	t.Helper()
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("marker %q not in source", marker)
	}
	line := strings.Count(src[:i], "\n") + 1
	ls := strings.LastIndex(src[:i], "\n") + 1
	return ir.Pos{File: "test.yaml", Line: line, Col: utf8.RuneCountInString(src[ls:i]) + 1}
}

// runeAt returns the rune of src at a position, '\n' at or past the end of
// a line, and -1 when the position is outside the file.
func runeAt(src string, p ir.Pos) rune {
	lines := strings.Split(src, "\n")
	if p.Line < 1 || p.Line > len(lines) {
		return -1
	}
	line := []rune(strings.TrimRight(lines[p.Line-1], "\r"))
	if p.Col-1 >= len(line) {
		return '\n'
	}
	if p.Col < 1 {
		return -1
	}
	return line[p.Col-1]
}
