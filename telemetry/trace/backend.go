package trace

// Backend calls as client spans, with the MCP semantic conventions of
// OpenTelemetry (gen-ai/mcp): the span is named "tools/call <tool>", of
// kind client, with mcp.method.name, gen_ai.tool.name and
// gen_ai.operation.name execute_tool; a failed call records its error,
// and a result with isError sets error.type tool_error. The call's
// context then carries the span's W3C trace context (toolcall.WithTrace),
// which mcpclient sends to the backend.

import (
	"context"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// MCP semantic convention keys.
const (
	AttrMCPMethod   = "mcp.method.name"
	AttrMCPSession  = "mcp.session.id"
	AttrToolName    = "gen_ai.tool.name"
	AttrGenAIOp     = "gen_ai.operation.name"
	AttrErrorType   = "error.type"
	methodToolsCall = "tools/call"
)

// Backend returns b with each call traced and its trace context passed on.
func (p *Provider) Backend(b toolcall.Backend) toolcall.Backend {
	return &tracedBackend{next: b, p: p}
}

type tracedBackend struct {
	next toolcall.Backend
	p    *Provider
}

// SessionIDer is what a backend client may offer to name the MCP session
// a backend's calls go on (mcp.session.id).
type SessionIDer interface {
	SessionID(backend string) string
}

func (b *tracedBackend) CallTool(ctx context.Context, call toolcall.Call) (*toolcall.Result, error) {
	if unsampled(ctx) {
		// Not recorded (see Provider.Start): the backend gets the
		// unsampled parent's context.
		return b.next.CallTool(b.p.inject(ctx), call)
	}
	ctx, span := b.p.tracer.Start(ctx, methodToolsCall+" "+call.Tool,
		oteltrace.WithSpanKind(oteltrace.SpanKindClient),
		oteltrace.WithAttributes(
			attribute.String(AttrMCPMethod, methodToolsCall),
			attribute.String(AttrToolName, call.Tool),
			attribute.String(AttrGenAIOp, "execute_tool"),
			attribute.String(AttrBackend, call.Backend),
			attribute.String(AttrRunID, call.RunID),
			attribute.String(AttrStepID, call.StepID),
		))
	defer span.End()
	ctx = b.p.inject(ctx)
	res, err := b.next.CallTool(ctx, call)
	if s, ok := b.next.(SessionIDer); ok && span.IsRecording() {
		if id := s.SessionID(call.Backend); id != "" {
			span.SetAttributes(attribute.String(AttrMCPSession, id))
		}
	}
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String(AttrErrorType, "call_error"))
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool returned an error")
		span.SetAttributes(attribute.String(AttrErrorType, "tool_error"))
	}
	return res, err
}

// inject puts the W3C trace context of ctx's span into ctx for the
// backend client (toolcall.WithTrace): traceparent is
// version-traceid-spanid-flags, as propagation.TraceContext writes it,
// made here without its map.
func (p *Provider) inject(ctx context.Context) context.Context {
	sc := oteltrace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ctx
	}
	var buf [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b := append(buf[:0], "00-"...)
	b = hex.AppendEncode(b, tid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sid[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, []byte{byte(sc.TraceFlags())})
	return toolcall.WithTrace(ctx, toolcall.Trace{Traceparent: string(b), Tracestate: sc.TraceState().String()})
}

// Extract returns ctx with the caller's trace context: the traceparent and
// tracestate of an MCP request's params._meta, or else those of its HTTP
// headers (get, which may be nil). A run started with the result is the
// caller's span's child.
func (p *Provider) Extract(ctx context.Context, meta map[string]any, get func(string) string) context.Context {
	c := propagation.MapCarrier{}
	if tp, _ := meta["traceparent"].(string); tp != "" {
		c["traceparent"] = tp
		if ts, _ := meta["tracestate"].(string); ts != "" {
			c["tracestate"] = ts
		}
	} else if get != nil {
		if tp := get("traceparent"); tp != "" {
			c["traceparent"] = tp
			c["tracestate"] = get("tracestate")
		}
	}
	if len(c) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, c)
}
