package e2e

// A workflow step end to end: vmcp run as a real process over streamable
// HTTP, a real MCP client calling the parent, the child run in the SQLite
// store, and the HTTP API and `vmcp runs show` showing the link.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const subworkflowConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
state: {store: sqlite, path: "${DIR}/state.db"}
compositeTools:
  - name: add_pair
    description: Add two numbers
    parameters:
      a: {type: number, required: true}
      b: {type: number, required: true}
    output:
      properties:
        sum: {type: number, value: "{{.steps.add.output.sum}}"}
    steps:
      - id: add
        tool: tb.add
        arguments: {a: "{{.params.a}}", b: "{{.params.b}}"}
  - name: add_three
    description: Add three numbers with two runs of add_pair
    parameters:
      a: {type: number, required: true}
      b: {type: number, required: true}
      c: {type: number, required: true}
    output:
      properties:
        total: {type: number, value: "{{.steps.second.output.sum}}"}
    steps:
      - id: first
        type: workflow
        workflow: add_pair
        arguments: {a: "{{.params.a}}", b: "{{.params.b}}"}
      - id: second
        type: workflow
        workflow: add_pair
        dependsOn: [first]
        arguments: {a: "{{.steps.first.output.sum}}", b: "{{.params.c}}"}
`

func TestWorkflowStepThroughVMCPRun(t *testing.T) {
	cfg := writeConfig(t, subworkflowConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	c := testenv.HTTPClient(t, url)
	res := mustCall(t, c, "add_three", map[string]any{"a": 1, "b": 2, "c": 4.5})
	if res.IsError {
		t.Fatalf("add_three failed: %s", testenv.ResultText(res))
	}
	if diff := cmp.Diff(map[string]any{"total": 7.5}, res.StructuredContent); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	parentID := fmt.Sprint(res.Meta.AdditionalFields["vmcp/runId"])
	base := strings.TrimSuffix(url, "/mcp")

	var parent httpapi.RunDetail
	getJSON(t, base+"/api/v1/runs/"+parentID, &parent)
	if parent.Status != "completed" || parent.ParentID != "" || len(parent.Children) != 2 {
		t.Fatalf("parent run = %s, parent %q, %d children; want completed with 2 children", parent.Status, parent.ParentID, len(parent.Children))
	}
	steps := map[string]string{}
	for _, ch := range parent.Children {
		steps[ch.ParentStep] = ch.ID
		if ch.Workflow != "add_pair" || ch.ParentID != parentID || ch.Status != "completed" {
			t.Errorf("child %+v; want a completed add_pair run of %s", ch, parentID)
		}
	}
	var second httpapi.RunDetail
	getJSON(t, base+"/api/v1/runs/"+steps["second"], &second)
	if second.ParentID != parentID || second.ParentStep != "second" || !cmp.Equal(second.Output, map[string]any{"sum": 7.5}) {
		t.Errorf("second child = parent %q step %q output %v; want parent %s, step second, {sum: 7.5}", second.ParentID, second.ParentStep, second.Output, parentID)
	}
	if !cmp.Equal(parent.Steps[1].Output, second.Output) {
		t.Errorf("the parent's step output %v is not the child's result %v", parent.Steps[1].Output, second.Output)
	}
	var list httpapi.RunList
	getJSON(t, base+"/api/v1/runs?parent="+parentID, &list)
	if len(list.Runs) != 2 {
		t.Errorf("GET ?parent= listed %d runs; want 2", len(list.Runs))
	}

	out, errOut, code := run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "show", "--url", base, steps["first"])
	if code != 0 || !strings.Contains(out, "parent    "+parentID+" (step first)") {
		t.Errorf("vmcp runs show (child) = exit %d\n%s%s; want the parent line", code, out, errOut)
	}
	out, errOut, code = run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "show", "--url", base, parentID)
	if code != 0 || !strings.Contains(out, "CHILD RUN") || !strings.Contains(out, steps["second"]+"  second  add_pair  completed") {
		t.Errorf("vmcp runs show (parent) = exit %d\n%s%s; want both children listed", code, out, errOut)
	}
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, body)
	}
}
