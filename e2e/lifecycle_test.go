package e2e

// The life of runs through a real vmcp run process over HTTP: retention
// of finished runs in the memory store, and re-runs over the API and the
// CLI.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
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

const rerunConfig = `
backends:
  tb: {command: "${TB}"}
authoring: {enabled: true}
state: {store: sqlite, path: "${DIR}/state.db"}
`

// TestRerunOverAPIAndCLI re-runs a finished run of an authored workflow
// through POST /api/v1/runs/{id}/rerun and `vmcp runs rerun`: the new run
// has the same arguments, the same version and trigger rerun:ID; once a
// new version is saved, a re-run of the old version is refused with an
// error suggesting --current, and --current runs the new version.
func TestRerunOverAPIAndCLI(t *testing.T) {
	url, _ := httpVMCPOn(t, writeConfig(t, rerunConfig, ""), lifePortLo, lifePortHi)
	base := strings.TrimSuffix(url, "/mcp")
	c := testenv.HTTPClient(t, url)
	mustCall(t, c, "vmcp_workflow_save", map[string]any{"source": fixedDraft})
	res := mustCall(t, c, "greet", map[string]any{"who": "ada"})
	if res.IsError {
		t.Fatalf("greet = %s", testenv.ResultText(res))
	}
	first := fmt.Sprint(res.Meta.AdditionalFields["vmcp/runId"])
	var orig httpapi.RunDetail
	getJSON(t, base+"/api/v1/runs/"+first, &orig)

	// The API: 201 with the new run, which ends as the first did.
	code, body := postRun(t, base, first, "")
	var started httpapi.RunDetail
	if code != http.StatusCreated || json.Unmarshal(body, &started) != nil {
		t.Fatalf("POST rerun = %d %s; want 201 with the new run", code, body)
	}
	again := waitRunEnds(t, base, started.ID)
	if again.Trigger != "rerun:"+first || again.Status != "completed" || again.WorkflowVersion != orig.WorkflowVersion ||
		!cmp.Equal(again.Output, orig.Output) {
		t.Errorf("re-run = trigger %q, %s, version %q, output %v; want trigger rerun:%s, completed, version %q, output %v",
			again.Trigger, again.Status, again.WorkflowVersion, again.Output, first, orig.WorkflowVersion, orig.Output)
	}

	// The CLI: the new run's id, then `runs show` names its trigger.
	out, errOut, exit := run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "rerun", "--url", base, first)
	m := regexp.MustCompile(`^run (\S+): re-run of ` + first + ` started`).FindStringSubmatch(out)
	if exit != 0 || m == nil {
		t.Fatalf("vmcp runs rerun = exit %d\n%s%s; want the new run's id", exit, out, errOut)
	}
	waitRunEnds(t, base, m[1])
	out, errOut, exit = run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "show", "--url", base, m[1])
	if exit != 0 || !strings.Contains(out, "trigger   rerun:"+first+"\n") || !strings.Contains(out, "status    completed") {
		t.Errorf("vmcp runs show (re-run) = exit %d\n%s%s; want trigger rerun:%s, completed", exit, out, errOut, first)
	}

	// A new version: the old one is no longer served.
	v2 := strings.Replace(fixedDraft, "again", "and again", 1)
	mustCall(t, c, "vmcp_workflow_save", map[string]any{"source": v2, "replace": true})
	code, body = postRun(t, base, first, "")
	if code != http.StatusConflict || !strings.Contains(string(body), "re-run it with --current") {
		t.Errorf("POST rerun of the old version = %d %s; want 409 suggesting --current", code, body)
	}
	out, errOut, exit = run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "rerun", "--url", base, first)
	if exit != 1 || !strings.Contains(errOut, "run "+first+" cannot be re-run: it ran version "+orig.WorkflowVersion) {
		t.Errorf("vmcp runs rerun of the old version = exit %d\n%s%s; want exit 1 naming the version", exit, out, errOut)
	}
	out, errOut, exit = run(t, 60*time.Second, t.TempDir(), bins.vmcp, "runs", "rerun", "--url", base, "--current", "--json", first)
	if err := json.Unmarshal([]byte(out), &started); exit != 0 || err != nil {
		t.Fatalf("vmcp runs rerun --current --json = exit %d\n%s%s", exit, out, errOut)
	}
	cur := waitRunEnds(t, base, started.ID)
	if want := map[string]any{"text": "hello ada and again"}; cur.Trigger != "rerun:"+first || cur.WorkflowVersion == orig.WorkflowVersion ||
		!strings.Contains(fmt.Sprint(cur.Output), "hello ada and again") {
		t.Errorf("re-run --current = trigger %q, version %q, output %v; want rerun:%s on the new version, output with %v", cur.Trigger, cur.WorkflowVersion, cur.Output, first, want)
	}

	// Unknown runs and bad flags.
	if code, body := postRun(t, base, "nope", ""); code != http.StatusNotFound {
		t.Errorf("POST rerun of an unknown run = %d %s; want 404", code, body)
	}
	if code, body := postRun(t, base, first, "?current=maybe"); code != http.StatusBadRequest || !strings.Contains(string(body), "current must be true or false") {
		t.Errorf("POST rerun?current=maybe = %d %s; want 400", code, body)
	}
}

// postRun posts to /api/v1/runs/{id}/rerun (with query) and returns the
// status code and body.
func postRun(t *testing.T, base, id, query string) (int, []byte) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Post(base+"/api/v1/runs/"+id+"/rerun"+query, "application/json", nil)
	if err != nil {
		t.Fatalf("POST rerun %s: %v", id, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// waitRunEnds waits until run id has finished and returns it.
func waitRunEnds(t *testing.T, base, id string) httpapi.RunDetail {
	t.Helper()
	var d httpapi.RunDetail
	waitFor(t, "run "+id+" to finish", func() bool {
		d = httpapi.RunDetail{}
		getJSON(t, base+"/api/v1/runs/"+id, &d)
		return d.Status.Finished()
	})
	return d
}
