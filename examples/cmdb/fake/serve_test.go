package fake

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestStdioServesManyCallsAtOnce: 50 calls of a tool that returns only
// once all 50 are running at the same time. With mcp-go's default of 5
// stdio workers the 6th call never starts, and the calls end at the
// test's deadline instead.
func TestStdioServesManyCallsAtOnce(t *testing.T) {
	const n = 50
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	s := server.NewMCPServer("barrier", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("barrier"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		arrived.Done()
		select {
		case <-all:
			return mcp.NewToolResultText("ok"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	stdio := server.NewStdioServer(s)
	for _, opt := range StdioOptions() {
		opt(stdio)
	}
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- stdio.Listen(ctx, serverIn, serverOut) }()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	defer func() {
		// Closing every pipe end fails the writes of handlers still
		// answering, so Listen returns; it is not waited for past 5s.
		cancel()
		c.Close()
		for _, p := range []io.Closer{clientIn, clientOut, serverIn, serverOut} {
			p.Close()
		}
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Errorf("the stdio server did not stop within 5s of its pipes closing")
		}
	}()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "barrier"
			_, err := c.CallTool(ctx, req)
			if err != nil {
				err = fmt.Errorf("call %d: %w", i, err)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("%v (the server did not run %d calls at once)", err, n)
		}
	}
}
