package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// BenchmarkTaskGet measures one tasks/get through the endpoint, in process
// (no network), for a task waiting on its question and for a finished one:
// the cost a polling client puts on vmcp.
func BenchmarkTaskGet(b *testing.B) {
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(taskWorkflows)}}, compiler.Options{})
	if diags.HasErrors() {
		b.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Runner: eng, Tasks: TaskOptions{Runs: eng}})
	if err != nil {
		b.Fatal(err)
	}
	ep := srv.MCPHandler()
	defer ep.CloseSessions(b.Context())
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{TasksExtension: map[string]any{}}},
	}
	post := func(method string, params map[string]any) map[string]any {
		params["_meta"] = meta
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req := httptest.NewRequest(http.MethodPost, MCPPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if id, ok := params["taskId"].(string); ok {
			req.Header.Set("Mcp-Name", id)
		} else if name, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", name)
		}
		rec := httptest.NewRecorder()
		ep.ServeHTTP(rec, req)
		var reply struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil || reply.Result == nil {
			b.Fatalf("%s: %s", method, rec.Body.String())
		}
		return reply.Result
	}
	waitFor := func(id, status string) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if post("tasks/get", map[string]any{"taskId": id})["status"] == status {
				return
			}
		}
		b.Fatalf("task %s never %s", id, status)
	}
	waiting := post("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"n": 1}})["taskId"].(string)
	waitFor(waiting, "input_required")
	done := post("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"n": 2}})["taskId"].(string)
	waitFor(done, "input_required")
	key := "q-1"
	post("tasks/update", map[string]any{"taskId": done, "inputResponses": map[string]any{
		key: map[string]any{"action": "accept", "content": map[string]any{"answer": "x"}}}})
	waitFor(done, "completed")

	for _, bc := range []struct{ name, id string }{{"input_required", waiting}, {"completed", done}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				post("tasks/get", map[string]any{"taskId": bc.id})
			}
		})
	}
	if err := eng.Cancel(b.Context(), waiting); err != nil {
		b.Fatal(err)
	}
	waitFor(waiting, "cancelled")
}
