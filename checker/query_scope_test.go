package checker

import (
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/parser"
)

// A query's syntax error and a variable read outside its let give the
// fix, at the token (testdata/errors/query_tokens.yaml pins the columns
// of every scalar style).
func TestQueryDiagnosticFixes(t *testing.T) {
	const src = `compositeTools:
  - name: w
    description: d
    steps:
      - id: a
        tool: b.c
        arguments:
          pods: "{{query \"items[?kind == ` + "`Pod`" + `]\" .steps.a.output}}"
          roles: "{{query \"let $a = 'admin', $b = items[?name == $a] in $b\" .params}}"
          num: "{{query \"items[?size > 10]\" .params}}"
`
	cases := []struct {
		code      string
		line, col int
		detail    string
	}{
		{CodeQuerySyntax, 8, 43, "write 'Pod' for a string, or `\"Pod\"` for a JSON string literal"},
		{CodeQueryVariable, 9, 67, "the bindings of one let do not see each other, so nest a second let"},
		{CodeQuerySyntax, 10, 41, "write a number as a JSON literal in backticks, as in `1`"},
	}
	f, pd := parser.Parse("w.yaml", []byte(src))
	_, cd := Check([]*parser.File{f}, Options{})
	diags := append(pd, cd...)
	if len(diags) != len(cases) {
		t.Fatalf("Check gave %d diagnostics; want %d:\n%v", len(diags), len(cases), diags)
	}
	for i, c := range cases {
		d := diags[i]
		if d.Code != c.code || d.Pos.Line != c.line || d.Pos.Col != c.col || !strings.Contains(strings.Join(d.Detail, "\n"), c.detail) {
			t.Errorf("diagnostic %d = %s %d:%d %q %q; want %s %d:%d with detail %q", i, d.Code, d.Pos.Line, d.Pos.Col, d.Message, d.Detail, c.code, c.line, c.col, c.detail)
		}
	}
}
