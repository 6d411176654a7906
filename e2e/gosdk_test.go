package e2e

// The official Go SDK (github.com/modelcontextprotocol/go-sdk) as a client
// of `vmcp run` over HTTP. It speaks 2026-07-28 and sends
// notifications/cancelled with the MCP-Protocol-Version header but no
// _meta; a 400 for that notification makes it close the session.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const goSDKConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
compositeTools:
  - name: quick
    description: Echo once
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
  - name: nap
    description: Nap, then echo
    parameters:
      ms: {type: number, required: true}
      label: {type: string, required: true}
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: "{{.params.ms}}", label: "{{.params.label}}"}}
`

// TestGoSDKCancelKeepsSession cancels a slow call by context: the backend
// must see the cancel, and ten more calls on the same session must all
// succeed.
func TestGoSDKCancelKeepsSession(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	url, stderr := httpVMCPOn(t, writeConfig(t, goSDKConfig, rec), 17700, 17749)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "gosdk-e2e", Version: "1"}, nil)
	s, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()

	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(callCtx, &gosdk.CallToolParams{Name: "nap", Arguments: map[string]any{"ms": 60000, "label": "cancel-me"}})
		done <- err
	}()
	waitFor(t, "the slow step to start", func() bool { return strings.Contains(readFile(rec), "start cancel-me") })
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled call returned %v; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call did not return within 30s")
	}
	waitFor(t, "the backend to see the cancel", func() bool { return strings.Contains(readFile(rec), "cancelled cancel-me") })
	waitFor(t, "the run to end cancelled", func() bool {
		return strings.Contains(stderr.String(), `msg="run finished" workflow=nap`) && strings.Contains(stderr.String(), "status=cancelled")
	})

	for i := range 10 {
		res, err := s.CallTool(ctx, &gosdk.CallToolParams{Name: "quick", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d after the cancel: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("call %d after the cancel: error result %+v", i, res.Content)
		}
	}
}
