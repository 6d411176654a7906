package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/runtime"
)

// ErrNoElicitation is returned by the elicitor when the calling client
// cannot answer an elicitation; the engine then takes the step's onCancel
// action or fails the step with this message.
var ErrNoElicitation = errors.New("the calling MCP client did not declare the elicitation capability")

// ErrElicitationModern is returned if a client that speaks MCP 2026-07-28
// or later (over stdio or streamable HTTP) reaches the server-initiated
// path: that protocol removed server-initiated requests, and such a client
// would leave the question unanswered. Workflow calls of such clients ask
// with input_required results instead (mrtr.go); a draft run
// (vmcp_workflow_run), which takes no part in multi round trips, gets this.
var ErrElicitationModern = errors.New("elicitation is not available to MCP 2026-07-28 clients outside a workflow tool call; connect with protocol 2025-11-25")

// clientElicitor forwards elicitation steps to the client that called the
// tool. reqCtx is the tools/call context: it carries the client session and
// the request's protocol information, which the engine's step context may
// not.
type clientElicitor struct {
	s      *Server
	reqCtx context.Context
}

func (e *clientElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	if !ClientCanElicit(e.reqCtx) {
		return runtime.ElicitResult{}, ErrNoElicitation
	}
	if mcpgo.IsModernRequest(e.reqCtx) {
		return runtime.ElicitResult{}, ErrElicitationModern
	}
	ctx, cancel := context.WithTimeout(valuesFrom{ctx, e.reqCtx}, e.s.opts.ElicitTimeout)
	defer cancel()
	res, err := e.s.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Message:         req.Message,
			RequestedSchema: req.Schema,
		},
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return runtime.ElicitResult{}, errors.New("the client did not answer the elicitation before its deadline")
		}
		return runtime.ElicitResult{}, fmt.Errorf("elicitation request failed: %w", err)
	}
	return convertElicitResult(res)
}

// convertElicitResult turns the client's answer into the engine's form.
func convertElicitResult(res *mcp.ElicitationResult) (runtime.ElicitResult, error) {
	out := runtime.ElicitResult{Action: string(res.Action)}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept, mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel:
	default:
		return runtime.ElicitResult{}, fmt.Errorf("the client answered the elicitation with unknown action %q", res.Action)
	}
	if res.Action == mcp.ElicitationResponseActionAccept {
		content, ok := res.Content.(map[string]any)
		if !ok && res.Content != nil {
			return runtime.ElicitResult{}, fmt.Errorf("the client accepted the elicitation but its content is %s, not an object", jsonKind(res.Content))
		}
		if content == nil {
			content = map[string]any{}
		}
		out.Content = content
	}
	return out, nil
}

// ClientCanElicit reports whether the client behind a request declared the
// elicitation capability: per request for MCP 2026-07-28 clients, per
// session (from initialize) for earlier ones.
func ClientCanElicit(ctx context.Context) bool {
	if info := mcpgo.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	session, ok := mcpgo.ClientSessionFromContext(ctx).(mcpgo.SessionWithClientInfo)
	if !ok {
		return false
	}
	return session.GetClientCapabilities().Elicitation != nil
}

// valuesFrom is a context with the deadline and cancellation of its
// embedded context and the values of both (its own first).
type valuesFrom struct {
	context.Context
	values context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.values.Value(key)
}
