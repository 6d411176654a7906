package mcpclient

// The W3C trace context of a call (toolcall.Trace, set by the tracing
// Backend decorator) goes to the backend in params._meta, as the MCP
// semantic conventions say, and to a streamable HTTP backend also as the
// traceparent and tracestate headers, so a backend that traces either
// way joins the run's trace. Calls without one send neither.

import (
	"context"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// traceMeta is the params._meta fields of a call's trace context.
func traceMeta(tc toolcall.Trace) map[string]any {
	m := map[string]any{"traceparent": tc.Traceparent}
	if tc.Tracestate != "" {
		m["tracestate"] = tc.Tracestate
	}
	return m
}

// traceHeaders is the HTTP headers of the trace context of the call made
// with ctx (mcp-go asks for each request it sends).
func traceHeaders(ctx context.Context) map[string]string {
	tc, ok := toolcall.TraceFrom(ctx)
	if !ok {
		return nil
	}
	h := map[string]string{"traceparent": tc.Traceparent}
	if tc.Tracestate != "" {
		h["tracestate"] = tc.Tracestate
	}
	return h
}
