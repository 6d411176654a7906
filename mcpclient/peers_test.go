package mcpclient

// Tests against the real npm MCP servers (see package.json).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestEverythingAllTransports(t *testing.T) {
	tests := []struct {
		name    string
		backend func(t *testing.T) *config.Backend
	}{
		{"stdio", everythingStdio},
		{"streamable-http", func(t *testing.T) *config.Backend {
			port := startNodeServer(t, "mcp-server-everything", []string{"streamableHttp"})
			return &config.Backend{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Transport: config.TransportStreamableHTTP,
				Headers: map[string]string{"X-Test": "1"}, Timeout: 30 * time.Second}
		}},
		{"streamable-http continuous listening", func(t *testing.T) *config.Backend {
			port := startNodeServer(t, "mcp-server-everything", []string{"streamableHttp"})
			return &config.Backend{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Transport: config.TransportStreamableHTTP,
				ContinuousListening: true, Timeout: 30 * time.Second}
		}},
		{"sse", func(t *testing.T) *config.Backend {
			port := startNodeServer(t, "mcp-server-everything", []string{"sse"})
			return &config.Backend{URL: fmt.Sprintf("http://127.0.0.1:%d/sse", port), Transport: config.TransportSSE, Timeout: 30 * time.Second}
		}},
	}
	calls := []struct {
		tool string
		args map[string]any
		want *runtime.ToolResult
	}{
		{"echo", map[string]any{"message": "hello vmcp"}, &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: "Echo: hello vmcp"}}}},
		{"get-sum", map[string]any{"a": 2, "b": 40}, &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: "The sum of 2 and 40 is 42."}}}},
		{"get-structured-content", map[string]any{"location": "Chicago"}, &runtime.ToolResult{
			Structured: map[string]any{"temperature": float64(36), "conditions": "Light rain / drizzle", "humidity": float64(82)},
			Content:    []runtime.Content{{Type: "text", Text: `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			m := connect(t, map[string]*config.Backend{"ev": tt.backend(t)})
			var names []string
			for _, tl := range m.Tools("ev") {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"echo", "get-structured-content", "get-sum", "get-tiny-image"} {
				if !contains(names, want) {
					t.Errorf("Tools(ev) = %v; want it to include %q", names, want)
				}
			}
			for _, c := range calls {
				got, err := m.CallTool(context.Background(), runtime.ToolCall{Backend: "ev", Tool: c.tool, Arguments: c.args})
				if err != nil {
					t.Errorf("CallTool(ev.%s) error: %v", c.tool, err)
					continue
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("CallTool(ev.%s) mismatch (-want +got):\n%s", c.tool, diff)
				}
			}
			img, err := m.CallTool(context.Background(), runtime.ToolCall{Backend: "ev", Tool: "get-tiny-image", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("CallTool(ev.get-tiny-image): %v", err)
			}
			var sawImage bool
			for _, c := range img.Content {
				if c.Type == "image" {
					sawImage = true
					if c.Raw["mimeType"] != "image/png" || c.Raw["data"] == "" || c.Raw["type"] != "image" {
						t.Errorf("image content Raw = %v; want type image, mimeType image/png and data", c.Raw)
					}
				}
			}
			if !sawImage {
				t.Errorf("CallTool(ev.get-tiny-image) content = %+v; want an image item", img.Content)
			}
			cat := m.Catalog()
			tool, ok := cat.Tool("ev", "get-sum")
			if !ok {
				t.Fatalf("Catalog().Tool(ev, get-sum) missing; catalog backends %v", cat.BackendNames())
			}
			props, _ := tool.InputSchema["properties"].(map[string]any)
			if _, ok := props["a"]; !ok || tool.InputSchema["type"] != "object" {
				t.Errorf("get-sum input schema = %v; want an object schema with property a", tool.InputSchema)
			}
		})
	}
}

func TestMemoryChain(t *testing.T) {
	dir := t.TempDir()
	mem := &config.Backend{Command: testenv.NodeBin(t, "mcp-server-memory"), Transport: config.TransportStdio,
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}, Timeout: 30 * time.Second}
	m := connect(t, map[string]*config.Backend{"memory": mem})
	ctx := context.Background()
	entity := map[string]any{"name": "incident-42", "entityType": "incident", "observations": []any{"disk full on db-1"}}
	created, err := m.CallTool(ctx, runtime.ToolCall{Backend: "memory", Tool: "create_entities", Arguments: map[string]any{"entities": []any{entity}}})
	if err != nil || created.IsError {
		t.Fatalf("create_entities = %+v, %v; want success", created, err)
	}
	wantCreated := map[string]any{"entities": []any{entity}}
	if diff := cmp.Diff(wantCreated, created.Structured); diff != "" {
		t.Errorf("create_entities structured (-want +got):\n%s", diff)
	}
	graph, err := m.CallTool(ctx, runtime.ToolCall{Backend: "memory", Tool: "read_graph", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("read_graph: %v", err)
	}
	g, _ := graph.Structured.(map[string]any)
	if diff := cmp.Diff([]any{entity}, g["entities"]); diff != "" {
		t.Errorf("read_graph entities (-want +got):\n%s", diff)
	}
	found, err := m.CallTool(ctx, runtime.ToolCall{Backend: "memory", Tool: "search_nodes", Arguments: map[string]any{"query": "db-1"}})
	if err != nil {
		t.Fatalf("search_nodes: %v", err)
	}
	f, _ := found.Structured.(map[string]any)
	if diff := cmp.Diff([]any{entity}, f["entities"]); diff != "" {
		t.Errorf("search_nodes(db-1) entities (-want +got):\n%s", diff)
	}
}

func TestFilesystem(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "seed.txt"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := &config.Backend{Command: testenv.NodeBin(t, "mcp-server-filesystem"), Args: []string{dir}, Transport: config.TransportStdio, Timeout: 30 * time.Second}
	m := connect(t, map[string]*config.Backend{"fs": fs})
	ctx := context.Background()

	read, err := m.CallTool(ctx, runtime.ToolCall{Backend: "fs", Tool: "read_text_file", Arguments: map[string]any{"path": filepath.Join(dir, "seed.txt")}})
	if err != nil || read.IsError {
		t.Fatalf("read_text_file = %+v, %v", read, err)
	}
	if diff := cmp.Diff(map[string]any{"content": "line one\nline two\n"}, read.Structured); diff != "" {
		t.Errorf("read_text_file structured (-want +got):\n%s", diff)
	}
	target := filepath.Join(dir, "out.txt")
	wrote, err := m.CallTool(ctx, runtime.ToolCall{Backend: "fs", Tool: "write_file", Arguments: map[string]any{"path": target, "content": "from vmcp"}})
	if err != nil || wrote.IsError {
		t.Fatalf("write_file = %+v, %v", wrote, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "from vmcp" {
		t.Errorf("after write_file, %s = %q, %v; want %q", target, b, err, "from vmcp")
	}
	// Outside the allowed directory: a tool error, not a Go error, and the
	// session goes on.
	denied, err := m.CallTool(ctx, runtime.ToolCall{Backend: "fs", Tool: "read_text_file", Arguments: map[string]any{"path": "/etc/hostname"}})
	if err != nil {
		t.Fatalf("read_text_file outside the root: Go error %v; want an isError result", err)
	}
	if !denied.IsError || len(denied.Content) == 0 || !strings.Contains(strings.ToLower(denied.Content[0].Text), "denied") {
		t.Errorf("read_text_file outside the root = %+v; want isError with an access denied text", denied)
	}
	if err := m.Ready()["fs"]; err != nil {
		t.Errorf("Ready()[fs] = %v after a tool error; want nil", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
