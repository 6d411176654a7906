package e2e

// Authoring with executor: temporal end to end: a real Temporal dev
// server, a real `vmcp worker` and a real `vmcp run` on stdio with an
// mcp-go client as the agent. The agent saves a workflow over MCP and
// calls it, then runs a draft; both runs must be Temporal workflows
// (their run id is the Temporal workflow id) whose activities the worker
// performed, and whose backend calls came from the worker, not from vmcp
// run.

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of the Temporal authoring test (the dev server, its metrics, the
// gate backend).
const temporalAuthorLo, temporalAuthorHi = 17700, 17749

// authoredOnTemporal is the workflow the agent saves: two steps on the
// gate backend's step tool.
const authoredOnTemporal = `name: relay
description: Two steps, the second reading the first
parameters:
  tag: {type: string, required: true}
steps:
  - id: first
    tool: g.step
    arguments: {label: "first-{{.params.tag}}"}
  - id: second
    tool: g.step
    dependsOn: [first]
    arguments: {label: "second-{{.steps.first.output.label}}"}
`

func TestTemporalAuthoredWorkflowsRunOnWorkers(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalAuthorLo, temporalAuthorHi)
	g := startGateBackendIn(t, temporalAuthorLo, temporalAuthorHi)
	cfg := temporalConfig(t, ts.Address, g.url, "", "authoring: {enabled: true}")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run") // what vmcp run itself would send
	c, stderr := stdioVMCP(t, cfg)
	a := newAgent(c)

	res := mustCall(t, a.Client, "vmcp_workflow_save", map[string]any{"source": authoredOnTemporal})
	if res.IsError {
		t.Fatalf("save relay: %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	a.waitListChanged(t, 1, "the save")

	res = mustCall(t, a.Client, "relay", map[string]any{"tag": "s"})
	if res.IsError {
		t.Fatalf("relay (saved): %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["label"] != "second-first-s" || out["worker"] != "w1" {
		t.Fatalf("relay (saved) = %v; want {label: second-first-s, worker: w1}", res.StructuredContent)
	}
	assertRanOnWorker(t, ts.Address, metaString(res, "vmcp/runId"), "w1")

	draft := authoredOnTemporal + `  - id: third
    tool: g.step
    dependsOn: [second]
    arguments: {label: "third-{{.steps.second.output.label}}"}
`
	res = mustCall(t, a.Client, "vmcp_workflow_run", map[string]any{"source": draft, "arguments": map[string]any{"tag": "d"}})
	if res.IsError {
		t.Fatalf("draft run: %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	if d, _ := res.Meta.AdditionalFields["vmcp/draft"].(bool); !d {
		t.Errorf("draft run _meta = %v; want vmcp/draft true", res.Meta.AdditionalFields)
	}
	if got := draftRunOutput(t, res); got["label"] != "third-second-first-d" || got["worker"] != "w1" {
		t.Fatalf("draft run output = %v; want {label: third-second-first-d, worker: w1}", got)
	}
	assertRanOnWorker(t, ts.Address, metaString(res, "vmcp/runId"), "w1")

	want := []string{"first-s@w1", "second-first-s@w1", "first-d@w1", "second-first-d@w1", "third-second-first-d@w1"}
	if got := g.log2(); !equalStrings(got, want) {
		t.Fatalf("backend calls = %v; want %v (every call from the worker)", got, want)
	}
}

// draftRunOutput is the workflow output in a vmcp_workflow_run result.
func draftRunOutput(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var r struct {
		Output map[string]any `json:"output"`
	}
	structured(t, res, &r)
	return r.Output
}

func metaString(res *mcp.CallToolResult, key string) string {
	if res.Meta == nil {
		return ""
	}
	s, _ := res.Meta.AdditionalFields[key].(string)
	return s
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// assertRanOnWorker reads the Temporal workflow whose id is runID: it must
// be a completed vmcp run whose every activity the worker named worker
// started.
func assertRanOnWorker(t *testing.T, addr, runID, worker string) {
	t.Helper()
	if runID == "" {
		t.Fatal("the result's _meta has no vmcp/runId")
	}
	c, err := tclient.Dial(tclient.Options{HostPort: addr})
	if err != nil {
		t.Fatalf("dial Temporal at %s: %v", addr, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		t.Fatalf("run %s is not a Temporal workflow: %v", runID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != "vmcp.run" || info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("Temporal workflow %s: type %s, status %s; want vmcp.run, completed", runID, info.GetType().GetName(), info.GetStatus())
	}
	it := c.GetWorkflowHistory(ctx, runID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	activities := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", runID, err)
		}
		if st := ev.GetActivityTaskStartedEventAttributes(); st != nil {
			activities++
			if st.GetIdentity() != worker {
				t.Errorf("run %s: an activity was started by %q; want the worker %q", runID, st.GetIdentity(), worker)
			}
		}
	}
	if activities == 0 {
		t.Errorf("run %s: no activity in its Temporal history; want its backend calls on the worker", runID)
	}
}
