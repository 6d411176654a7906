package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// backendTools serves every tool of every exposed backend as
// <backend>_<tool>, with the backend's own schemas, forwarding calls
// unchanged through BackendTools.CallRaw. When the client asked for
// progress, the backend is asked too and its notifications are relayed,
// in order, under the client's token, and the questions the backend asks
// go to the client (mcpclient/relay.go): for a 2026-07-28 client
// over HTTP as input_required results, the call going on between round
// trips as a workflow run does (mrtr.go; progress then goes to the round
// trip that is open, if it asked for progress). A failed call (the backend is down,
// the call timed out) is an isError result naming the backend.
func (s *Server) backendTools() ([]mcpgo.ServerTool, error) {
	names := append([]string(nil), s.opts.BackendNames...)
	sort.Strings(names)
	var out []mcpgo.ServerTool
	for _, b := range names {
		tools := s.opts.Backends.Tools(b)
		sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
		for _, t := range tools {
			tool, err := proxiedTool(b, t)
			if err != nil {
				return nil, err
			}
			out = append(out, mcpgo.ServerTool{Tool: tool, Handler: s.proxyHandler(b, t.Name)})
		}
	}
	return out, nil
}

// ProxiedName is the name a backend tool is served under.
func ProxiedName(backend, tool string) string { return backend + "_" + tool }

func proxiedTool(backend string, t mcp.Tool) (mcp.Tool, error) {
	in := t.RawInputSchema
	if len(in) == 0 {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return mcp.Tool{}, fmt.Errorf("backend %s tool %s: input schema: %w", backend, t.Name, err)
		}
		in = b
	}
	tool := mcp.NewToolWithRawSchema(ProxiedName(backend, t.Name), t.Description, in)
	tool.Title = t.Title
	tool.Annotations = t.Annotations
	if len(t.RawOutputSchema) > 0 {
		tool.RawOutputSchema = t.RawOutputSchema
	} else if t.OutputSchema.Type != "" {
		b, err := json.Marshal(t.OutputSchema)
		if err != nil {
			return mcp.Tool{}, fmt.Errorf("backend %s tool %s: output schema: %w", backend, t.Name, err)
		}
		tool.RawOutputSchema = b
	}
	return tool, nil
}

// relayProgress sends a backend's progress to the client of the proxied
// call, under the client's progress token, in the order it arrives.
func (s *Server) relayProgress(ctx context.Context, token mcp.ProgressToken) runtime.BackendProgress {
	return func(progress, total float64, message string) {
		params := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		if err := s.notify(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
			s.log.Debug("backend progress not relayed", "err", err)
		}
	}
}

func (s *Server) proxyHandler(backend, tool string) mcpgo.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := callArguments(req)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", ProxiedName(backend, tool), err)), nil
		}
		if usesMultiRoundTrip(ctx) || req.Params.RequestState != "" {
			// The backend's questions become input_required results.
			return s.roundTrip(ctx, req, "tool "+ProxiedName(backend, tool), func() (*pendingRun, *mcp.CallToolResult) {
				return s.startWork(ctx, req, func(callCtx context.Context, run *pendingRun) *mcp.CallToolResult {
					if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
						callCtx = runtime.WithBackendProgress(callCtx, run.backendProgress)
					}
					return s.proxyCall(callCtx, &roundTripElicitor{run: run}, backend, tool, args)
				}), nil
			}), nil
		}
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			ctx = runtime.WithBackendProgress(ctx, s.relayProgress(ctx, req.Params.Meta.ProgressToken))
		}
		return s.proxyCall(ctx, &clientElicitor{s: s, reqCtx: ctx}, backend, tool, args), nil
	}
}

// proxyCall calls a backend tool for its client; the backend's questions go
// to el, as a workflow's elicitation steps do (runtime/relay.go).
func (s *Server) proxyCall(ctx context.Context, el runtime.Elicitor, backend, tool string, args map[string]any) *mcp.CallToolResult {
	ctx = toolcall.WithAsker(ctx, runtime.ElicitorAsker("call "+uuid.NewString(), el, ""))
	res, err := s.opts.Backends.CallRaw(ctx, backend, tool, args)
	if err != nil {
		s.log.Warn("backend tool call failed", "backend", backend, "tool", tool, "err", err)
		return mcp.NewToolResultError(fmt.Sprintf("backend %s tool %s: %v", backend, tool, err))
	}
	return res
}
