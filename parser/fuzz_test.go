package parser

import (
	"os"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
)

// fuzzSeeds are hand-written inputs next to the corpus files.
var fuzzSeeds = []string{
	"",
	"---\n",
	"name: a\nsteps:\n  - id: x\n    tool: b.c\n    arguments: {q: \"{{.params.q}}\"}\n",
	"compositeTools:\n  - name: a\n    steps: [{id: x, dependsOn: [y], on_error: {action: retry, retry_count: 3}}]\n",
	"{\"name\": \"j\", \"steps\": [{\"id\": \"a\", \"message\": \"\\u00e9 {{.x}}\"}]}",
	"steps:\n  - id: a\n    message: |2-\n        x {{.a}}\n      y\n",
	"steps:\n  - id: a\n    message: >\n      x {{.a}}\n\n        more\n      y\n",
	"steps:\n  - id: a\n    message: 'it''s\n\n      {{.a}}'\n",
	"steps:\n  - id: a\n    message: \"x\\\n      \\t{{.a}}\\\"\"\n",
	"a: &a [*a]\nsteps: []\n",
	"a: &a {x: 1}\nsteps:\n  - <<: [*a, *a]\n    id: b\n",
	"steps: [[[[[[[[[]]]]]]]]]\n",
	"kind: VirtualMCPCompositeToolDefinition\napiVersion: toolhive.stacklok.dev/v1beta1\nspec: 5\n",
	"steps:\r\n  - id: a\r\n    message: >-\r\n      x\r\n      {{.a}}\r\n",
	"\xef\xbb\xbfsteps: []\n",
	"%YAML 1.2\n---\nsteps: []\n...\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, p := range corpusFiles(f) {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, seed := range fuzzkit.Split(src) {
			f.Add(seed)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzkit.MaxInput {
			return
		}
		file, diags := Parse("fuzz.yaml", src)
		if file == nil {
			t.Fatal("Parse returned a nil File")
		}
		lines := strings.Count(string(src), "\n") + 1
		for _, d := range diags {
			if d.Code == "" || d.Message == "" || strings.Contains(d.Message, "\n") {
				t.Errorf("diagnostic %+v lacks a code or a one-line message", d)
			}
			if d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
				t.Errorf("diagnostic %v points outside the file (%d lines)", d, lines)
			}
		}
		for _, w := range file.Workflows {
			walk(w.Node, func(n *Node) {
				if n.Pos.Line < 1 || n.Pos.Line > lines || n.Pos.Col < 1 {
					t.Errorf("node %s at %v outside the file (%d lines)", n.Path, n.Pos, lines)
				}
				s, ok := n.Str()
				if !ok {
					return
				}
				for off := 0; off <= len(s); off++ {
					if p := n.OffsetPos(off); p.Line < 1 || p.Line > lines || p.Col < 1 {
						t.Fatalf("OffsetPos(%d) of %s = %v, outside the file", off, n.Path, p)
					}
				}
			})
		}
	})
}

// FuzzScalarMapping checks the position mapping against go-yaml: whenever
// every string of a document maps back exactly, each rune of each value
// must sit where OffsetPos says (see checkMapping).
func FuzzScalarMapping(f *testing.F) {
	for _, tc := range offsetCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > fuzzkit.MaxInput {
			return
		}
		docs, _, inexact, err := convertAll(src)
		if err != nil || inexact != 0 {
			return
		}
		norm := strings.ReplaceAll(src, "\r\n", "\n")
		for _, d := range docs {
			walk(d, func(n *Node) {
				if _, ok := n.Str(); ok {
					checkMapping(t, norm, n)
				}
			})
		}
	})
}
