package e2e

// Faults that got through the red team (issue 10), each reproduced against
// a real `vmcp run --transport http` process: a stdio backend that stops
// reading its stdin, a storm of cancelled calls, and a backend result far
// over limits.maxResultBytes.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// apiGet GETs base+path into v (when non-nil) and returns the status code.
func apiGet(t *testing.T, base, path string, v any) int {
	t.Helper()
	return apiDo(t, http.MethodGet, base+path, v)
}

func apiDo(t *testing.T, method, url string, v any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: decoding the body: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

type apiRun struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type apiRuns struct {
	Runs []apiRun `json:"runs"`
}

type readiness struct {
	Ready    bool              `json:"ready"`
	Backends map[string]string `json:"backends"`
}

// callIn calls a tool with a deadline of d.
func callIn(c *client.Client, d time.Duration, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

const stuckConfig = `
backends:
  stuck: {command: "${TB}", args: [-faults]}
  ok: {command: "${TB}"}
server: {maxParallel: 4}
compositeTools:
  - name: stuck_pid
    description: The stuck backend's process id
    steps: [{id: pid, tool: stuck.pid}]
  - name: stop
    description: Make the backend stop reading its stdin
    steps: [{id: stop, tool: stuck.stop_reading}]
  - name: push
    description: Send a big argument, with a short step timeout
    parameters: {text: {type: string, required: true}}
    steps:
      - {id: push, tool: stuck.echo, timeout: 2s, arguments: {text: "{{.params.text}}"}}
  - name: push_long
    description: Send a big argument, with the default step timeout
    parameters: {text: {type: string, required: true}}
    steps:
      - {id: push, tool: stuck.echo, arguments: {text: "{{.params.text}}"}}
  - name: healthy
    description: A call to the other backend
    steps: [{id: add, tool: ok.add, arguments: {a: 1, b: 2}}]
`

// TestStuckBackendDoesNotWedgeTheServer: a stdio backend stops reading its
// stdin, so vmcp's write of a big request blocks (the pipe holds 64 KB).
// The step timeout still fires, the cancel API still cancels, a workflow on
// another backend completes meanwhile, /readyz names the stuck backend, and
// vmcp kills it and starts it again on the next call.
func TestStuckBackendDoesNotWedgeTheServer(t *testing.T) {
	mcpURL, stderr := httpVMCP(t, writeConfig(t, stuckConfig, ""))
	base := strings.TrimSuffix(mcpURL, "/mcp")
	c := testenv.HTTPClient(t, mcpURL)
	defer func() {
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	}()

	pidRes := mustCall(t, c, "stuck_pid", nil)
	pid := int(pidRes.StructuredContent.(map[string]any)["pid"].(float64))
	if res := mustCall(t, c, "stop", nil); res.IsError {
		t.Fatalf("stop_reading failed: %s", testenv.ResultText(res))
	}
	big := strings.Repeat("y", 200<<10) // far more than the pipe holds

	// A run with the default step timeout, to be cancelled through the API.
	longDone := make(chan error, 1)
	go func() {
		_, err := callIn(c, 60*time.Second, "push_long", map[string]any{"text": big})
		longDone <- err
	}()
	var long apiRun
	waitFor(t, "the push_long run to be running", func() bool {
		var runs apiRuns
		apiGet(t, base, "/api/v1/runs?workflow=push_long&status=running", &runs)
		if len(runs.Runs) == 1 {
			long = runs.Runs[0]
		}
		return long.ID != ""
	})

	// A step timeout fires although the write ahead of it is stuck.
	res, err := callIn(c, 30*time.Second, "push", map[string]any{"text": big})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if text := testenv.ResultText(res); !res.IsError || !strings.Contains(text, "timed out after 2s") {
		t.Errorf("push to the stuck backend = %q (isError %v); want the step to time out after 2s", text, res.IsError)
	}

	// The other backend is not starved of call slots.
	res, err = callIn(c, 5*time.Second, "healthy", nil)
	if err != nil || res.IsError {
		t.Errorf("healthy workflow while a backend is stuck: %v, %v; want it to complete within 5s", err, res)
	}

	// Cancel works: the run ends cancelled.
	if code := apiDo(t, http.MethodPost, base+"/api/v1/runs/"+long.ID+"/cancel", nil); code != http.StatusOK && code != http.StatusAccepted {
		t.Errorf("POST cancel = %d; want 200 or 202", code)
	}
	waitFor(t, "the cancelled run to end", func() bool {
		var r apiRun
		apiGet(t, base, "/api/v1/runs/"+long.ID, &r)
		return r.Status != "running"
	})
	var r apiRun
	apiGet(t, base, "/api/v1/runs/"+long.ID, &r)
	if r.Status != "cancelled" {
		t.Errorf("run %s after POST cancel is %q; want cancelled", long.ID, r.Status)
	}
	select {
	case <-longDone:
	case <-time.After(10 * time.Second):
		t.Errorf("the push_long call did not return 10s after its run was cancelled")
	}

	// /readyz names the stuck backend, and vmcp kills it.
	var ready readiness
	waitFor(t, "/readyz to report the backend killed for not reading", func() bool {
		code := apiGet(t, base, "/readyz", &ready)
		return code == http.StatusServiceUnavailable && strings.Contains(ready.Backends["stuck"], "stopped reading its stdin")
	})
	if ready.Ready || ready.Backends["ok"] != "ok" {
		t.Errorf("/readyz = %+v; want not ready, with ok still ok", ready)
	}
	waitGone(t, pid, "the stuck backend")

	// The next call starts it again, and it answers.
	res, err = callIn(c, 30*time.Second, "push", map[string]any{"text": "small"})
	if err != nil || res.IsError {
		t.Fatalf("push after the kill: %v, %s; want a restarted backend to answer", err, testenv.ResultText(res))
	}
	if code := apiGet(t, base, "/readyz", &ready); code != http.StatusOK {
		t.Errorf("/readyz after the restart = %d %+v; want 200", code, ready)
	}
}

const stormConfig = `
backends:
  tb: {command: "${TB}"}
  other: {command: "${TB}"}
compositeTools:
  - name: storm
    description: Naps in a diamond, with padded arguments
    parameters:
      ms: {type: number, required: true}
      pad: {type: string, required: true}
    steps:
      - {id: a, tool: tb.sleep, arguments: {ms: "{{.params.ms}}", label: "{{.params.pad}}"}}
      - {id: b, tool: tb.sleep, dependsOn: [a], arguments: {ms: "{{.params.ms}}", label: "{{.params.pad}}"}}
      - {id: c, tool: tb.echo, dependsOn: [a], arguments: {text: "{{.params.pad}}"}}
      - {id: d, tool: tb.sleep, dependsOn: [b, c], arguments: {ms: 1, label: d}}
  - name: elsewhere
    description: A call to the other backend
    steps: [{id: add, tool: other.add, arguments: {a: 1, b: 2}}]
`

// TestCancellationStormLeavesNothingRunning: for a few seconds, clients
// call a workflow on an ordinary stdio backend (mcp-go's server: five
// workers and a queue) and cancel each call at a random point. The backend
// falls behind: mcp-go registers a call's cancellation only once a worker
// takes it up, so cancelled calls still in its queue run to the end, its
// queue fills, it stops reading while it serves calls on its read loop, and
// vmcp's writes of the padded requests block. Afterwards no run is left
// running, nothing is in flight in vmcp, a workflow on another backend
// completes at once, and the stormed backend answers again once it caught up.
func TestCancellationStormLeavesNothingRunning(t *testing.T) {
	mcpURL, stderr := httpVMCP(t, writeConfig(t, stormConfig, ""))
	base := strings.TrimSuffix(mcpURL, "/mcp")
	defer func() {
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	}()
	const clients = 24
	pad := strings.Repeat("p", 4<<10)
	end := time.Now().Add(6 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	calls := 0
	for i := range clients {
		c := testenv.HTTPClient(t, mcpURL)
		rng := rand.New(rand.NewPCG(uint64(i), 10))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(600))*time.Millisecond)
				req := mcp.CallToolRequest{}
				req.Params.Name = "storm"
				req.Params.Arguments = map[string]any{"ms": rng.IntN(1500), "pad": pad}
				_, _ = c.CallTool(ctx, req)
				cancel()
				mu.Lock()
				calls++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d calls, each cancelled at a random point", calls)

	// Every call was cancelled by now, so every run must end at once; the
	// 5s bounds the wait for the last cancellations to land.
	var running apiRuns
	if !within(5*time.Second, func() bool {
		apiGet(t, base, "/api/v1/runs?status=running", &running)
		return len(running.Runs) == 0
	}) {
		t.Errorf("%d runs still running 5s after the last call was cancelled: %v", len(running.Runs), running.Runs)
	}
	var left string
	if !within(5*time.Second, func() bool { left = inFlight(t, base); return left == "" }) {
		t.Errorf("still in flight 5s after the storm, in /metrics:\n%s", left)
	}
	c := testenv.HTTPClient(t, mcpURL)
	res, err := callIn(c, 5*time.Second, "elsewhere", nil)
	if err != nil || res.IsError {
		t.Errorf("a call to another backend after the storm: %v, %v; want it to complete within 5s", err, res)
	}
	res, err = callIn(c, 60*time.Second, "storm", map[string]any{"ms": 1, "pad": "x"})
	if err != nil || res.IsError {
		t.Errorf("a call to the stormed backend after the storm: %v, %v; want it to complete once the backend caught up", err, res)
	}
}

// within polls cond until it holds (true) or d passes (false).
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// inFlight returns the in-flight gauges of /metrics that are not zero, as
// "name{labels} value" lines, or "".
func inFlight(t *testing.T, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.Contains(line, "_in_flight") || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v != 0 {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

const bigConfig = `
backends:
  tb: {command: "${TB}", args: [-faults]}
  web: {url: "${WEB}"}
limits: {maxResultBytes: 1048576}
compositeTools:
  - name: big
    description: A result of the given size from the stdio backend
    parameters: {bytes: {type: number, required: true}}
    steps: [{id: big, tool: tb.big, arguments: {bytes: "{{.params.bytes}}"}}]
  - name: big_web
    description: A result of the given size from the HTTP backend
    parameters: {bytes: {type: number, required: true}}
    steps: [{id: big, tool: web.big, arguments: {bytes: "{{.params.bytes}}"}}]
  - name: pid
    description: The stdio backend's process id
    steps: [{id: pid, tool: tb.pid}]
`

// TestResultOverMaxResultBytes: a backend returns 64 MB of text, over
// stdio and over streamable HTTP, with limits.maxResultBytes at 1 MiB. The
// step fails naming the limit, vmcp never holds the result (its peak
// memory stays far below it), and the same backend session goes on
// serving.
func TestResultOverMaxResultBytes(t *testing.T) {
	webAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, portLo, portHi))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	web := exec.CommandContext(ctx, bins.testbackend, "-http", webAddr, "-faults")
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Process.Kill(); web.Wait() })
	waitFor(t, "the HTTP test backend to listen", func() bool {
		resp, err := http.Get("http://" + webAddr + "/mcp")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	cfg := strings.ReplaceAll(bigConfig, "${WEB}", "http://"+webAddr+"/mcp")
	mcpURL, stderr := httpVMCP(t, writeConfig(t, cfg, ""))
	c := testenv.HTTPClient(t, mcpURL)
	defer func() {
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	}()
	pid := func() int {
		res := mustCall(t, c, "pid", nil)
		return int(res.StructuredContent.(map[string]any)["pid"].(float64))
	}
	before := pid()
	for _, wf := range []string{"big", "big_web"} {
		res, err := callIn(c, 60*time.Second, wf, map[string]any{"bytes": 64 << 20})
		if err != nil {
			t.Fatalf("%s: %v", wf, err)
		}
		want := "over limits.maxResultBytes (1048576 bytes); raise the limit in vmcp.yaml"
		if text := testenv.ResultText(res); !res.IsError || !strings.Contains(text, want) {
			t.Errorf("%s of 64 MB = %.300q (isError %v); want a step error containing %q", wf, text, res.IsError, want)
		}
		res, err = callIn(c, 30*time.Second, wf, map[string]any{"bytes": 1000})
		if err != nil || res.IsError {
			t.Errorf("%s of 1000 bytes after the big one: %v, %.300q; want it to work", wf, err, testenv.ResultText(res))
		}
	}
	if after := pid(); after != before {
		t.Errorf("the stdio backend's pid changed from %d to %d; want the session to survive an answer over the limit", before, after)
	}
	// vmcp is the backend's parent; its peak resident memory shows whether
	// it read the 64 MB answers.
	if hwm := peakRSS(t, parentOf(t, before)); hwm > 300<<20 {
		t.Errorf("vmcp's peak RSS is %d MB after two 64 MB answers; want it far below (the answers are not read)", hwm>>20)
	}
}

// parentOf returns the parent pid of pid.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...; comm may hold spaces, so cut after ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// peakRSS returns the VmHWM of pid in bytes.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
