package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// fakeBackends serves two tools on one backend; calling "down" fails the
// way a dead backend does.
type fakeBackends struct{ calls []string }

func (f *fakeBackends) Tools(backend string) []mcp.Tool {
	if backend != "files" {
		return nil
	}
	read := mcp.NewToolWithRawSchema("read", "Read a file", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","pattern":"^/"}},"required":["path"]}`))
	down := mcp.NewTool("down", mcp.WithDescription("Always unavailable"))
	return []mcp.Tool{read, down}
}

func (f *fakeBackends) CallRaw(_ context.Context, backend, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	f.calls = append(f.calls, backend+"."+tool)
	if tool == "down" {
		return nil, errors.New(`backend "files" exited: exit status 1`)
	}
	return mcp.NewToolResultStructuredOnly(map[string]any{"path": args["path"], "body": "hello"}), nil
}

func TestExposedBackendTools(t *testing.T) {
	bk := &fakeBackends{}
	s, err := New(Options{Runner: &fakeRunner{wfs: testWorkflows[1:]}, Backends: bk, BackendNames: []string{"files"}, Expose: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"files_down", "files_read", "plain"}, s.ToolNames()); diff != "" {
		t.Errorf("ToolNames mismatch (-want +got):\n%s", diff)
	}
	c := inProcessClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != "files_read" {
			continue
		}
		raw, _ := json.Marshal(tool)
		var got struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		json.Unmarshal(raw, &got)
		want := map[string]any{"type": "object", "required": []any{"path"},
			"properties": map[string]any{"path": map[string]any{"type": "string", "pattern": "^/"}}}
		if diff := cmp.Diff(want, got.InputSchema); diff != "" {
			t.Errorf("files_read inputSchema mismatch (-want +got):\n%s", diff)
		}
	}

	res := call(t, c, "files_read", map[string]any{"path": "/etc/motd"}, nil)
	if diff := cmp.Diff(map[string]any{"path": "/etc/motd", "body": "hello"}, res.StructuredContent); diff != "" || res.IsError {
		t.Errorf("files_read result mismatch (-want +got):\n%s", diff)
	}
	res = call(t, c, "files_down", nil, nil)
	want := `backend files tool down: backend "files" exited: exit status 1`
	if !res.IsError || testenv.ResultText(res) != want {
		t.Errorf("files_down = (isError %v) %q; want isError %q", res.IsError, testenv.ResultText(res), want)
	}
	if diff := cmp.Diff([]string{"files.read", "files.down"}, bk.calls); diff != "" {
		t.Errorf("backend calls mismatch (-want +got):\n%s", diff)
	}
}
