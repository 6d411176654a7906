package e2e

// Drafts that would take more than they may, through real vmcp processes.
//
// Sources far past the limits: a 3 MiB draft
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

	"github.com/vmcp-dev/vmcp/internal/testenv"
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

// A draft that runs a workflow from files is held to what that workflow
// reaches: a backend outside authoring.backends is refused at the check,
// and running the callee needs the run scope as calling it directly
// would. tb2 is the same test backend as tb under a name authoring may
// not call; its record shows it never got a call.
const reachConfig = `
backends:
  tb: {command: "${TB}"}
  tb2: {command: "${TB}", args: [-record, "${REC}"]}
authoring: {enabled: true, backends: [tb]}
state: {store: sqlite, path: "${DIR}/state.db"}
server:
  auth:
    tokens:
      - {token: author-token, scopes: [author]}
      - {token: both-token, scopes: [run, author]}
compositeTools:
  - name: filewf
    description: Sleep on tb2, which authored workflows may not call
    steps:
      - {id: nap, tool: tb2.sleep, arguments: {ms: 1, label: from-draft}}
  - name: okwf
    description: Echo on tb
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hi}}
`

func TestDraftReachThroughWorkflows(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	url, _ := authoringHTTP(t, writeConfig(t, reachConfig, rec))
	author := authoringClient(t, url, "author-token")
	draft := func(callee string) string {
		return "name: d\ndescription: run a workflow from files\nsteps:\n  - id: w\n    type: workflow\n    workflow: " + callee + "\n"
	}

	// The check names the callee and the backend it reaches, at workflow:.
	res := mustCall(t, author, "vmcp_workflow_check", map[string]any{"source": draft("filewf")})
	var ch checkOut
	structured(t, res, &ch)
	if ch.OK || len(ch.Diagnostics) != 1 || ch.Diagnostics[0].Code != "backend_not_allowed" || ch.Diagnostics[0].Line != 6 ||
		!strings.Contains(ch.Diagnostics[0].Message, `workflow "filewf" calls backend "tb2"`) {
		t.Errorf("check(draft calling filewf) = %s; want backend_not_allowed at line 6 naming filewf and tb2", testenv.ResultText(res))
	}
	res, err := callTool(t, author, "vmcp_workflow_run", map[string]any{"source": draft("filewf")}, nil)
	if err != nil || !res.IsError || !strings.Contains(testenv.ResultText(res), "backend_not_allowed") {
		t.Errorf("run(draft calling filewf) = %v, %v; want the check's backend_not_allowed", testenv.ResultText(res), err)
	}

	// A callee within authoring.backends checks clean, but running it
	// needs the run scope, which the author-only token lacks.
	res, err = callTool(t, author, "vmcp_workflow_run", map[string]any{"source": draft("okwf")}, nil)
	if err != nil || !res.IsError || !strings.Contains(testenv.ResultText(res), "running workflow okwf from a draft needs the run scope") {
		t.Errorf("run(draft calling okwf) with an author-only token = %v, %v; want a refusal naming okwf and the run scope", testenv.ResultText(res), err)
	}
	both := authoringClient(t, url, "both-token")
	if res := mustCall(t, both, "vmcp_workflow_run", map[string]any{"source": draft("okwf")}); res.IsError {
		t.Errorf("run(draft calling okwf) with run and author = %s; want it to run", testenv.ResultText(res))
	}
	if b, _ := os.ReadFile(rec); strings.Contains(string(b), "from-draft") {
		t.Errorf("tb2 recorded %q; a draft reached it", b)
	}
}
