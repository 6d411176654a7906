package checker

import (
	"strings"
	"testing"
	"text/template"
	"text/template/parse"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// walkRefs parses src and returns the references refWalker finds.
func walkRefs(t *testing.T, src string) []ref {
	t.Helper()
	tmpl, err := template.New("t").Funcs(stubFuncs()).Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	wk := &refWalker{defined: map[string]bool{"t": true}}
	wk.node(tmpl.Tree.Root, true, true)
	return wk.refs
}

func TestRefWalker(t *testing.T) {
	type r = ref
	tests := []struct {
		src  string
		want []ref
	}{
		{`{{.steps.a.output}}`, []ref{{path: []string{"steps", "a", "output"}, off: 2, optionalFrom: 3}}},
		{`x {{ .params.p }} y`, []ref{{path: []string{"params", "p"}, off: 5, optionalFrom: 2}}},
		{`{{.x}}`, []ref{{path: []string{"x"}, off: 2, optionalFrom: 1}}},
		{`ab {{ $.steps.a.output.f }}`, []ref{{path: []string{"steps", "a", "output", "f"}, off: 6, optionalFrom: 4}}},
		{`{{(fromJson .steps.a.output.text).user.name}}`, []ref{{path: []string{"steps", "a", "output", "text"}, off: 12, optionalFrom: 4}}},
		{`{{(.steps.a.output).f}}`, []ref{{path: []string{"steps", "a", "output", "f"}, off: 3, optionalFrom: 4}}},
		{`{{index .steps "a-b" "output" "f"}}`, []ref{{path: []string{"steps", "a-b", "output", "f"}, off: 8, optionalFrom: 1, indexed: true}}},
		{`{{index .steps.a.output "f"}}`, []ref{{path: []string{"steps", "a", "output", "f"}, off: 8, optionalFrom: 3, indexed: true}}},
		{`{{index .steps.a.output .params.k}}`, []ref{
			{path: []string{"steps", "a", "output"}, off: 8, optionalFrom: 3, indexed: true},
			{path: []string{"params", "k"}, off: 24, optionalFrom: 2},
		}},
		// with and range rebind dot: the body's .output is not a reference,
		// but $ still is, and the else branch keeps the outer dot.
		{`{{with .steps.a}}{{.output}}{{$.vars.v}}{{else}}{{.params.p}}{{end}}`, []ref{
			{path: []string{"steps", "a"}, off: 7, optionalFrom: 2},
			{path: []string{"vars", "v"}, off: 30, optionalFrom: 2},
			{path: []string{"params", "p"}, off: 50, optionalFrom: 2},
		}},
		{`{{range $i, $x := .params.list}}{{$x.name}}{{.name}}{{end}}`, []ref{{path: []string{"params", "list"}, off: 18, optionalFrom: 2}}},
		{`{{if and (eq .steps.a.status "completed") (gt (len .steps.a.output.items) 0)}}ok{{end}}`, []ref{
			{path: []string{"steps", "a", "status"}, off: 13, optionalFrom: 3},
			{path: []string{"steps", "a", "output", "items"}, off: 51, optionalFrom: 4},
		}},
		{`{{ .steps.a.output | json }}`, []ref{{path: []string{"steps", "a", "output"}, off: 3, optionalFrom: 3}}},
		{`{{ $x := .steps.a }}{{ $x.output.f }}`, []ref{{path: []string{"steps", "a"}, off: 9, optionalFrom: 2}}},
		{`{{.}}{{json .}}`, nil},
		{"line1\n  {{ .timestamp }}", []ref{{path: []string{"timestamp"}, off: 11, optionalFrom: 1}}},
	}
	for _, tt := range tests {
		got := walkRefs(t, tt.src)
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(r{})); diff != "" {
			t.Errorf("refs of %q differ (-want +got):\n%s", tt.src, diff)
		}
		for _, g := range got {
			if !strings.HasPrefix(tt.src[g.off:], "."+g.path[0]) && !strings.HasPrefix(tt.src[g.off:], "$") && !strings.HasPrefix(tt.src[g.off:], "(") {
				t.Errorf("ref %v of %q starts at %q, not at the reference", g.path, tt.src, tt.src[g.off:])
			}
		}
	}
}

func TestSyntaxOffset(t *testing.T) {
	tests := []struct {
		src  string
		want string // the text at the reported offset
	}{
		{`{{.steps.my-id.output}}`, "-id.output}}"},
		{`hello {{.params.p`, "{{.params.p"},
		{`a {{ nope .x }}`, "nope .x }}"},
		{"first\nsecond {{ if }}{{end}}", "if }}{{end}}"},
		{`{{ .x @ }}`, "@ }}"},
		{`{{ eq .x "open }}`, `"open }}`},
		{`{{ .x }} {{ end }}`, "end }}"},
		{`{{ (.x }}`, "(.x }}"},
		{`{{ .a.1x }}`, ".1x }}"},
	}
	for _, tt := range tests {
		_, err := template.New("t").Funcs(stubFuncs()).Parse(tt.src)
		if err != nil {
			var line int
			msg := err.Error()
			if m := syntaxPrefixRE().FindStringSubmatch(msg); m != nil {
				line = atoi(m[1])
				msg = msg[len(m[0]):]
			}
			if m := startedAtRE().FindStringSubmatch(msg); m != nil {
				line = atoi(m[1])
				msg = strings.Replace(msg, m[0], "", 1)
			}
			off := syntaxOffset(tt.src, line, msg)
			if got := tt.src[off:]; got != tt.want {
				t.Errorf("syntaxOffset(%q, %q) points at %q; want %q", tt.src, msg, got, tt.want)
			}
			continue
		}
		t.Errorf("Parse(%q) succeeded; want a syntax error", tt.src)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestParseFuncsMatchTemplate checks that parsing with parse.Parse and
// parseFuncs, as parseTemplate does, accepts and rejects exactly what
// text/template's Template.Parse does, with the same messages and trees.
func TestParseFuncsMatchTemplate(t *testing.T) {
	srcs := []string{
		`{{.steps.a.output}}`,
		`{{json .params | quote}} {{fromJson "x"}}`,
		`{{and 1 2}}{{or 1 2}}{{not 1}}{{len "x"}}{{index .a 1}}{{slice "ab" 1}}`,
		`{{call .f}}{{html "x"}}{{js "x"}}{{urlquery "x"}}{{print 1}}{{printf "%d" 1}}{{println 1}}`,
		`{{eq 1 1}}{{ne 1 2}}{{lt 1 2}}{{le 1 2}}{{gt 2 1}}{{ge 2 1}}`,
		`{{toJson .x}}`,
		`{{define "d"}}{{.x}}{{end}}{{template "d" .}}`,
		`{{define "t"}}inner{{end}}`,
		`{{.x`,
		`{{if}}{{end}}`,
		`{{range .x}}{{break}}{{end}}`,
	}
	for _, src := range srcs {
		tmpl, wantErr := template.New("t").Funcs(stubFuncs()).Parse(src)
		trees, gotErr := parse.Parse("t", src, "", "", parseFuncs)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("parse.Parse(%q) error = %v; want %v", src, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			continue
		}
		want := map[string]string{}
		for _, d := range tmpl.Templates() {
			want[d.Name()] = d.Tree.Root.String()
		}
		got := map[string]string{}
		for name, tr := range trees {
			got[name] = tr.Root.String()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("parse.Parse(%q) trees differ from Template.Parse (-want +got):\n%s", src, diff)
		}
	}
}

// stubFuncs gives text/template the workflow function names, for tests
// that compare the checker's parse with text/template's own.
func stubFuncs() template.FuncMap {
	m := template.FuncMap{}
	for _, name := range ir.TemplateFuncs {
		m[name] = func(...any) any { return nil }
	}
	return m
}
