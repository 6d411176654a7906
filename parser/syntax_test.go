package parser

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		want      []string // "line:col message"
		workflows []string // names of the workflows still parsed
	}{
		{"unclosed flow sequence", "name: a\nsteps: [1, 2\nb: 3\n",
			[]string{"3:1 invalid YAML: ',' or ']' must be specified"}, nil},
		{"unclosed double quote", "name: \"abc\nsteps: []\n",
			[]string{"1:7 invalid YAML: could not find end character of double-quoted text"}, nil},
		{"bad indentation", "steps:\n  - id: a\n tool: b\n",
			[]string{"3:2 invalid YAML: value not allowed here (check the indentation)"}, nil},
		{"colon in plain value", "steps:\n  - id: a\n    message: note: this\n",
			[]string{"3:14 invalid YAML: unexpected ':' (a value that contains \": \" must be quoted)"}, nil},
		{"unquoted template", "steps:\n  - id: a\n    condition: {{.params.x}}\n",
			[]string{"3:16 invalid YAML: a value that starts with {{ must be quoted"}, nil},
		{"errors in two documents, others kept", "name: one\nsteps: []\n---\nname: two\nsteps:\n  - id: a\n    arguments: {x: {{.params.x}}}\n---\nname: three\nsteps: []\n---\nname: 'four\n---\nname: five\nsteps: []\n",
			[]string{
				"7:20 invalid YAML: a value that starts with {{ must be quoted",
				"12:7 invalid YAML: could not find end character of single-quoted text",
			}, []string{"one", "three", "five"}},
		{"tab indentation", "steps:\n\t- id: a\n",
			[]string{"2:1 invalid YAML: tab characters cannot be used for indentation"}, nil},
		{"tab before a key", "name: x\n\tsteps: []\n",
			[]string{"2:1 invalid YAML: tab characters cannot be used for indentation"}, nil},
		{"reserved character", "steps:\n  - id: @x\n",
			[]string{"2:9 invalid YAML: '@' is a reserved character"}, nil},
		{"unclosed JSON", "{\n  \"name\": \"j\",\n  \"steps\": [\n",
			[]string{"3:12 invalid YAML: sequence end token ']' not found"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Parse("s.yaml", []byte(tc.src))
			var got []string
			for _, d := range diags {
				if d.Code != CodeSyntax {
					t.Errorf("diagnostic %v has code %s; want %s", d, d.Code, CodeSyntax)
				}
				if strings.ContainsAny(d.Message, "\n^|") || strings.Contains(d.Message, "[") {
					t.Errorf("message %q keeps go-yaml's decoration", d.Message)
				}
				got = append(got, d.Pos.String()[len("s.yaml:"):]+" "+d.Message)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) diagnostics (-want +got):\n%s", tc.src, diff)
			}
			var names []string
			for _, w := range f.Workflows {
				s, _ := w.Name.Str()
				names = append(names, s)
			}
			if diff := cmp.Diff(tc.workflows, names); diff != "" {
				t.Errorf("Parse(%q) workflows (-want +got):\n%s", tc.src, diff)
			}
		})
	}
}

func TestUnquotedTemplateHint(t *testing.T) {
	_, diags := Parse("s.yaml", []byte("steps:\n  - id: a\n    condition: {{.params.x}}\n"))
	if len(diags) != 1 || len(diags[0].Detail) != 1 || !strings.Contains(diags[0].Detail[0], `"{{...}}"`) {
		t.Errorf("diagnostics = %+v; want one with a hint to quote the template", diags)
	}
}
