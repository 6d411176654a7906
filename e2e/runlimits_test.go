package e2e

// server.limits against a real `vmcp run --transport http`: past the
// owner's cap or the server's, a run (a task or a plain tools/call) is
// refused with an error naming the cap, and a finished run makes room;
// with onLimit: wait, a run past the cap waits for a slot and then runs.
// TestRunLimitsWait also measures what a waiting run costs the server
// (goroutines, heap and RSS from /metrics), which it logs.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The run limits tests' own port range.
const limitsPortLo, limitsPortHi = 17925, 17949

const limitsWorkflows = recordedBackend + "compositeTools:" + sayWorkflow + longNapWorkflow

// refusedText is the text of a refused tools/call result (Tasks extension
// flavour), or "" when the call was not refused.
func refusedText(res map[string]any) string {
	if res["isError"] != true {
		return ""
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return "(no content)"
	}
	first, _ := content[0].(map[string]any)
	return fmt.Sprint(first["text"])
}

func TestRunLimitsRefuse(t *testing.T) {
	cfg := limitsWorkflows + `
server:
  limits: {runs: 3, perOwner: {runs: 2}}
  auth:
    tokens:
      - {token: token-a, name: alice, scopes: [run]}
      - {token: token-b, name: bob, scopes: [run]}
`
	mcpURL, rec, _ := recordedHTTPVMCP(t, cfg, limitsPortLo, limitsPortHi)
	extA := &testenv.ExtTasks{URL: mcpURL, Headers: map[string]string{"Authorization": "Bearer token-a"}}
	extB := &testenv.ExtTasks{URL: mcpURL, Headers: map[string]string{"Authorization": "Bearer token-b"}}
	first := extA.StartTask(t, "long_nap", map[string]any{"label": "a1"})
	second := extA.StartTask(t, "long_nap", map[string]any{"label": "a2"})
	waitRecord(t, rec, "start a1")
	waitRecord(t, rec, "start a2")

	const owner, server = "too many runs in flight for this caller: 2 at once is its limit (server.limits.perOwner.runs)",
		"too many runs in flight: 3 at once is the server's limit (server.limits.runs)"
	if got := refusedText(extA.Call(t, "long_nap", map[string]any{"label": "a3"})); !strings.Contains(got, owner) {
		t.Errorf("A's third task = %q; want refused naming %q", got, owner)
	}
	if got := refusedText(extA.Call(t, "say", map[string]any{"text": "a"})); !strings.Contains(got, owner) {
		t.Errorf("A's plain call past its cap = %q; want refused naming %q", got, owner)
	}
	third := extB.StartTask(t, "long_nap", map[string]any{"label": "b1"})
	if got := refusedText(extB.Call(t, "long_nap", map[string]any{"label": "b2"})); !strings.Contains(got, server) {
		t.Errorf("B's task past the server's cap = %q; want refused naming %q", got, server)
	}
	// A finished run makes room.
	extA.Result(t, "tasks/cancel", map[string]any{"taskId": first})
	extA.Wait(t, first, "cancelled")
	waitFor(t, "A's cancelled run to give back its slot", func() bool {
		return refusedText(extA.Call(t, "say", map[string]any{"text": "room"})) == ""
	})
	extA.Result(t, "tasks/cancel", map[string]any{"taskId": second})
	extB.Result(t, "tasks/cancel", map[string]any{"taskId": third})
}

func TestRunLimitsWait(t *testing.T) {
	cfg := limitsWorkflows + `
server:
  limits: {perOwner: {runs: 1}, onLimit: wait}
  # 200 waiting calls, each on its own connection from 127.0.0.1.
  maxConnectionsPerClient: 1024
  auth:
    tokens: [{token: token-a, name: alice, scopes: [run]}]
`
	mcpURL, rec, stderr := recordedHTTPVMCP(t, cfg, limitsPortLo, limitsPortHi)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	auth := map[string]string{"Authorization": "Bearer token-a"}
	ext := &testenv.ExtTasks{URL: mcpURL, Headers: auth}
	nap := ext.StartTask(t, "long_nap", map[string]any{"label": "holder"})
	waitRecord(t, rec, "start holder")

	// n calls wait behind the task, each on its own connection.
	const n = 200
	mc := testenv.HTTPClientHeaders(t, mcpURL, auth)
	before := serverMetrics(t, base)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := callTool(t, mc, "say", map[string]any{"text": fmt.Sprint("w", i)}, nil)
			switch {
			case err != nil:
				errs <- fmt.Sprintf("call %d: %v", i, err)
			case res.IsError:
				errs <- fmt.Sprintf("call %d: %s", i, testenv.ResultText(res))
			}
		}()
	}
	waitFor(t, fmt.Sprintf("%d runs to wait for a slot", n), func() bool {
		return strings.Count(stderr.String(), "run waits for a slot") >= n
	})
	during := serverMetrics(t, base)
	for _, m := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes"} {
		t.Logf("%s: %.0f idle, %.0f with %d runs waiting: %.1f per waiting run", m, before[m], during[m], n, (during[m]-before[m])/n)
	}
	// The task ends: the waiting calls run, one at a time, and all succeed.
	ext.Result(t, "tasks/cancel", map[string]any{"taskId": nap})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// serverMetrics reads the numeric samples without labels of /metrics.
func serverMetrics(t *testing.T, base string) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer token-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %v, %v", resp, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}
