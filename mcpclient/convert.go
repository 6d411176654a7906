package mcpclient

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// toToolResult converts an MCP tool result into the runtime's form: the
// structured content as decoded JSON, text items as Text, and every other
// item in its MCP JSON form under Raw, with the value its content-map key
// holds (see toolcall.Content) in Text, Data or URI.
func toToolResult(res *mcp.CallToolResult) (*toolcall.Result, error) {
	out := &toolcall.Result{IsError: res.IsError}
	switch {
	case res.StructuredContent == nil:
	case len(res.RawStructuredContent) > 0:
		// mcp-go decoded the wire bytes into it with encoding/json, so it
		// is plain JSON already; decoding them again would only copy it.
		out.Structured = res.StructuredContent
	default:
		s, err := plainJSON(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("decoding structuredContent: %w", err)
		}
		out.Structured = s
	}
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			out.Content = append(out.Content, toolcall.Content{Type: "text", Text: t.Text})
			continue
		}
		if t, ok := c.(*mcp.TextContent); ok {
			out.Content = append(out.Content, toolcall.Content{Type: "text", Text: t.Text})
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("encoding %T content: %w", c, err)
		}
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, fmt.Errorf("decoding %T content: %w", c, err)
		}
		out.Content = append(out.Content, contentItem(raw))
	}
	return out, nil
}

// contentItem reads a non-text content item from its MCP JSON form, the
// same whichever Go type mcp-go decoded it into: images and audio carry
// data, embedded resources text or a blob, resource links a URI.
func contentItem(raw map[string]any) toolcall.Content {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	c := toolcall.Content{Type: str(raw, "type"), Raw: raw}
	switch c.Type {
	case "image", "audio":
		c.Data = str(raw, "data")
	case "resource":
		res, _ := raw["resource"].(map[string]any)
		c.URI, c.Text, c.Data = str(res, "uri"), str(res, "text"), str(res, "blob")
	case "resource_link":
		c.URI = str(raw, "uri")
	}
	return c
}

// plainJSON returns v as the generic JSON values encoding/json produces
// (map[string]any, []any, float64, string, bool, nil).
func plainJSON(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// toCatalogTool converts a listed MCP tool into a catalog entry, with its
// input schema as generic JSON.
func toCatalogTool(t mcp.Tool) (*catalog.Tool, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encoding tool %q: %w", t.Name, err)
	}
	var ct catalog.Tool
	if err := json.Unmarshal(b, &ct); err != nil {
		return nil, fmt.Errorf("decoding tool %q: %w", t.Name, err)
	}
	if ct.InputSchema == nil {
		ct.InputSchema = map[string]any{"type": "object"}
	}
	return &ct, nil
}

// toCatalog builds a catalog from per-backend tool lists.
func toCatalog(tools map[string][]mcp.Tool) (*catalog.Catalog, error) {
	c := catalog.New()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := &catalog.Backend{Tools: []*catalog.Tool{}}
		for _, t := range tools[n] {
			ct, err := toCatalogTool(t)
			if err != nil {
				return nil, fmt.Errorf("backend %q: %w", n, err)
			}
			b.Tools = append(b.Tools, ct)
		}
		sort.Slice(b.Tools, func(i, j int) bool { return b.Tools[i].Name < b.Tools[j].Name })
		c.Backends[n] = b
	}
	return c, nil
}
