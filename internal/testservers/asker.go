package testservers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tools of a backend that asks its caller while a tool runs. A server
// that serves them must be made with server.WithLegacyServerInitiatedRequests,
// so that ask and sample send their requests to 2026-07-28 clients too.
//
//	ask {message}          elicitation/create (a server-initiated request);
//	                       the text result is "ACTION CONTENT-AS-JSON"
//	ask_mrtr {message}     the same question as an input_required result
//	                       (MCP 2026-07-28), and the answer of the retry
//	sample                 sampling/createMessage; the result is the
//	                       request's error as an isError result
//	sample_mrtr            the same as an input_required result
//
// Each question's form has one required string field, "name".

// AskerSchema is the form the asking tools request.
var AskerSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"name": map[string]any{"type": "string"}},
	"required":   []any{"name"},
}

// NewAsker returns an MCP server with the asking tools only.
func NewAsker() *server.MCPServer {
	s := server.NewMCPServer("asker", "1.0.0", server.WithToolCapabilities(false), server.WithLegacyServerInitiatedRequests())
	AddAskers(s)
	return s
}

// AddAskers adds the asking tools to s.
func AddAskers(s *server.MCPServer) {
	msg := mcp.WithString("message", mcp.Required())
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Ask the caller with elicitation/create."), msg),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: question(req)})
			if err != nil {
				return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
			}
			return answerText(res), nil
		})
	s.AddTool(mcp.NewTool("ask_mrtr", mcp.WithDescription("Ask the caller with an input_required result."), msg),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" {
				return server.NewInputRequestBuilder("asked").Elicit("q", question(req)).ToolResult(), nil
			}
			res := server.ElicitationResponse(req.Params.InputResponses, "q")
			if res == nil {
				return mcp.NewToolResultError("the retry carries no answer"), nil
			}
			return answerText(res), nil
		})
	sampling := mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hello")}},
		MaxTokens: 10,
	}
	s.AddTool(mcp.NewTool("sample", mcp.WithDescription("Ask the caller for sampling/createMessage.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: sampling})
			if err != nil {
				return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
			}
			return mcp.NewToolResultText("sampled"), nil
		})
	s.AddTool(mcp.NewTool("sample_mrtr", mcp.WithDescription("Ask for sampling with an input_required result.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" {
				return server.NewInputRequestBuilder("asked").Sample("s", sampling).ToolResult(), nil
			}
			return mcp.NewToolResultText("sampled"), nil
		})
}

func question(req mcp.CallToolRequest) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: req.GetString("message", ""), RequestedSchema: AskerSchema}
}

func answerText(res *mcp.ElicitationResult) *mcp.CallToolResult {
	content, _ := json.Marshal(res.Content)
	return mcp.NewToolResultText(fmt.Sprintf("%s %s", res.Action, content))
}
