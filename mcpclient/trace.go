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

// SessionID is the MCP session id of backend's current session (the
// Mcp-Session-Id of a streamable HTTP backend), or "" for stdio, an
// unknown backend or no session; the tracing decorator puts it on the
// call's span (mcp.session.id).
func (m *Manager) SessionID(backend string) string {
	c, ok := m.conns[backend]
	if !ok {
		return ""
	}
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil || s.client == nil {
		return ""
	}
	return s.client.GetSessionId()
}
