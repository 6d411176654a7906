package e2e

// The life of runs through a real vmcp run process over HTTP: retention
// of finished runs in the memory store, and re-runs over the API and the
// CLI.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime/httpapi"
)

// lifePortLo and lifePortHi are this file's ports.
const lifePortLo, lifePortHi = 17050, 17099

const retentionConfig = `
backends:
  tb: {command: "${TB}", args: [-gated, -record, "${REC}"]}
state:
  retention: {finished: 1s}
compositeTools:
  - name: held
    description: Wait until the gate file exists
    parameters:
      label: {type: string, required: true}
      gate: {type: string, required: true}
    steps:
      - id: wait
        tool: tb.gated
        arguments: {label: "{{.params.label}}", gate: "{{.params.gate}}"}
`

// TestRetentionPrunesFinishedRunsInMemory: with state.retention.finished
// 1s and the memory store, a finished run disappears from the API on
// its own, while a run still going stays, however long it runs; once it
// finishes it goes too.
func TestRetentionPrunesFinishedRunsInMemory(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "calls.log")
	url, _ := httpVMCPOn(t, writeConfig(t, retentionConfig, rec), lifePortLo, lifePortHi)
	base := strings.TrimSuffix(url, "/mcp")
	c := testenv.HTTPClient(t, url)
	calls := make(chan error, 2)
	for _, label := range []string{"a", "b"} {
		go func() {
			_, err := callTool(t, c, "held", map[string]any{"label": label, "gate": filepath.Join(dir, label)}, nil)
			calls <- err
		}()
		waitRecord(t, rec, "call "+label)
	}
	var list httpapi.RunList
	getJSON(t, base+"/api/v1/runs?workflow=held&status=running", &list)
	if len(list.Runs) != 2 {
		t.Fatalf("running held runs = %d; want 2", len(list.Runs))
	}
	first, second := list.Runs[1].ID, list.Runs[0].ID // newest first: a started first
	open := func(label string) {
		if err := os.WriteFile(filepath.Join(dir, label), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := <-calls; err != nil {
			t.Fatalf("held %s: %v", label, err)
		}
	}
	open("a")
	waitFor(t, "the finished run "+first+" to be pruned", func() bool { return runStatusCode(t, base, first) == http.StatusNotFound })
	// Longer than the retention has passed since b started: it stays,
	// because it is running.
	var d httpapi.RunDetail
	getJSON(t, base+"/api/v1/runs/"+second, &d)
	if d.Status != "running" || time.Since(d.StartedAt) <= time.Second {
		t.Errorf("run %s = %s, started %s ago; want still running, kept past the 1s retention", second, d.Status, time.Since(d.StartedAt))
	}
	open("b")
	waitFor(t, "the run "+second+" to be pruned once finished", func() bool { return runStatusCode(t, base, second) == http.StatusNotFound })
}

// runStatusCode is the status code of GET /api/v1/runs/{id}.
func runStatusCode(t *testing.T, base, id string) int {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(base + "/api/v1/runs/" + id)
	if err != nil {
		t.Fatalf("GET run %s: %v", id, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
