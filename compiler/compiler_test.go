package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// summary is what the end-to-end tests compare for each workflow.
type summary struct {
	Name         string
	Stats        ir.Stats
	CriticalPath []string
}

func summarize(p *ir.Plan) []summary {
	var out []summary
	for _, w := range p.Workflows {
		s := summary{Name: w.Name, Stats: w.Stats}
		for _, i := range w.CriticalPath {
			s.CriticalPath = append(s.CriticalPath, w.Steps[i].ID)
		}
		out = append(out, s)
	}
	return out
}

func stats(levels, steps, maxPar, minPar, seq int) ir.Stats {
	return ir.Stats{TotalLevels: levels, TotalSteps: steps, MaxParallelism: maxPar, MinParallelism: minPar, SequentialSteps: seq}
}

// exampleWant lists every example file and the plans it must compile to.
var exampleWant = map[string][]summary{
	"incident_investigation.yaml": {{"investigate_incident", stats(3, 5, 3, 1, 2),
		[]string{"fetch_logs", "correlate", "create_ticket"}}},
	"diamond.yaml": {{"diamond_transform", stats(3, 4, 2, 1, 2),
		[]string{"fetch_data", "process_left", "merge_results"}}},
	"fan_out_fan_in.yaml": {{"engineering_digest", stats(3, 6, 4, 1, 2),
		[]string{"open_prs", "summarize", "post_digest"}}},
	"retry_fallback.yaml": {{"resilient_geocode", stats(2, 2, 1, 1, 2),
		[]string{"try_primary", "use_fallback"}}},
	"default_results.yaml": {{"qualify_lead", stats(4, 4, 1, 1, 4),
		[]string{"lookup_user", "enrich", "score", "notify_sales"}}},
	"foreach_vulnerability_scan.yaml": {{"scan_image_vulnerabilities", stats(3, 3, 1, 1, 3),
		[]string{"get_packages", "check_each", "report"}}},
	"elicitation_deploy.yaml": {{"deploy_with_approval", stats(5, 5, 1, 1, 5),
		[]string{"build", "run_tests", "approve", "deploy", "announce"}}},
	"output_schema.yaml": {{"repo_health_report", stats(2, 3, 2, 1, 1),
		[]string{"fetch_repo", "ci_status"}}},
	"k8s_stream.yaml": {
		{"triage_ticket", stats(3, 3, 1, 1, 3), []string{"read_ticket", "search_kb", "draft_reply"}},
		{"close_stale_tickets", stats(2, 2, 1, 1, 2), []string{"find_stale", "close_each"}},
	},
	"composite_tools_config.yaml": {
		{"create_and_notify", stats(2, 2, 1, 1, 2), []string{"create_issue", "notify"}},
		{"backup_and_verify", stats(3, 3, 1, 1, 3), []string{"snapshot", "verify", "record"}},
	},
	"subworkflow_triage.yaml": {
		{"summarize_service", stats(1, 2, 2, 2, 0), []string{"errors"}},
		{"triage_incident", stats(3, 4, 2, 1, 2), []string{"load_incident", "primary", "report"}},
	},
	"release_announcement.json": {{"announce_release", stats(3, 4, 2, 1, 2),
		[]string{"changelog", "publish", "chat"}}},
	"nested_loops.yaml": {{"sync_namespaces", stats(2, 3, 2, 1, 1),
		[]string{"cluster", "per_namespace"}}},
	"finally_cleanup.yaml": {{"locked_deploy", withFinally(stats(2, 2, 1, 1, 2), 2, 2),
		[]string{"lock", "deploy"}}},
}

// withFinally adds the finally counts to stats.
func withFinally(s ir.Stats, steps, levels int) ir.Stats {
	s.FinallySteps, s.FinallyLevels = steps, levels
	return s
}

func readExample(t testing.TB, name string) Source {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return Source{Name: "examples/" + name, Src: src}
}

func TestCompileExamples(t *testing.T) {
	// Every example on disk is in the table, so a new example gets a test.
	var onDisk []string
	for _, pattern := range []string{"*.yaml", "*.yml", "*.json"} {
		m, _ := filepath.Glob(filepath.Join("..", "examples", pattern))
		for _, f := range m {
			onDisk = append(onDisk, filepath.Base(f))
		}
	}
	for _, f := range onDisk {
		if _, ok := exampleWant[f]; !ok {
			t.Errorf("examples/%s has no entry in exampleWant", f)
		}
	}
	var all []Source
	var allWant []summary
	for _, name := range sortedKeys(exampleWant) {
		want := exampleWant[name]
		in := readExample(t, name)
		all = append(all, in)
		allWant = append(allWant, want...)
		p, diags := Compile([]Source{in}, Options{})
		if diags.HasErrors() || p == nil {
			t.Errorf("Compile(%s) failed:\n%s", in.Name, printed(diags, []Source{in}))
			continue
		}
		if len(diags) != 0 {
			t.Errorf("Compile(%s) warnings = %v; want a clean example", in.Name, diags)
		}
		if diff := cmp.Diff(want, summarize(p)); diff != "" {
			t.Errorf("Compile(%s) plans mismatch (-want +got):\n%s", in.Name, diff)
		}
		roundTrip(t, p)
	}
	// All together: no duplicate names, workflows in input order.
	p, diags := Compile(all, Options{})
	if diags.HasErrors() {
		t.Fatalf("Compile(all examples) failed:\n%s", printed(diags, all))
	}
	if diff := cmp.Diff(allWant, summarize(p)); diff != "" {
		t.Errorf("Compile(all examples) mismatch (-want +got):\n%s", diff)
	}
}

func sortedKeys(m map[string][]summary) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sort keeps the test free of another import.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func printed(diags diag.List, in []Source) string {
	var b strings.Builder
	_ = diag.Print(&b, diags, diag.Text, Sources(in))
	return b.String()
}

// roundTrip checks that a compiled plan survives Encode and Decode, the
// way vmcp run loads plan.json: the decoded plan equals the compiled one
// and encodes to the same bytes.
func roundTrip(t *testing.T, p *ir.Plan) {
	t.Helper()
	data, err := ir.Encode(p)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	back, err := ir.Decode(data)
	if err != nil {
		t.Fatalf("Decode(Encode(plan)) = %v", err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("Decode(Encode(plan)) differs from the plan (-compiled +decoded):\n%s", diff)
	}
	again, err := ir.Encode(back)
	if err != nil {
		t.Fatalf("Encode(Decode(...)): %v", err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("plan changed in an Encode/Decode round trip (-compiled +decoded):\n%s", diff)
	}
}

func TestCompilePlanInput(t *testing.T) {
	incident := readExample(t, "incident_investigation.yaml")
	p, diags := Compile([]Source{incident}, Options{})
	if diags.HasErrors() {
		t.Fatalf("Compile: %v", diags)
	}
	data, err := ir.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	planSrc := Source{Name: "build/plan.json", Src: data}

	// A plan alone loads as itself.
	got, diags := Compile([]Source{planSrc}, Options{})
	if len(diags) != 0 {
		t.Fatalf("Compile(plan.json) diagnostics = %v; want none", diags)
	}
	again, err := ir.Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("Compile(plan.json) differs from the plan that was written (-want +got):\n%s", diff)
	}

	// A plan merges with sources; compiled sources come first.
	diamond := readExample(t, "diamond.yaml")
	got, diags = Compile([]Source{planSrc, diamond}, Options{})
	if len(diags) != 0 {
		t.Fatalf("Compile(plan.json, diamond.yaml) diagnostics = %v; want none", diags)
	}
	var names []string
	for _, w := range got.Workflows {
		names = append(names, w.Name)
	}
	if diff := cmp.Diff([]string{"diamond_transform", "investigate_incident"}, names); diff != "" {
		t.Errorf("merged plan workflows mismatch (-want +got):\n%s", diff)
	}

	// The same workflow from a plan and from its source is a duplicate.
	got, diags = Compile([]Source{incident, planSrc}, Options{})
	if got != nil {
		t.Errorf("Compile(source + its plan) returned a plan; want nil on errors")
	}
	want := []string{"duplicate_workflow"}
	if diff := cmp.Diff(want, codes(diags)); diff != "" {
		t.Fatalf("Compile(source + its plan) codes mismatch (-want +got):\n%s", diff)
	}
	if msg := diags[0].Message; !strings.Contains(msg, `workflow "investigate_incident" is already defined at examples/incident_investigation.yaml:`) {
		t.Errorf("duplicate message = %q; want it to name the first definition", msg)
	}
}

func codes(l diag.List) []string {
	var out []string
	for _, d := range l {
		out = append(out, d.Code)
	}
	return out
}

func TestCompileBadPlans(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"old version", `{"version": "vmcp.plan/v0", "workflows": []}`, `plan version "vmcp.plan/v0" is not supported`},
		{"broken indexes", `{"version": "vmcp.plan/v3", "workflows": [{"name": "x", "steps": [{"index": 3, "id": "a", "type": "tool", "tool": {"backend": "b", "name": "c"}}]}]}`, `step "a" has index 3 at position 0`},
		{"truncated", `{"version": "vmcp.plan/v3", "workflows": [`, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A truncated plan is not recognisable as a plan; it is then a
			// (broken) JSON workflow source, which the parser rejects.
			p, diags := Compile([]Source{{Name: "plan.json", Src: []byte(tc.src)}}, Options{})
			if p != nil || !diags.HasErrors() {
				t.Fatalf("Compile(%s) = %v, %v; want no plan and errors", tc.name, p, diags)
			}
			if tc.name == "truncated" {
				return
			}
			d := diags[0]
			if d.Code != CodeBadPlan || d.Pos.String() != "plan.json:1:1" || !strings.Contains(d.Message, tc.want) {
				t.Errorf("Compile(%s) = %s [%s]; want %s at plan.json:1:1 containing %q", tc.name, d, d.Code, CodeBadPlan, tc.want)
			}
		})
	}
}

func TestIsPlan(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`{"version": "vmcp.plan/v1", "workflows": []}`, true},
		{"\n  {\"workflows\": [], \"version\": \"vmcp.plan/v9\"}", true},
		{`{"apiVersion": "toolhive.stacklok.dev/v1beta1", "kind": "VirtualMCPCompositeToolDefinition"}`, false},
		{`{"version": "vmcp.tools/v1"}`, false},
		{"version: vmcp.plan/v1\n", false},
		{``, false},
	}
	for _, tc := range tests {
		if got := IsPlan([]byte(tc.src)); got != tc.want {
			t.Errorf("IsPlan(%q) = %v; want %v", tc.src, got, tc.want)
		}
	}
}

func TestCompileStopsBetweenStages(t *testing.T) {
	// One file fails to parse, the other has a checker error: only the
	// parse error is reported, because checking waits for parsing.
	broken := Source{Name: "broken.yaml", Src: []byte("compositeTools: [\n")}
	unchecked := Source{Name: "bad.yaml", Src: []byte(`compositeTools:
  - name: x
    description: d
    steps:
      - id: a
        tool: b.c
        dependsOn: [nope]
`)}
	_, diags := Compile([]Source{broken, unchecked}, Options{})
	for _, d := range diags {
		if d.Pos.File != "broken.yaml" {
			t.Errorf("Compile reported %s [%s] from a later stage; want only broken.yaml's parse errors", d, d.Code)
		}
	}
	if !diags.HasErrors() {
		t.Fatalf("Compile(broken.yaml) reported no error")
	}
	_, diags = Compile([]Source{unchecked}, Options{})
	if diff := cmp.Diff([]string{"unknown_step"}, codes(diags)); diff != "" {
		t.Errorf("Compile(bad.yaml) codes mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileVerboseSkipped(t *testing.T) {
	var notes []string
	_, diags := Compile([]Source{readExample(t, "k8s_stream.yaml")}, Options{Verbose: func(m string) { notes = append(notes, m) }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{
		`examples/k8s_stream.yaml:5:1: skipped MCPGroup "support-services": not a composite tool definition`,
		`examples/k8s_stream.yaml:13:1: skipped MCPServer "helpdesk": not a composite tool definition`,
		`examples/k8s_stream.yaml:25:1: skipped MCPServer "kb": not a composite tool definition`,
		`examples/k8s_stream.yaml:99:1: skipped VirtualMCPServer "support-vmcp": not a composite tool definition`,
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("verbose notes mismatch (-want +got):\n%s", diff)
	}
}

func TestCompileNoWorkflows(t *testing.T) {
	in := Source{Name: "servers.yaml", Src: []byte("apiVersion: toolhive.stacklok.dev/v1beta1\nkind: MCPServer\nmetadata: {name: x}\n")}
	p, diags := Compile([]Source{in}, Options{})
	if p == nil || len(p.Workflows) != 0 {
		t.Fatalf("Compile(servers only) = %v; want an empty plan", p)
	}
	if diff := cmp.Diff([]string{CodeNoWorkflows}, codes(diags)); diff != "" || diags.HasErrors() {
		t.Errorf("Compile(servers only) diagnostics = %v; want one no_workflows warning", diags)
	}
}

// TestCompileManyWarnings: more than diag.MaxDiagnostics warnings and no
// error is a successful compilation (issue 10): a plan, no error among the
// diagnostics, and a warning, not an error, for the ones left out.
func TestCompileManyWarnings(t *testing.T) {
	var src strings.Builder
	src.WriteString("compositeTools:\n")
	for w := 0; w < 2; w++ {
		fmt.Fprintf(&src, "  - name: many_%d\n    description: Hyphenated step ids warn\n    steps:\n", w)
		for i := 0; i < 51; i++ {
			fmt.Fprintf(&src, "      - {id: step-%d, tool: b.t}\n", i)
		}
	}
	plan, diags := Compile([]Source{{Name: "many.yaml", Src: []byte(src.String())}}, Options{})
	if plan == nil || diags.HasErrors() {
		t.Fatalf("Compile = plan %v, errors %v; want a plan and no errors", plan != nil, diags.Errors())
	}
	if len(diags) != diag.MaxDiagnostics+1 {
		t.Fatalf("%d diagnostics; want %d (the cap and the marker)", len(diags), diag.MaxDiagnostics+1)
	}
	if last := diags[len(diags)-1]; last.Severity != diag.Warning || last.Code != diag.CodeTooManyWarnings {
		t.Errorf("last diagnostic = %v %s; want a %s warning", last.Severity, last.Code, diag.CodeTooManyWarnings)
	}
}

// TestWorkflowStepsAcrossInputs: a workflow step may call a workflow of
// another file or of a compiled plan.json given to the same compile, with
// its arguments checked against that workflow's parameters, and recursion
// through a plan is found too.
func TestWorkflowStepsAcrossInputs(t *testing.T) {
	child := `name: child
description: the callee
parameters: {n: {type: integer, required: true}}
steps:
  - {id: a, tool: b.c, arguments: {n: "{{.params.n}}"}}
`
	parent := `name: parent
description: the caller
steps:
  - id: sub
    type: workflow
    workflow: child
    arguments: {n: %s}
`
	childPlan, diags := Compile([]Source{{Name: "child.yaml", Src: []byte(child)}}, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	planJSON, err := ir.Encode(childPlan)
	if err != nil {
		t.Fatal(err)
	}
	for _, callee := range []Source{{Name: "child.yaml", Src: []byte(child)}, {Name: "child.json", Src: planJSON}} {
		ok := Source{Name: "parent.yaml", Src: []byte(strings.Replace(parent, "%s", "2", 1))}
		if p, diags := Compile([]Source{ok, callee}, Options{}); diags.HasErrors() || len(p.Workflows) != 2 {
			t.Errorf("Compile(parent, %s) = %v; want both workflows", callee.Name, diags)
		}
		bad := Source{Name: "parent.yaml", Src: []byte(strings.Replace(parent, "%s", "lots", 1))}
		_, diags := Compile([]Source{bad, callee}, Options{})
		if !diags.HasErrors() || !strings.Contains(diags.Sorted()[0].Message, `argument "n" of workflow "child" must be integer`) {
			t.Errorf("Compile(bad parent, %s) = %v; want an argument_type error", callee.Name, diags)
		}
	}
	// The plan's workflow calls back into the source: recursion.
	other := "name: other\ndescription: d\nsteps: [{id: back, type: workflow, workflow: first}]\n"
	first := "name: first\ndescription: d\nsteps: [{id: to_other, type: workflow, workflow: other}]\n"
	stub := "name: first\ndescription: d\nsteps: [{id: a, tool: b.c}]\n"
	otherPlan, diags := Compile([]Source{{Name: "other.yaml", Src: []byte(other)}, {Name: "first.yaml", Src: []byte(stub)}}, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	otherJSON, err := ir.Encode(&ir.Plan{Version: ir.Version, Workflows: otherPlan.Workflows[:1]})
	if err != nil {
		t.Fatal(err)
	}
	_, diags = Compile([]Source{{Name: "first.yaml", Src: []byte(first)}, {Name: "other.json", Src: otherJSON}}, Options{})
	if !diags.HasErrors() || diags.Sorted()[0].Code != "workflow_cycle" || !strings.Contains(diags.Sorted()[0].Message, "first -> other -> first") {
		t.Errorf("Compile(first.yaml calling other.json calling first) = %v; want a workflow_cycle", diags)
	}
}
