package mcpserver

// The server with the real pieces in one process: workflows compiled by
// the compiler, run by the engine, calling a backend through mcpclient over
// streamable HTTP on loopback. With TestMain's goroutine check this shows
// that failed, cancelled and timed-out runs leave nothing running behind.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/runtime"
)

const engineWorkflows = `
compositeTools:
  - name: nap
    description: Nap until cancelled
    steps:
      - id: sleep
        tool: bk.sleep
        arguments: {ms: 20000}
  - name: stuck
    description: The backend never answers
    steps:
      - id: wait
        tool: bk.hang
        timeout: 300ms
  - name: broken
    description: The backend reports an error
    steps:
      - id: first
        tool: bk.echo
        arguments: {text: hi}
      - id: second
        tool: bk.fail
        dependsOn: [first]
  - name: hello
    description: Echo
    parameters:
      text: {type: string, required: true}
    steps:
      - id: say
        tool: bk.echo
        arguments: {text: "{{.params.text}}"}
`

// recordingBackend is an in-process MCP server whose sleep tool records
// how it ended, and whose hang tool ignores cancellation until released.
type recordingBackend struct {
	mu      sync.Mutex
	events  []string
	release chan struct{}
}

func (b *recordingBackend) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, s)
}

func (b *recordingBackend) seen(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e == s {
			return true
		}
	}
	return false
}

func (b *recordingBackend) server() *mcpgo.MCPServer {
	s := mcpgo.NewMCPServer("bk", "1.0.0", mcpgo.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructuredOnly(map[string]any{"text": req.GetString("text", "")}), nil
		})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("quota exceeded"), nil
	})
	s.AddTool(mcp.NewTool("sleep", mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b.record("sleep started")
			select {
			case <-time.After(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond):
				b.record("sleep done")
				return mcp.NewToolResultStructuredOnly(map[string]any{"slept": true}), nil
			case <-ctx.Done():
				b.record("sleep cancelled")
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewTool("hang"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b.record("hang started")
		<-b.release
		return mcp.NewToolResultText("released"), nil
	})
	return s
}

func TestWithRealEngine(t *testing.T) {
	bk := &recordingBackend{release: make(chan struct{})}
	bkLn := listenLocal(t, 17330)
	bkSrv := &http.Server{Handler: mcpgo.NewStreamableHTTPServer(bk.server())}
	go bkSrv.Serve(bkLn)
	defer func() {
		close(bk.release)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bkSrv.Shutdown(ctx)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mgr, err := mcpclient.Connect(ctx, map[string]*config.Backend{
		"bk": {URL: "http://" + bkLn.Addr().String() + "/mcp", Transport: config.TransportStreamableHTTP},
	}, mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(engineWorkflows)}}, compiler.Options{Tools: mgr.Catalog()})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{Backend: mgr, Schemas: mgr.Catalog()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Runner: eng})
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.HTTPClient(t, serveHTTP(t, srv, 17340))

	t.Run("failed step", func(t *testing.T) {
		res := call(t, c, "broken", nil, nil)
		want := `workflow broken failed: step "second" (wf.yaml:`
		if !res.IsError || !strings.HasPrefix(testenv.ResultText(res), want) || !strings.Contains(testenv.ResultText(res), "quota exceeded") {
			t.Errorf("broken = (isError %v) %q; want isError starting %q and naming the cause", res.IsError, testenv.ResultText(res), want)
		}
	})
	t.Run("hang past the step timeout", func(t *testing.T) {
		start := time.Now()
		res := call(t, c, "stuck", nil, nil)
		if !res.IsError || !strings.Contains(testenv.ResultText(res), `step "wait"`) {
			t.Errorf("stuck = (isError %v) %q; want isError naming step wait", res.IsError, testenv.ResultText(res))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("stuck took %s; the 300ms step timeout did not stop it", d)
		}
	})
	t.Run("cancel reaches the backend", func(t *testing.T) {
		callCtx, stop := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "nap"
			_, err := c.CallTool(callCtx, req)
			errc <- err
		}()
		waitUntil(t, "the backend to start sleeping", func() bool { return bk.seen("sleep started") })
		stop()
		<-errc
		waitUntil(t, "the backend to see the cancel", func() bool { return bk.seen("sleep cancelled") })
		if bk.seen("sleep done") {
			t.Errorf("the backend slept to the end although the call was cancelled")
		}
	})
	t.Run("still serving", func(t *testing.T) {
		res := call(t, c, "hello", map[string]any{"text": "again"}, nil)
		if res.IsError || fmt.Sprint(res.StructuredContent) != "map[text:again]" {
			t.Errorf("hello = (isError %v) %v; want {text: again}", res.IsError, res.StructuredContent)
		}
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
