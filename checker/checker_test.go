package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/parser"
)

// checkSources parses and checks several in-memory files together.
func checkSources(t *testing.T, opts Options, files ...[2]string) diag.List {
	t.Helper()
	var parsed []*parser.File
	var all diag.List
	for _, f := range files {
		pf, pd := parser.Parse(f[0], []byte(f[1]))
		all = append(all, pd...)
		parsed = append(parsed, pf)
	}
	_, cd := Check(parsed, opts)
	return append(all, cd...)
}

func TestCycleDetail(t *testing.T) {
	src := `compositeTools:
  - name: cyc
    description: three steps in a ring
    steps:
      - id: a
        tool: x.y
        dependsOn: [c]
      - id: b
        tool: x.y
        dependsOn: [a]
      - id: c
        tool: x.y
        dependsOn:
          - b
`
	diags := checkSources(t, Options{}, [2]string{"ring.yaml", src})
	if len(diags) != 1 {
		t.Fatalf("Check(ring) = %v; want one dependency_cycle", diags)
	}
	d := diags[0]
	want := diag.Diagnostic{
		Severity: diag.Error,
		Pos:      d.Pos,
		Path:     d.Path,
		Code:     CodeDependencyCycle,
		Message:  "dependency cycle: a -> c -> b -> a",
		Detail: []string{
			"a depends on c (ring.yaml:7:21)",
			"c depends on b (ring.yaml:14:13)",
			"b depends on a (ring.yaml:10:21)",
			"break the cycle: remove one of these dependsOn entries, or the template read that needs it",
		},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("cycle diagnostic differs (-want +got):\n%s", diff)
	}
	if d.Pos.Line != 7 || d.Pos.Col != 21 {
		t.Errorf("cycle reported at %s; want ring.yaml:7:21 (a's dependsOn entry)", d.Pos)
	}
}

func TestDuplicateWorkflowAcrossFiles(t *testing.T) {
	one := "compositeTools:\n  - name: same\n    description: first\n    steps: [{id: a, tool: x.y}]\n"
	two := "compositeTools:\n  - name: other\n    description: fine\n    steps: [{id: a, tool: x.y}]\n  - name: same\n    description: second\n    steps: [{id: a, tool: x.y}]\n"
	diags := checkSources(t, Options{}, [2]string{"one.yaml", one}, [2]string{"two.yaml", two})
	if len(diags) != 1 {
		t.Fatalf("Check(one, two) = %v; want one duplicate_workflow", diags)
	}
	d := diags[0]
	if d.Code != CodeDuplicateWorkflow || d.Pos.File != "two.yaml" || d.Pos.Line != 5 ||
		!strings.Contains(d.Message, "already defined at one.yaml:2:11") {
		t.Errorf("got %s %s: %s; want duplicate_workflow at two.yaml:5 pointing to one.yaml:2:11", d.Pos, d.Code, d.Message)
	}
}

func TestSchemaTooLarge(t *testing.T) {
	big := strings.Repeat("x", 101*1024)
	src := fmt.Sprintf("compositeTools:\n  - name: big\n    description: d\n    steps:\n      - id: ask\n        type: elicitation\n        message: m\n        schema: {type: object, description: %q}\n", big)
	diags := checkSources(t, Options{}, [2]string{"big.yaml", src})
	if len(diags) != 1 || diags[0].Code != CodeSchemaTooLarge || diags[0].Pos.Line != 8 {
		t.Errorf("Check(big schema) = %v; want one schema_too_large on line 8", diags)
	}
}

// TestInvalidWorkflowsAreDropped checks that only workflows without errors
// are returned, and that warnings do not drop a workflow.
func TestInvalidWorkflowsAreDropped(t *testing.T) {
	src := `compositeTools:
  - name: good
    description: fine
    steps: [{id: a, tool: x.y}]
  - name: bad
    description: broken
    steps: [{id: a, tool: ".nodot"}]
  - name: warned
    description: only a warning
    steps: [{id: a-b, tool: x.y}]
  - name: typo
    description: an unknown key makes the workflow invalid
    steps: [{id: a, tool: x.y, dependOn: []}]
`
	f, pd := parser.Parse("mixed.yaml", []byte(src))
	wfs, diags := Check([]*parser.File{f}, Options{})
	diags = append(pd, diags...)
	var names []string
	for _, w := range wfs {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"good", "warned"}, names); diff != "" {
		t.Errorf("returned workflows differ (-want +got):\n%s", diff)
	}
	var codes []string
	for _, d := range diags {
		codes = append(codes, d.Code)
	}
	if diff := cmp.Diff([]string{CodeUnknownField, CodeInvalidToolRef, CodeStepIDHyphen}, codes); diff != "" {
		t.Errorf("diagnostic codes differ (-want +got):\n%s", diff)
	}
}

// TestHints checks the detail lines that explain how to fix a problem.
func TestHints(t *testing.T) {
	src := `compositeTools:
  - name: hints
    description: d
    steps:
      - id: my-id
        tool: x.y
      - id: reader
        tool: x.y
        dependsOn: [my-id]
        arguments:
          a: "{{.steps.my-id.output}}"
          b: "{{index .steps \"my-id\" \"output\" \"f\"}}"
      - id: racy
        tool: x.y
        dependsOn: [reader]
        arguments:
          c: "{{.steps.my_id.output}}"
`
	diags := checkSources(t, Options{}, [2]string{"hints.yaml", src})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d %s %v", d.Pos.Line, d.Pos.Col, d.Code, d.Detail))
	}
	want := []string{
		`5:13 step_id_hyphen []`,
		`11:26 template_syntax [step ids containing '-' cannot be written as fields; use {{index .steps "my-id" "output"}} or rename the step my_id]`,
		`17:17 unknown_step []`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hints differ (-want +got):\n%s", diff)
	}
	for _, d := range diags {
		if d.Code == CodeUnknownStep && !strings.HasSuffix(d.Message, "did you mean my-id?") {
			t.Errorf("unknown_step message %q; want a suggestion of my-id", d.Message)
		}
	}
}

func TestParamHyphenHint(t *testing.T) {
	src := "compositeTools:\n  - name: p\n    description: d\n    parameters:\n      my-param: {type: string}\n    steps:\n      - id: a\n        tool: x.y\n        arguments:\n          ok: \"{{index .params \\\"my-param\\\"}}\"\n          bad: \"{{.params.my-param}}\"\n"
	diags := checkSources(t, Options{}, [2]string{"p.yaml", src})
	if len(diags) != 1 || diags[0].Code != CodeTemplateSyntax || diags[0].Pos.Line != 11 {
		t.Fatalf("Check = %v; want one template_syntax error on line 11", diags)
	}
	want := []string{`parameter names containing '-' cannot be written as fields; use {{index .params "my-param"}} or rename the parameter my_param`}
	if diff := cmp.Diff(want, diags[0].Detail); diff != "" {
		t.Errorf("hint differs (-want +got):\n%s", diff)
	}
}
