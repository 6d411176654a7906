package testenv

// Clients of MCP Tasks for tests, in both flavours:
//
//   - ExtTasks speaks the io.modelcontextprotocol/tasks extension as raw
//     JSON-RPC over HTTP (no Go SDK implements it): 2026-07-28 requests,
//     no session, the extension and elicitation declared in each request's
//     _meta;
//   - StartTask, GetTask and WaitTask drive MCP 2025-11-25 tasks through an
//     mcp-go client (which has GetTask, TaskResult, ListTasks and
//     CancelTask, but whose CallTool cannot return a CreateTaskResult, so
//     the create goes through its transport).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// ExtTasks is a client of the Tasks extension at url. Headers (for
// example Authorization) go with every request.
type ExtTasks struct {
	URL     string
	Headers map[string]string
	// NoExtension leaves the extension out of the declared capabilities.
	NoExtension bool
	next        int
}

// ExtReply is the answer to one request: its result or its error.
type ExtReply struct {
	Result map[string]any
	Error  *RPCError
}

// RPCError is a JSON-RPC error.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Request sends one 2026-07-28 request within 30 seconds.
func (c *ExtTasks) Request(t testing.TB, method string, params map[string]any) ExtReply {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	caps := map[string]any{"elicitation": map[string]any{}}
	if !c.NoExtension {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "vmcp-tests", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	c.next++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	} else if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the response: %v", method, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = lastSSEData(raw)
	}
	var msg struct {
		Result map[string]any `json:"result"`
		Error  *RPCError      `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("%s: HTTP %d, body %q is not a JSON-RPC reply: %v", method, resp.StatusCode, raw, err)
	}
	return ExtReply{msg.Result, msg.Error}
}

// lastSSEData is the data of the last event of an SSE body.
func lastSSEData(raw []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			last = d
		}
	}
	return last
}

// Result is Request that fails the test on a JSON-RPC error.
func (c *ExtTasks) Result(t testing.TB, method string, params map[string]any) map[string]any {
	t.Helper()
	r := c.Request(t, method, params)
	if r.Error != nil {
		t.Fatalf("%s: %v", method, r.Error)
	}
	return r.Result
}

// Call calls tool and returns its result: a CreateTaskResult (resultType
// "task") or a tool result.
func (c *ExtTasks) Call(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return c.Result(t, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// StartTask calls tool and returns the task id, failing the test when the
// server did not make a task.
func (c *ExtTasks) StartTask(t testing.TB, tool string, args map[string]any) string {
	t.Helper()
	res := c.Call(t, tool, args)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("tools/call %s did not return a task: %v", tool, res)
	}
	return id
}

// Get is tasks/get.
func (c *ExtTasks) Get(t testing.TB, id string) ExtReply {
	t.Helper()
	return c.Request(t, "tasks/get", map[string]any{"taskId": id})
}

// Wait polls tasks/get every 20ms until the task's status is one of
// statuses, within 30 seconds, and returns that task.
func (c *ExtTasks) Wait(t testing.TB, id string, statuses ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		last = c.Result(t, "tasks/get", map[string]any{"taskId": id})
		if s, _ := last["status"].(string); slices.Contains(statuses, s) {
			return last
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s did not reach %v within 30s; last tasks/get: %v", id, statuses, last)
	return nil
}

// StartTask calls tool as a 2025-11-25 task (params.task) through c's
// transport and returns the task the server created.
func StartTask(t testing.TB, c *client.Client, tool string, args map[string]any) mcp.Task {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(time.Now().UnixNano()),
		Method:  string(mcp.MethodToolsCall),
		Params:  map[string]any{"name": tool, "arguments": args, "task": map[string]any{}},
	})
	if err != nil {
		t.Fatalf("tools/call %s as a task: %v", tool, err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/call %s as a task: JSON-RPC error %d: %s", tool, resp.Error.Code, resp.Error.Message)
	}
	var res mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.Task.TaskId == "" {
		t.Fatalf("tools/call %s as a task returned %s, not a CreateTaskResult (%v)", tool, resp.Result, err)
	}
	return res.Task
}

// GetTask is tasks/get through c, within 30 seconds.
func GetTask(t testing.TB, c *client.Client, id string) (mcp.Task, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
	if err != nil {
		return mcp.Task{}, err
	}
	return res.Task, nil
}

// WaitTask polls tasks/get every 20ms until the task's status is one of
// statuses, within 30 seconds.
func WaitTask(t testing.TB, c *client.Client, id string, statuses ...mcp.TaskStatus) mcp.Task {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last mcp.Task
	for time.Now().Before(deadline) {
		task, err := GetTask(t, c, id)
		if err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		if slices.Contains(statuses, task.Status) {
			return task
		}
		last = task
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s did not reach %v within 30s; last status %s (%s)", id, statuses, last.Status, last.StatusMessage)
	return mcp.Task{}
}
