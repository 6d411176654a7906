package testservers

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestFakeInProcess(t *testing.T) {
	ctx := context.Background()
	c, err := client.NewInProcessClient(NewFake(3).Server())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	page, err := c.ListToolsByPage(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tools) != PageSize || page.NextCursor == "" {
		t.Errorf("first tools/list page has %d tools, cursor %q; want %d and a cursor", len(page.Tools), page.NextCursor, PageSize)
	}
	all, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Tools) != 14 {
		t.Errorf("ListTools has %d tools; want 11 fixed + 3 generated", len(all.Tools))
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"message": "hi"}
	res, err := c.CallTool(ctx, req)
	if err != nil || len(res.Content) != 1 || res.Content[0].(mcp.TextContent).Text != "hi" {
		t.Errorf("echo = %+v, %v; want text hi", res, err)
	}
}
