package e2e

// Tracing end to end: `vmcp run` as a real process with a telemetry:
// section exports its spans to a real Jaeger (testenv.StartJaeger), over
// OTLP HTTP from the stdio server and over OTLP gRPC from the HTTP one.
// A client's traceparent, in params._meta (stdio) or in the HTTP header
// (streamable HTTP), makes the run's span its child: the run's trace id
// is the client's, in the result's _meta, and Jaeger holds the run, its
// step attempts and their backend calls under the client's span.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of this file's tests.
const tracePortLo, tracePortHi = 17300, 17349

const tracingConfig = `
backends:
  tb: {command: "${TB}"}
telemetry:
  otlp: {endpoint: "%s", protocol: %s, insecure: true}
  serviceName: vmcp-e2e
  traceURL: "http://127.0.0.1/trace/{traceId}"
compositeTools:
  - name: pair
    description: Echo twice
    steps:
      - {id: one, tool: tb.echo, arguments: {text: a}}
      - {id: two, tool: tb.echo, dependsOn: [one], arguments: {text: b}}
`

func TestTracingJaeger(t *testing.T) {
	// vmcp's batch processor exports every 100ms, not every 5s.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	j := testenv.StartJaeger(t, tracePortLo, tracePortHi)
	const callerTrace = "5bf92f3577b34da6a3ce929d0e0e4736"

	check := func(t *testing.T, res *mcp.CallToolResult, callerSpan string) testenv.JaegerTrace {
		t.Helper()
		if res.IsError {
			t.Fatalf("pair failed: %v", res.Content)
		}
		if got := res.Meta.AdditionalFields["vmcp/traceId"]; got != callerTrace {
			t.Errorf("_meta vmcp/traceId = %v, want the caller's %s", got, callerTrace)
		}
		tr := j.WaitTrace(t, callerTrace, 5)
		byName := map[string][]testenv.JaegerSpan{}
		for _, s := range tr.Spans {
			byName[s.OperationName] = append(byName[s.OperationName], s)
		}
		if len(byName["vmcp.run"]) != 1 || len(byName["tools/call echo"]) != 2 {
			t.Fatalf("spans: want one vmcp.run and two tools/call echo, have %d spans: %v", len(tr.Spans), byName)
		}
		run := byName["vmcp.run"][0]
		if run.Parent() != callerSpan {
			t.Errorf("vmcp.run's parent = %q, want the caller's span %s", run.Parent(), callerSpan)
		}
		if svc := tr.Processes[run.ProcessID].ServiceName; svc != "vmcp-e2e" {
			t.Errorf("service %q, want vmcp-e2e", svc)
		}
		for _, id := range []string{"one", "two"} {
			steps := byName["vmcp.step "+id]
			if len(steps) != 1 || steps[0].Parent() != run.SpanID {
				t.Errorf("vmcp.step %s: %d spans, want one under the run", id, len(steps))
				continue
			}
			found := false
			for _, c := range byName["tools/call echo"] {
				found = found || (c.Parent() == steps[0].SpanID && c.Tag("span.kind") == "client" && c.Tag("mcp.method.name") == "tools/call")
			}
			if !found {
				t.Errorf("no client span tools/call echo under step %s", id)
			}
		}
		return tr
	}

	t.Run("stdio, traceparent in _meta, OTLP over HTTP", func(t *testing.T) {
		const callerSpan = "00f067aa0ba902b1"
		c, stderr := stdioVMCP(t, writeConfig(t, fmt.Sprintf(tracingConfig, "http://"+j.OTLPHTTP, "http"), ""))
		res, err := callTool(t, c, "pair", nil, &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}})
		if err != nil {
			t.Fatal(err)
		}
		tr := check(t, res, callerSpan)
		waitFor(t, "the run finished line with its trace id", func() bool {
			return strings.Contains(stderr.String(), "msg=\"run finished\"")
		})
		// Log lines name the trace and the span they were logged under:
		// the run's and its step lines the run's span, each backend
		// call's line its client span.
		spans := map[string]string{}
		for _, s := range tr.Spans {
			spans[s.OperationName] = s.SpanID
		}
		seen := map[string]int{}
		calls := map[string]bool{}
		for _, s := range tr.Spans {
			if s.OperationName == "tools/call echo" {
				calls[s.SpanID] = true
			}
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			msg := ""
			for _, m := range []string{"run finished", "step started", "step completed", "backend call"} {
				if strings.Contains(line, "msg=\""+m+"\"") {
					msg = m
				}
			}
			if msg == "" {
				continue
			}
			seen[msg]++
			if !strings.Contains(line, "trace_id="+callerTrace) {
				t.Errorf("%s line without trace_id=%s: %s", msg, callerTrace, line)
			}
			_, span, _ := strings.Cut(line, "span_id=")
			span, _, _ = strings.Cut(span, " ")
			if msg == "backend call" && !calls[span] || msg != "backend call" && span != spans["vmcp.run"] {
				t.Errorf("%s line with span_id %q; want its span's (run %s, calls %v): %s", msg, span, spans["vmcp.run"], calls, line)
			}
		}
		if seen["run finished"] != 1 || seen["step started"] != 2 || seen["step completed"] != 2 || seen["backend call"] != 2 {
			t.Errorf("log lines %v; want one run finished and two of each step line and backend call", seen)
		}
	})

	t.Run("the TypeScript SDK client's traceparent in _meta", func(t *testing.T) {
		const sdkTrace, sdkSpan = "6bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b3"
		cfg := writeConfig(t, fmt.Sprintf(tracingConfig, j.OTLPGRPC, "grpc"), "")
		script := filepath.Join("e2e", "sdkclient", "traceclient.mjs")
		stdout, stderr, code := run(t, 2*time.Minute, testenv.RepoRoot(), repoNode(t), script,
			"--tool", "pair", "--traceparent", "00-"+sdkTrace+"-"+sdkSpan+"-01", "--", bins.vmcp, "run", "--config", cfg, "--log-level", "warn")
		if code != 0 {
			t.Fatalf("traceclient.mjs exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		var out struct {
			IsError bool           `json:"isError"`
			Meta    map[string]any `json:"meta"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.IsError {
			t.Fatalf("traceclient.mjs: %v, %s\nstderr:\n%s", err, stdout, stderr)
		}
		if got := out.Meta["vmcp/traceId"]; got != sdkTrace {
			t.Errorf("the SDK saw _meta vmcp/traceId %v, want its own trace %s", got, sdkTrace)
		}
		tr := j.WaitTrace(t, sdkTrace, 5)
		n := 0
		for _, s := range tr.Spans {
			if s.OperationName == "vmcp.run" && s.Parent() == sdkSpan {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d vmcp.run spans under the SDK client's span, want 1:\n%v", n, tr.Spans)
		}
	})

	t.Run("streamable HTTP, traceparent header, OTLP over gRPC", func(t *testing.T) {
		const callerSpan = "00f067aa0ba902b2"
		url, _ := httpVMCPOn(t, writeConfig(t, fmt.Sprintf(tracingConfig, j.OTLPGRPC, "grpc"), ""), tracePortLo, tracePortHi)
		tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
			t.Fatal(err)
		}
		res, err := callTool(t, c, "pair", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The first subtest's run is in the same trace: this one's run
		// is the one under callerSpan.
		if got := res.Meta.AdditionalFields["vmcp/traceId"]; got != callerTrace {
			t.Errorf("_meta vmcp/traceId = %v, want %s", got, callerTrace)
		}
		trc := j.WaitTrace(t, callerTrace, 10)
		n := 0
		for _, s := range trc.Spans {
			if s.OperationName == "vmcp.run" && s.Parent() == callerSpan {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d vmcp.run spans under the header's span %s, want 1", n, callerSpan)
		}
	})
}
