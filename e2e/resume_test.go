package e2e

// The SIGKILL test of resume after a crash: a real `vmcp run` over HTTP
// with the SQLite store runs a 5-step chain, started as an MCP task, over
// a real stdio backend that logs every call. Step 4 blocks in the backend until its gate file
// exists, so the kill lands exactly while step 4 is in flight (no sleeps).
// vmcp is killed with SIGKILL (its stdio backend dies with it), the gate
// is opened, and vmcp is started again on the same database.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Ports of the resume tests: 17200-17299.
const resumePortLo, resumePortHi = 17200, 17299

// resumeConfig is the chain s1 -> s2 -> s3 -> s4 -> s5. s4 waits for the
// file ${DIR}/open-s4; ${S4TOOL} is its tool and ${IDEMPOTENT} its
// idempotent: value. s5's label
// is built from s1's output, so the resumed run must read the recorded
// output of a step it did not call again.
const resumeConfig = gatedSQLiteHead + `compositeTools:
  - name: five_steps
    description: Five steps in a chain; the fourth waits for its gate
    steps:
      - id: s1
        tool: tb.gated
        arguments: {label: s1}
      - id: s2
        tool: tb.gated
        dependsOn: [s1]
        arguments: {label: s2}
      - id: s3
        tool: tb.gated
        dependsOn: [s2]
        arguments: {label: s3}
      - id: s4
        tool: tb.${S4TOOL}
        dependsOn: [s3]
        idempotent: ${IDEMPOTENT}
        arguments: {label: s4, gate: "${DIR}/open-s4"}
      - id: s5
        tool: tb.gated
        dependsOn: [s4]
        arguments: {label: "s5 after {{.steps.s1.output.label}} and {{.steps.s4.output.label}}"}
`

// killableVMCP is a `vmcp run --transport http` the test may kill.
type killableVMCP struct {
	cmd       *exec.Cmd
	exited    chan error
	stderr    *testenv.Buffer
	cfg, addr string
	base      string // http://addr
}

// killableOn writes the config text with a fresh backend log (${REC})
// and starts vmcp on it (startKillable) on a port from lo to hi. It
// returns the process, the config's path and the backend log's.
func killableOn(t *testing.T, text string, lo, hi int) (*killableVMCP, string, string) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "backend.log")
	cfg := writeConfig(t, text, rec)
	return startKillable(t, cfg, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, lo, hi))), cfg, rec
}

// restart starts vmcp again on p's config and address (after kill).
func (p *killableVMCP) restart(t *testing.T) *killableVMCP {
	t.Helper()
	return startKillable(t, p.cfg, p.addr)
}

// startKillable starts vmcp on addr (with extra flags) and waits until it listens. At the
// end of the test a process still running gets SIGTERM and must exit
// cleanly within 10 seconds.
func startKillable(t *testing.T, cfg, addr string, extra ...string) *killableVMCP {
	t.Helper()
	p := &killableVMCP{exited: make(chan error, 1), stderr: &testenv.Buffer{}, cfg: cfg, addr: addr, base: "http://" + addr}
	args := append([]string{"run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"}, extra...)
	p.cmd = exec.Command(bins.vmcp, args...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState != nil {
			return
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.exited:
			if err != nil {
				t.Errorf("vmcp run exited with %v after SIGTERM\nstderr:\n%s", err, p.stderr.String())
			}
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
			t.Errorf("vmcp run did not exit within 10s of SIGTERM")
		}
	})
	waitListening(t, addr, p.exited, p.stderr)
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *killableVMCP) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("vmcp still running 10s after SIGKILL")
	}
}

// getJSON reads an API path into v and returns the status code.
func (p *killableVMCP) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return res.StatusCode
}

// backendCalls counts the "call LABEL" lines of the backend's log.
func backendCalls(t *testing.T, rec string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(rec)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if label, ok := strings.CutPrefix(line, "call "); ok {
			calls[label]++
		}
	}
	return calls
}

// taskStarter starts a five_steps run as an MCP task on the vmcp at base
// and returns the task id (which is the run id).
type taskStarter func(t *testing.T, base string) string

// startExtensionTask starts it through the Tasks extension (no session).
func startExtensionTask(t *testing.T, base string) string {
	return (&testenv.ExtTasks{URL: base + "/mcp"}).StartTask(t, "five_steps", nil)
}

// startTask20251125 starts it as a 2025-11-25 task, in a session that is
// then dropped.
func startTask20251125(t *testing.T, base string) string {
	c := tasksClient(t, base)
	defer c.Close()
	return testenv.StartTask(t, c, "five_steps", nil).TaskId
}

// tasksClient is an initialized mcp-go client of the vmcp at base that
// speaks 2025-11-25 (where tasks/* are negotiated in initialize).
func tasksClient(t *testing.T, base string) *client.Client {
	t.Helper()
	return testenv.HTTPClientHeaders(t, base+"/mcp", nil, client.WithLegacyProtocolOnly())
}

// killDuringStep4 starts vmcp, starts a five_steps run as a task, kills
// vmcp with SIGKILL while s4 is in flight, opens s4's gate and starts vmcp
// again on the same database. It returns the new process, the task (and
// run) id and the backend log's path.
func killDuringStep4(t *testing.T, s4Tool string, idempotent bool, start taskStarter) (*killableVMCP, string, string) {
	t.Helper()
	text := strings.NewReplacer("${S4TOOL}", s4Tool, "${IDEMPOTENT}", fmt.Sprint(idempotent)).Replace(resumeConfig)
	p, cfg, rec := killableOn(t, text, resumePortLo, resumePortHi)
	gate := filepath.Join(filepath.Dir(cfg), "open-s4")

	id := start(t, p.base)
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rec)["s4"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight within 60s; backend calls %v\nstderr:\n%s", backendCalls(t, rec), p.stderr.String())
		}
	}
	var d httpapi.RunDetail
	if code := p.getJSON(t, "/api/v1/runs/"+id, &d); code != http.StatusOK || d.Status != runtime.RunRunning {
		t.Fatalf("GET /api/v1/runs/%s = %d, status %s; want the task's run, running", id, code, d.Status)
	}

	p.kill(t)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p.restart(t), id, rec
}

// waitFinished polls the run API until run id has a final status (60s).
func waitFinished(t *testing.T, p *killableVMCP, id string) httpapi.RunDetail {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var d httpapi.RunDetail
		if code := p.getJSON(t, "/api/v1/runs/"+id, &d); code == http.StatusOK && d.Status.Finished() {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not finished 60s after the restart (status %s)\nstderr:\n%s", id, d.Status, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestResumeAfterSIGKILL: with s4 idempotent, the restarted vmcp resumes
// the run under its id: s1-s3 are not called again, s4 is called again,
// s5 reads the recorded output of s1, and the run completes, as tasks/get
// on the old task id (Tasks extension), the API and `vmcp runs show` say.
func TestResumeAfterSIGKILL(t *testing.T) {
	p, id, rec := killDuringStep4(t, "gated", true, startExtensionTask)
	checkResumedCompleted(t, p, id, rec)
}

// TestResumeAfterSIGKILLToolHint: the same with a step that does not say
// idempotent but whose backend tool declares idempotentHint.
func TestResumeAfterSIGKILLToolHint(t *testing.T) {
	p, id, rec := killDuringStep4(t, "gated_idempotent", false, startExtensionTask)
	checkResumedCompleted(t, p, id, rec)
}

// checkResumedCompleted checks a resumed five_steps run that re-ran s4.
func checkResumedCompleted(t *testing.T, p *killableVMCP, id, rec string) {
	t.Helper()
	task := (&testenv.ExtTasks{URL: p.base + "/mcp"}).Wait(t, id, "completed", "failed", "cancelled")
	d := waitFinished(t, p, id)
	if d.Status != runtime.RunCompleted {
		t.Fatalf("resumed run %s = %s, error %+v; want completed\nstderr:\n%s", id, d.Status, d.Error, p.stderr.String())
	}
	res, _ := task["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); task["status"] != "completed" || res["isError"] == true || sc["label"] != "s5 after s1 and s4" {
		t.Errorf("tasks/get on the old task id = %v; want completed with s5's {label: s5 after s1 and s4}", task)
	}
	calls := backendCalls(t, rec)
	want := map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 2, "s5 after s1 and s4": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v (finished steps never called again, idempotent s4 called again)", calls, want)
	}
	if out, _ := d.Output.(map[string]any); out == nil || out["label"] != "s5 after s1 and s4" {
		t.Errorf("resumed run output = %v; want s5's {label: s5 after s1 and s4}", d.Output)
	}
	for i, st := range d.Steps {
		if st.Status != runtime.StepCompleted {
			t.Errorf("step %d (%s) = %s; want completed", i, st.ID, st.Status)
		}
	}
	if !strings.Contains(p.stderr.String(), "resuming run left unfinished by the previous stop") || !strings.Contains(p.stderr.String(), id) {
		t.Errorf("the restarted vmcp did not log the resume of %s:\n%s", id, p.stderr.String())
	}
	out, stderr, code := run(t, 30*time.Second, "", bins.vmcp, "runs", "show", id, "--url", p.base)
	if code != 0 || !strings.Contains(out, "status    completed") {
		t.Errorf("vmcp runs show %s = exit %d:\n%s%s\nwant status completed", id, code, out, stderr)
	}
}

// TestResumeAfterSIGKILLNotIdempotent: with s4 not idempotent, the
// restarted vmcp does not call s4 again (its first call may have had its
// effect): the run ends interrupted, naming s4, and s5 never runs. The
// 2025-11-25 task, read from a new session, is failed with that message.
func TestResumeAfterSIGKILLNotIdempotent(t *testing.T) {
	p, id, rec := killDuringStep4(t, "gated", false, startTask20251125)
	c := tasksClient(t, p.base)
	task := testenv.WaitTask(t, c, id, mcp.TaskStatusFailed, mcp.TaskStatusCompleted, mcp.TaskStatusCancelled)
	if task.Status != mcp.TaskStatusFailed || !strings.Contains(task.StatusMessage, `"s4"`) {
		t.Errorf("tasks/get on the old task id = %s %q; want failed naming s4", task.Status, task.StatusMessage)
	}
	d := waitFinished(t, p, id)
	if d.Status != runtime.RunInterrupted {
		t.Fatalf("run %s after restart = %s; want interrupted", id, d.Status)
	}
	if d.Error == nil || !strings.Contains(d.Error.Msg, `"s4"`) {
		t.Errorf("run error = %+v; want it to name step s4", d.Error)
	}
	calls := backendCalls(t, rec)
	want := map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v (nothing called again, s5 never)", calls, want)
	}
	for i, st := range d.Steps[:3] {
		if st.Status != runtime.StepCompleted {
			t.Errorf("step %d (%s) = %s; want completed (kept from before the kill)", i, st.ID, st.Status)
		}
	}
	out, stderr, code := run(t, 30*time.Second, "", bins.vmcp, "runs", "show", id, "--url", p.base)
	if code != 0 || !strings.Contains(out, "status    interrupted") || !strings.Contains(out, "s4") {
		t.Errorf("vmcp runs show %s = exit %d:\n%s%s\nwant status interrupted naming s4", id, code, out, stderr)
	}
}

// resumeAskConfig: s1, then a question, then s3 built from the answer.
const resumeAskConfig = gatedSQLiteHead + `compositeTools:
  - name: ask_after_kill
    description: A step, a question, a step using the answer
    steps:
      - id: s1
        tool: tb.gated
        arguments: {label: s1}
      - id: ask
        type: elicitation
        dependsOn: [s1]
        message: Deploy to which region?
        schema: {type: object, properties: {region: {type: string}}, required: [region]}
      - id: s3
        tool: tb.gated
        dependsOn: [ask]
        arguments: {label: "s3 to {{.steps.ask.output.content.region}}"}
`

// TestResumeAsksAgainAfterSIGKILL: a run killed while its question waits
// is resumed as the same task, asks the question again (input_required
// on the old task id, Tasks extension), and completes with the answer
// given to the new process; s1 is not called again.
func TestResumeAsksAgainAfterSIGKILL(t *testing.T) {
	p, _, rec := killableOn(t, resumeAskConfig, resumePortLo, resumePortHi)
	c := &testenv.ExtTasks{URL: p.base + "/mcp"}
	id := c.StartTask(t, "ask_after_kill", nil)
	c.Wait(t, id, "input_required")
	p.kill(t)

	p2 := p.restart(t)
	task := c.Wait(t, id, "input_required")
	reqs, _ := task["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("resumed task's inputRequests = %v; want the question again", task["inputRequests"])
	}
	for key, v := range reqs {
		params, _ := v.(map[string]any)["params"].(map[string]any)
		if params["message"] != "Deploy to which region?" {
			t.Errorf("the question asked again = %v; want the step's message", v)
		}
		c.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"region": "eu-west-1"}}}})
	}
	done := c.Wait(t, id, "completed", "failed", "cancelled")
	res, _ := done["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); done["status"] != "completed" || res["isError"] == true || sc["label"] != "s3 to eu-west-1" {
		t.Errorf("resumed task = %v; want completed with {label: s3 to eu-west-1}\nstderr:\n%s", done, p2.stderr.String())
	}
	if calls := backendCalls(t, rec); fmt.Sprint(calls) != fmt.Sprint(map[string]int{"s1": 1, "s3 to eu-west-1": 1}) {
		t.Errorf("backend calls = %v; want s1 once (not again after the restart) and s3 once", calls)
	}
}
