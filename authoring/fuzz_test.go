package authoring

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
	"github.com/vmcp-dev/vmcp/ir"
)

// FuzzDraftCheck sends drafts through vmcp_workflow_check's handler, as an
// agent would. Whatever the draft, the tool must answer (never a panic or
// a protocol error) with a CheckResult whose diagnostics each point inside
// the draft, with a code and a one-line message free of Go's rendering of
// values; ok means no errors and a plan.
//
//	go test -run '^$' -fuzz '^FuzzDraftCheck$' -fuzztime 30s -fuzzminimizetime 500x ./authoring
func FuzzDraftCheck(f *testing.F) {
	for _, s := range []string{
		draft("w", "a.echo"), draft("w", "b.echo"), draft("w", "a.nope"), manySteps(3, "a.echo"),
		callerDraft("caller", "served"), callerDraft("served", "served"),
		"compositeTools:\n  - {name: one, description: d, steps: [{id: s, tool: a.echo, arguments: {text: hi}}]}\n  - {name: two, description: d, steps: []}\n",
		`{"name": "j", "description": "d", "steps": [{"id": "s", "tool": "a.echo", "arguments": {"text": "{{.params.x}}"}}]}`,
		"", "  \n", "version: 1\nworkflows: []\n",
	} {
		f.Add(s)
	}
	for _, seed := range fuzzkit.Files(f, []string{"../examples/*.yaml"}) {
		f.Add(string(seed))
	}
	check := checkTool(f)
	f.Fuzz(func(t *testing.T, source string) {
		if len(source) > fuzzkit.MaxInput {
			return
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = guide.ToolCheck
		req.Params.Arguments = map[string]any{"source": source}
		res, err := check(context.Background(), req)
		if err != nil || res == nil {
			t.Fatalf("vmcp_workflow_check = %v, %v; want a result", res, err)
		}
		if res.IsError {
			t.Fatalf("vmcp_workflow_check of a string source is an error result: %v", res.Content)
		}
		r, ok := res.StructuredContent.(CheckResult)
		if !ok {
			t.Fatalf("structured content is %T; want CheckResult", res.StructuredContent)
		}
		checkDiagnostics(t, source, r)
	})
}

// checkDiagnostics holds r to FuzzDraftCheck's properties.
func checkDiagnostics(t *testing.T, source string, r CheckResult) {
	t.Helper()
	lines := strings.Split(strings.ReplaceAll(source, "\r\n", "\n"), "\n")
	errors := 0
	for _, d := range r.Diagnostics {
		if d.Severity == "error" {
			errors++
		}
		if d.Code == "" || d.Message == "" || strings.Contains(d.Message, "\n") {
			t.Errorf("diagnostic %+v lacks a code or a one-line message", d)
		}
		if d.Line < 1 || d.Line > len(lines) || d.Col < 1 || d.Col > len(lines[d.Line-1])+1 {
			t.Errorf("diagnostic %s at %d:%d points outside the draft (%d lines)", d.Code, d.Line, d.Col, len(lines))
		}
		if g := fuzzkit.GoText(d.Message+d.Detail, source); g != "" {
			t.Errorf("diagnostic %s renders Go's %q: %s %s", d.Code, g, d.Message, d.Detail)
		}
	}
	if r.OK != (errors == 0) || r.OK != (r.Plan != nil) {
		t.Errorf("ok = %v with %d errors and plan %v", r.OK, errors, r.Plan)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the result is not JSON: %v", err)
	}
}

// callerDraft is a draft whose one step runs the workflow callee.
func callerDraft(name, callee string) string {
	return "name: " + name + "\ndescription: d\nsteps:\n  - {id: c, type: workflow, workflow: " + callee + "}\n"
}

// checkTool is vmcp_workflow_check's handler on a service with one
// served workflow ("served", calling a.echo) and only backend a allowed,
// built once for all inputs.
func checkTool(tb testing.TB) func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	tb.Helper()
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	served := c.Check("vmcp.yaml", draft("served", "a.echo"), nil)
	if !served.OK() {
		tb.Fatalf("the served workflow does not compile: %v", codes(served))
	}
	svc := NewService(Options{Store: NewMemoryStore(), Compiler: c, Files: []*ir.Workflow{served.Workflow}, Engine: &fakeServing{}, Server: &fakeServing{}})
	for _, tool := range Tools(svc, nil) {
		if tool.Tool.Name == guide.ToolCheck {
			return tool.Handler
		}
	}
	tb.Fatalf("no %s tool", guide.ToolCheck)
	return nil
}
