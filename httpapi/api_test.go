package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
	"github.com/vmcp-dev/vmcp/telemetry/metrics"
)

const token = "test-token-123"

// gate is a backend with a fast tool, a failing tool, and a tool that hangs
// until its call is cancelled, reporting when it starts and when it sees
// the cancellation.
type gate struct {
	started   chan string // run id of a hang call that started
	cancelled chan string // run id of a hang call whose context ended
}

func (g *gate) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	switch call.Tool {
	case "fast":
		return &runtime.ToolResult{Structured: map[string]any{"n": 1.0, "step": call.StepID}}, nil
	case "fail":
		return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "quota exceeded"}}}, nil
	case "hang":
		g.started <- call.RunID
		<-ctx.Done()
		g.cancelled <- call.RunID
		return nil, ctx.Err()
	}
	return nil, errors.New("no such tool")
}

func step(i int, id, tool string, deps ...int) *ir.Step {
	return &ir.Step{Index: i, ID: id, Type: ir.StepTool, Deps: deps, Timeout: ir.Duration(time.Minute),
		Pos: ir.Pos{File: "wf.yaml", Line: 10 + i, Col: 5}, Tool: &ir.ToolRef{Backend: "be", Name: tool}}
}

func workflow(name string, steps ...*ir.Step) *ir.Workflow {
	return &ir.Workflow{Name: name, Description: "test", Timeout: ir.Duration(time.Minute), FailureMode: ir.FailureAbort,
		MaxParallel: 10, InputSchema: map[string]any{"type": "object"}, Steps: steps}
}

type fixture struct {
	url     string
	eng     *runtime.Engine
	store   *sqlite.Store
	metrics *metrics.Metrics
	gate    *gate
	ready   map[string]error
}

// listen binds a loopback port from this package's test range.
func listen(t *testing.T) net.Listener {
	t.Helper()
	for port := 17520; port < 17540; port++ {
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return ln
		}
	}
	t.Fatal("no free port in 17520-17539")
	return nil
}

// newFixture serves the API the way vmcp does: a real engine on a SQLite
// store, metrics on the backend and events, behind httpsafe, over TCP.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{gate: &gate{started: make(chan string, 10), cancelled: make(chan string, 10)}, metrics: metrics.New(),
		ready: map[string]error{"be": nil}}
	var err error
	f.store, err = sqlite.Open(filepath.Join(t.TempDir(), "runs.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.store.Close() })
	plan := irbuild.Plan(
		workflow("quick", step(0, "a", "fast"), step(1, "b", "fast", 0)),
		workflow("broken", step(0, "a", "fast"), step(1, "b", "fail", 0)),
		workflow("slow", step(0, "a", "fast"), step(1, "wait", "hang", 0), step(2, "after", "fast", 1)),
		workflow("nested", &ir.Step{Index: 0, ID: "sub", Type: ir.StepWorkflow, Timeout: ir.Duration(time.Minute),
			Pos: ir.Pos{File: "wf.yaml", Line: 30, Col: 5}, Workflow: &ir.WorkflowRef{Name: "quick"}}),
	)
	f.eng, err = runtime.New(plan, runtime.Options{Backend: f.metrics.WrapBackend(f.gate), Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Engine: f.eng, Store: f.store, Metrics: f.metrics.Handler(),
		Ready: func() map[string]error { return f.ready }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, p := range api.Patterns() {
		mux.Handle(p, api)
	}
	ln := listen(t)
	srv := httpsafe.NewServer(httpsafe.Protect(httpsafe.Options{Tokens: httpsafe.AllScopes(token)}, mux), httpsafe.Limits{})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	f.url = "http://" + ln.Addr().String()
	return f
}

func (f *fixture) run(t *testing.T, wf string) *runtime.Run {
	t.Helper()
	run, err := f.eng.Run(context.Background(), wf, nil, runtime.RunOptions{OnEvent: f.metrics.Observe})
	if err != nil {
		t.Fatalf("Run(%s) = %v", wf, err)
	}
	return run
}

// do sends a request with the token and decodes a JSON answer into out.
func (f *fixture) do(t *testing.T, method, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s = %d %q: %v", method, path, resp.StatusCode, body, err)
		}
	}
	return resp.StatusCode
}

func TestListFilterShow(t *testing.T) {
	f := newFixture(t)
	q1 := f.run(t, "quick")
	b1 := f.run(t, "broken")
	q2 := f.run(t, "quick")
	if q1.Status != runtime.RunCompleted || b1.Status != runtime.RunFailed {
		t.Fatalf("setup runs: quick %s, broken %s; want completed, failed", q1.Status, b1.Status)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{q2.ID, b1.ID, q1.ID}},
		{"?workflow=quick", []string{q2.ID, q1.ID}},
		{"?status=failed", []string{b1.ID}},
		{"?workflow=broken&status=completed", []string{}},
		{"?limit=2", []string{q2.ID, b1.ID}},
	}
	for _, tt := range tests {
		var list httpapi.RunList
		if code := f.do(t, "GET", "/api/v1/runs"+tt.query, &list); code != 200 {
			t.Fatalf("GET /api/v1/runs%s = %d; want 200", tt.query, code)
		}
		got := []string{}
		for _, r := range list.Runs {
			got = append(got, r.ID)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("GET /api/v1/runs%s ids differ (-want +got):\n%s", tt.query, diff)
		}
	}
	for _, bad := range []string{"?status=done", "?limit=0", "?limit=abc", "?limit=1001"} {
		var e httpapi.Error
		if code := f.do(t, "GET", "/api/v1/runs"+bad, &e); code != 400 || e.Error == "" {
			t.Errorf("GET /api/v1/runs%s = %d %q; want 400 with a message", bad, code, e.Error)
		}
	}

	var d httpapi.RunDetail
	if code := f.do(t, "GET", "/api/v1/runs/"+b1.ID, &d); code != 200 {
		t.Fatalf("GET run = %d; want 200", code)
	}
	if d.Status != runtime.RunFailed || d.Workflow != "broken" || d.StepCount != 2 || d.Finished != 2 || d.Error == nil || d.Error.Step != "b" {
		t.Errorf("run detail = %+v; want failed broken run, 2 of 2 steps finished, error at step b", d.RunSummary)
	}
	if len(d.Steps) != 2 {
		t.Fatalf("run detail has %d steps; want 2", len(d.Steps))
	}
	a, b := d.Steps[0], d.Steps[1]
	if a.ID != "a" || a.Status != runtime.StepCompleted || a.Attempts != 1 || a.StartedAt.IsZero() || a.EndedAt.Before(a.StartedAt) ||
		!cmp.Equal(a.Output, map[string]any{"n": 1.0, "step": "a"}) {
		t.Errorf("step a = %+v; want completed, 1 attempt, times, output {n:1, step:a}", a)
	}
	if b.Status != runtime.StepFailed || !strings.Contains(b.Error, "quota exceeded") {
		t.Errorf("step b = %+v; want failed with the backend's error", b)
	}
	var e httpapi.Error
	if code := f.do(t, "GET", "/api/v1/runs/no-such-run", &e); code != 404 || !strings.Contains(e.Error, "no-such-run") {
		t.Errorf("GET unknown run = %d %q; want 404 naming it", code, e.Error)
	}
}

func TestCancelRunningWorkflow(t *testing.T) {
	f := newFixture(t)
	done := make(chan *runtime.Run, 1)
	go func() {
		run, _ := f.eng.Run(context.Background(), "slow", nil, runtime.RunOptions{RunID: "slow-1", OnEvent: f.metrics.Observe})
		done <- run
	}()
	select {
	case id := <-f.gate.started:
		if id != "slow-1" {
			t.Fatalf("hang call of run %s; want slow-1", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow step never started")
	}
	// While it runs, show reports it running with the first step done. The
	// engine writes step states to a disk store in the background, so the
	// record may trail the backend call by a moment.
	var d httpapi.RunDetail
	for deadline := time.Now().Add(5 * time.Second); ; {
		d = httpapi.RunDetail{}
		code := f.do(t, "GET", "/api/v1/runs/slow-1", &d)
		if code == 200 && d.Status == runtime.RunRunning && d.Steps[0].Status == runtime.StepCompleted && d.Steps[1].Status == runtime.StepRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET running run = %d %s steps %v; want 200 running, a completed, wait running", code, d.Status, d.Steps)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var listed httpapi.RunList
	f.do(t, "GET", "/api/v1/runs?status=running", &listed)
	if len(listed.Runs) != 1 || listed.Runs[0].ID != "slow-1" {
		t.Errorf("GET ?status=running = %+v; want slow-1", listed.Runs)
	}

	d = httpapi.RunDetail{}
	if code := f.do(t, "POST", "/api/v1/runs/slow-1/cancel", &d); code != 200 || d.Status != runtime.RunCancelled {
		t.Fatalf("POST cancel = %d %s; want 200 cancelled", code, d.Status)
	}
	select {
	case id := <-f.gate.cancelled:
		if id != "slow-1" {
			t.Errorf("backend saw the cancel of %s; want slow-1", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the backend call was not cancelled")
	}
	run := <-done
	if run.Status != runtime.RunCancelled || run.Steps[2].Status != runtime.StepPending {
		t.Errorf("Run returned %s with step after = %s; want cancelled and after never started", run.Status, run.Steps[2].Status)
	}
	// The stored record agrees, and cancelling again is not an error.
	d = httpapi.RunDetail{}
	if code := f.do(t, "POST", "/api/v1/runs/slow-1/cancel", &d); code != 200 || d.Status != runtime.RunCancelled {
		t.Errorf("second POST cancel = %d %s; want 200 cancelled", code, d.Status)
	}
	stored, err := f.store.GetRun(context.Background(), "slow-1")
	if err != nil || stored.Status != runtime.RunCancelled {
		t.Errorf("stored run = %v, %v; want cancelled", stored, err)
	}
	var e httpapi.Error
	if code := f.do(t, "POST", "/api/v1/runs/nope/cancel", &e); code != 404 {
		t.Errorf("POST cancel of an unknown run = %d; want 404", code)
	}
}

func TestSafety(t *testing.T) {
	f := newFixture(t)
	run := f.run(t, "quick")
	tests := []struct {
		name, method, path, auth, origin string
		body                             io.Reader
		want                             int
	}{
		{"no token", "GET", "/api/v1/runs", "", "", nil, 401},
		{"wrong token", "GET", "/api/v1/runs/" + run.ID, "Bearer wrong", "", nil, 401},
		{"no token on cancel", "POST", "/api/v1/runs/" + run.ID + "/cancel", "", "", nil, 401},
		{"no token on metrics", "GET", "/metrics", "", "", nil, 401},
		{"healthz needs none", "GET", "/healthz", "", "", nil, 200},
		{"token", "GET", "/api/v1/runs", "Bearer " + token, "", nil, 200},
		{"bad origin, even with a token", "GET", "/api/v1/runs", "Bearer " + token, "http://evil.example", nil, 403},
		{"loopback origin", "GET", "/api/v1/runs", "Bearer " + token, "http://localhost:3000", nil, 200},
		{"huge body", "POST", "/api/v1/runs/" + run.ID + "/cancel", "Bearer " + token, "", strings.NewReader(strings.Repeat("x", 5<<20)), 413},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, f.url+tt.path, tt.body)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %s %s = %d; want %d", tt.name, tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if tt.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without a Bearer WWW-Authenticate header", tt.name)
		}
	}
}

func TestReadyz(t *testing.T) {
	f := newFixture(t)
	var r httpapi.Readiness
	if code := f.do(t, "GET", "/readyz", &r); code != 200 || !r.Ready || r.Backends["be"] != "ok" {
		t.Errorf("GET /readyz with all backends up = %d %+v; want 200 ready", code, r)
	}
	f.ready = map[string]error{"be": nil, "db": errors.New("connection refused")}
	r = httpapi.Readiness{}
	if code := f.do(t, "GET", "/readyz", &r); code != 503 || r.Ready || r.Backends["db"] != "connection refused" || r.Backends["be"] != "ok" {
		t.Errorf("GET /readyz with a backend down = %d %+v; want 503 naming db", code, r)
	}
}

// scrape reads the value of one series from GET /metrics.
func (f *fixture) scrape(t *testing.T, series string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", f.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s value %q: %v", series, v, err)
			}
			return n
		}
	}
	return 0
}

func TestMetricsMove(t *testing.T) {
	f := newFixture(t)
	runs := `vmcp_runs_total{status="completed",workflow="quick"}`
	calls := `vmcp_backend_call_duration_seconds_count{backend="be",tool="fast"}`
	steps := `vmcp_step_duration_seconds_count{status="completed",step="b",workflow="quick"}`
	errs := `vmcp_backend_call_errors_total{backend="be",kind="tool_error",tool="fail"}`
	before := []float64{f.scrape(t, runs), f.scrape(t, calls), f.scrape(t, steps), f.scrape(t, errs)}
	f.run(t, "quick")
	f.run(t, "quick")
	f.run(t, "broken")
	after := []float64{f.scrape(t, runs), f.scrape(t, calls), f.scrape(t, steps), f.scrape(t, errs)}
	if diff := cmp.Diff([]float64{0, 0, 0, 0}, before); diff != "" {
		t.Errorf("metrics before any run differ (-want +got):\n%s", diff)
	}
	// 2 quick runs: 2 completed runs, 4 fast calls (+1 from broken), 2 b steps, 1 tool error.
	if diff := cmp.Diff([]float64{2, 5, 2, 1}, after); diff != "" {
		t.Errorf("metrics after 3 runs differ (-want +got) [runs, fast calls, step b, tool errors]:\n%s", diff)
	}
}

// TestParentAndChildRuns: a workflow step's child run names its parent,
// the parent's detail lists it, and ?parent= lists a run's children.
func TestParentAndChildRuns(t *testing.T) {
	f := newFixture(t)
	parent := f.run(t, "nested")
	if parent.Status != runtime.RunCompleted {
		t.Fatalf("nested run = %s; want completed", parent.Status)
	}
	var d httpapi.RunDetail
	if code := f.do(t, "GET", "/api/v1/runs/"+parent.ID, &d); code != 200 {
		t.Fatalf("GET parent = %d; want 200", code)
	}
	if len(d.Children) != 1 || d.Children[0].Workflow != "quick" || d.Children[0].ParentStep != "sub" ||
		d.Children[0].Status != runtime.RunCompleted || d.ParentID != "" {
		t.Fatalf("parent detail children = %+v, parent %q; want one completed quick run under step sub", d.Children, d.ParentID)
	}
	childID := d.Children[0].ID
	var c httpapi.RunDetail
	if code := f.do(t, "GET", "/api/v1/runs/"+childID, &c); code != 200 {
		t.Fatalf("GET child = %d; want 200", code)
	}
	if c.ParentID != parent.ID || c.ParentStep != "sub" || len(c.Children) != 0 {
		t.Errorf("child detail = parent %q step %q children %v; want parent %s, step sub, no children", c.ParentID, c.ParentStep, c.Children, parent.ID)
	}
	if !cmp.Equal(d.Steps[0].Output, c.Output) {
		t.Errorf("parent step output %v; want the child's result %v", d.Steps[0].Output, c.Output)
	}
	var list httpapi.RunList
	if code := f.do(t, "GET", "/api/v1/runs?parent="+parent.ID, &list); code != 200 || len(list.Runs) != 1 || list.Runs[0].ID != childID {
		t.Errorf("GET ?parent= = %d %+v; want the one child %s", code, list.Runs, childID)
	}
}
