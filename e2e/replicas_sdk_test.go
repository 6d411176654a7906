package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// replicaSDKConfig is replicaAskConfig's question and a workflow held at
// its first step (until the gate file exists), on postgres.
const replicaSDKConfig = replicaAskConfig + `  - name: hold
    description: A step held at its gate, then another
    steps:
      - id: held
        tool: tb.gated
        arguments: {label: held, gate: "${GATE}"}
      - id: after
        tool: tb.gated
        dependsOn: [held]
        arguments: {label: after held}
`

// declineElicit declines every question and counts them: the questions
// a test wants answered elsewhere.
type declineElicit struct{ asked atomic.Int32 }

func (d *declineElicit) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	d.asked.Add(1)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

// legacyTasksClient is an mcp-go client of url in a 2025-11-25 session,
// the protocol of mcp-go's tasks, declaring elicitation (a run's question
// needs a client that can be asked) with el.
func legacyTasksClient(t *testing.T, url string, el client.ElicitationHandler) *client.Client {
	t.Helper()
	return testenv.HTTPClient(t, url, client.WithLegacyProtocolOnly(), client.WithElicitationHandler(el))
}

// startLegacyTask calls tool as a 2025-11-25 task (tools/call with
// params.task; mcp-go's CallTool cannot return a CreateTaskResult) and
// returns the task id.
func startLegacyTask(t *testing.T, c *client.Client, tool string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId("task-" + tool),
		Method:  string(mcp.MethodToolsCall),
		Params:  map[string]any{"name": tool, "arguments": map[string]any{}, "task": map[string]any{}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/call %s as a task: %v %+v", tool, err, resp)
	}
	var cr mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &cr); err != nil || cr.Task.TaskId == "" {
		t.Fatalf("tools/call %s as a task = %s; want a CreateTaskResult", tool, resp.Result)
	}
	return cr.Task.TaskId
}

// TestReplicasTypeScriptClientOnB: an mcp-go client makes two tasks on
// replica A (2025-11-25): one whose run asks a question, one held in its
// first step. The TypeScript SDK's Tasks client on replica B
// (e2e/sdkclient/replicas.mjs, the tasks extension) reads the first as
// input_required with A's question, answers it and gets its result, and
// reads and cancels the second. The mcp-go client then reads both on A
// as B left them: completed with the answer, and cancelled, the held
// step's successor never called.
func TestReplicasTypeScriptClientOnB(t *testing.T) {
	node := repoNode(t)
	rs := newReplicaSet(t, replicaSDKConfig)
	a, b := rs.start(t), rs.start(t)
	// Cleanups run last first: the gate opens before the replicas stop,
	// so a failed test leaves no run held.
	t.Cleanup(func() { os.WriteFile(rs.gate, nil, 0o644) })
	var onAsked declineElicit
	onA := legacyTasksClient(t, a.base+"/mcp", &onAsked)
	askID := startLegacyTask(t, onA, "ask_on_a")
	holdID := startLegacyTask(t, onA, "hold")
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rs.rec)["held"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("held not in flight within 60s; backend calls %v\nA:\n%s", backendCalls(t, rs.rec), a.stderr.String())
		}
	}

	script := filepath.Join("e2e", "sdkclient", "replicas.mjs")
	stdout, stderr, code := run(t, 2*time.Minute, testenv.RepoRoot(), node, script, b.base+"/mcp", askID, holdID)
	if code != 0 {
		t.Fatalf("replicas.mjs exited %d\nstdout:\n%s\nstderr:\n%s\nA:\n%s\nB:\n%s", code, stdout, stderr, a.stderr.String(), b.stderr.String())
	}
	facts := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("replicas.mjs printed %q, not JSON: %v\nstderr:\n%s", line, err, stderr)
		}
		facts[fmt.Sprint(f["case"])] = f
	}
	if f := facts["read"]; f["status"] != "input_required" || fmt.Sprint(f["questions"]) != "[Deploy to which region?]" {
		t.Errorf("the TypeScript client's read of A's task on B = %v; want input_required with A's question", f)
	}
	if f := facts["answered"]; f["status"] != "completed" || fmt.Sprint(f["structured"]) != "map[label:s3 to eu-west-1]" {
		t.Errorf("the TypeScript client's result after answering on B = %v; want completed with {label: s3 to eu-west-1}", f)
	}
	if f := facts["cancelled"]; f["before"] != "working" || f["status"] != "cancelled" {
		t.Errorf("the TypeScript client's cancel on B = %v; want working, then cancelled", f)
	}

	// The mcp-go client on A sees what B's client did.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for id, want := range map[string]mcp.TaskStatus{askID: mcp.TaskStatusCompleted, holdID: mcp.TaskStatusCancelled} {
		got, err := onA.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
		if err != nil || got.Task.Status != want {
			t.Errorf("tasks/get %s on A after B's client = %+v, %v; want %s", id, got, err, want)
		}
	}
	res, err := onA.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: askID}})
	if err != nil {
		t.Fatalf("tasks/result on A: %v", err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["label"] != "s3 to eu-west-1" {
		t.Errorf("tasks/result %s on A = %+v; want {label: s3 to eu-west-1}", askID, res)
	}
	if n := onAsked.asked.Load(); n != 0 {
		t.Errorf("A asked the mcp-go client %d questions; want none (B's client answered)", n)
	}
	want := map[string]int{"s1": 1, "s3 to eu-west-1": 1, "held": 1}
	if calls := backendCalls(t, rs.rec); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v (the held step's successor never called)", calls, want)
	}
}
