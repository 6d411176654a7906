package runtime

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// pipeBackend is BenchmarkRun's realistic backend: an mcp-go server and
// an mcp-go client in this process, talking JSON-RPC over two io.Pipes
// as a stdio server does over its pipes. Each call is encoded, written,
// decoded, answered and sent back: about 80µs of CPU and hand-offs per
// call on this project's 2-core VM, the cost of a real backend hop
// without a process or a network. The server answers svc.x with
// {"v": v} and svc.list with {"v": list}, as benchBackend does. Only test
// files of the engine import mcp-go (internal/layering checks the
// engine's non-test imports).
type pipeBackend struct{ c *client.Client }

func newPipeBackend(tb testing.TB) pipeBackend {
	s := server.NewMCPServer("bench", "1")
	echo := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultStructuredOnly(map[string]any{"v": req.GetArguments()["v"]}), nil
	}
	s.AddTool(mcp.NewTool("x"), echo)
	s.AddTool(mcp.NewTool("list"), echo)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = server.NewStdioServer(s).Listen(ctx, serverIn, serverOut) }()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	tb.Cleanup(func() {
		cancel()
		c.Close()
		serverIn.Close()
		serverOut.Close()
	})
	ictx, icancel := context.WithTimeout(ctx, 10*time.Second)
	defer icancel()
	if err := c.Start(ictx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ictx, init); err != nil {
		tb.Fatal(err)
	}
	return pipeBackend{c}
}

func (p pipeBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = call.Tool
	req.Params.Arguments = call.Arguments
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	return &ToolResult{Structured: res.StructuredContent, IsError: res.IsError}, nil
}

// BenchmarkRunMCP is BenchmarkRun with pipeBackend: what the engine's
// costs weigh against a real backend hop.
func BenchmarkRunMCP(b *testing.B) {
	benchmarkRunWith(b, 16, func(o *Options) { o.Backend = newPipeBackend(b) })
}
