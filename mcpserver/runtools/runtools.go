package runtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/auth/access"
	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Tool names.
const (
	StatusTool = "vmcp_run_status"
	CancelTool = "vmcp_run_cancel"
)

// Options configure the tools.
type Options struct {
	Engine httpapi.Engine // required
	Store  httpapi.Lister // required
	// CancelWait is how long vmcp_run_cancel waits for the run to stop
	// (default 5s).
	CancelWait time.Duration
}

const statusSchema = `{
  "type": "object",
  "properties": {
    "run_id": {"type": "string", "description": "The run to report on (returned in a workflow result's _meta). Omit it to list recent runs."},
    "workflow": {"type": "string", "description": "When listing, only runs of this workflow."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "When listing, how many runs (default 10)."}
  }
}`

const cancelSchema = `{
  "type": "object",
  "properties": {
    "run_id": {"type": "string", "description": "The run to cancel."}
  },
  "required": ["run_id"]
}`

// Tools returns vmcp_run_status and vmcp_run_cancel.
func Tools(opts Options) ([]mcpgo.ServerTool, error) {
	if opts.Engine == nil || opts.Store == nil {
		return nil, errors.New("runtools: engine and store are required")
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 5 * time.Second
	}
	// The tools see only the caller's runs (package access).
	opts.Engine, opts.Store = access.Engine(opts.Engine), access.Store(opts.Store)
	status := mcp.NewToolWithRawSchema(StatusTool,
		"Report the status of a vmcp workflow run: each step's status, attempts, timings, output and error. Without run_id, list recent runs.",
		json.RawMessage(statusSchema))
	status.Annotations = mcp.ToolAnnotation{Title: "Workflow run status", ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}
	cancel := mcp.NewToolWithRawSchema(CancelTool,
		"Cancel a running vmcp workflow run: its backend calls are cancelled and the run ends as cancelled. Cancelling a finished run changes nothing.",
		json.RawMessage(cancelSchema))
	cancel.Annotations = mcp.ToolAnnotation{Title: "Cancel a workflow run", ReadOnlyHint: ptr(false), DestructiveHint: ptr(true),
		IdempotentHint: ptr(true), OpenWorldHint: ptr(false)}
	t := &tools{opts: opts}
	return []mcpgo.ServerTool{
		{Tool: status, Handler: t.status},
		{Tool: cancel, Handler: t.cancel},
	}, nil
}

func ptr(b bool) *bool { return &b }

type tools struct{ opts Options }

func (t *tools) get(ctx context.Context, id string) (*runtime.Run, error) {
	run, err := t.opts.Engine.Status(ctx, id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		return t.opts.Store.GetRun(ctx, id)
	}
	return run, err
}

func (t *tools) status(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("run_id", "")
	if id == "" {
		limit := req.GetInt("limit", 10)
		if limit < 1 || limit > 100 {
			return mcp.NewToolResultError("limit must be from 1 to 100"), nil
		}
		runs, err := t.opts.Store.ListRuns(ctx, runtime.RunFilter{Workflow: req.GetString("workflow", ""), Limit: limit})
		if err != nil {
			return mcp.NewToolResultErrorf("listing runs: %v", err), nil
		}
		out := httpapi.RunList{Runs: make([]httpapi.RunSummary, 0, len(runs))}
		now := time.Now()
		for _, r := range runs {
			out.Runs = append(out.Runs, httpapi.Summarize(r, now))
		}
		return structured(out)
	}
	run, err := t.get(ctx, id)
	if errors.Is(err, runtime.ErrRunNotFound) {
		return mcp.NewToolResultErrorf("no run %q", id), nil
	}
	if err != nil {
		return mcp.NewToolResultErrorf("reading run %q: %v", id, err), nil
	}
	return structured(httpapi.Detail(run, time.Now()))
}

func (t *tools) cancel(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("run_id")
	if err != nil || id == "" {
		return mcp.NewToolResultError("run_id is required"), nil
	}
	if err := t.opts.Engine.Cancel(ctx, id); err != nil {
		if errors.Is(err, runtime.ErrRunNotFound) {
			return mcp.NewToolResultErrorf("no run %q", id), nil
		}
		return mcp.NewToolResultErrorf("cancelling run %q: %v", id, err), nil
	}
	deadline := time.Now().Add(t.opts.CancelWait)
	for {
		run, err := t.get(ctx, id)
		if err != nil {
			return mcp.NewToolResultErrorf("reading run %q: %v", id, err), nil
		}
		if run.Status.Finished() || time.Now().After(deadline) {
			return structured(httpapi.Detail(run, time.Now()))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// structured returns v as structuredContent plus the same JSON as text.
func structured(v any) (*mcp.CallToolResult, error) {
	b, err := runtime.MarshalJSON(v)
	if err != nil {
		return nil, fmt.Errorf("runtools: encoding result: %w", err)
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}
