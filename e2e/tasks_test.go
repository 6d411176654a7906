package e2e

// Long runs as MCP Tasks against a real `vmcp run --transport http`, in
// both flavours: MCP 2025-11-25 tasks through mcp-go's client (on a
// session, negotiated in initialize), and the io.modelcontextprotocol/tasks
// extension as raw 2026-07-28 JSON-RPC (internal/testenv/tasks.go). Each
// flavour creates a task, polls it to the end and reads the result; answers
// a waiting elicitation; cancels a run and sees the backend's call
// cancelled; reads a failure; and reads a task from a new connection after
// the one that made it is gone. With bearer tokens, another token gets
// "task not found".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The tasks tests' own port range.
const tasksPortLo, tasksPortHi = 17300, 17349

const tasksConfig = recordedBackend + `
state: {retention: 2h}
compositeTools:
  - name: two_steps
    description: Sleep a little, then echo
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: 100, label: "nap-{{.params.text}}"}}
      - {id: say, tool: tb.echo, dependsOn: [nap], arguments: {text: "{{.params.text}}"}}` + longNapWorkflow + askNameWorkflow + `
  - name: broken
    description: The second step fails
    steps:
      - {id: first, tool: tb.echo, arguments: {text: hi}}
      - {id: second, tool: tb.fail, dependsOn: [first], arguments: {message: the backend said no}}
`

// tasksVMCP serves cfg over HTTP and returns the MCP URL and the backend's
// record file.
func tasksVMCP(t *testing.T, cfg string) (string, string) {
	t.Helper()
	url, rec, _ := recordedHTTPVMCP(t, cfg, tasksPortLo, tasksPortHi)
	return url, rec
}

// v1Client is an mcp-go client on a 2025-11-25 session.
func v1Client(t *testing.T, url string, headers map[string]string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return testenv.HTTPClientHeaders(t, url, headers, append(opts, client.WithLegacyProtocolOnly())...)
}

// waitRecord waits until the backend's record has line.
func waitRecord(t *testing.T, rec, line string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the backend to record %q", line), func() bool {
		b, _ := os.ReadFile(rec)
		for _, l := range strings.Split(string(b), "\n") {
			if l == line {
				return true
			}
		}
		return false
	})
}

func TestTasksExtension(t *testing.T) {
	url, rec := tasksVMCP(t, tasksConfig)
	c := &testenv.ExtTasks{URL: url}

	t.Run("advertised in server/discover", func(t *testing.T) {
		res := c.Result(t, "server/discover", nil)
		ext, _ := res["capabilities"].(map[string]any)["extensions"].(map[string]any)
		if _, ok := ext[testenv.TasksExtension]; !ok {
			t.Fatalf("server/discover capabilities do not name %s: %v", testenv.TasksExtension, res["capabilities"])
		}
	})

	t.Run("create, poll, result", func(t *testing.T) {
		created := c.Call(t, "two_steps", map[string]any{"text": "ext"})
		id, _ := created["taskId"].(string)
		if created["resultType"] != "task" || id == "" || created["status"] != "working" {
			t.Fatalf("tools/call = %v; want resultType task, a taskId, status working", created)
		}
		if created["ttlMs"] != float64(2*time.Hour/time.Millisecond) {
			t.Errorf("ttlMs = %v; want state.retention, 2h", created["ttlMs"])
		}
		// The task exists as soon as it is returned.
		if r := c.Get(t, id); r.Error != nil {
			t.Fatalf("tasks/get right after the create: %v", r.Error)
		}
		done := c.Wait(t, id, "completed")
		res, _ := done["result"].(map[string]any)
		if res == nil || res["isError"] == true {
			t.Fatalf("completed task's result = %v", done["result"])
		}
		if sc, _ := res["structuredContent"].(map[string]any); sc["text"] != "ext" {
			t.Errorf("result structuredContent = %v; want text ext", res["structuredContent"])
		}
		if meta, _ := res["_meta"].(map[string]any); meta["vmcp/runId"] != id {
			t.Errorf("the result's run id %v is not the task id %s", meta["vmcp/runId"], id)
		}
	})

	t.Run("input_required answered with tasks/update", func(t *testing.T) {
		id := c.StartTask(t, "ask_name", nil)
		task := c.Wait(t, id, "input_required")
		reqs, _ := task["inputRequests"].(map[string]any)
		if len(reqs) != 1 {
			t.Fatalf("input_required task has inputRequests %v; want one", task["inputRequests"])
		}
		var key string
		for k, v := range reqs {
			key = k
			r, _ := v.(map[string]any)
			params, _ := r["params"].(map[string]any)
			if r["method"] != "elicitation/create" || params["message"] != "What is your name?" {
				t.Fatalf("input request %s = %v; want elicitation/create asking the step's message", k, v)
			}
		}
		// A key that is not outstanding is ignored.
		c.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			"nope": map[string]any{"action": "accept", "content": map[string]any{"name": "Nobody"}}}})
		if s := c.Get(t, id).Result["status"]; s != "input_required" {
			t.Fatalf("after an answer to an unknown key the task is %v; want still input_required", s)
		}
		c.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"name": "Luca"}}}})
		done := c.Wait(t, id, "completed")
		if sc, _ := done["result"].(map[string]any)["structuredContent"].(map[string]any); sc["text"] != "hello Luca" {
			t.Errorf("result = %v; want hello Luca", done["result"])
		}
	})

	t.Run("cancel reaches the backend", func(t *testing.T) {
		id := c.StartTask(t, "long_nap", map[string]any{"label": "ext-cancel"})
		waitRecord(t, rec, "start ext-cancel")
		if r := c.Result(t, "tasks/cancel", map[string]any{"taskId": id}); r["resultType"] != "complete" {
			t.Errorf("tasks/cancel = %v; want an empty complete result", r)
		}
		c.Wait(t, id, "cancelled")
		waitRecord(t, rec, "cancelled ext-cancel")
	})

	t.Run("a failed run is completed with isError naming the step", func(t *testing.T) {
		id := c.StartTask(t, "broken", nil)
		done := c.Wait(t, id, "completed", "failed")
		if done["status"] != "completed" {
			t.Fatalf("a failed run's task is %v; want completed (failed is for JSON-RPC errors)", done["status"])
		}
		res, _ := done["result"].(map[string]any)
		text := fmt.Sprint(res["content"])
		if res["isError"] != true || !strings.Contains(text, `step "second"`) || !strings.Contains(text, "the backend said no") {
			t.Errorf("result = %v; want isError naming step second and the cause", res)
		}
	})

	t.Run("bad arguments are a tool error, not a task", func(t *testing.T) {
		res := c.Call(t, "two_steps", map[string]any{"txt": "typo"})
		text := fmt.Sprint(res["content"])
		if res["resultType"] != "complete" || res["isError"] != true || !strings.Contains(text, "text") {
			t.Errorf("tools/call with bad arguments = %v; want an isError result naming the parameter", res)
		}
	})

	t.Run("unknown task and undeclared extension", func(t *testing.T) {
		if r := c.Get(t, "0b5b8a4e-0000-4000-8000-000000000000"); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("tasks/get of an unknown id = %+v; want error -32602", r)
		}
		plain := &testenv.ExtTasks{URL: url, NoExtension: true}
		if r := plain.Get(t, "x"); r.Error == nil || r.Error.Code != -32021 {
			t.Errorf("tasks/get without the extension declared = %+v; want error -32021", r)
		}
		// Without the extension a call is an ordinary call.
		res := plain.Call(t, "two_steps", map[string]any{"text": "plain"})
		if res["resultType"] != "complete" || res["structuredContent"].(map[string]any)["text"] != "plain" {
			t.Errorf("tools/call without the extension = %v; want the tool result", res)
		}
	})
}

// TestTasksReferenceClient drives both flavours with the reference Tasks
// client, @modelcontextprotocol/ext-tasks over the TypeScript SDK
// (e2e/sdkclient/tasks.mjs): its 2025-11-25 side polls tasks/get and takes
// questions as elicitation/create requests tied to the task on the
// session's GET stream; its extension side takes them from inputRequests
// and answers with tasks/update.
func TestTasksReferenceClient(t *testing.T) {
	url, rec := tasksVMCP(t, tasksConfig)
	script := filepath.Join("e2e", "sdkclient", "tasks.mjs")
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			stdout, stderr, code := run(t, 2*time.Minute, testenv.RepoRoot(), repoNode(t), script, url, era)
			if code != 0 {
				t.Fatalf("tasks.mjs exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			facts := map[string]map[string]any{}
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var f map[string]any
				if err := json.Unmarshal([]byte(line), &f); err != nil {
					t.Fatalf("tasks.mjs printed %q, not JSON: %v\nstderr:\n%s", line, err, stderr)
				}
				facts[fmt.Sprint(f["case"])] = f
			}
			if f := facts["completed"]; f["kind"] != "task" || f["status"] != "completed" || f["runId"] != f["taskId"] ||
				fmt.Sprint(f["structured"]) != "map[text:sdk]" {
				t.Errorf("completed case = %v; want a task completed with {text: sdk}, its run id the task id", f)
			}
			f := facts["input"]
			asked, _ := f["asked"].([]any)
			if f["status"] != "completed" || fmt.Sprint(f["structured"]) != "map[text:hello Grace]" || len(asked) != 1 {
				t.Fatalf("input case = %v; want one question answered, then hello Grace", f)
			}
			q := asked[0].(map[string]any)
			wantDelivery := map[string]string{"legacy": "peer-request", "modern": "task-update"}[era]
			if q["message"] != "What is your name?" || q["taskId"] != f["taskId"] || q["delivery"] != wantDelivery {
				t.Errorf("the question = %v; want the step's message tied to task %v, delivered as %s", q, f["taskId"], wantDelivery)
			}
			// A failed run: 2025-11-25 failed with the message; the extension
			// completed with an isError result.
			f = facts["failed"]
			msg, _ := f["statusMessage"].(string)
			if !strings.Contains(msg, `workflow broken failed: step "second"`) {
				t.Errorf("failed case statusMessage = %q", msg)
			}
			if era == "legacy" && (f["status"] != "failed" || f["error"] != msg) {
				t.Errorf("2025-11-25 failed case = %v; want failed with the status message", f)
			}
			if era == "modern" && (f["status"] != "completed" || f["isError"] != true) {
				t.Errorf("extension failed case = %v; want completed with isError", f)
			}
			if f := facts["cancelled"]; f["status"] != "cancelled" {
				t.Errorf("cancelled case = %v", f)
			}
			waitRecord(t, rec, "cancelled sdk-"+era)
		})
	}
}

// taskAnswer answers 2025-11-25 elicitation requests and records whether
// they were tied to a task.
type taskAnswer struct {
	name    string
	related chan string // the related task id of each request
}

func (a *taskAnswer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	var task string
	if m := req.Params.Meta; m != nil {
		if rel, ok := m.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any); ok {
			task, _ = rel["taskId"].(string)
		}
	}
	a.related <- task
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"name": a.name}}}, nil
}

// next returns the related task id of the next question, within 30s.
func (a *taskAnswer) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-a.related:
		return id
	case <-time.After(30 * time.Second):
		t.Fatalf("no elicitation/create request came within 30s")
		return ""
	}
}

func taskResult(t *testing.T, c *client.Client, id string) *mcp.TaskResultResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
	if err != nil {
		t.Fatalf("tasks/result %s: %v", id, err)
	}
	return res
}

func resultText(res *mcp.TaskResultResult) string {
	return testenv.ResultText(&mcp.CallToolResult{Content: res.Content})
}

func TestTasks20251125(t *testing.T) {
	url, rec := tasksVMCP(t, tasksConfig)
	c := v1Client(t, url, nil)

	t.Run("advertised", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.Execution == nil || tool.Execution.TaskSupport != mcp.TaskSupportOptional {
				t.Errorf("tool %s: execution %+v; want taskSupport optional", tool.Name, tool.Execution)
			}
		}
	})

	t.Run("create, poll, result", func(t *testing.T) {
		task := testenv.StartTask(t, c, "two_steps", map[string]any{"text": "v1"})
		if task.Status != mcp.TaskStatusWorking || task.TTL == nil || *task.TTL != int64(2*time.Hour/time.Millisecond) {
			t.Fatalf("created task = %+v; want working with ttl 2h", task)
		}
		testenv.WaitTask(t, c, task.TaskId, mcp.TaskStatusCompleted)
		res := taskResult(t, c, task.TaskId)
		if res.IsError || resultText(res) != `{"text":"v1"}` {
			t.Errorf("tasks/result = %q (isError %v); want {\"text\":\"v1\"}", resultText(res), res.IsError)
		}
		if rel, _ := res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any); rel["taskId"] != task.TaskId {
			t.Errorf("tasks/result _meta = %v; want the related task %s", res.Meta.AdditionalFields, task.TaskId)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		list, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, lt := range list.Tasks {
			found = found || lt.TaskId == task.TaskId
		}
		if !found {
			t.Errorf("tasks/list does not list %s: %+v", task.TaskId, list.Tasks)
		}
	})

	t.Run("input_required answered through elicitation/create", func(t *testing.T) {
		answer := &taskAnswer{name: "Ada", related: make(chan string, 1)}
		ec := v1Client(t, url, nil, client.WithElicitationHandler(answer))
		task := testenv.StartTask(t, ec, "ask_name", nil)
		testenv.WaitTask(t, ec, task.TaskId, mcp.TaskStatusInputRequired)
		// tasks/result carries the question and waits for the end.
		res := taskResult(t, ec, task.TaskId)
		if got := answer.next(t); got != task.TaskId {
			t.Errorf("the elicitation/create request is tied to task %q; want %s", got, task.TaskId)
		}
		if resultText(res) != `{"text":"hello Ada"}` {
			t.Errorf("tasks/result = %q; want hello Ada", resultText(res))
		}
		if got := testenv.WaitTask(t, ec, task.TaskId, mcp.TaskStatusCompleted); got.Status != mcp.TaskStatusCompleted {
			t.Errorf("status = %s", got.Status)
		}
	})

	t.Run("bad arguments are a JSON-RPC error", func(t *testing.T) {
		_, err := testenv.CallAsTask(c, "two_steps", map[string]any{"txt": "typo"})
		var rpcErr *testenv.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.INVALID_PARAMS || !strings.Contains(rpcErr.Message, "invalid arguments for two_steps") {
			t.Errorf("tools/call as a task with bad arguments = %v; want -32602 naming the workflow", err)
		}
	})

	t.Run("cancel reaches the backend", func(t *testing.T) {
		task := testenv.StartTask(t, c, "long_nap", map[string]any{"label": "v1-cancel"})
		waitRecord(t, rec, "start v1-cancel")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != mcp.TaskStatusCancelled {
			t.Errorf("tasks/cancel = %s; want cancelled", res.Status)
		}
		waitRecord(t, rec, "cancelled v1-cancel")
		if _, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}}); err == nil {
			t.Errorf("cancelling a cancelled task succeeded; want an error")
		}
	})

	t.Run("a failed run is failed with the same message", func(t *testing.T) {
		task := testenv.StartTask(t, c, "broken", nil)
		got := testenv.WaitTask(t, c, task.TaskId, mcp.TaskStatusFailed, mcp.TaskStatusCompleted)
		if got.Status != mcp.TaskStatusFailed || !strings.Contains(got.StatusMessage, `step "second"`) {
			t.Errorf("task = %s %q; want failed naming step second", got.Status, got.StatusMessage)
		}
		res := taskResult(t, c, task.TaskId)
		if !res.IsError || !strings.Contains(resultText(res), got.StatusMessage) {
			t.Errorf("tasks/result = %q (isError %v); want an isError result with %q", resultText(res), res.IsError, got.StatusMessage)
		}
	})
}

// TestTasksStdio runs 2025-11-25 tasks over stdio, where the client owns
// the process: create and read the result, a question asked through the
// session while tasks/result waits, and a cancel.
func TestTasksStdio(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	answer := &taskAnswer{name: "Lin", related: make(chan string, 1)}
	c, _ := stdioVMCP(t, writeConfig(t, tasksConfig, rec), client.WithElicitationHandler(answer), client.WithLegacyProtocolOnly())

	task := testenv.StartTask(t, c, "two_steps", map[string]any{"text": "stdio"})
	testenv.WaitTask(t, c, task.TaskId, mcp.TaskStatusCompleted)
	first := taskResult(t, c, task.TaskId)
	if got := resultText(first); got != `{"text":"stdio"}` {
		t.Errorf("tasks/result = %q", got)
	}
	if id := first.Meta.AdditionalFields["vmcp/runId"]; id != task.TaskId {
		t.Errorf("the result's run id %v is not the task id %s", id, task.TaskId)
	}

	task = testenv.StartTask(t, c, "ask_name", nil)
	res := taskResult(t, c, task.TaskId) // the question goes out meanwhile
	if got := answer.next(t); got != task.TaskId {
		t.Errorf("the elicitation/create request is tied to task %q; want %s", got, task.TaskId)
	}
	if resultText(res) != `{"text":"hello Lin"}` {
		t.Errorf("tasks/result = %q; want hello Lin", resultText(res))
	}

	task = testenv.StartTask(t, c, "long_nap", map[string]any{"label": "stdio-cancel"})
	waitRecord(t, rec, "start stdio-cancel")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cres, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
	if err != nil || cres.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/cancel = %+v, %v; want cancelled", cres, err)
	}
	waitRecord(t, rec, "cancelled stdio-cancel")
	// Plain calls still work beside the tasks.
	if r := mustCall(t, c, "two_steps", map[string]any{"text": "plain"}); testenv.ResultText(r) != `{"text":"plain"}` {
		t.Errorf("a plain call = %q", testenv.ResultText(r))
	}
}

const tasksAuthConfig = tasksConfig + `
server:
  auth:
    tokens:
      - {token: token-alice, scopes: [run]}
      - {token: token-bob, scopes: [run]}
`

func TestTasksOutliveTheirSession(t *testing.T) {
	url, _ := tasksVMCP(t, tasksAuthConfig)
	alice := map[string]string{"Authorization": "Bearer token-alice"}
	bob := map[string]string{"Authorization": "Bearer token-bob"}

	t.Run("2025-11-25", func(t *testing.T) {
		first := v1Client(t, url, alice)
		task := testenv.StartTask(t, first, "two_steps", map[string]any{"text": "kept"})
		first.Close() // deletes the session
		again := v1Client(t, url, alice)
		testenv.WaitTask(t, again, task.TaskId, mcp.TaskStatusCompleted)
		if got := resultText(taskResult(t, again, task.TaskId)); got != `{"text":"kept"}` {
			t.Errorf("tasks/result from a new session = %q", got)
		}
		other := v1Client(t, url, bob)
		if _, err := testenv.GetTask(t, other, task.TaskId); err == nil || !strings.Contains(err.Error(), "task not found") {
			t.Errorf("tasks/get with another token = %v; want task not found", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		list, err := other.ListTasks(ctx, mcp.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, lt := range list.Tasks {
			if lt.TaskId == task.TaskId {
				t.Errorf("tasks/list with another token lists %s", task.TaskId)
			}
		}
	})

	t.Run("extension", func(t *testing.T) {
		id := (&testenv.ExtTasks{URL: url, Headers: alice}).StartTask(t, "two_steps", map[string]any{"text": "ext-kept"})
		again := &testenv.ExtTasks{URL: url, Headers: alice}
		done := again.Wait(t, id, "completed")
		if sc, _ := done["result"].(map[string]any)["structuredContent"].(map[string]any); sc["text"] != "ext-kept" {
			t.Errorf("result = %v", done["result"])
		}
		other := &testenv.ExtTasks{URL: url, Headers: bob}
		if r := other.Get(t, id); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("tasks/get with another token = %+v; want -32602 task not found", r)
		}
		if r := other.Request(t, "tasks/cancel", map[string]any{"taskId": id}); r.Error == nil {
			t.Errorf("tasks/cancel with another token succeeded")
		}
	})
}
