package runtools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

type hangBackend struct{ started, cancelled chan struct{} }

func (h *hangBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	if call.Tool == "fast" {
		return &runtime.ToolResult{Structured: map[string]any{"ok": true}}, nil
	}
	close(h.started)
	<-ctx.Done()
	close(h.cancelled)
	return nil, ctx.Err()
}

func setup(t *testing.T) (*runtime.Engine, *hangBackend, *client.Client) {
	t.Helper()
	step := func(i int, id, tool string, deps ...int) *ir.Step {
		return &ir.Step{Index: i, ID: id, Type: ir.StepTool, Deps: deps, Timeout: ir.Duration(time.Minute),
			Tool: &ir.ToolRef{Backend: "be", Name: tool}}
	}
	plan := irbuild.Plan(&ir.Workflow{
		Name: "slow", Description: "d", Timeout: ir.Duration(time.Minute), FailureMode: ir.FailureAbort, MaxParallel: 10,
		InputSchema: map[string]any{"type": "object"}, Steps: []*ir.Step{step(0, "a", "fast"), step(1, "wait", "hang", 0)},
	})
	be := &hangBackend{started: make(chan struct{}), cancelled: make(chan struct{})}
	eng, err := runtime.New(plan, runtime.Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(Options{Engine: eng, Store: eng.Store()})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpgo.NewMCPServer("test", "1", mcpgo.WithToolCapabilities(false))
	srv.AddTools(tools...)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return eng, be, c
}

func call(t *testing.T, c *client.Client, name string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s structured content %s: %v", name, b, err)
		}
	}
	return res
}

func TestToolsListed(t *testing.T) {
	_, _, c := setup(t)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Name == CancelTool && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Errorf("%s does not declare destructiveHint", CancelTool)
		}
	}
	if strings.Join(names, ",") != "vmcp_run_cancel,vmcp_run_status" && strings.Join(names, ",") != "vmcp_run_status,vmcp_run_cancel" {
		t.Errorf("tools/list = %v; want vmcp_run_status and vmcp_run_cancel", names)
	}
}

func TestStatusAndCancelAsAgentTools(t *testing.T) {
	eng, be, c := setup(t)
	done := make(chan *runtime.Run, 1)
	go func() {
		run, _ := eng.Run(context.Background(), "slow", nil, runtime.RunOptions{RunID: "r-1"})
		done <- run
	}()
	<-be.started

	var d httpapi.RunDetail
	if res := call(t, c, StatusTool, map[string]any{"run_id": "r-1"}, &d); res.IsError || d.Status != runtime.RunRunning || d.Steps[1].Status != runtime.StepRunning {
		t.Fatalf("%s(r-1) = error %v, status %s; want running with step wait running", StatusTool, res.IsError, d.Status)
	}
	var list httpapi.RunList
	if res := call(t, c, StatusTool, map[string]any{}, &list); res.IsError || len(list.Runs) != 1 || list.Runs[0].ID != "r-1" {
		t.Errorf("%s() = %+v; want a list with r-1", StatusTool, list)
	}

	d = httpapi.RunDetail{}
	if res := call(t, c, CancelTool, map[string]any{"run_id": "r-1"}, &d); res.IsError || d.Status != runtime.RunCancelled {
		t.Fatalf("%s(r-1) = error %v, status %s; want cancelled", CancelTool, res.IsError, d.Status)
	}
	select {
	case <-be.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend call was not cancelled")
	}
	if run := <-done; run.Status != runtime.RunCancelled {
		t.Errorf("run ended %s; want cancelled", run.Status)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{StatusTool, map[string]any{"run_id": "ghost"}, `no run "ghost"`},
		{CancelTool, map[string]any{"run_id": "ghost"}, `no run "ghost"`},
		{CancelTool, map[string]any{}, "run_id is required"},
		{StatusTool, map[string]any{"limit": 500}, "limit must be from 1 to 100"},
	} {
		res := call(t, c, tc.tool, tc.args, nil)
		text := ""
		if len(res.Content) > 0 {
			if tx, ok := res.Content[0].(mcp.TextContent); ok {
				text = tx.Text
			}
		}
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s(%v) = isError %v %q; want an error containing %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
}

func TestToolsNeedEngineAndStore(t *testing.T) {
	if _, err := Tools(Options{}); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("Tools(Options{}) = %v; want an error saying engine and store are required", err)
	}
}
