package e2e

// Finally steps through a real vmcp run process and the test backend
// process, which records every sleep it starts, finishes or sees cancelled:
// the cleanup calls really reach the backend after a client cancel and
// after the workflow timeout, and a failed finally step is named in the
// result's _meta without changing the status.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const finallyConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
compositeTools:
  - name: guarded_nap
    description: A long nap whose cleanup always runs
    parameters:
      label: {type: string, required: true}
    timeout: ${TIMEOUT}
    steps:
      - id: nap
        tool: tb.sleep
        arguments: {ms: 30000, label: "nap-{{.params.label}}"}
    finally:
      - id: cleanup
        tool: tb.sleep
        timeout: 10s
        arguments: {ms: 10, label: "cleanup-{{.params.label}}-{{.workflow.status}}"}
  - name: noisy_cleanup
    description: Completes although a finally step fails
    steps:
      - id: work
        tool: tb.echo
        arguments: {text: done}
    finally:
      - id: notify
        tool: tb.fail
        arguments: {message: chat is down}
      - id: audit
        tool: tb.echo
        dependsOn: [notify]
        arguments: {text: "{{.workflow.status}}, notify {{.steps.notify.status}}"}
`

func TestFinallySteps(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, strings.ReplaceAll(finallyConfig, "${TIMEOUT}", "1m"), rec)
	c, _ := stdioVMCP(t, cfg)
	recorded := func(line string) bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), line+"\n")
	}

	t.Run("after client cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "guarded_nap"
			req.Params.Arguments = map[string]any{"label": "c"}
			_, err := c.CallTool(ctx, req)
			errc <- err
		}()
		waitFor(t, "the nap to start", func() bool { return recorded("start nap-c") })
		cancel()
		if err := <-errc; err == nil {
			t.Errorf("CallTool returned no error after its context was cancelled")
		}
		waitFor(t, "the backend to see the cancel", func() bool { return recorded("cancelled nap-c") })
		waitFor(t, "the cleanup to run to the end", func() bool { return recorded("done cleanup-c-cancelled") })
	})

	t.Run("failed finally step", func(t *testing.T) {
		res := mustCall(t, c, "noisy_cleanup", nil)
		if res.IsError {
			t.Fatalf("noisy_cleanup failed: %s", testenv.ResultText(res))
		}
		if diff := cmp.Diff(map[string]any{"text": "done"}, res.StructuredContent); diff != "" {
			t.Errorf("structuredContent (-want +got):\n%s", diff)
		}
		meta := res.Meta.AdditionalFields
		if meta["vmcp/status"] != "completed" {
			t.Errorf("_meta vmcp/status = %v; want completed", meta["vmcp/status"])
		}
		if diff := cmp.Diff([]any{"notify"}, meta["vmcp/finallyFailed"]); diff != "" {
			t.Errorf("_meta vmcp/finallyFailed (-want +got):\n%s", diff)
		}
	})
}

// TestFinallyAfterWorkflowTimeout runs the cleanup of a run that timed out:
// the workflow timeout has passed, the cleanup's own timeout bounds it.
func TestFinallyAfterWorkflowTimeout(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, strings.ReplaceAll(finallyConfig, "${TIMEOUT}", "300ms"), rec)
	c, _ := stdioVMCP(t, cfg)
	res := mustCall(t, c, "guarded_nap", map[string]any{"label": "t"})
	if !res.IsError || !strings.Contains(testenv.ResultText(res), "timed out") {
		t.Errorf("guarded_nap = %s; want a timed-out error", testenv.ResultText(res))
	}
	b, _ := os.ReadFile(rec)
	for _, line := range []string{"cancelled nap-t", "start cleanup-t-timed_out", "done cleanup-t-timed_out"} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("backend record lacks %q:\n%s", line, b)
		}
	}
}

// TestCallFinallyFailure: vmcp call exits 0 for a completed run whose
// finally step failed, prints the output, and names the step on stderr.
func TestCallFinallyFailure(t *testing.T) {
	cfg := writeConfig(t, strings.ReplaceAll(finallyConfig, "${TIMEOUT}", "1m"), filepath.Join(t.TempDir(), "record.txt"))
	out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp, "call", "--config", cfg, "noisy_cleanup")
	if code != 0 || out != "{\n  \"text\": \"done\"\n}\n" {
		t.Errorf("vmcp call noisy_cleanup = exit %d, stdout %q; want 0 and the output\nstderr:\n%s", code, out, errOut)
	}
	if want := `vmcp: finally step "notify" failed (the run is still completed): tb.fail returned an error: chat is down`; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}
