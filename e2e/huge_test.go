package e2e

// Sources far past the limits, through real vmcp processes: a 3 MiB draft
// sent to vmcp_workflow_check over stdio, and a workflow file of the same
// size at startup (`vmcp call`). Both are refused at the line where the
// parser's node limit was crossed, before go-yaml parses them (before the
// fix, the check took seconds and gigabytes, and reported too_many_steps
// only after parsing and checking every step).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hugeWorkflow is a workflow of n one-line steps.
func hugeWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("name: huge\ndescription: far too many steps\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: step_%d, tool: tb.echo, arguments: {text: hi}}\n", i)
	}
	return b.String()
}

// hugeLine is where hugeWorkflow's document crosses the node limit: the
// root and the header estimate at 7 values and each step's line at 10, so
// the 2,000th step (line 2,003) crosses 20,000.
const hugeLine = 2003

func TestHugeDraftRefusedBeforeParsing(t *testing.T) {
	src := hugeWorkflow(70_000)
	if len(src) < 3<<20 {
		t.Fatalf("draft is %d bytes; want 3 MiB", len(src))
	}
	c, _ := stdioVMCP(t, writeConfig(t, authoringConfigStdio, ""))
	res := mustCall(t, c, "vmcp_workflow_check", map[string]any{"source": src})
	var ch checkOut
	structured(t, res, &ch)
	if ch.OK || len(ch.Diagnostics) != 1 {
		t.Fatalf("check(3 MiB draft) = ok %v, %d diagnostics; want one error", ch.OK, len(ch.Diagnostics))
	}
	if d := ch.Diagnostics[0]; d.Code != "document_too_large" || d.Line != hugeLine || !strings.Contains(d.Detail, "100 steps") {
		t.Errorf("check(3 MiB draft) = %+v; want document_too_large at line %d with what to do", d, hugeLine)
	}
}

func TestHugeWorkflowFileRefusedAtStartup(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(wf, []byte(hugeWorkflow(70_000)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "backends:\n  tb: {command: \"${TB}\"}\nworkflows: ["+wf+"]\n", "")
	_, errOut, code := run(t, 60*time.Second, dir, bins.vmcp, "call", "--config", cfg, "huge")
	want := fmt.Sprintf("huge.yaml:%d:3: error: document holds more than 20000 values", hugeLine)
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("vmcp call with a 3 MiB workflow file exited %d with stderr:\n%.2000s\nwant a failure with %q", code, errOut, want)
	}
}
