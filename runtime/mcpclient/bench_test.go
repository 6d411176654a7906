package mcpclient

import (
	"context"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// BenchmarkCallTool measures one echo call through the Manager to the fake
// server, over stdio and over streamable HTTP on loopback: the baseline
// that the mediator's own overhead adds to.
func BenchmarkCallTool(b *testing.B) {
	for _, tc := range []struct {
		name    string
		backend func(b *testing.B) *config.Backend
	}{
		{"stdio", func(*testing.B) *config.Backend { return fakeBackend(nil) }},
		{"streamable-http", func(b *testing.B) *config.Backend {
			url, _ := serveFakeHTTP(b, "tok")
			return &config.Backend{URL: url, Transport: config.TransportStreamableHTTP,
				Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: 20 * time.Second}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := connect(b, map[string]*config.Backend{"fake": tc.backend(b)})
			ctx := context.Background()
			call := runtime.ToolCall{Backend: "fake", Tool: "echo", Arguments: map[string]any{"message": "x"}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.CallTool(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
