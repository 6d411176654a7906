package mediator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Ports of this package: 17450-17499.
const portLo, portHi = 17450, 17499

// echoPlan is a one-step workflow calling backend.echo with the text
// parameter, written as the compiler would plan it.
func echoPlan(backend string) *ir.Plan {
	text := &ir.Value{Kind: ir.KindTemplate, Template: &ir.Template{Source: "{{.params.text}}", Single: true}}
	wf := &ir.Workflow{
		Name:        "echo_once",
		Description: "Call echo once",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}},
			"required":   []any{"text"},
		},
		Timeout:     ir.Duration(time.Minute),
		FailureMode: ir.FailureAbort,
		MaxParallel: 10,
		Steps: []*ir.Step{{
			Index: 0, ID: "echo", Type: ir.StepTool, Remaining: 1,
			Timeout:   ir.Duration(time.Minute),
			Tool:      &ir.ToolRef{Backend: backend, Name: "echo"},
			Arguments: &ir.Value{Kind: ir.KindObject, Fields: []*ir.Field{{Key: "text", Value: text}}},
		}},
		Levels:       [][]int{{0}},
		Sinks:        []int{0},
		CriticalPath: []int{0},
		Stats:        ir.Stats{TotalLevels: 1, TotalSteps: 1, MaxParallelism: 1, MinParallelism: 1, SequentialSteps: 1},
	}
	return irbuild.Plan(wf)
}

func echoServer() *mcpgo.MCPServer {
	s := mcpgo.NewMCPServer("echo", "1.0.0", mcpgo.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructuredOnly(map[string]any{"text": req.GetString("text", "")}), nil
		})
	return s
}

// serve serves h on a free loopback port until the benchmark ends.
func serve(b *testing.B, h http.Handler) string {
	b.Helper()
	return testenv.Serve(b, portLo, portHi, &http.Server{Handler: h}) + "/mcp"
}

func connect(b *testing.B, tr transport.Interface) *client.Client {
	b.Helper()
	c := client.NewClient(tr)
	// A stdio transport's process lives as long as Start's context.
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		b.Fatalf("initialize: %v", err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func httpClient(b *testing.B, url string) *client.Client {
	b.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		b.Fatal(err)
	}
	return connect(b, tr)
}

// callOnce calls tool with {text} and checks the echo came back.
func callOnce(b *testing.B, c *client.Client, tool, text string) time.Duration {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = map[string]any{"text": text}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.CallTool(ctx, req)
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	if res.IsError || m["text"] != text {
		b.Fatalf("%s returned %+v; want {text: %q}", tool, res, text)
	}
	return d
}

// compare alternates direct and mediated calls b.N times and reports the
// medians, the 90th percentiles and their differences.
func compare(b *testing.B, direct, mediated *client.Client, directTool, mediatedTool string) {
	for i := range 50 { // warm up connections and caches
		callOnce(b, direct, directTool, fmt.Sprint("w", i))
		callOnce(b, mediated, mediatedTool, fmt.Sprint("w", i))
	}
	d := make([]time.Duration, 0, b.N)
	m := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		text := fmt.Sprint("t", i)
		d = append(d, callOnce(b, direct, directTool, text))
		m = append(m, callOnce(b, mediated, mediatedTool, text))
	}
	b.StopTimer()
	slices.Sort(d)
	slices.Sort(m)
	q := func(s []time.Duration, p float64) float64 {
		return float64(s[int(p*float64(len(s)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(q(d, 0.5), "direct-p50-µs")
	b.ReportMetric(q(m, 0.5), "vmcp-p50-µs")
	b.ReportMetric(q(m, 0.5)-q(d, 0.5), "added-p50-µs")
	b.ReportMetric(q(m, 0.9)-q(d, 0.9), "added-p90-µs")
}

// manager serves the echo backend and connects a backend manager to it.
func manager(b *testing.B) (*mcpclient.Manager, string) {
	backendURL := serve(b, mcpgo.NewStreamableHTTPServer(echoServer()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mgr, err := mcpclient.Connect(ctx, map[string]*config.Backend{
		"bk": {URL: backendURL, Transport: config.TransportStreamableHTTP},
	}, mcpclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mgr.Close() })
	return mgr, backendURL
}

func BenchmarkMediatorHTTP(b *testing.B) {
	mgr, backendURL := manager(b)
	eng, err := runtime.New(echoPlan("bk"), runtime.Options{Backend: mgr, Schemas: mgr.Catalog()})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Runner: eng})
	if err != nil {
		b.Fatal(err)
	}
	vmcpURL := serve(b, mcpserver.HTTPHandler(srv.MCPHandler(), nil))
	compare(b, httpClient(b, backendURL), httpClient(b, vmcpURL), "echo", "echo_once")
}

func BenchmarkMediatorStdio(b *testing.B) {
	root := testenv.RepoRoot()
	dir := b.TempDir()
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/vmcp", "./e2e/testbackend")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	backend := filepath.Join(dir, "testbackend")
	wf := `compositeTools:
  - name: echo_once
    description: Call echo once
    parameters: {text: {type: string, required: true}}
    steps:
      - id: echo
        tool: bk.echo
        arguments: {text: "{{.params.text}}"}
`
	cfg := fmt.Sprintf("backends:\n  bk: {command: %q}\n%s", backend, wf)
	cfgPath := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	direct := connect(b, transport.NewStdio(backend, nil))
	mediated := connect(b, transport.NewStdio(filepath.Join(dir, "vmcp"), nil, "run", "--config", cfgPath, "--log-level", "error"))
	compare(b, direct, mediated, "echo", "echo_once")
}
