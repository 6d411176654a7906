package parser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/spell"
)

// summary is what a format test compares: the workflows found, the
// documents skipped and the diagnostic codes (with lines).
type summary struct {
	Workflows []string // "name resource=R doc=D steps=N"
	Skipped   []string // "Kind Name @line"
	Diags     []string // "code @line:col"
}

func summarize(f *File, diags diag.List) summary {
	var s summary
	for _, w := range f.Workflows {
		name, _ := w.Name.Str()
		s.Workflows = append(s.Workflows, fmt.Sprintf("%s resource=%s doc=%d steps=%d", name, w.Resource, w.Doc, len(w.Steps)))
	}
	for _, k := range f.Skipped {
		s.Skipped = append(s.Skipped, fmt.Sprintf("%s %s @%d", k.Kind, k.Name, k.Pos.Line))
	}
	for _, d := range diags {
		s.Diags = append(s.Diags, fmt.Sprintf("%s @%d:%d", d.Code, d.Pos.Line, d.Pos.Col))
	}
	return s
}

const k8sHeader = `apiVersion: toolhive.stacklok.dev/v1alpha1
kind: VirtualMCPCompositeToolDefinition
metadata:
  name: res-a
spec:
  name: wf_a
  description: A
  steps:
    - id: s1
      tool: b.t
`

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want summary
	}{
		{"kubernetes v1alpha1", k8sHeader, summary{Workflows: []string{"wf_a resource=res-a doc=0 steps=1"}}},
		{"kubernetes v1beta1 stream with other kinds", `# leading comment
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: MCPServer
metadata:
  name: fetch
spec:
  image: x
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPCompositeToolDefinition
metadata: {name: res-b}
spec:
  name: wf_b
  steps: [{id: a, tool: x.y}, {id: b, tool: x.z}]
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPServer
metadata:
  name: vmcp
---
`, summary{
			Workflows: []string{"wf_b resource=res-b doc=1 steps=2"},
			Skipped:   []string{"MCPServer fetch @3", "VirtualMCPServer vmcp @17", "empty document  @21"},
		}},
		{"kubernetes bad apiVersion", strings.Replace(k8sHeader, "v1alpha1", "v2", 1),
			summary{Diags: []string{"unsupported_api_version @1:13"}}},
		{"kubernetes without spec", "apiVersion: toolhive.stacklok.dev/v1beta1\nkind: VirtualMCPCompositeToolDefinition\nmetadata: {name: r}\n",
			summary{Diags: []string{"missing_spec @1:1"}}},
		{"config compositeTools", `name: my-vmcp
backends:
  github: {command: gh}
server: {transport: stdio}
compositeTools:
  - name: one
    steps: [{id: a, tool: github.x}]
  - name: two
    description: second
    steps:
      - id: a
        tool: github.y
`, summary{Workflows: []string{"one resource= doc=0 steps=1", "two resource= doc=0 steps=1"}}},
		{"config composite_tools", "composite_tools:\n- name: old\n  steps: []\n", summary{Workflows: []string{"old resource= doc=0 steps=0"}}},
		{"config both spellings", "compositeTools:\n- {name: a, steps: []}\ncomposite_tools:\n- {name: b, steps: []}\n",
			summary{Workflows: []string{"a resource= doc=0 steps=0"}, Diags: []string{"duplicate_field @3:1"}}},
		{"config empty list", "backends: {}\ncompositeTools: []\n", summary{Skipped: []string{SkippedEmptyConfig + "  @1"}}},
		{"config without compositeTools", "name: x\nbackends:\n  a: {url: http://x}\n# compositeTools:\n#   - name: y\n",
			summary{Skipped: []string{SkippedConfig + "  @1"}}},
		{"config entry not a mapping", "compositeTools:\n  - just-a-name\n  - {name: b, steps: []}\n",
			summary{Workflows: []string{"b resource= doc=0 steps=0"}, Diags: []string{"not_a_mapping @2:5"}}},
		{"config compositeTools not a list", "compositeTools: {name: a}\n", summary{Diags: []string{"not_a_sequence @1:17"}}},
		{"bare workflow", "name: bare\ndescription: d\nsteps:\n  - id: a\n    tool: b.c\n", summary{Workflows: []string{"bare resource= doc=0 steps=1"}}},
		{"bare workflows in a stream", "name: one\nsteps: []\n---\nname: two\nsteps: [{id: x}]\n...\n---\nname: three\nsteps: []\n",
			summary{Workflows: []string{"one resource= doc=0 steps=0", "two resource= doc=1 steps=1", "three resource= doc=2 steps=0"}}},
		{"JSON kubernetes", `{
  "apiVersion": "toolhive.stacklok.dev/v1beta1",
  "kind": "VirtualMCPCompositeToolDefinition",
  "metadata": {"name": "json-res"},
  "spec": {"name": "json_wf", "steps": [{"id": "a", "tool": "b.c"}]}
}
`, summary{Workflows: []string{"json_wf resource=json-res doc=0 steps=1"}}},
		{"JSON config", `{"compositeTools": [{"name": "j1", "steps": []}, {"name": "j2", "steps": [{"id": "x"}]}]}`,
			summary{Workflows: []string{"j1 resource= doc=0 steps=0", "j2 resource= doc=0 steps=1"}}},
		{"JSON bare", `{"name": "jb", "steps": [{"id": "a"}, {"id": "b"}]}`, summary{Workflows: []string{"jb resource= doc=0 steps=2"}}},
		{"empty file", "", summary{}},
		{"comments only", "# nothing here\n\n# at all\n", summary{}},
		{"explicit empty document", "---\n", summary{Skipped: []string{SkippedEmpty + "  @1"}}},
		{"null document", "--- ~\n", summary{Skipped: []string{SkippedEmpty + "  @1"}}},
		{"other mapping", "spec:\n  steps: []\n", summary{Skipped: []string{SkippedOther + "  @1"}}},
		{"sequence document", "- id: a\n  tool: b.c\n", summary{Diags: []string{"not_a_mapping @1:1"}}},
		{"scalar document", "just text\n", summary{Diags: []string{"not_a_mapping @1:1"}}},
		{"other kind without name", "kind: ConfigMap\ndata: {}\n", summary{Skipped: []string{"ConfigMap  @1"}}},
		{"kubernetes duplicate spec", k8sHeader + "spec: {name: other, steps: []}\n",
			summary{Workflows: []string{"wf_a resource=res-a doc=0 steps=1"}, Diags: []string{"duplicate_key @11:1"}}},
		{"config duplicate compositeTools", "compositeTools: [{name: a, steps: []}]\nbackends: {}\nbackends: {}\ncompositeTools: []\n",
			summary{Workflows: []string{"a resource= doc=0 steps=0"}, Diags: []string{"duplicate_key @4:1"}}},
		{"bare duplicate steps", "steps: []\nname: a\nsteps: [{id: x}]\n",
			summary{Workflows: []string{"a resource= doc=0 steps=0"}, Diags: []string{"duplicate_key @3:1"}}},
		{"byte-order mark", "\xef\xbb\xbfname: bom\nsteps: []\n", summary{Workflows: []string{"bom resource= doc=0 steps=0"}}},
		{"anchored document", "&root\nname: a\nsteps: []\n", summary{Workflows: []string{"a resource= doc=0 steps=0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Parse("f.yaml", []byte(tc.src))
			if diff := cmp.Diff(tc.want, summarize(f, diags)); diff != "" {
				t.Errorf("Parse(%q) summary (-want +got):\n%s\ndiagnostics: %v", tc.src, diff, diags)
			}
			if f.Name != "f.yaml" || string(f.Src) != tc.src {
				t.Errorf("Parse kept name %q and %d source bytes; want f.yaml and %d bytes", f.Name, len(f.Src), len(tc.src))
			}
		})
	}
}

func TestStepListHint(t *testing.T) {
	_, diags := Parse("f.yaml", []byte("- id: a\n  tool: b.c\n"))
	if len(diags) != 1 || len(diags[0].Detail) != 1 || !strings.Contains(diags[0].Detail[0], "steps:") {
		t.Errorf("diagnostics = %+v; want not_a_mapping with a hint to put the list under steps:", diags)
	}
	_, diags = Parse("f.yaml", []byte("- just\n- strings\n"))
	if len(diags) != 1 || len(diags[0].Detail) != 0 {
		t.Errorf("diagnostics = %+v; want not_a_mapping without the steps hint", diags)
	}
}

func TestByteOrderMark(t *testing.T) {
	f, diags := Parse("f.yaml", []byte("\xef\xbb\xbfname: 'x {{.a}}'\nsteps: []\n"))
	if len(diags) > 0 || len(f.Workflows) != 1 {
		t.Fatalf("Parse = %d workflows, %v", len(f.Workflows), diags)
	}
	n := f.Workflows[0].Name
	if got := n.OffsetPos(2).String(); n.Pos.String() != "f.yaml:1:7" || got != "f.yaml:1:10" {
		t.Errorf("name at %v, template at %s; want 1:7 and 1:10 (columns as an editor shows them)", n.Pos, got)
	}
}

func TestInvalidUTF8(t *testing.T) {
	f, diags := Parse("f.yaml", []byte("name: ok\nsteps:\n  - id: \"a\xffb\"\n"))
	got := summarize(f, diags).Diags
	if diff := cmp.Diff([]string{"invalid_utf8 @3:11"}, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

func TestPositionsNameTheFile(t *testing.T) {
	f, diags := Parse("dir/sub/f.yaml", []byte("name: a\nsteps: [{id: x, tool: 1}]\nbad: [\n"))
	if f.Name != "dir/sub/f.yaml" {
		t.Errorf("File.Name = %q; want dir/sub/f.yaml", f.Name)
	}
	for _, d := range diags {
		if d.Pos.File != f.Name {
			t.Errorf("diagnostic %v names file %q; want %q", d, d.Pos.File, f.Name)
		}
	}
	if len(diags) == 0 {
		t.Error("no diagnostic for the unclosed sequence")
	}
}

// workflowGetters reads each workflow field by canonical name.
var workflowGetters = map[string]func(*Workflow) *Node{
	"name":        func(w *Workflow) *Node { return w.Name },
	"description": func(w *Workflow) *Node { return w.Description },
	"parameters":  func(w *Workflow) *Node { return w.Parameters },
	"timeout":     func(w *Workflow) *Node { return w.Timeout },
	"failureMode": func(w *Workflow) *Node { return w.FailureMode },
	"maxParallel": func(w *Workflow) *Node { return w.MaxParallel },
	"vars":        func(w *Workflow) *Node { return w.Vars },
	"output": func(w *Workflow) *Node {
		if w.Output == nil {
			return nil
		}
		return w.Output.Node
	},
	"annotations": func(w *Workflow) *Node { return w.Annotations },
	"steps":       func(w *Workflow) *Node { return w.StepsNode },
	"finally":     func(w *Workflow) *Node { return w.FinallyNode },
}

var stepGetters = map[string]func(*Step) *Node{
	"id":             func(s *Step) *Node { return s.ID },
	"type":           func(s *Step) *Node { return s.Type },
	"tool":           func(s *Step) *Node { return s.Tool },
	"arguments":      func(s *Step) *Node { return s.Arguments },
	"dependsOn":      func(s *Step) *Node { return s.DependsOn },
	"condition":      func(s *Step) *Node { return s.Condition },
	"onError":        func(s *Step) *Node { return respNode(s.OnError) },
	"timeout":        func(s *Step) *Node { return s.Timeout },
	"defaultResults": func(s *Step) *Node { return s.DefaultResults },
	"message":        func(s *Step) *Node { return s.Message },
	"schema":         func(s *Step) *Node { return s.Schema },
	"onDecline":      func(s *Step) *Node { return respNode(s.OnDecline) },
	"onCancel":       func(s *Step) *Node { return respNode(s.OnCancel) },
	"collection":     func(s *Step) *Node { return s.Collection },
	"itemVar":        func(s *Step) *Node { return s.ItemVar },
	"maxParallel":    func(s *Step) *Node { return s.MaxParallel },
	"maxIterations":  func(s *Step) *Node { return s.MaxIterations },
	"workflow":       func(s *Step) *Node { return s.Workflow },
	"idempotent":     func(s *Step) *Node { return s.Idempotent },
	"step": func(s *Step) *Node {
		if s.Inner == nil {
			return nil
		}
		return s.Inner.Node
	},
	"steps": func(s *Step) *Node { return s.StepsNode },
	"output": func(s *Step) *Node {
		if s.Output == nil {
			return nil
		}
		return s.Output.Node
	},
}

func respNode(r interface{ node() *Node }) *Node {
	if r == nil {
		return nil
	}
	return r.node()
}

func (o *OnError) node() *Node {
	if o == nil {
		return nil
	}
	return o.Node
}

func (r *Response) node() *Node {
	if r == nil {
		return nil
	}
	return r.Node
}

// TestFieldSpellings writes every workflow and step field in camelCase and
// in snake_case and checks that it lands in its place, with the path as
// written.
func TestFieldSpellings(t *testing.T) {
	if len(workflowGetters) != len(workflowFields.known) || len(stepGetters) != len(stepFields.known) {
		t.Fatalf("getter tables cover %d/%d workflow and %d/%d step fields",
			len(workflowGetters), len(workflowFields.known), len(stepGetters), len(stepFields.known))
	}
	for _, field := range workflowFields.known {
		for _, key := range uniq(field, spell.Snake(field)) {
			src := fmt.Sprintf("steps: []\n%s: {}\n", key)
			if field == "steps" {
				src = fmt.Sprintf("%s: []\n", key)
			}
			f, diags := Parse("f.yaml", []byte(src))
			if len(diags) > 0 || len(f.Workflows) != 1 {
				t.Fatalf("Parse(%q) = %d workflows, %v", src, len(f.Workflows), diags)
			}
			n := workflowGetters[field](f.Workflows[0])
			if n == nil || n.Path != key {
				t.Errorf("Parse(%q): workflow field %s = %+v; want the node at path %s", src, field, n, key)
			}
			if len(f.Unknown) != 0 {
				t.Errorf("Parse(%q): unknown keys %+v", src, f.Unknown)
			}
		}
	}
	for _, field := range stepFields.known {
		for _, key := range uniq(field, spell.Snake(field)) {
			src := fmt.Sprintf("steps:\n  - id: a\n    %s: {}\n", key)
			if field == "id" {
				src = fmt.Sprintf("steps:\n  - %s: {}\n", key)
			}
			f, diags := Parse("f.yaml", []byte(src))
			if len(diags) > 0 || len(f.Workflows) != 1 || len(f.Workflows[0].Steps) != 1 {
				t.Fatalf("Parse(%q) gave %v", src, diags)
			}
			n := stepGetters[field](f.Workflows[0].Steps[0])
			if want := "steps[0]." + key; n == nil || n.Path != want {
				t.Errorf("Parse(%q): step field %s = %+v; want the node at path %s", src, field, n, want)
			}
			if len(f.Unknown) != 0 {
				t.Errorf("Parse(%q): unknown keys %+v", src, f.Unknown)
			}
		}
	}
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func TestNestedObjects(t *testing.T) {
	tests := []struct {
		src  string
		get  func(w *Workflow) *Node
		path string
	}{
		{"onError: {action: retry}", func(w *Workflow) *Node { return w.Steps[0].OnError.Action }, "steps[0].onError.action"},
		{"on_error: {action: retry}", func(w *Workflow) *Node { return w.Steps[0].OnError.Action }, "steps[0].on_error.action"},
		{"onError: {maxRetries: 3}", func(w *Workflow) *Node { return w.Steps[0].OnError.MaxRetries }, "steps[0].onError.maxRetries"},
		{"onError: {max_retries: 3}", func(w *Workflow) *Node { return w.Steps[0].OnError.MaxRetries }, "steps[0].onError.max_retries"},
		{"onError: {retryCount: 3}", func(w *Workflow) *Node { return w.Steps[0].OnError.MaxRetries }, "steps[0].onError.retryCount"},
		{"onError: {retry_count: 3}", func(w *Workflow) *Node { return w.Steps[0].OnError.MaxRetries }, "steps[0].onError.retry_count"},
		{"onError: {retryDelay: 2s}", func(w *Workflow) *Node { return w.Steps[0].OnError.RetryDelay }, "steps[0].onError.retryDelay"},
		{"on_error: {retry_delay: 2s}", func(w *Workflow) *Node { return w.Steps[0].OnError.RetryDelay }, "steps[0].on_error.retry_delay"},
		{"onDecline: {action: skip_remaining}", func(w *Workflow) *Node { return w.Steps[0].OnDecline.Action }, "steps[0].onDecline.action"},
		{"on_decline: {action: continue}", func(w *Workflow) *Node { return w.Steps[0].OnDecline.Action }, "steps[0].on_decline.action"},
		{"onCancel: {action: abort}", func(w *Workflow) *Node { return w.Steps[0].OnCancel.Action }, "steps[0].onCancel.action"},
		{"on_cancel: {action: abort}", func(w *Workflow) *Node { return w.Steps[0].OnCancel.Action }, "steps[0].on_cancel.action"},
		{"step: {tool: a.b, arguments: {x: 1}}", func(w *Workflow) *Node { return w.Steps[0].Inner.Arguments }, "steps[0].step.arguments"},
		{"step: {tool: a.b, onError: {action: continue}}", func(w *Workflow) *Node { return w.Steps[0].Inner.OnError.Action }, "steps[0].step.onError.action"},
		{"item_var: x", func(w *Workflow) *Node { return w.Steps[0].ItemVar }, "steps[0].item_var"},
		{"max_iterations: 5", func(w *Workflow) *Node { return w.Steps[0].MaxIterations }, "steps[0].max_iterations"},
		{"default_results: {a: 1}", func(w *Workflow) *Node { return w.Steps[0].DefaultResults }, "steps[0].default_results"},
		{"depends_on: [x]", func(w *Workflow) *Node { return w.Steps[0].DependsOn.Items[0] }, "steps[0].depends_on[0]"},
	}
	for _, tc := range tests {
		src := "steps:\n  - id: s\n    " + tc.src + "\n"
		f, diags := Parse("f.yaml", []byte(src))
		if len(diags) > 0 || len(f.Unknown) > 0 {
			t.Fatalf("Parse(%q): %v, unknown %+v", src, diags, f.Unknown)
		}
		if n := tc.get(f.Workflows[0]); n == nil || n.Path != tc.path {
			t.Errorf("Parse(%q): got %+v; want a node at %s", src, n, tc.path)
		}
	}
}

func TestOutput(t *testing.T) {
	src := `steps: []
output:
  properties:
    summary:
      type: string
      description: the summary
      value: "{{.steps.a.output.text}}"
    details:
      type: object
      properties:
        count: {type: integer, value: "{{.steps.a.output.n}}", default: 0}
      required: [count]
  required: [summary]
`
	f, diags := Parse("f.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	o := f.Workflows[0].Output
	if o == nil || len(o.Properties) != 2 {
		t.Fatalf("Output = %+v; want two properties", o)
	}
	got := []string{}
	var walk func(prefix string, ps []*OutputProperty)
	walk = func(prefix string, ps []*OutputProperty) {
		for _, p := range ps {
			typ, _ := p.Type.Str()
			got = append(got, fmt.Sprintf("%s%s:%s@%d:%d value=%v default=%v required=%v", prefix, p.Name, typ,
				p.KeyPos.Line, p.KeyPos.Col, p.Value != nil, p.Default.Interface(), p.Required.Interface()))
			walk(prefix+p.Name+".", p.Properties)
		}
	}
	walk("", o.Properties)
	want := []string{
		"summary:string@4:5 value=true default=<nil> required=<nil>",
		"details:object@8:5 value=false default=<nil> required=[count]",
		"details.count:integer@11:9 value=true default=0 required=<nil>",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output properties (-want +got):\n%s", diff)
	}
	if p := o.Properties[1].Properties[0].Value.Path; p != "output.properties.details.properties.count.value" {
		t.Errorf("nested value path = %q", p)
	}
	if o.Required.Path != "output.required" || o.PropertiesNode.Path != "output.properties" {
		t.Errorf("output paths = %q, %q", o.Required.Path, o.PropertiesNode.Path)
	}
}

func TestUnknownKeys(t *testing.T) {
	src := `name: w
descripton: typo
steps:
  - id: a
    dependOn: [b]
    onError: {action: retry, max_retry: 3}
    step: {tool: x.y, argument: {}}
    onDecline: {actoin: abort}
output:
  properties:
    p: {typ: string}
  require: []
`
	f, diags := Parse("f.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var got []string
	for _, u := range f.Unknown {
		got = append(got, fmt.Sprintf("%s %s %s @%d:%d known=%d", u.Object, u.Key, u.Path, u.Pos.Line, u.Pos.Col, len(u.Known)))
	}
	want := []string{
		"workflow descripton descripton @2:1 known=11",
		"step dependOn steps[0].dependOn @5:5 known=22",
		"onError max_retry steps[0].onError.max_retry @6:30 known=7",
		"step argument steps[0].step.argument @7:23 known=22",
		"onDecline actoin steps[0].onDecline.actoin @8:17 known=1",
		"output property typ output.properties.p.typ @11:9 known=6",
		"output require output.require @12:3 known=2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unknown (-want +got):\n%s", diff)
	}
	if k := f.Unknown[1].Known; !contains(k, "dependsOn") || contains(k, "depends_on") {
		t.Errorf("Known for a step = %v; want canonical camelCase names", k)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDuplicates(t *testing.T) {
	tests := []struct {
		src   string
		codes []string
		check func(w *Workflow) string
	}{
		{"steps:\n  - id: a\n    dependsOn: [x]\n    depends_on: [y]\n", []string{"duplicate_field @4:5"},
			func(w *Workflow) string { return fmt.Sprint(w.Steps[0].DependsOn.Interface()) }},
		{"steps:\n  - id: a\n    onError: {maxRetries: 1, retryCount: 2}\n", []string{"duplicate_field @3:30"},
			func(w *Workflow) string { return fmt.Sprint(w.Steps[0].OnError.MaxRetries.Interface()) }},
		{"steps:\n  - id: a\n    id: b\n", []string{"duplicate_key @3:5"},
			func(w *Workflow) string { return fmt.Sprint(w.Steps[0].ID.Interface()) }},
		{"steps:\n  - id: a\n    arguments: {x: 1, x: 2}\n", []string{"duplicate_key @3:23"},
			func(w *Workflow) string { return fmt.Sprint(w.Steps[0].Arguments.Interface()) }},
		{"max_parallel: 2\nmaxParallel: 3\nsteps: []\n", []string{"duplicate_field @2:1"},
			func(w *Workflow) string { return fmt.Sprint(w.MaxParallel.Interface()) }},
	}
	wants := []string{"[x]", "1", "a", "map[x:1]", "2"}
	for i, tc := range tests {
		f, diags := Parse("f.yaml", []byte(tc.src))
		if diff := cmp.Diff(tc.codes, summarize(f, diags).Diags); diff != "" {
			t.Errorf("Parse(%q) diagnostics (-want +got):\n%s", tc.src, diff)
			continue
		}
		if got := tc.check(f.Workflows[0]); got != wants[i] {
			t.Errorf("Parse(%q) kept %s; want the first value %s", tc.src, got, wants[i])
		}
		for _, d := range diags {
			if len(d.Detail) == 0 || !strings.Contains(d.Detail[0], "f.yaml:") {
				t.Errorf("diagnostic %v has no detail pointing at the first occurrence", d)
			}
		}
	}
}
