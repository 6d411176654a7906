package mediator

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// The Part benchmarks break BenchmarkMediatorHTTP's added latency down.
// Those timing one piece report the median of b.N sequential operations as
// p50-µs; PartProxy and PartWithoutEngine are whole mediated calls with a
// piece left out, compared like BenchmarkMediatorHTTP. None has HTTP in its
// name, so `-bench HTTP` runs the mediator benchmark alone.

// p50 times op b.N times (after a warm-up) and reports the median.
func p50(b *testing.B, op func(i int)) {
	for i := range 50 {
		op(-1 - i)
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		op(i)
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2])/float64(time.Microsecond), "p50-µs")
}

// BenchmarkPartDirect: an mcp-go client calls the backend's echo.
func BenchmarkPartDirect(b *testing.B) {
	c := httpClient(b, serve(b, mcpgo.NewStreamableHTTPServer(echoServer())))
	p50(b, func(i int) { callOnce(b, c, "echo", fmt.Sprint("t", i)) })
}

// BenchmarkPartBackendHop: vmcp's backend manager calls the backend's echo
// (what the engine's tool step does).
func BenchmarkPartBackendHop(b *testing.B) {
	mgr, _ := manager(b)
	ctx := context.Background()
	p50(b, func(i int) {
		text := fmt.Sprint("t", i)
		res, err := mgr.CallTool(ctx, runtime.ToolCall{Backend: "bk", Tool: "echo", Arguments: map[string]any{"text": text}, RunID: "r", StepID: "echo"})
		if err != nil {
			b.Fatal(err)
		}
		if m, _ := res.Structured.(map[string]any); m["text"] != text {
			b.Fatalf("CallTool returned %+v; want text %q", res.Structured, text)
		}
	})
}

// instantBackend answers every call at once with {text}.
type instantBackend struct{}

func (instantBackend) CallTool(_ context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: map[string]any{"text": call.Arguments["text"]}}, nil
}

// BenchmarkPartEngine: the engine runs the one-step workflow against a
// backend that answers at once.
func BenchmarkPartEngine(b *testing.B) {
	eng, err := runtime.New(echoPlan("bk"), runtime.Options{Backend: instantBackend{}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p50(b, func(i int) {
		run, err := eng.Run(ctx, "echo_once", map[string]any{"text": "x"}, runtime.RunOptions{})
		if err != nil || run.Status != runtime.RunCompleted {
			b.Fatalf("Run: %v %v", run, err)
		}
	})
}

// BenchmarkPartServerEngine: vmcp's server, whose engine uses a backend
// that answers at once, against the echo server: its added-p50-µs is what
// the server and the engine add to an MCP call, without the backend hop.
func BenchmarkPartServerEngine(b *testing.B) {
	eng, err := runtime.New(echoPlan("bk"), runtime.Options{Backend: instantBackend{}})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Runner: eng})
	if err != nil {
		b.Fatal(err)
	}
	compareServers(b, srv)
}

// compareServers compares calls of echo_once served by srv with calls of
// the echo server's echo.
func compareServers(b *testing.B, srv *mcpserver.Server) {
	echo := httpClient(b, serve(b, mcpgo.NewStreamableHTTPServer(echoServer())))
	compare(b, echo, httpClient(b, serve(b, mcpserver.HTTPHandler(srv.MCPHandler(), nil))), "echo", "echo_once")
}

// instantRunner completes every run at once with {text}.
type instantRunner struct{ wf *ir.Workflow }

func (r instantRunner) Workflows() []*ir.Workflow { return []*ir.Workflow{r.wf} }

func (r instantRunner) Run(_ context.Context, wf string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	now := time.Now()
	return &runtime.Run{ID: opts.RunID, Workflow: wf, Status: runtime.RunCompleted, Output: map[string]any{"text": params["text"]}, StartedAt: now, EndedAt: now,
		Steps: []runtime.StepState{{ID: "echo", Status: runtime.StepCompleted, Attempts: 1, StartedAt: now, EndedAt: now}}}, nil
}

// BenchmarkPartServer: vmcp's server, whose runner completes at once,
// against the echo server: its added-p50-µs is the server's own cost
// (dispatch, the run's result with its _meta, and the client decoding it).
func BenchmarkPartServer(b *testing.B) {
	srv, err := mcpserver.New(mcpserver.Options{Runner: instantRunner{echoPlan("bk").Workflows[0]}})
	if err != nil {
		b.Fatal(err)
	}
	compareServers(b, srv)
}

// BenchmarkPartProxy is BenchmarkMediatorHTTP with the backend tool served
// as it is (exposeBackendTools: bk_echo) instead of through a workflow: no
// engine, no result conversion, just mcp-go's server and client around
// vmcp's backend manager. Its added-p50-µs is about the least that a
// mediator built on mcp-go can add here.
func BenchmarkPartProxy(b *testing.B) {
	mgr, backendURL := manager(b)
	eng, err := runtime.New(echoPlan("bk"), runtime.Options{Backend: mgr, Schemas: mgr.Catalog()})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Runner: eng, Backends: mgr, BackendNames: mgr.Backends(), Expose: true})
	if err != nil {
		b.Fatal(err)
	}
	vmcpURL := serve(b, mcpserver.HTTPHandler(srv.MCPHandler(), nil))
	compare(b, httpClient(b, backendURL), httpClient(b, vmcpURL), "echo", mcpserver.ProxiedName("bk", "echo"))
}

// syncRunner runs the one-step echo workflow without the engine: it calls
// the backend on the caller's goroutine and reports the run as the engine
// would.
type syncRunner struct {
	wf      *ir.Workflow
	backend runtime.Backend
}

func (r syncRunner) Workflows() []*ir.Workflow { return []*ir.Workflow{r.wf} }

func (r syncRunner) Run(ctx context.Context, wf string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	start := time.Now()
	res, err := r.backend.CallTool(ctx, runtime.ToolCall{Backend: "bk", Tool: "echo", Arguments: map[string]any{"text": params["text"]}, RunID: opts.RunID, StepID: "echo"})
	if err != nil {
		return nil, err
	}
	end := time.Now()
	return &runtime.Run{ID: opts.RunID, Workflow: wf, Status: runtime.RunCompleted, Output: res.Structured, StartedAt: start, EndedAt: end,
		Steps: []runtime.StepState{{ID: "echo", Status: runtime.StepCompleted, Attempts: 1, StartedAt: start, EndedAt: end}}}, nil
}

// BenchmarkPartWithoutEngine is BenchmarkMediatorHTTP with the engine
// replaced by syncRunner: the difference between the two is what the engine
// costs in place.
func BenchmarkPartWithoutEngine(b *testing.B) {
	mgr, backendURL := manager(b)
	srv, err := mcpserver.New(mcpserver.Options{Runner: syncRunner{echoPlan("bk").Workflows[0], mgr}})
	if err != nil {
		b.Fatal(err)
	}
	vmcpURL := serve(b, mcpserver.HTTPHandler(srv.MCPHandler(), nil))
	compare(b, httpClient(b, backendURL), httpClient(b, vmcpURL), "echo", "echo_once")
}
