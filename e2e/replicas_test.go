package e2e

// Several `vmcp run` processes (replicas) on one PostgreSQL database
// (state.store: postgres), started by the test as a throwaway cluster
// (testenv.StartPostgres). The runs of a replica killed with SIGKILL in
// the middle of its runs are taken over, once its lease expires, by
// exactly one of the survivors: each run's steps after the kill are
// called once in all, counted in the backends' shared call log.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Ports of the replica tests, apart from every other test's (the Temporal
// tests take 17450-17489): the cluster in 17660-17669, vmcp processes
// in 17670-17699.
const (
	replicaPGLo, replicaPGHi = 17660, 17669
	replicaLo, replicaHi     = 17670, 17699
)

// replicaConfig is resumeConfig's chain on postgres with a one-second
// lease; every replica's backend logs to one file, and s4's gate is one
// file for all.
const replicaConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -gated]}
state:
  store: postgres
  url: "${PGURL}"
  lease: 1s
compositeTools:
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
        tool: tb.gated
        dependsOn: [s3]
        idempotent: true
        arguments: {label: s4, gate: "${GATE}"}
      - id: s5
        tool: tb.gated
        dependsOn: [s4]
        arguments: {label: "s5 after {{.steps.s1.output.label}} and {{.steps.s4.output.label}}"}
`

// replicaSet is a database and the config of the replicas on it.
type replicaSet struct {
	cfg, rec, gate string
}

func newReplicaSet(t *testing.T, config string) *replicaSet {
	t.Helper()
	pg := testenv.StartPostgres(t, replicaPGLo, replicaPGHi, testenv.PostgresOptions{})
	shared := t.TempDir()
	rs := &replicaSet{rec: filepath.Join(shared, "backend.log"), gate: filepath.Join(shared, "open-s4")}
	text := strings.NewReplacer("${PGURL}", pg.NewDatabase(t), "${GATE}", rs.gate).Replace(config)
	rs.cfg = writeConfig(t, text, rs.rec)
	return rs
}

// start starts one more replica, with extra flags.
func (rs *replicaSet) start(t *testing.T, extra ...string) *killableVMCP {
	t.Helper()
	return startKillable(t, rs.cfg, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, replicaLo, replicaHi)), extra...)
}

// TestReplicasTakeOverExactlyOnce: three replicas; three runs started as
// tasks on A, each held at s4. B reads A's tasks. A is killed with
// SIGKILL, the gate opens: B and C between them resume each run exactly
// once (s4 called again, being idempotent, s5 once per run, s1-s3 never
// again), and every run completes, as both survivors' APIs and tasks/get
// say.
func TestReplicasTakeOverExactlyOnce(t *testing.T) {
	rs := newReplicaSet(t, replicaConfig)
	a, b, c := rs.start(t), rs.start(t), rs.start(t)
	const runs = 3
	var ids []string
	for range runs {
		ids = append(ids, (&testenv.ExtTasks{URL: a.base + "/mcp"}).StartTask(t, "five_steps", nil))
	}
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rs.rec)["s4"] != runs; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight in %d runs within 60s; backend calls %v\nstderr:\n%s", runs, backendCalls(t, rs.rec), a.stderr.String())
		}
	}
	// A's tasks, read through B while A runs them.
	for _, id := range ids {
		reply := (&testenv.ExtTasks{URL: b.base + "/mcp"}).Get(t, id)
		if task := reply.Result; task == nil || task["status"] != "working" {
			t.Errorf("tasks/get %s on B while A runs it = %+v; want working", id, reply)
		}
		var d httpapi.RunDetail
		if code := c.getJSON(t, "/api/v1/runs/"+id, &d); code != http.StatusOK || d.Status != runtime.RunRunning {
			t.Errorf("GET /api/v1/runs/%s on C = %d, %s; want A's run, running", id, code, d.Status)
		}
	}

	a.kill(t)
	if err := os.WriteFile(rs.gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		for _, p := range []*killableVMCP{b, c} {
			d := waitFinished(t, p, id)
			if d.Status != runtime.RunCompleted {
				t.Fatalf("run %s on %s = %s, error %+v; want completed\nB:\n%s\nC:\n%s", id, p.base, d.Status, d.Error, b.stderr.String(), c.stderr.String())
			}
		}
		task := (&testenv.ExtTasks{URL: c.base + "/mcp"}).Wait(t, id, "completed", "failed", "cancelled")
		res, _ := task["result"].(map[string]any)
		if sc, _ := res["structuredContent"].(map[string]any); task["status"] != "completed" || sc["label"] != "s5 after s1 and s4" {
			t.Errorf("tasks/get %s on C = %v; want completed with s5's label", id, task)
		}
	}
	want := map[string]int{"s1": runs, "s2": runs, "s3": runs, "s4": 2 * runs, "s5 after s1 and s4": runs}
	if calls := backendCalls(t, rs.rec); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v (each run resumed by exactly one survivor)", calls, want)
	}
	for _, id := range ids {
		resumed := 0
		for _, p := range []*killableVMCP{b, c} {
			for _, line := range strings.Split(p.stderr.String(), "\n") {
				if strings.Contains(line, "resuming run left unfinished") && strings.Contains(line, id) {
					resumed++
				}
			}
		}
		if resumed != 1 {
			t.Errorf("run %s was resumed %d times by the survivors; want exactly once\nB:\n%s\nC:\n%s", id, resumed, b.stderr.String(), c.stderr.String())
		}
	}
}

// TestReplicasCancel: a run started as a task on A, held at s4, is
// cancelled through B (tasks/cancel of the Tasks extension): the cancel
// reaches A, which runs the run; the run ends cancelled, as B's API
// says, and s5 is never called.
func TestReplicasCancel(t *testing.T) {
	rs := newReplicaSet(t, replicaConfig)
	a, b := rs.start(t), rs.start(t)
	id := (&testenv.ExtTasks{URL: a.base + "/mcp"}).StartTask(t, "five_steps", nil)
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rs.rec)["s4"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight within 60s; backend calls %v\nstderr:\n%s", backendCalls(t, rs.rec), a.stderr.String())
		}
	}
	onB := &testenv.ExtTasks{URL: b.base + "/mcp"}
	onB.Result(t, "tasks/cancel", map[string]any{"taskId": id})
	task := onB.Wait(t, id, "cancelled", "completed", "failed")
	if task["status"] != "cancelled" {
		t.Errorf("tasks/get on B after its tasks/cancel = %v; want cancelled", task)
	}
	d := waitFinished(t, b, id)
	if d.Status != runtime.RunCancelled {
		t.Fatalf("run %s = %s; want cancelled\nA:\n%s", id, d.Status, a.stderr.String())
	}
	if calls := backendCalls(t, rs.rec); calls["s5 after s1 and s4"] != 0 || calls["s4"] != 1 {
		t.Errorf("backend calls = %v; want s4 once and no s5", calls)
	}
}

// replicaAuthoringConfig serves the authoring tools on postgres.
const replicaAuthoringConfig = `
backends:
  tb: {command: "${TB}"}
authoring: {enabled: true}
state: {store: postgres, url: "${PGURL}", lease: 1s}
`

// listeningClient is an MCP client of url that listens for server
// notifications on the GET stream.
func listeningClient(t *testing.T, url string) *agent {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	// 2025-11-25: a session whose GET stream carries the server's
	// notifications (2026-07-28 requests have no session to notify).
	c := client.NewClient(tr, client.WithLegacyProtocolOnly())
	a := newAgent(c)
	// Start's context is the GET stream's: it must outlive this function.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return a
}

// TestReplicasServeSavedWorkflow: a workflow saved through A is served by
// B (B hears of the save over LISTEN/NOTIFY and publishes it), B's
// session gets notifications/tools/list_changed, and the workflow runs
// there; deleted through B, it is gone from A, with list_changed on A's
// session.
func TestReplicasServeSavedWorkflow(t *testing.T) {
	rs := newReplicaSet(t, replicaAuthoringConfig)
	a, b := rs.start(t), rs.start(t)
	onA, onB := listeningClient(t, a.base+"/mcp"), listeningClient(t, b.base+"/mcp")
	if slices.Contains(onB.tools(t), "greet") {
		t.Fatal("B serves greet before anyone saved it")
	}
	// A session's GET stream opens after its initialize returns: warm
	// both up with saves through the other replica until each has seen
	// a list_changed there, so the counts below start from open streams.
	warmUp(t, onA, onB)
	warmUp(t, onB, onA)

	before := onB.listChanged.Load()
	saved := time.Now()
	mustCall(t, onA.Client, "vmcp_workflow_save", map[string]any{"source": fixedDraft})
	onB.waitListChanged(t, before+1, "saving greet on A")
	t.Logf("B's session got list_changed %v after A's save was sent", time.Since(saved))
	waitTools(t, onB, "greet", true, "A saved greet")
	res := mustCall(t, onB.Client, "greet", map[string]any{"who": "ann"})
	var out map[string]any
	structured(t, res, &out)
	if out["text"] != "hello ann again" {
		t.Errorf("greet on B = %s; want hello ann again", testenv.ResultText(res))
	}
	beforeA := onA.listChanged.Load()
	mustCall(t, onB.Client, "vmcp_workflow_delete", map[string]any{"name": "greet"})
	onA.waitListChanged(t, beforeA+1, "deleting greet on B")
	waitTools(t, onA, "greet", false, "B deleted greet")
	if !strings.Contains(b.stderr.String(), "authored workflow saved by another vmcp on the store now served") {
		t.Errorf("B did not log serving A's save:\n%s", b.stderr.String())
	}
}

// warmUpDraft is saved again and again by warmUp.
const warmUpDraft = `name: warm_up
description: Saved until the other replica's session hears of it
steps:
  - id: only
    tool: tb.echo
    arguments: {text: warm}
`

// warmUp saves warm_up through saver (replacing it) every 100ms until
// listener's session has seen a list_changed (30s at most).
func warmUp(t *testing.T, saver, listener *agent) {
	t.Helper()
	start := listener.listChanged.Load()
	for deadline := time.Now().Add(30 * time.Second); listener.listChanged.Load() == start; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no list_changed on the other replica's session within 30s of saves")
		}
		mustCall(t, saver.Client, "vmcp_workflow_save", map[string]any{"source": warmUpDraft, "replace": true})
	}
}

// waitTools polls tools/list (30s at most) until name is served (or not).
func waitTools(t *testing.T, a *agent, name string, served bool, after string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for slices.Contains(a.tools(t), name) != served {
		if time.Now().After(deadline) {
			t.Fatalf("30s after %s, tools = %v; want %s served: %v", after, a.tools(t), name, served)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getStatus GETs path and returns the status code and the body.
func getStatus(t *testing.T, base, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", base, path, err)
	}
	defer res.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return res.StatusCode, sb.String()
}

// TestReplicaDrainNotReady: from SIGTERM on, a draining replica answers
// /readyz with 503 (draining) while /healthz stays ok and the other
// replica stays ready; the draining replica finishes its run in flight,
// which completes, and exits cleanly.
func TestReplicaDrainNotReady(t *testing.T) {
	rs := newReplicaSet(t, replicaConfig)
	a, b := rs.start(t), rs.start(t)
	if code, body := getStatus(t, a.base, "/readyz"); code != http.StatusOK {
		t.Fatalf("A's /readyz before the drain = %d %s; want 200", code, body)
	}
	// vmcp ready, the image's readiness probe, says the same.
	if out, errOut, code := run(t, time.Minute, t.TempDir(), bins.vmcp, "ready", "--url", a.base); code != 0 {
		t.Errorf("vmcp ready before the drain = exit %d %s%s; want 0", code, out, errOut)
	}
	id := (&testenv.ExtTasks{URL: a.base + "/mcp"}).StartTask(t, "five_steps", nil)
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rs.rec)["s4"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight within 60s; backend calls %v", backendCalls(t, rs.rec))
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, body := getStatus(t, a.base, "/readyz")
		if code == http.StatusServiceUnavailable {
			var r httpapi.Readiness
			if err := json.Unmarshal([]byte(body), &r); err != nil || !r.Draining || r.Ready {
				t.Errorf("A's /readyz while draining = %s; want draining: true", body)
			}
			if out, errOut, code := run(t, time.Minute, t.TempDir(), bins.vmcp, "ready", "--url", a.base); code != 1 || !strings.Contains(errOut, "not ready: 503") || !strings.Contains(out, `"draining": true`) {
				t.Errorf("vmcp ready while draining = exit %d %s%s; want 1, not ready: 503, draining", code, out, errOut)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's /readyz 30s after SIGTERM = %d %s; want 503", code, body)
		}
	}
	if code, _ := getStatus(t, a.base, "/healthz"); code != http.StatusOK {
		t.Errorf("A's /healthz while draining = %d; want 200", code)
	}
	if code, body := getStatus(t, b.base, "/readyz"); code != http.StatusOK {
		t.Errorf("B's /readyz while A drains = %d %s; want 200", code, body)
	}
	if err := os.WriteFile(rs.gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.exited:
		if err != nil {
			t.Errorf("A exited with %v after draining\nstderr:\n%s", err, a.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("A still running 60s after SIGTERM\nstderr:\n%s", a.stderr.String())
	}
	if d := waitFinished(t, b, id); d.Status != runtime.RunCompleted {
		t.Errorf("A's run after A drained = %s %+v; want completed (A finished it)", d.Status, d.Error)
	}
	if calls := backendCalls(t, rs.rec); calls["s4"] != 1 || calls["s5 after s1 and s4"] != 1 {
		t.Errorf("backend calls = %v; want s4 and s5 once each (A finished the run, nobody resumed it)", calls)
	}
}

// TestReplicaDrainHandsOver: a rolling restart with a run that outlasts
// the grace period. A gets SIGTERM with its run held at s4 and a grace
// of one second: when it is over, A releases the run and exits, and B
// resumes it at once (no lease to wait out), calling s4 again (it is
// idempotent) and s5 once; A's cancel recorded nothing.
func TestReplicaDrainHandsOver(t *testing.T) {
	rs := newReplicaSet(t, strings.Replace(replicaConfig, "lease: 1s", "lease: 1h", 1))
	a, b := rs.start(t, "--shutdown-grace", "1s"), rs.start(t)
	id := (&testenv.ExtTasks{URL: a.base + "/mcp"}).StartTask(t, "five_steps", nil)
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rs.rec)["s4"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight within 60s; backend calls %v", backendCalls(t, rs.rec))
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.exited:
		if err != nil {
			t.Errorf("A exited with %v\nstderr:\n%s", err, a.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("A still running 60s after SIGTERM\nstderr:\n%s", a.stderr.String())
	}
	if !strings.Contains(a.stderr.String(), "left for another replica to resume") {
		t.Errorf("A did not say it left its run to another replica:\n%s", a.stderr.String())
	}
	if err := os.WriteFile(rs.gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := waitFinished(t, b, id)
	if d.Status != runtime.RunCompleted {
		t.Fatalf("run %s after A's drain = %s %+v; want completed by B\nA:\n%s\nB:\n%s", id, d.Status, d.Error, a.stderr.String(), b.stderr.String())
	}
	want := map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 2, "s5 after s1 and s4": 1}
	if calls := backendCalls(t, rs.rec); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("backend calls = %v; want %v", calls, want)
	}
}

// replicaAskConfig: s1, then a question, then s3 built from the answer,
// on postgres.
const replicaAskConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -gated]}
state: {store: postgres, url: "${PGURL}", lease: 1s}
compositeTools:
  - name: ask_on_a
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

// TestReplicasAnswerThroughB: a task made on A whose run asks a question
// reads as input_required on B, with A's question in inputRequests;
// answered with tasks/update on B, the answer reaches A's run, which
// completes with it, as tasks/get on B says.
func TestReplicasAnswerThroughB(t *testing.T) {
	rs := newReplicaSet(t, replicaAskConfig)
	a, b := rs.start(t), rs.start(t)
	id := (&testenv.ExtTasks{URL: a.base + "/mcp"}).StartTask(t, "ask_on_a", nil)
	onB := &testenv.ExtTasks{URL: b.base + "/mcp"}
	task := onB.Wait(t, id, "input_required")
	reqs, _ := task["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("tasks/get on B of A's task = %v; want A's question in inputRequests", task)
	}
	for key, v := range reqs {
		params, _ := v.(map[string]any)["params"].(map[string]any)
		if params["message"] != "Deploy to which region?" {
			t.Errorf("the question on B = %v; want the step's message", v)
		}
		onB.Result(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"region": "eu-west-1"}}}})
	}
	done := onB.Wait(t, id, "completed", "failed", "cancelled")
	res, _ := done["result"].(map[string]any)
	if sc, _ := res["structuredContent"].(map[string]any); done["status"] != "completed" || sc["label"] != "s3 to eu-west-1" {
		t.Errorf("task after B's answer = %v; want completed with {label: s3 to eu-west-1}\nA:\n%s", done, a.stderr.String())
	}
	if calls := backendCalls(t, rs.rec); fmt.Sprint(calls) != fmt.Sprint(map[string]int{"s1": 1, "s3 to eu-west-1": 1}) {
		t.Errorf("backend calls = %v; want s1 and s3 once", calls)
	}
}
