package testservers

// TraceRecorder is an MCP server that records the W3C trace context each
// tool call brings: params._meta.traceparent (and tracestate) and, over
// HTTP, the traceparent header. The tracing tests serve it over HTTP and
// check that every backend call carried its client span's context.
//
//	work {n, fail}      structured {n}; with fail true an isError result
//	traceparent         structured {meta, header}: what this call brought
//	block               answers only when the call is cancelled

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TraceCall is what one call brought.
type TraceCall struct {
	Tool string
	// Meta and MetaState are params._meta's traceparent and tracestate;
	// Header the traceparent HTTP header ("" when absent).
	Meta, MetaState, Header string
}

// TraceRecorder serves the tools above and remembers every call.
type TraceRecorder struct {
	srv   *server.MCPServer
	mu    sync.Mutex
	calls []TraceCall
}

// NewTraceRecorder returns a recorder with no calls.
func NewTraceRecorder() *TraceRecorder {
	r := &TraceRecorder{srv: server.NewMCPServer("vmcp-tracerec", "1.0.0", server.WithToolCapabilities(true))}
	r.srv.AddTool(mcp.NewTool("work", mcp.WithDescription("Do unit n of work; fail on request."),
		mcp.WithNumber("n"), mcp.WithBoolean("fail")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.record(req)
			if req.GetBool("fail", false) {
				return mcp.NewToolResultError("unit failed"), nil
			}
			return mcp.NewToolResultStructuredOnly(map[string]any{"n": req.GetFloat("n", 0)}), nil
		})
	r.srv.AddTool(mcp.NewTool("traceparent", mcp.WithDescription("What trace context this call brought.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := r.record(req)
			return mcp.NewToolResultStructuredOnly(map[string]any{"meta": c.Meta, "header": c.Header}), nil
		})
	r.srv.AddTool(mcp.NewTool("block", mcp.WithDescription("Wait until the call is cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.record(req)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	return r
}

func (r *TraceRecorder) record(req mcp.CallToolRequest) TraceCall {
	c := TraceCall{Tool: req.Params.Name, Header: req.Header.Get("traceparent")}
	if m := req.Params.Meta; m != nil {
		c.Meta, _ = m.AdditionalFields["traceparent"].(string)
		c.MetaState, _ = m.AdditionalFields["tracestate"].(string)
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return c
}

// Server is the MCP server, to serve over HTTP.
func (r *TraceRecorder) Server() *server.MCPServer { return r.srv }

// Calls are the calls so far, in the order they came.
func (r *TraceRecorder) Calls() []TraceCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]TraceCall(nil), r.calls...)
}
