package main

// Process tests of the attacks of issue 10: each one is replayed against a
// real `vmcp run` started with its config and environment on a loopback
// port, and must now fail. They share the binaries of runs_process_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of these tests: 17700-17749.
const attackPortLo, attackPortHi = 17700, 17749

// quickConfig serves one quick workflow whose output is recognisable, with
// SERVER replaced by the server: section under test.
const quickConfig = `backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
SERVER
compositeTools:
  - name: greet
    description: Echo a marker that stands for a secret run output
    steps:
      - id: hello
        tool: tb.echo
        arguments: {text: run-output-7f3a}
`

// writeQuickConfig writes quickConfig with the given server: lines and
// returns its path.
func writeQuickConfig(t *testing.T, server string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "vmcp.yaml")
	text := strings.NewReplacer("${TB}", opsBins.tb, "${REC}", filepath.Join(dir, "rec"), "SERVER", server).Replace(quickConfig)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestEmptyTokenIsAStartupError: with tokens: ["${VMCP_TOKEN}"] and
// VMCP_TOKEN set but empty (or blank), vmcp used to serve the API to anyone,
// and to pass the non-loopback listen guard. Now it does not start: exit 1,
// with the config position and the variable in the message, and nothing
// listens on the port.
func TestEmptyTokenIsAStartupError(t *testing.T) {
	buildOpsBinaries(t)
	cfg := writeQuickConfig(t, `  auth: {tokens: ["${VMCP_TOKEN}"]}`)
	for _, tt := range []struct {
		host, value, want string
	}{
		{"127.0.0.1", "", "server.auth.tokens[0] is empty: environment variable VMCP_TOKEN is set but empty; set VMCP_TOKEN to the token, or remove the entry"},
		{"0.0.0.0", "", "server.auth.tokens[0] is empty: environment variable VMCP_TOKEN is set but empty"},
		{"127.0.0.1", "  ", "server.auth.tokens[0] is blank (only whitespace): environment variable VMCP_TOKEN is set but blank"},
	} {
		port := testenv.FreePort(t, attackPortLo, attackPortHi)
		listen := fmt.Sprintf("%s:%d", tt.host, port)
		_, stderr, code := vmcpCLI(t, []string{"VMCP_TOKEN=" + tt.value}, "run", "--config", cfg, "--transport", "http", "--listen", listen)
		wantPos := filepath.ToSlash(cfg) + ":4:20: error: "
		if code != 1 || !strings.Contains(stderr, wantPos+tt.want) {
			t.Errorf("vmcp run --listen %s with VMCP_TOKEN=%q = exit %d, stderr:\n%s\nwant exit 1 with %q", listen, tt.value, code, stderr, wantPos+tt.want)
		}
		if conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			conn.Close()
			t.Errorf("something listens on port %d after vmcp refused to start", port)
		}
	}
}

// noKeepAlive is an HTTP client that opens a connection per request, so
// that no test request holds one of the server's connections afterwards.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

// hostRequest sends method path to base with the Host header set to host
// and returns the status and body.
func hostRequest(t *testing.T, base, method, path, host string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		t.Fatalf("%s %s with Host %s: %v", method, path, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHostCheckAgainstRebinding replays DNS rebinding: a page on
// attacker.example rebound to 127.0.0.1 makes the browser send
// Host: attacker.example to the loopback listener. Every endpoint must
// refuse it (the run API used to hand out run outputs), while loopback
// names and a server.allowedHosts entry work, MCP included.
func TestHostCheckAgainstRebinding(t *testing.T) {
	buildOpsBinaries(t)
	cfg := writeQuickConfig(t, `  allowedHosts: [vmcp.test]`)
	port := testenv.FreePort(t, attackPortLo, attackPortHi)
	p := startVMCP(t, cfg, fmt.Sprintf("127.0.0.1:%d", port))

	c := testenv.HTTPClient(t, p.base+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}}}); err != nil || res.IsError {
		t.Fatalf("calling greet = %+v, %v; want a result", res, err)
	}
	var list httpapi.RunList
	if code := p.get(t, "/api/v1/runs?workflow=greet", &list); code != 200 || len(list.Runs) != 1 {
		t.Fatalf("GET /api/v1/runs = %d %+v; want the one run of greet", code, list)
	}
	run := "/api/v1/runs/" + list.Runs[0].ID

	endpoints := []struct{ method, path string }{
		{"POST", "/mcp"}, {"GET", run}, {"GET", "/api/v1/runs"}, {"GET", "/metrics"}, {"GET", "/healthz"}, {"GET", "/readyz"},
	}
	for _, host := range []string{"attacker.example", fmt.Sprintf("attacker.example:%d", port), "localhost.attacker.example", "vmcp.test.attacker.example"} {
		for _, e := range endpoints {
			code, body := hostRequest(t, p.base, e.method, e.path, host)
			var refusal struct{ Error string }
			json.Unmarshal([]byte(body), &refusal)
			want := fmt.Sprintf("host %q not allowed: on loopback this server answers only to localhost, 127.0.0.1 and [::1] (any port); add the name to server.allowedHosts to serve it", host)
			if code != 403 || refusal.Error != want || strings.Contains(body, "run-output-7f3a") {
				t.Errorf("%s %s with Host %s = %d %.300s; want 403 with error %q", e.method, e.path, host, code, body, want)
			}
		}
	}
	for _, host := range []string{fmt.Sprintf("localhost:%d", port), "localhost", fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("[::1]:%d", port), "vmcp.test", fmt.Sprintf("vmcp.test:%d", port)} {
		for _, e := range endpoints {
			code, body := hostRequest(t, p.base, e.method, e.path, host)
			if code != 200 {
				t.Errorf("%s %s with Host %s = %d %.200s; want 200", e.method, e.path, host, code, body)
			}
			if e.path == run && !strings.Contains(body, "run-output-7f3a") {
				t.Errorf("GET %s with Host %s = %.200s; want the run's output", run, host, body)
			}
		}
	}
}

// TestHostCheckOnAdminListener: the stdio mode's --admin-listen serves the
// same API, and refuses a rebound Host the same way.
func TestHostCheckOnAdminListener(t *testing.T) {
	buildOpsBinaries(t)
	cfg := writeQuickConfig(t, `  allowedHosts: [vmcp.test]`)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, attackPortLo, attackPortHi))
	cmd := exec.Command(opsBins.vmcp, "run", "--config", cfg, "--admin-listen", addr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("vmcp did not exit within 15s of stdin closing")
		}
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	})
	base := "http://" + addr
	waitHealthy(t, base, exited)
	for _, tt := range []struct {
		host string
		want int
	}{
		{"attacker.example", 403}, {"localhost", 200}, {addr, 200}, {"vmcp.test", 200},
	} {
		for _, path := range []string{"/api/v1/runs", "/metrics", "/healthz"} {
			if code, body := hostRequest(t, base, "GET", path, tt.host); code != tt.want {
				t.Errorf("GET %s on --admin-listen with Host %s = %d %.200s; want %d", path, tt.host, code, body, tt.want)
			}
		}
	}
}

// waitHealthy polls base/healthz until it answers 200, with a fresh
// connection each time.
func waitHealthy(t *testing.T, base string, exited chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := noKeepAlive.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("vmcp exited before serving: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/healthz did not answer within 60s", base)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConnectionCap fills server.maxConnections with idle keep-alive
// connections, half of them after a 401 (the attack held 10,000 that way).
// The next connection is not served while they stay open; once they close,
// it is, and the server goes on serving MCP.
func TestConnectionCap(t *testing.T) {
	buildOpsBinaries(t)
	cfg := writeQuickConfig(t, "  auth: {tokens: [\"${VMCP_OPS_TOKEN}\"]}\n  maxConnections: 4")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, attackPortLo, attackPortHi))
	p := startVMCP(t, cfg, addr)
	// startVMCP polled /healthz through the default client; give its idle
	// connection back.
	http.DefaultClient.CloseIdleConnections()

	var held []*testenv.RawConn
	for i, tt := range []struct {
		path string
		want int
	}{
		{"/healthz", 200}, {"/api/v1/runs", 401}, {"/healthz", 200}, {"/metrics", 401},
	} {
		c := testenv.DialRaw(t, addr)
		c.Get(t, tt.path)
		if code, ok := c.Response(t, 30*time.Second); !ok || code != tt.want {
			t.Fatalf("held connection %d: GET %s = %d (answered %v); want %d", i+1, tt.path, code, ok, tt.want)
		}
		held = append(held, c)
	}

	extra := testenv.DialRaw(t, addr)
	extra.Get(t, "/healthz")
	if code, ok := extra.Response(t, time.Second); ok {
		t.Fatalf("a 5th connection over server.maxConnections 4 was served (%d)", code)
	}
	for _, c := range held {
		c.Close()
	}
	if code, ok := extra.Response(t, 30*time.Second); !ok || code != 200 {
		t.Fatalf("once the held connections closed, the waiting one got %d (answered %v); want 200", code, ok)
	}
	extra.Close()

	c := mcpClient(t, p.base)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}}})
	if err != nil || res.IsError || !strings.Contains(testenv.ResultText(res), "run-output-7f3a") {
		t.Fatalf("calling greet after the flood = %+v, %v; want its output", res, err)
	}
}

// TestIdleAndHeaderTimeouts: server.readHeaderTimeout closes a connection
// that never finishes its request headers, and server.idleTimeout an idle
// keep-alive connection (one that got a 401, too); each frees its place
// under the cap for the next connection.
func TestIdleAndHeaderTimeouts(t *testing.T) {
	buildOpsBinaries(t)
	cfg := writeQuickConfig(t, "  auth: {tokens: [\"${VMCP_OPS_TOKEN}\"]}\n  maxConnections: 1\n  idleTimeout: 300ms\n  readHeaderTimeout: 300ms")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, attackPortLo, attackPortHi))
	startVMCP(t, cfg, addr)
	http.DefaultClient.CloseIdleConnections()

	// The wait is under the 10s default, so only the configured 300ms
	// closes this connection in time.
	silent := testenv.DialRaw(t, addr)
	silent.Write(t, "GET /healthz HTTP/1.1\r\nHost: local")
	if b, err := silent.ReadToClose(5 * time.Second); err != nil {
		t.Fatalf("reading a connection with unfinished headers = %q, %v; want it closed by vmcp after server.readHeaderTimeout", b, err)
	}

	idle := testenv.DialRaw(t, addr)
	idle.Get(t, "/api/v1/runs")
	if code, ok := idle.Response(t, 30*time.Second); !ok || code != 401 {
		t.Fatalf("GET /api/v1/runs without a token = %d (answered %v); want 401", code, ok)
	}
	if b, err := idle.ReadToClose(30 * time.Second); err != nil || len(b) > 0 {
		t.Fatalf("reading the idle connection = %q, %v; want it closed (closed by vmcp after server.idleTimeout)", b, err)
	}

	next := testenv.DialRaw(t, addr)
	next.Get(t, "/healthz")
	if code, ok := next.Response(t, 30*time.Second); !ok || code != 200 {
		t.Errorf("the next connection under maxConnections 1 got %d (answered %v); want 200", code, ok)
	}
}
