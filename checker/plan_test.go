package checker

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
	"github.com/vmcp-dev/vmcp/planner"
)

// TestCapsAreInThePlan: the caps the checker warns about are applied in
// the IR itself (the runtime trusts the plan and applies none): maxRetries
// over 10 becomes 10, an elicitation's wait over 10 minutes becomes 10
// minutes, and the defaults are written out.
func TestCapsAreInThePlan(t *testing.T) {
	src := `compositeTools:
  - name: caps
    description: d
    timeout: 1h
    steps:
      - {id: a, tool: svc.down, onError: {action: retry, maxRetries: 50}}
      - {id: ask, type: elicitation, message: Go?, timeout: 15m, schema: {type: object}}
      - id: loop
        type: forEach
        collection: "[1, 2]"
        step: {tool: svc.x}
`
	w := planOf(t, src, nil).Workflows[0]
	byID := map[string]*ir.Step{}
	for _, s := range w.Steps {
		byID[s.ID] = s
	}
	if got := byID["a"].OnError.MaxRetries; got != ir.MaxRetries {
		t.Errorf("maxRetries 50 is %d in the plan; want the cap %d", got, ir.MaxRetries)
	}
	if got := byID["ask"].Timeout.D(); got != ir.MaxElicitationTimeout {
		t.Errorf("elicitation timeout 15m is %s in the plan; want the cap %s", got, ir.MaxElicitationTimeout)
	}
	fe := byID["loop"].ForEach
	if fe.ItemVar != "item" || fe.MaxParallel != ir.DefaultMaxParallel || fe.MaxIterations != ir.DefaultMaxIterations || fe.Step.Timeout.D() != ir.DefaultStepTimeout {
		t.Errorf("loop defaults in the plan: itemVar %q, maxParallel %d, maxIterations %d, inner timeout %s; want item, %d, %d, %s",
			fe.ItemVar, fe.MaxParallel, fe.MaxIterations, fe.Step.Timeout.D(), ir.DefaultMaxParallel, ir.DefaultMaxIterations, ir.DefaultStepTimeout)
	}
}

// planOf checks and plans src (with cat, which may be nil) and returns the
// result as a plan that went through JSON, as a plan.json does.
func planOf(t *testing.T, src string, cat *catalog.Catalog) *ir.Plan {
	t.Helper()
	f, pd := parser.Parse("w.yaml", []byte(src))
	wfs, diags := Check([]*parser.File{f}, Options{Tools: cat})
	if all := append(pd, diags...); all.HasErrors() {
		t.Fatalf("Check: %v", all)
	}
	plan, pdiags := planner.Plan(wfs)
	if pdiags.HasErrors() {
		t.Fatalf("Plan: %v", pdiags)
	}
	data, err := ir.Encode(plan)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckPlan checks that a plan compiled without a catalog gets every
// catalog check when it is loaded with one, with the plan's positions.
func TestCheckPlan(t *testing.T) {
	src := `compositeTools:
  - name: refs
    description: d
    parameters: {n: {type: integer}}
    annotations: {readOnlyHint: true}
    steps:
      - {id: bare, tool: echo, arguments: {input: "{{.params.n}}"}}
      - {id: aggregated, tool: docs_search}
      - {id: ambiguous, tool: search}
      - {id: unknown, tool: github.create_isue}
      - {id: typed, tool: github.create_issue, arguments: {owner: a, repo: b, title: c, milestone: soon}}
      - id: loop
        type: forEach
        collection: "{{.params.n}}"
        step: {tool: yardstick-streamable_echo, arguments: {inptu: x}}
`
	p := planOf(t, src, nil)
	diags := CheckPlan(p, Options{Tools: loadTestCatalog(t)})
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%s %s %s: %s", d.Pos, d.Severity, d.Code, d.Message))
	}
	want := []string{
		`w.yaml:9:31 error ambiguous_tool_ref: tool "search" matches 2 backend tools: docs.search, github.search; write the one you mean as backend.tool`,
		`w.yaml:10:29 error unknown_tool: backend "github" has no tool "create_isue"; did you mean create_issue?`,
		`w.yaml:11:27 error argument_type: argument "milestone" of tool github.create_issue must be integer, not a string`,
		`w.yaml:15:22 error unknown_argument: tool yardstick-streamable.echo has no argument "inptu"; did you mean input?`,
		`w.yaml:15:22 error missing_argument: tool yardstick-streamable.echo requires argument "input" (string)`,
		`w.yaml:2:5 error unsafe_annotation: annotations declare readOnlyHint: true, but step "typed" calls github.create_issue, which is not read-only`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckPlan diagnostics differ (-want +got):\n%s", diff)
	}
	var refs []string
	for _, s := range p.Workflows[0].Steps {
		tr := s.Tool
		if s.ForEach != nil {
			tr = s.ForEach.Step.Tool
		}
		refs = append(refs, s.ID+"="+tr.String())
	}
	wantRefs := []string{"bare=yardstick-streamable.echo", "aggregated=docs.search", "ambiguous=search",
		"unknown=github.create_isue", "typed=github.create_issue", "loop=yardstick-streamable.echo"}
	if diff := cmp.Diff(wantRefs, refs); diff != "" {
		t.Errorf("tool references after CheckPlan differ (-want +got):\n%s", diff)
	}
}

// TestCheckPlanDerivesAgain checks that hints derived when the plan was
// compiled are derived again from the catalog it is loaded with, while
// the author's explicit hints are kept and checked.
func TestCheckPlanDerivesAgain(t *testing.T) {
	src := "name: w\ndescription: d\nannotations: {title: T, openWorldHint: true}\nsteps: [{id: a, tool: docs.search}]\n"
	p := planOf(t, src, loadTestCatalog(t))
	wf := p.Workflows[0]
	if got, want := showAnnotations(wf.Annotations), "title=T readOnlyHint=true destructiveHint=false openWorldHint=true derived=destructiveHint,readOnlyHint"; got != want {
		t.Fatalf("compiled annotations = %s; want %s", got, want)
	}
	// The backend changed: docs.search now writes.
	changed := catalog.New()
	changed.Backends["docs"] = &catalog.Backend{Tools: []*catalog.Tool{{Name: "search", InputSchema: map[string]any{"type": "object"},
		Annotations: &catalog.Annotations{ReadOnlyHint: new(bool), DestructiveHint: ptrTrue()}}}}
	if diags := CheckPlan(p, Options{Tools: changed}); len(diags) > 0 {
		t.Fatalf("CheckPlan = %v; want no diagnostics (no hint was written by the author)", diags)
	}
	if got, want := showAnnotations(wf.Annotations), "title=T readOnlyHint=false destructiveHint=true openWorldHint=true derived=destructiveHint,readOnlyHint"; got != want {
		t.Errorf("annotations after CheckPlan = %s; want %s", got, want)
	}
}

// TestCheckPlanWithoutCatalog checks that a plan loaded without a catalog
// is left as it is, unresolved references included.
func TestCheckPlanWithoutCatalog(t *testing.T) {
	p := planOf(t, "name: w\ndescription: d\nsteps: [{id: a, tool: echo}]\n", nil)
	if diags := CheckPlan(p, Options{}); len(diags) > 0 {
		t.Errorf("CheckPlan without a catalog = %v; want nothing", diags)
	}
	if tr := p.Workflows[0].Steps[0].Tool; tr.Resolved() || tr.Ref != "echo" {
		t.Errorf("tool = %+v; want the unresolved reference echo", tr)
	}
}

func ptrTrue() *bool { v := true; return &v }
