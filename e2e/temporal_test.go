package e2e

// executor: temporal end to end: a real Temporal dev server (started by
// testenv on loopback), real `vmcp worker` processes and a real `vmcp run`,
// and a backend in this process that logs every call (with the worker that
// made it) and can hold a call until the test releases it, so the tests
// kill a worker exactly while it is inside a chosen step, with no sleeps.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of the Temporal tests: the part of the temporal range (17400-17499)
// outside this package's shared range (17350-17449) and internal/testenv's
// own test (17490-17499). Each test takes about four (the dev server and
// its metrics, the backend, vmcp run), and FreePort never hands one out
// twice in a process.
const temporalLo, temporalHi = 17450, 17489

// gateBackend is an MCP server (streamable HTTP) whose tools log their
// calls:
//
//	step {label}  returns {label, worker} at once
//	gate {label}  reports that it entered, then waits until the test
//	              releases label (or the call is cancelled); returns
//	              {label, worker}
//
// The worker is the X-Worker header, which each vmcp worker sends
// (headers: {X-Worker: "${VMCP_WORKER}"} in the config).
type gateBackend struct {
	url     string
	mu      sync.Mutex
	calls   []string // "label@worker", in call order
	parents []string // the traceparent header of each call, in call order
	entered chan gateEntry
	release map[string]chan struct{}
}

type gateEntry struct{ label, worker string }

func startGateBackend(t *testing.T) *gateBackend {
	t.Helper()
	return startGateBackendIn(t, temporalLo, temporalHi)
}

// startGateBackendIn is startGateBackend on a port from lo to hi.
func startGateBackendIn(t *testing.T, lo, hi int) *gateBackend {
	t.Helper()
	g := &gateBackend{entered: make(chan gateEntry, 16), release: map[string]chan struct{}{}}
	s := mcpgo.NewMCPServer("gate", "1.0.0", mcpgo.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("step", mcp.WithString("label", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			label, worker := req.GetString("label", ""), req.Header.Get("X-Worker")
			g.log(label, worker, req.Header.Get("traceparent"))
			return mcp.NewToolResultStructuredOnly(map[string]any{"label": label, "worker": worker}), nil
		})
	s.AddTool(mcp.NewTool("gate", mcp.WithString("label", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			label, worker := req.GetString("label", ""), req.Header.Get("X-Worker")
			g.log(label, worker, req.Header.Get("traceparent"))
			ch := g.gate(label)
			g.entered <- gateEntry{label, worker}
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mcp.NewToolResultStructuredOnly(map[string]any{"label": label, "worker": worker}), nil
		})
	g.url = testenv.Serve(t, lo, hi, &http.Server{Handler: mcpgo.NewStreamableHTTPServer(s)}) + "/mcp"
	return g
}

func (g *gateBackend) log(label, worker, traceparent string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, label+"@"+worker)
	g.parents = append(g.parents, traceparent)
}

// traceparents are the traceparent headers of the calls of label, in
// call order.
func (g *gateBackend) traceparents(label string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for i, c := range g.calls {
		if strings.HasPrefix(c, label+"@") {
			out = append(out, g.parents[i])
		}
	}
	return out
}

func (g *gateBackend) gate(label string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch, ok := g.release[label]
	if !ok {
		ch = make(chan struct{})
		g.release[label] = ch
	}
	return ch
}

// open releases every call, present and future, of the gate label.
func (g *gateBackend) open(label string) { close(g.gate(label)) }

// waitEntered waits (at most 60s) for a gate call and returns it.
func (g *gateBackend) waitEntered(t *testing.T) gateEntry {
	t.Helper()
	select {
	case e := <-g.entered:
		return e
	case <-time.After(60 * time.Second):
		t.Fatalf("no gate call within 60s; calls so far: %v", g.log2())
		return gateEntry{}
	}
}

// log2 is the call log.
func (g *gateBackend) log2() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// countOf counts the calls of a label, whatever the worker.
func (g *gateBackend) countOf(label string) int {
	n := 0
	for _, c := range g.log2() {
		if strings.HasPrefix(c, label+"@") {
			n++
		}
	}
	return n
}

// temporalConfig writes a vmcp.yaml for the Temporal executor at addr
// (queue unique to the test) with the gate backend and the workflows.
func temporalConfig(t *testing.T, addr, backendURL, workflows string, extra string) string {
	t.Helper()
	queue := fmt.Sprintf("vmcp-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	return writeConfig(t, fmt.Sprintf(`
backends:
  g: {url: %q, headers: {X-Worker: "${VMCP_WORKER}"}}
executor: {kind: temporal, address: %q, taskQueue: %q, heartbeatTimeout: 2s}
%s
compositeTools:
%s`, backendURL, addr, queue, extra, workflows), "")
}

// vmcpWorker is a running `vmcp worker`.
type vmcpWorker struct {
	name   string
	cmd    *exec.Cmd
	stderr *testenv.Buffer
	exited chan error
}

// startWorker starts `vmcp worker --config cfg` named name (its X-Worker
// header). At the end of the test it is stopped with SIGTERM.
func startWorker(t *testing.T, cfg, name string) *vmcpWorker {
	t.Helper()
	w := &vmcpWorker{name: name, stderr: &testenv.Buffer{}, exited: make(chan error, 1)}
	w.cmd = exec.Command(bins.vmcp, "worker", "--config", cfg, "--log-level", "debug", "--identity", name, "--shutdown-grace", "2s")
	w.cmd.Env = append(os.Environ(), "VMCP_WORKER="+name)
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start vmcp worker: %v", err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	t.Cleanup(func() {
		w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.exited:
		case <-time.After(15 * time.Second):
			w.cmd.Process.Kill()
			<-w.exited
			t.Errorf("vmcp worker %s did not exit within 15s of SIGTERM", name)
		}
		if t.Failed() {
			t.Logf("worker %s stderr:\n%s", name, w.stderr.String())
		}
	})
	return w
}

// kill SIGKILLs the worker and waits for it to be gone.
func (w *vmcpWorker) kill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill worker %s: %v", w.name, err)
	}
	<-w.exited
	w.exited <- nil // for the cleanup
}

// chainWorkflows: three steps, the middle one held by the gate.
const chainWorkflows = `
  - name: chain
    description: one, then the gate, then three
    parameters: {tag: {type: string}}
    steps:
      - id: one
        tool: g.step
        arguments: {label: "one-{{.params.tag}}"}
      - id: two
        tool: g.gate
        dependsOn: [one]
        arguments: {label: "two-{{.params.tag}}"}
        IDEMPOTENT
      - id: three
        tool: g.step
        dependsOn: [two]
        arguments: {label: "three-{{.steps.two.output.label}}"}
`

func TestTemporalRunsWorkflowsOnWorkers(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", ""), "")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run") // vmcp run lists the tools; it calls none
	c, stderr := stdioVMCP(t, cfg)
	g.open("two-a")
	res := mustCall(t, c, "chain", map[string]any{"tag": "a"})
	if res.IsError {
		t.Fatalf("chain: %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["label"] != "three-two-a" || out["worker"] != "w1" {
		t.Fatalf("result = %v; want {label: three-two-a, worker: w1}", res.StructuredContent)
	}
	if got, want := g.log2(), []string{"one-a@w1", "two-a@w1", "three-two-a@w1"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("backend calls = %v; want %v", got, want)
	}
}

// twoWorkers starts w1 and w2 and returns them by name.
func twoWorkers(t *testing.T, cfg string) map[string]*vmcpWorker {
	return map[string]*vmcpWorker{"w1": startWorker(t, cfg, "w1"), "w2": startWorker(t, cfg, "w2")}
}

func TestTemporalKilledWorkerIdempotentStepRunsOnTheOther(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", "idempotent: true"), "")
	workers := twoWorkers(t, cfg)
	t.Setenv("VMCP_WORKER", "vmcp-run")
	c, stderr := stdioVMCP(t, cfg)
	done := callAsync(t, c, "chain", map[string]any{"tag": "k"})
	in := g.waitEntered(t) // step two is on a worker, inside the backend call
	victim := workers[in.worker]
	if victim == nil {
		t.Fatalf("the gate was called by %q, not a worker", in.worker)
	}
	victim.kill(t)
	g.open("two-k") // the call again, on the other worker, goes through
	res := (<-done).res
	if res == nil || res.IsError {
		t.Fatalf("chain after SIGKILL of %s: %v\nvmcp stderr:\n%s", in.worker, res, stderr.String())
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["label"] != "three-two-k" || out["worker"] == in.worker {
		t.Fatalf("result = %v; want three-two-k from the surviving worker", out)
	}
	if n := g.countOf("one-k"); n != 1 {
		t.Errorf("step one was called %d times; want exactly once (calls: %v)", n, g.log2())
	}
	if n := g.countOf("two-k"); n != 2 {
		t.Errorf("the idempotent step two was called %d times; want twice, once per worker (calls: %v)", n, g.log2())
	}
	if n := g.countOf("three-two-k"); n != 1 {
		t.Errorf("step three was called %d times; want once (calls: %v)", n, g.log2())
	}
}

func TestTemporalKilledWorkerNonIdempotentStepInterruptsTheRun(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", ""), "")
	workers := twoWorkers(t, cfg)
	t.Setenv("VMCP_WORKER", "vmcp-run")
	c, stderr := stdioVMCP(t, cfg)
	done := callAsync(t, c, "chain", map[string]any{"tag": "n"})
	in := g.waitEntered(t)
	workers[in.worker].kill(t)
	res := (<-done).res
	if res == nil || !res.IsError {
		t.Fatalf("chain after SIGKILL of %s = %v; want an interrupted error\nvmcp stderr:\n%s", in.worker, res, stderr.String())
	}
	msg := testenv.ResultText(res)
	for _, want := range []string{"interrupted", `step "two"`, "idempotent: true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("result %q; want it to contain %q", msg, want)
		}
	}
	if n := g.countOf("two-n"); n != 1 {
		t.Errorf("the non-idempotent step two was called %d times; want once (calls: %v)", n, g.log2())
	}
	if n := g.countOf("three-two-n"); n != 0 {
		t.Errorf("step three ran after the interruption (calls: %v)", g.log2())
	}
}

// vmcpHTTP is a `vmcp run --transport http` the test may SIGKILL.
type vmcpHTTP struct {
	cmd    *exec.Cmd
	stderr *testenv.Buffer
	exited chan error
	base   string // http://addr
}

// startVMCPHTTP starts vmcp run on addr and waits until it listens. The
// test's cleanup stops it (SIGTERM) unless it was killed.
func startVMCPHTTP(t *testing.T, cfg, addr string) *vmcpHTTP {
	t.Helper()
	v := &vmcpHTTP{stderr: &testenv.Buffer{}, exited: make(chan error, 1), base: "http://" + addr}
	v.cmd = exec.Command(bins.vmcp, "run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "debug")
	v.cmd.Stderr = v.stderr
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { v.exited <- v.cmd.Wait() }()
	t.Cleanup(func() {
		v.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-v.exited:
		case <-time.After(15 * time.Second):
			v.cmd.Process.Kill()
			<-v.exited
		}
		if t.Failed() {
			t.Logf("vmcp run stderr:\n%s", v.stderr.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("vmcp run did not listen on %s within 60s\nstderr:\n%s", addr, v.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill SIGKILLs vmcp run.
func (v *vmcpHTTP) kill(t *testing.T) {
	t.Helper()
	v.cmd.Process.Signal(syscall.SIGKILL)
	<-v.exited
	v.exited <- nil
}

// runs reads GET /api/v1/runs.
func (v *vmcpHTTP) runs(t *testing.T) []map[string]any {
	t.Helper()
	resp, err := http.Get(v.base + "/api/v1/runs")
	if err != nil {
		t.Fatalf("GET /api/v1/runs: %v", err)
	}
	defer resp.Body.Close()
	var list struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("GET /api/v1/runs: %v", err)
	}
	return list.Runs
}

// run reads GET /api/v1/runs/{id}.
func (v *vmcpHTTP) run(t *testing.T, id string) map[string]any {
	t.Helper()
	resp, err := http.Get(v.base + "/api/v1/runs/" + id)
	if err != nil {
		t.Fatalf("GET /api/v1/runs/%s: %v", id, err)
	}
	defer resp.Body.Close()
	var d map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("GET /api/v1/runs/%s: %v", id, err)
	}
	return d
}

func TestTemporalKilledVMCPRunResultIsRecordedAfterRestart(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", ""),
		"state: {store: sqlite, path: state.db}")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, temporalLo, temporalHi))
	first := startVMCPHTTP(t, cfg, addr)
	c := testenv.HTTPClient(t, first.base+"/mcp")
	done := callAsync(t, c, "chain", map[string]any{"tag": "r"})
	g.waitEntered(t) // the run is inside step two, on the worker
	runs := first.runs(t)
	if len(runs) != 1 || runs[0]["status"] != "running" {
		t.Fatalf("runs while step two runs = %v; want one running", runs)
	}
	id, _ := runs[0]["id"].(string)
	first.kill(t)
	if res := (<-done).res; res != nil && !res.IsError {
		t.Fatalf("the call to a SIGKILLed vmcp run returned a result: %v", res)
	}
	g.open("two-r") // the run goes on without any vmcp run
	second := startVMCPHTTP(t, cfg, addr)
	var got map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = second.run(t, id)
		if got["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, _ := got["output"].(map[string]any)
	if got["status"] != "completed" || out["label"] != "three-two-r" {
		t.Fatalf("run %s after the restart = %v; want completed with label three-two-r", id, got)
	}
	for _, label := range []string{"one-r", "two-r", "three-two-r"} {
		if n := g.countOf(label); n != 1 {
			t.Errorf("%s was called %d times; want once (calls: %v)", label, n, g.log2())
		}
	}
}

func TestTemporalKilledVMCPRunTaskResultAfterRestart(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", ""),
		"state: {store: sqlite, path: state.db}")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, temporalLo, temporalHi))
	first := startVMCPHTTP(t, cfg, addr)
	c := tasksClient(t, first.base)
	task := testenv.StartTask(t, c, "chain", map[string]any{"tag": "t"})
	g.waitEntered(t)
	first.kill(t)
	g.open("two-t")
	second := startVMCPHTTP(t, cfg, addr)
	res := taskResult(t, tasksClient(t, second.base), task.TaskId)
	out, _ := res.StructuredContent.(map[string]any)
	if res.IsError || out["label"] != "three-two-t" {
		t.Fatalf("tasks/result %s after the restart = %v (%s); want label three-two-t", task.TaskId, res.StructuredContent, resultText(res))
	}
	if n := g.countOf("two-t"); n != 1 {
		t.Errorf("step two was called %d times; want once (calls: %v)", n, g.log2())
	}
}

func TestTemporalRunsShowInTheAPIAndMetrics(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", ""), "")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	v := startVMCPHTTP(t, cfg, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, temporalLo, temporalHi)))
	c := testenv.HTTPClient(t, v.base+"/mcp")
	done := callAsync(t, c, "chain", map[string]any{"tag": "o"})
	g.waitEntered(t)
	// While step two runs on the worker, the API shows it running (the
	// store follows the workflow a query behind, so this may take a
	// moment).
	runs := v.runs(t)
	if len(runs) != 1 {
		t.Fatalf("runs = %v; want one", runs)
	}
	id, _ := runs[0]["id"].(string)
	steps := func() []any { s, _ := v.run(t, id)["steps"].([]any); return s }
	status := func(s any) any { m, _ := s.(map[string]any); return m["status"] }
	waitFor(t, "the API to show one completed, two running, three pending", func() bool {
		st := steps()
		return len(st) == 3 && status(st[0]) == "completed" && status(st[1]) == "running" && status(st[2]) == "pending"
	})
	g.open("two-o")
	if res := (<-done).res; res == nil || res.IsError {
		t.Fatalf("chain: %v", res)
	}
	for _, s := range steps() {
		m, _ := s.(map[string]any)
		if m["status"] != "completed" || m["attempts"] != float64(1) || m["startedAt"] == nil || m["endedAt"] == nil {
			t.Errorf("step after the run = %v; want completed once, with times", m)
		}
	}
	resp, err := http.Get(v.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`vmcp_runs_total{status="completed",workflow="chain"} 1`, `vmcp_steps_total{status="completed",workflow="chain"} 3`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// approver answers every elicitation with approved: true and records the
// messages.
type approver struct {
	mu   sync.Mutex
	msgs []string
}

func (a *approver) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	a.msgs = append(a.msgs, req.Params.Message)
	a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approved": true}}}, nil
}

func TestTemporalElicitationReachesTheClient(t *testing.T) {
	ts := testenv.StartTemporal(t, temporalLo, temporalHi)
	g := startGateBackend(t)
	cfg := temporalConfig(t, ts.Address, g.url, `
  - name: approve
    description: asks, then acts on the answer
    steps:
      - id: ask
        type: elicitation
        message: "Deploy {{.workflow.id}}?"
        schema: {type: object, properties: {approved: {type: boolean}}, required: [approved]}
      - id: act
        tool: g.step
        dependsOn: [ask]
        arguments: {label: "approved={{.steps.ask.output.content.approved}}"}
`, "")
	startWorker(t, cfg, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	a := &approver{}
	c, stderr := stdioVMCP(t, cfg, client.WithElicitationHandler(a))
	res := mustCall(t, c, "approve", nil)
	if res.IsError {
		t.Fatalf("approve: %s\nvmcp stderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out["label"] != "approved=true" || out["worker"] != "w1" {
		t.Fatalf("result = %v; want the worker's call with the client's answer", out)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.msgs) != 1 || !strings.HasPrefix(a.msgs[0], "Deploy ") {
		t.Fatalf("the client was asked %q; want one \"Deploy <run id>?\"", a.msgs)
	}
}
