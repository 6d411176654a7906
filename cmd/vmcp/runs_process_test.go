package main

// Process tests of the operations surface: `vmcp run` with the SQLite
// store over HTTP, killed with SIGKILL mid-run and restarted; `vmcp runs`
// against the live API and against the state file. They build the vmcp and
// testbackend binaries once per test binary.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Ports of these tests: 17600-17619.
const opsPortLo, opsPortHi = 17600, 17619

var opsBins struct {
	once          sync.Once
	dir, vmcp, tb string
	err           error
}

// buildOpsBinaries builds vmcp and the test backend into a temp dir once.
func buildOpsBinaries(t *testing.T) {
	t.Helper()
	opsBins.once.Do(func() {
		dir, err := os.MkdirTemp("", "vmcp-ops-")
		if err != nil {
			opsBins.err = err
			return
		}
		opsBins.dir = dir
		opsBins.vmcp = filepath.Join(dir, "vmcp")
		opsBins.tb = filepath.Join(dir, "testbackend")
		for _, args := range [][]string{
			{"build", "-o", opsBins.vmcp, "./cmd/vmcp"},
			{"build", "-o", opsBins.tb, "./e2e/testbackend"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Dir = testenv.RepoRoot()
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				opsBins.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if opsBins.err != nil {
		t.Fatal(opsBins.err)
	}
}

const opsToken = "ops-test-token-5f1c"

// slowConfig is a config with the SQLite store, a token from the
// environment, and one workflow whose third step sleeps for a minute.
const slowConfig = `backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  auth: {tokens: ["${VMCP_OPS_TOKEN}"]}
  exposeRunTools: true
state:
  store: sqlite
  path: state.db
compositeTools:
  - name: slow_chain
    description: Two quick steps, then a very slow one
    steps:
      - id: first
        tool: tb.echo
        arguments: {text: hello}
      - id: second
        tool: tb.sleep
        arguments: {ms: 100, label: second}
        dependsOn: [first]
      - id: third
        tool: tb.sleep
        arguments: {ms: 60000, label: third}
        dependsOn: [second]
`

type vmcpProc struct {
	cmd    *exec.Cmd
	stderr *testenv.Buffer
	exited chan error
	base   string
}

func (p *vmcpProc) log() string { return p.stderr.String() }

// startVMCP starts `vmcp run --transport http` on addr and waits until
// /healthz answers.
func startVMCP(t *testing.T, cfg, addr string) *vmcpProc {
	t.Helper()
	p := &vmcpProc{stderr: &testenv.Buffer{}, exited: make(chan error, 1), base: "http://" + addr}
	p.cmd = exec.Command(opsBins.vmcp, "run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "debug")
	p.cmd.Env = append(os.Environ(), "VMCP_OPS_TOKEN="+opsToken)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				p.cmd.Process.Kill()
				<-p.exited
				t.Errorf("vmcp did not exit within 10s of SIGTERM")
			}
		}
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", p.log())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("vmcp exited before serving: %v\n%s", err, p.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("vmcp did not serve /healthz within 60s\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *vmcpProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

func (p *vmcpProc) get(t *testing.T, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+opsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

// vmcpCLI runs the vmcp binary and returns stdout, stderr and the exit code.
func vmcpCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, opsBins.vmcp, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("vmcp %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func mcpClient(t *testing.T, base string) *client.Client {
	t.Helper()
	return testenv.HTTPClientHeaders(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + opsToken})
}

// waitRunning polls the API until n runs of slow_chain have reached the
// slow step, and returns their ids.
func waitRunning(t *testing.T, p *vmcpProc, n int) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list httpapi.RunList
		p.get(t, "/api/v1/runs?status=running&workflow=slow_chain", &list)
		var ids []string
		for _, r := range list.Runs {
			var d httpapi.RunDetail
			p.get(t, "/api/v1/runs/"+r.ID, &d)
			if len(d.Steps) == 3 && d.Steps[1].Status == runtime.StepCompleted && d.Steps[2].Status == runtime.StepRunning {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs reached the slow step within 60s; want %d (list: %+v)", len(ids), n, list.Runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRestartRecovery is the crash test: two runs reach their slow step;
// one is cancelled with `vmcp runs cancel` (and the backend sees it), the
// other is still running when vmcp is killed with SIGKILL. After a restart
// on the same state file, the killed run resumes and, as its step in
// flight (a sleep, not idempotent) cannot be called again, ends
// interrupted naming that step; its finished steps and their outputs are
// there, and `vmcp runs show` tells the story.
func TestRestartRecovery(t *testing.T) {
	buildOpsBinaries(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "backend.log")
	cfg := filepath.Join(dir, "vmcp.yaml")
	text := strings.NewReplacer("${TB}", opsBins.tb, "${REC}", rec).Replace(slowConfig)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, opsPortLo, opsPortHi))
	p := startVMCP(t, cfg, addr)

	c := mcpClient(t, p.base)
	calls := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "slow_chain", Arguments: map[string]any{}}})
			calls <- err
		}()
	}
	ids := waitRunning(t, p, 2)
	cancelled, killed := ids[0], ids[1]

	// The CLI needs the right token, and says so.
	if _, stderr, code := vmcpCLI(t, []string{"VMCP_TOKEN="}, "runs", "list", "--url", p.base); code != 1 || !strings.Contains(stderr, "401") {
		t.Errorf("vmcp runs list without a token = exit %d, stderr %q; want exit 1 with 401", code, stderr)
	}
	if _, stderr, code := vmcpCLI(t, nil, "runs", "list", "--url", p.base, "--token", opsToken+"-wrong"); code != 1 || !strings.Contains(stderr, "invalid bearer token") {
		t.Errorf("vmcp runs list with a wrong token = exit %d, stderr %q; want exit 1 with invalid bearer token", code, stderr)
	}
	out, stderr, code := vmcpCLI(t, []string{"VMCP_TOKEN=" + opsToken}, "runs", "list", "--url", p.base, "--status", "running")
	if code != 0 || !strings.Contains(out, cancelled) || !strings.Contains(out, killed) || !strings.Contains(out, "2/3") {
		t.Errorf("vmcp runs list --status running = exit %d\n%s%s\nwant both runs with 2/3 steps", code, out, stderr)
	}
	out, stderr, code = vmcpCLI(t, nil, "runs", "cancel", cancelled, "--url", p.base, "--token", opsToken)
	if code != 0 || strings.TrimSpace(out) != fmt.Sprintf("run %s: cancelled", cancelled) {
		t.Errorf("vmcp runs cancel = exit %d %q %s; want \"run %s: cancelled\"", code, out, stderr, cancelled)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readFile(t, rec), "cancelled third") {
		if time.Now().After(deadline) {
			t.Fatalf("the backend never saw the cancel; its log:\n%s", readFile(t, rec))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The metrics of the live process moved.
	if m := scrapeMetric(t, p, `vmcp_runs_total{status="cancelled",workflow="slow_chain"}`); m != 1 {
		t.Errorf("vmcp_runs_total{cancelled} = %v; want 1", m)
	}
	if m := scrapeMetric(t, p, `vmcp_runs_in_flight{workflow="slow_chain"}`); m != 1 {
		t.Errorf("vmcp_runs_in_flight = %v; want 1 (the run about to be killed)", m)
	}

	p.kill(t)
	// One call ends with the cancelled result, the other with the lost
	// connection; neither may hang.
	for i := 0; i < 2; i++ {
		select {
		case <-calls:
		case <-time.After(30 * time.Second):
			t.Fatal("a workflow call still hangs 30s after vmcp was killed")
		}
	}

	// Read the file while no vmcp runs: the killed run still says running.
	db := filepath.Join(dir, "state.db")
	out, _, code = vmcpCLI(t, nil, "runs", "show", killed, "--db", db)
	if code != 0 || !strings.Contains(out, "status    running") {
		t.Errorf("vmcp runs show --db before restart = exit %d:\n%s\nwant status running (read-only does not recover)", code, out)
	}

	p2 := startVMCP(t, cfg, addr)
	// The restarted vmcp resumes the run in the background: wait for it
	// to end.
	var d httpapi.RunDetail
	for deadline := time.Now().Add(30 * time.Second); ; {
		if code := p2.get(t, "/api/v1/runs/"+killed, &d); code != 200 {
			t.Fatalf("GET killed run after restart = %d; want 200", code)
		}
		if d.Status != runtime.RunRunning || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d.Status != runtime.RunInterrupted || d.EndedAt.IsZero() {
		t.Errorf("killed run after restart: status %s, ended %v; want interrupted with an end time", d.Status, d.EndedAt)
	}
	if d.Error == nil || d.Error.Step != "third" || !strings.Contains(d.Error.Msg, `step "third" was in flight when vmcp stopped and is not idempotent`) {
		t.Errorf("killed run error = %+v; want it to name step third, in flight and not idempotent", d.Error)
	}
	if len(d.Steps) != 3 {
		t.Fatalf("killed run has %d steps; want 3", len(d.Steps))
	}
	first, second, third := d.Steps[0], d.Steps[1], d.Steps[2]
	if first.Status != runtime.StepCompleted || fmt.Sprint(first.Output) != "map[text:hello]" {
		t.Errorf("step first after restart = %s %v; want completed {text: hello}", first.Status, first.Output)
	}
	if second.Status != runtime.StepCompleted || second.EndedAt.IsZero() {
		t.Errorf("step second after restart = %s ended %v; want completed with an end time", second.Status, second.EndedAt)
	}
	if third.Status != runtime.StepFailed || !strings.Contains(third.Error, "in flight when vmcp stopped") {
		t.Errorf("step third after restart = %s %q; want failed as in flight when vmcp stopped", third.Status, third.Error)
	}
	var c2 httpapi.RunDetail
	if p2.get(t, "/api/v1/runs/"+cancelled, &c2); c2.Status != runtime.RunCancelled {
		t.Errorf("cancelled run after restart = %s; want cancelled (finished runs are not touched)", c2.Status)
	}
	var interrupted httpapi.RunList
	p2.get(t, "/api/v1/runs?status=interrupted", &interrupted)
	if len(interrupted.Runs) != 1 || interrupted.Runs[0].ID != killed {
		t.Errorf("GET ?status=interrupted = %+v; want only %s", interrupted.Runs, killed)
	}

	// Agents see the same through vmcp_run_status (server.exposeRunTools).
	mc := mcpClient(t, p2.base)
	res, err := mc.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: "vmcp_run_status", Arguments: map[string]any{"run_id": killed}}})
	if err != nil || res.IsError {
		t.Fatalf("vmcp_run_status = %v, %+v; want a result", err, res)
	}
	if st, _ := res.StructuredContent.(map[string]any); st == nil || st["status"] != "interrupted" {
		t.Errorf("vmcp_run_status structured content = %v; want status interrupted", res.StructuredContent)
	}

	// A wrong token was sent (by the CLI test above) and the right one many
	// times, at debug level: neither may appear in the logs.
	for i, proc := range []*vmcpProc{p, p2} {
		if strings.Contains(proc.log(), opsToken) {
			t.Errorf("vmcp process %d logged the bearer token", i+1)
		}
	}

	// The timeline, read from the file while the new vmcp owns it.
	out, stderr, code = vmcpCLI(t, nil, "runs", "show", killed, "--db", db)
	for _, want := range []string{"status    interrupted", `step "third" was in flight when vmcp stopped`, "first   completed", "second  completed", "third   failed",
		"mark it idempotent: true if calling it twice is safe"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("vmcp runs show --db after restart lacks %q (exit %d):\n%s%s", want, code, out, stderr)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestNonLoopbackNeedsAuth starts vmcp on every interface without tokens:
// it must refuse, and start with --insecure.
func TestNonLoopbackNeedsAuth(t *testing.T) {
	buildOpsBinaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "vmcp.yaml")
	text := strings.NewReplacer("${TB}", opsBins.tb, "${REC}", filepath.Join(dir, "rec")).Replace(slowConfig)
	text = strings.Replace(text, `  auth: {tokens: ["${VMCP_OPS_TOKEN}"]}`+"\n", "", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t, opsPortLo, opsPortHi)
	_, stderr, code := vmcpCLI(t, nil, "run", "--config", cfg, "--transport", "http", "--listen", fmt.Sprintf("0.0.0.0:%d", port))
	if code != 2 || !strings.Contains(stderr, "without authentication") || !strings.Contains(stderr, "--insecure") {
		t.Errorf("vmcp run --listen 0.0.0.0 without tokens = exit %d, stderr %q; want exit 2 explaining --insecure", code, stderr)
	}
	// Nothing may be listening after the refusal.
	if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		conn.Close()
		t.Errorf("something listens on port %d after vmcp refused to start", port)
	}
}

// scrapeMetric reads one series from the process's /metrics.
func scrapeMetric(t *testing.T, p *vmcpProc, series string) float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", p.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+opsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s value %q: %v", series, v, err)
			}
			return f
		}
	}
	return -1
}

// TestAdminListenUnderStdio serves MCP on stdio and the API on
// --admin-listen: the API answers (with the token) while the MCP session
// is open, and the process exits when stdin closes.
func TestAdminListenUnderStdio(t *testing.T) {
	buildOpsBinaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "vmcp.yaml")
	text := strings.NewReplacer("${TB}", opsBins.tb, "${REC}", filepath.Join(dir, "rec")).Replace(slowConfig)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, opsPortLo, opsPortHi))
	cmd := exec.Command(opsBins.vmcp, "run", "--config", cfg, "--admin-listen", addr)
	cmd.Env = append(os.Environ(), "VMCP_OPS_TOKEN="+opsToken)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := &vmcpProc{base: "http://" + addr}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("admin API did not answer within 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var list httpapi.RunList
	if code := p.get(t, "/api/v1/runs", &list); code != 200 || list.Runs == nil {
		t.Errorf("GET /api/v1/runs on --admin-listen = %d %+v; want 200 with an empty list", code, list)
	}
	resp, err := http.Get(p.base + "/api/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("GET /api/v1/runs on --admin-listen without a token = %d; want 401", resp.StatusCode)
	}
	// The web console is there too, behind its own sign-in page.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.Get(p.base + "/ui/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/signin?next=") {
		t.Errorf("GET /ui/runs on --admin-listen without the cookie = %d %q; want a redirect to the sign-in page", resp.StatusCode, loc)
	}
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("vmcp exited with %v after stdin closed\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Errorf("vmcp did not exit within 15s of stdin closing\n%s", stderr.String())
	}
}

// TestAllowedOrigins serves HTTP with server.allowedOrigins: a browser
// origin in the list reaches the MCP endpoint and the API, another one is
// refused with 403, and a loopback origin passes without being listed.
func TestAllowedOrigins(t *testing.T) {
	buildOpsBinaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "vmcp.yaml")
	text := strings.NewReplacer("${TB}", opsBins.tb, "${REC}", filepath.Join(dir, "rec")).Replace(slowConfig)
	text = strings.Replace(text, "  exposeRunTools: true\n", "  exposeRunTools: true\n  allowedOrigins: [\"https://app.example.com\"]\n", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startVMCP(t, cfg, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, opsPortLo, opsPortHi)))
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		method, path, origin string
		want                 int
	}{
		{"POST", "/mcp", "https://app.example.com", 200},
		{"POST", "/mcp", "https://evil.example", 403},
		{"POST", "/mcp", "http://localhost:6274", 200},
		{"GET", "/api/v1/runs", "https://app.example.com", 200},
		{"GET", "/api/v1/runs", "https://app.example.com.evil.example", 403},
	}
	for _, tt := range tests {
		var body io.Reader
		if tt.method == "POST" {
			body = strings.NewReader(initialize)
		}
		req, _ := http.NewRequest(tt.method, p.base+tt.path, body)
		req.Header.Set("Authorization", "Bearer "+opsToken)
		req.Header.Set("Origin", tt.origin)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.path, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s with Origin %s = %d %s; want %d", tt.method, tt.path, tt.origin, resp.StatusCode, msg, tt.want)
		}
	}
}
