package e2e

// Propagation to a backend vmcp does not own: the TypeScript SDK's own
// streamable HTTP server (e2e/sdkclient/traceserver.mjs, on the pinned
// @modelcontextprotocol/sdk) answers each call with the trace context it
// arrived with, in the HTTP headers and in params._meta. Both must name
// the run's trace and, as parent, the span of vmcp's backend call that
// Jaeger holds under the run.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const tsTraceConfig = `
backends:
  ts: {url: "%s"}
telemetry:
  otlp: {endpoint: "%s", protocol: http, insecure: true}
  serviceName: vmcp-e2e
compositeTools:
  - name: ask
    description: Ask the TypeScript server what trace context reached it
    steps:
      - {id: look, tool: ts.seen}
`

func TestTracingReachesATypeScriptServer(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	j := testenv.StartJaeger(t, tracePortLo, tracePortHi)
	port := testenv.FreePort(t, tracePortLo, tracePortHi)
	cmd := exec.Command(repoNode(t), filepath.Join(testenv.RepoRoot(), "e2e", "sdkclient", "traceserver.mjs"), "--port", strconv.Itoa(port))
	url := startHTTPPeer(t, "the TypeScript SDK's trace server", cmd, port)

	c, _ := stdioVMCP(t, writeConfig(t, fmt.Sprintf(tsTraceConfig, url, "http://"+j.OTLPHTTP), ""))
	res, err := callTool(t, c, "ask", nil, nil)
	if err != nil || res.IsError {
		t.Fatalf("ask = %v, %v", res, err)
	}
	traceID, _ := res.Meta.AdditionalFields["vmcp/traceId"].(string)
	if len(traceID) != 32 {
		t.Fatalf("_meta vmcp/traceId = %q; want the run's trace id", traceID)
	}
	var seen struct {
		Header, Meta struct{ Traceparent string }
	}
	if err := json.Unmarshal([]byte(testenv.ResultText(res)), &seen); err != nil {
		t.Fatalf("the server's answer %q: %v", testenv.ResultText(res), err)
	}

	tr := j.WaitTrace(t, traceID, 3)
	var call string
	for _, s := range tr.Spans {
		if s.OperationName == "tools/call seen" && s.Tag("span.kind") == "client" {
			call = s.SpanID
		}
	}
	if call == "" {
		t.Fatalf("no client span tools/call seen in the run's trace: %v", tr.Spans)
	}
	want := "00-" + traceID + "-" + call + "-01"
	for where, got := range map[string]string{"the traceparent header": seen.Header.Traceparent, "params._meta.traceparent": seen.Meta.Traceparent} {
		if got != want {
			t.Errorf("%s the TypeScript server saw = %q; want %q (the run's trace, the call's span)", where, got, want)
		}
	}
	if strings.Contains(seen.Header.Traceparent+seen.Meta.Traceparent, "0000000000000000") {
		t.Errorf("an empty span id reached the server: %+v", seen)
	}
}
