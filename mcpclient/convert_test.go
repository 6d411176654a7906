package mcpclient

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/runtime"
)

func TestToToolResultStructured(t *testing.T) {
	// A result decoded from the wire keeps mcp-go's decoding of the
	// structured content; one built in Go (an in-process server) is turned
	// into plain JSON values.
	var wire mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"t"}],"structuredContent":{"n":5,"list":[1,"x"],"deep":{"ok":true}}}`), &wire); err != nil {
		t.Fatal(err)
	}
	type point struct {
		X int    `json:"x"`
		L string `json:"label"`
	}
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want *runtime.ToolResult
	}{
		{"from the wire", &wire, &runtime.ToolResult{
			Structured: map[string]any{"n": float64(5), "list": []any{float64(1), "x"}, "deep": map[string]any{"ok": true}},
			Content:    []runtime.Content{{Type: "text", Text: "t"}},
		}},
		{"built in Go", &mcp.CallToolResult{StructuredContent: point{X: 2, L: "p"}}, &runtime.ToolResult{
			Structured: map[string]any{"x": float64(2), "label": "p"},
		}},
		{"none", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("bad")}}, &runtime.ToolResult{
			IsError: true, Content: []runtime.Content{{Type: "text", Text: "bad"}},
		}},
	}
	for _, tt := range tests {
		got, err := toToolResult(tt.res)
		if err != nil {
			t.Fatalf("toToolResult(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("toToolResult(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestToToolResultContentItems: every kind of content item carries the
// value its content-map key holds, decoded from the wire or built in Go.
func TestToToolResultContentItems(t *testing.T) {
	var wire mcp.CallToolResult
	err := json.Unmarshal([]byte(`{"content":[
		{"type":"image","data":"AAAA","mimeType":"image/png"},
		{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},
		{"type":"resource","resource":{"uri":"file:///a.txt","text":"file text"}},
		{"type":"resource","resource":{"uri":"file:///b.bin","blob":"YmxvYg=="}},
		{"type":"resource_link","uri":"file:///c.txt","name":"c"}]}`), &wire)
	if err != nil {
		t.Fatal(err)
	}
	built := &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewImageContent("AAAA", "image/png"),
		mcp.NewAudioContent("UklGRg==", "audio/wav"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a.txt", Text: "file text"}),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///b.bin", Blob: "YmxvYg=="}),
		mcp.NewResourceLink("file:///c.txt", "c", "", ""),
	}}
	want := []runtime.Content{
		{Type: "image", Data: "AAAA"},
		{Type: "audio", Data: "UklGRg=="},
		{Type: "resource", URI: "file:///a.txt", Text: "file text"},
		{Type: "resource", URI: "file:///b.bin", Data: "YmxvYg=="},
		{Type: "resource_link", URI: "file:///c.txt"},
	}
	for name, res := range map[string]*mcp.CallToolResult{"from the wire": &wire, "built in Go": built} {
		got, err := toToolResult(res)
		if err != nil {
			t.Fatalf("toToolResult(%s): %v", name, err)
		}
		if diff := cmp.Diff(want, got.Content, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Raw" }, cmp.Ignore())); diff != "" {
			t.Errorf("toToolResult(%s).Content (-want +got):\n%s", name, diff)
		}
	}
}
