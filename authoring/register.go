package authoring

// Register puts authoring on an MCP server: the seven tools (each needing
// the author scope), the guide and schema resources and the
// design_workflow prompt, whose texts come from package guide.

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/mcpserver"
)

// Register adds the authoring tools, resources and prompt to srv.
func Register(srv *mcpserver.Server, svc *Service) error {
	if err := srv.AddTools(Tools(svc, srv)...); err != nil {
		return err
	}
	for _, name := range ToolNames {
		srv.RequireScope(name, httpsafe.ScopeAuthor)
	}
	m := srv.MCP()
	m.AddResource(mcp.NewResource(guide.DocsURI, "workflow authoring guide",
		mcp.WithResourceDescription("How to write a vmcp workflow: every field, an example of each construct, the common mistakes and their fixes"),
		mcp.WithMIMEType(guide.DocsMIME)),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: guide.DocsURI, MIMEType: guide.DocsMIME, Text: guide.Markdown()}}, nil
		})
	m.AddResource(mcp.NewResource(guide.SchemaURI, "workflow JSON Schema",
		mcp.WithResourceDescription("JSON Schema (2020-12) of a workflow source, YAML or JSON"),
		mcp.WithMIMEType(guide.SchemaMIME)),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: guide.SchemaURI, MIMEType: guide.SchemaMIME, Text: string(guide.Schema())}}, nil
		})
	opts := []mcp.PromptOption{mcp.WithPromptDescription(guide.PromptDescription)}
	for _, a := range guide.PromptArguments() {
		argOpts := []mcp.ArgumentOption{mcp.ArgumentDescription(a.Description)}
		if a.Required {
			argOpts = append(argOpts, mcp.RequiredArgument())
		}
		opts = append(opts, mcp.WithArgument(a.Name, argOpts...))
	}
	m.AddPrompt(mcp.NewPrompt(guide.PromptName, opts...),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			goal := req.Params.Arguments["goal"]
			if goal == "" {
				return nil, errors.New("design_workflow needs the goal argument: what the workflow must do")
			}
			text := guide.DesignPrompt(goal, req.Params.Arguments["backends"])
			return mcp.NewGetPromptResult(guide.PromptDescription,
				[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
		})
	return nil
}
