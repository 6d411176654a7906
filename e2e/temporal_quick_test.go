package e2e

// Quick steps on real workers: a `vmcp worker` whose config lists a tool in
// executor.quickTools runs the steps of it that may run twice as local
// activities (temporalrun/quick.go), and the one that may not as a
// regular activity; the run's history on the dev server says which.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// quickLo, quickHi: this test's ports (temporalrun's range).
const quickLo, quickHi = 17470, 17489

func TestTemporalQuickStepsRunAsLocalActivities(t *testing.T) {
	ts := testenv.StartTemporal(t, quickLo, quickHi)
	g := startGateBackendIn(t, quickLo, quickHi)
	queue := fmt.Sprintf("vmcp-quick-%d", time.Now().UnixNano())
	cfg := writeConfig(t, fmt.Sprintf(`
backends:
  g: {url: %q, headers: {X-Worker: "${VMCP_WORKER}"}}
executor: {kind: temporal, address: %q, taskQueue: %q, heartbeatTimeout: 2s, quickTools: [g.step]}
compositeTools:
  - name: quick3
    description: two quick steps that may run twice around one that may not
    parameters: {tag: {type: string}}
    steps:
      - {id: one, tool: g.step, idempotent: true, arguments: {label: "one-{{.params.tag}}"}}
      - {id: two, tool: g.step, dependsOn: [one], arguments: {label: "two-{{.steps.one.output.label}}"}}
      - {id: three, tool: g.step, idempotent: true, dependsOn: [two], arguments: {label: "three-{{.steps.two.output.label}}"}}
`, g.url, ts.Address, queue), "")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	c, stderr := stdioVMCP(t, cfg)
	res := mustCall(t, c, "quick3", map[string]any{"tag": "q"})
	if res.IsError {
		t.Fatalf("quick3: %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["label"] != "three-two-one-q" || out["worker"] != "w1" {
		t.Fatalf("result = %v; want {label: three-two-one-q, worker: w1}", res.StructuredContent)
	}
	if got, want := strings.Join(g.log2(), " "), "one-q@w1 two-one-q@w1 three-two-one-q@w1"; got != want {
		t.Fatalf("backend calls = %s; want %s (each step called once)", got, want)
	}

	tc, err := client.Dial(client.Options{HostPort: ts.Address, Namespace: ts.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: ts.Namespace})
	if err != nil || len(list.Executions) != 1 {
		t.Fatalf("the server's workflows: %v, %v; want the one run", list, err)
	}
	markers, scheduled := 0, 0
	it := tc.GetWorkflowHistory(ctx, list.Executions[0].Execution.WorkflowId, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				markers++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled++
		}
	}
	if markers != 2 || scheduled != 1 {
		t.Errorf("the run's history has %d local activities and %d activities; want 2 (steps one and three, which may run twice) and 1 (step two)", markers, scheduled)
	}
}
