package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestTaskStatusMapping(t *testing.T) {
	failed := &runtime.StepError{Step: "deploy", Pos: ir.Pos{File: "wf.yaml", Line: 7, Col: 9}, Msg: "quota exceeded"}
	tests := []struct {
		status   runtime.RunStatus
		waiting  bool
		v1, ext  mcp.TaskStatus
		messages string // a part of the status message
	}{
		{runtime.RunPending, false, taskWorking, taskWorking, "running"},
		{runtime.RunRunning, false, taskWorking, taskWorking, "1 of 2 steps done"},
		{runtime.RunRunning, true, taskInputRequired, taskInputRequired, "elicitation"},
		{runtime.RunCompleted, false, taskCompleted, taskCompleted, "completed"},
		{runtime.RunCancelled, false, taskCancelled, taskCancelled, "was cancelled"},
		{runtime.RunFailed, false, taskFailed, taskCompleted, `workflow wf failed: step "deploy" (wf.yaml:7:9): quota exceeded`},
		{runtime.RunTimedOut, false, taskFailed, taskCompleted, `workflow wf timed out: step "deploy"`},
		{runtime.RunInterrupted, false, taskFailed, taskCompleted, `workflow wf ended with status interrupted: step "deploy"`},
	}
	for _, tt := range tests {
		run := &runtime.Run{ID: "r", Workflow: "wf", Status: tt.status, Steps: []runtime.StepState{
			{ID: "a", Status: runtime.StepCompleted}, {ID: "deploy", Status: runtime.StepRunning},
		}}
		if !tt.status.Finished() || tt.status == runtime.RunCompleted {
			run.Error = nil
		} else {
			run.Error = failed
		}
		v1 := stateOf(run, tt.waiting, flavourV1)
		ext := stateOf(run, tt.waiting, flavourExt)
		if v1.Status != tt.v1 || ext.Status != tt.ext {
			t.Errorf("run %s (waiting %v) = 2025-11-25 %s, extension %s; want %s, %s", tt.status, tt.waiting, v1.Status, ext.Status, tt.v1, tt.ext)
		}
		if !strings.Contains(v1.Message, tt.messages) || v1.Message != ext.Message {
			t.Errorf("run %s: messages %q and %q; want the same, containing %q", tt.status, v1.Message, ext.Message, tt.messages)
		}
	}
}

func TestTaskIDsCarryTheirOwner(t *testing.T) {
	alice, bob := httpsafe.TokenSubject("token-alice"), httpsafe.TokenSubject("token-bob")
	if alice == bob || alice == "" {
		t.Fatalf("subjects %q and %q; want two different non-empty ones", alice, bob)
	}
	if k := httpsafe.TokenSubject(" token-alice "); k != alice {
		t.Errorf("the same token written differently is another caller (%q, %q)", k, alice)
	}
	for range 100 {
		id := newTaskID(alice)
		if _, err := uuid.Parse(id); err != nil {
			t.Fatalf("task id %q is not a UUID: %v", id, err)
		}
		if !ownsTask(alice, id) {
			t.Fatalf("alice does not own her task %s", id)
		}
		if ownsTask(bob, id) || ownsTask("", id) {
			t.Fatalf("task %s of alice is owned by bob or by anyone", id)
		}
	}
	if ownsTask("", uuid.NewString()) {
		t.Errorf("a random run id (a plain tools/call) passes as a task")
	}
	if ownsTask("", "not-a-uuid") {
		t.Errorf("a malformed id passes as a task")
	}
}

const taskWorkflows = `
compositeTools:
  - name: ask
    description: Ask one question
    parameters:
      n: {type: integer, required: true}
    steps:
      - id: q
        type: elicitation
        message: "Question {{.params.n}}?"
        schema: {type: object, properties: {answer: {type: string}}, required: [answer]}
`

// taskServer serves taskWorkflows on the real engine with tasks on, on a
// port from port on (each test its own: a client's kept-alive connection
// to the previous test's server on the same port would fail with EOF).
func taskServer(t *testing.T, ttl time.Duration, port int) (*testenv.ExtTasks, *runtime.Engine) {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(taskWorkflows)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Runner: eng, Tasks: TaskOptions{Runs: eng, TTL: ttl}})
	if err != nil {
		t.Fatal(err)
	}
	return &testenv.ExtTasks{URL: serveHTTP(t, srv, port)}, eng
}

// TestConcurrentTasks drives many tasks at once through their questions,
// under -race: each sees its own question and ends with its own answer.
func TestConcurrentTasks(t *testing.T) {
	c, _ := taskServer(t, 0, 17360)
	for i := range 12 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			cl := &testenv.ExtTasks{URL: c.URL}
			id := cl.StartTask(t, "ask", map[string]any{"n": i})
			task := cl.Wait(t, id, "input_required")
			for key, r := range task["inputRequests"].(map[string]any) {
				msg := r.(map[string]any)["params"].(map[string]any)["message"]
				if msg != fmt.Sprintf("Question %d?", i) {
					t.Errorf("task %d asks %v", i, msg)
				}
				cl.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
					key: map[string]any{"action": "accept", "content": map[string]any{"answer": fmt.Sprint(i)}}}})
			}
			done := cl.Wait(t, id, "completed")
			sc := done["result"].(map[string]any)["structuredContent"].(map[string]any)
			if got := sc["content"].(map[string]any)["answer"]; got != fmt.Sprint(i) {
				t.Errorf("task %d ended with answer %v", i, got)
			}
		})
	}
}

func TestTaskExpiresAfterItsTTL(t *testing.T) {
	c, _ := taskServer(t, 300*time.Millisecond, 17370)
	id := c.StartTask(t, "ask", map[string]any{"n": 1})
	if task := c.Wait(t, id, "input_required"); task["ttlMs"] != float64(300) {
		t.Errorf("ttlMs = %v; want 300", task["ttlMs"])
	}
	c.Result(t, "tasks/cancel", map[string]any{"taskId": id})
	c.Wait(t, id, "cancelled")
	time.Sleep(350 * time.Millisecond)
	r := c.Get(t, id)
	if r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS || !strings.Contains(r.Error.Message, "expired") {
		t.Errorf("tasks/get after the TTL = %+v; want -32602 task has expired", r)
	}
}

func TestPlainCallIsNotATask(t *testing.T) {
	c, eng := taskServer(t, 0, 17380)
	plain := &testenv.ExtTasks{URL: c.URL, NoExtension: true}
	res := plain.Call(t, "ask", map[string]any{"n": 1})
	// Without the extension the call asks with input_required (MRTR); its
	// run is stored but is no task.
	if res["resultType"] != "input_required" {
		t.Fatalf("tools/call without the extension = %v; want input_required", res)
	}
	runs, err := eng.Store().ListRuns(t.Context(), runtime.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %v, %v; want one", runs, err)
	}
	if r := c.Get(t, runs[0].ID); r.Error == nil {
		t.Errorf("tasks/get of a plain call's run %s = %v; want task not found", runs[0].ID, r.Result)
	}
	if err := eng.Cancel(t.Context(), runs[0].ID); err != nil {
		t.Fatal(err)
	}
}
