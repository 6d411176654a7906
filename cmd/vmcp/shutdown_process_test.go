package main

// Process tests of Ctrl-C: a real `vmcp run` (stdio and HTTP) and a real
// `vmcp call`, each sent SIGINT while a run is in flight; and of what
// `vmcp run` logs per run.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of these tests: 17620-17629.
const shutdownPortLo, shutdownPortHi = 17620, 17629

// shutdownConfig serves workflows that sleep for SLEEP_MS milliseconds
// (shutdownYAML fills it in), in one step or two side by side, and one that
// returns at once.
const shutdownConfig = `backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: slow
    description: Sleeps
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: SLEEP_MS, label: nap}}
  - name: slow_pair
    description: Two sleeps side by side
    steps:
      - {id: nap_a, tool: tb.sleep, arguments: {ms: SLEEP_MS, label: a}}
      - {id: nap_b, tool: tb.sleep, arguments: {ms: SLEEP_MS, label: b}}
  - name: quick
    description: Echoes
    parameters:
      text: {type: string, default: hi}
    steps:
      - {id: say, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
`

func shutdownYAML(sleepMs int) []byte {
	return []byte(strings.ReplaceAll(shutdownConfig, "SLEEP_MS", fmt.Sprint(sleepMs)))
}

// shutdownProc is a `vmcp run` started by the test, with an MCP client
// connected to it.
type shutdownProc struct {
	cmd    *exec.Cmd
	stderr *testenv.Buffer
	exited chan error
	client *client.Client
}

// startShutdownVMCP starts vmcp run over transport ("stdio" or "http")
// with the given extra flags, and connects an MCP client to it.
func startShutdownVMCP(t *testing.T, transportName string, sleepMs int, flags ...string) *shutdownProc {
	t.Helper()
	buildOpsBinaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(cfg, shutdownYAML(sleepMs), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--config", cfg, "--log-level", "debug"}, flags...)
	addr := ""
	if transportName == "http" {
		addr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, shutdownPortLo, shutdownPortHi))
		args = append(args, "--transport", "http", "--listen", addr)
	}
	p := &shutdownProc{stderr: &testenv.Buffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(opsBins.vmcp, args...)
	p.cmd.Env = append(os.Environ(), "TB="+opsBins.tb)
	p.cmd.Stderr = p.stderr
	var tr transport.Interface
	if transportName == "stdio" {
		stdin, err := p.cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		tr = transport.NewIO(stdout, stdin, nil)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", p.stderr.String())
		}
	})
	if transportName == "http" {
		p.waitLog(t, "serving MCP over streamable HTTP", 60*time.Second)
		c, err := client.NewStreamableHttpClient("http://" + addr + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		p.client = c
	} else {
		p.client = client.NewClient(tr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "shutdown-test", Version: "1"}
	if _, err := p.client.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v\n%s", err, p.stderr.String())
	}
	return p
}

// waitLog waits until vmcp's stderr contains s.
func (p *shutdownProc) waitLog(t *testing.T, s string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("vmcp did not log %q within %s", s, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool and delivers the outcome on the channel.
func (p *shutdownProc) callAsync(tool string) <-chan callOutcome {
	return p.callArgsAsync(tool, map[string]any{})
}

func (p *shutdownProc) callArgsAsync(tool string, args map[string]any) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := p.client.CallTool(ctx, req)
		out <- callOutcome{res, err}
	}()
	return out
}

func (p *shutdownProc) signal(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

// wait returns vmcp's exit code, failing the test after limit.
func (p *shutdownProc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("vmcp did not exit within %s", limit)
		return -1
	}
}

// TestRunCtrlCCancelsAfterGrace: on Ctrl-C, vmcp run says it is shutting
// down and how many runs it waits for; when the grace period ends, it
// cancels the run, and the client gets the run's cancelled result, not a
// dropped connection. Then vmcp exits 0.
func TestRunCtrlCCancelsAfterGrace(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			p := startShutdownVMCP(t, tr, 60000, "--shutdown-grace", "300ms")
			call := p.callAsync("slow")
			p.waitLog(t, `msg="step started"`, 30*time.Second)
			p.signal(t)
			p.waitLog(t, "shutting down: waiting for the runs in flight to finish", 10*time.Second)
			if !regexp.MustCompile(`shutting down: waiting for the runs in flight to finish; press Ctrl-C again to stop at once" runs=1 grace=300ms`).MatchString(p.stderr.String()) {
				t.Errorf("the shutdown line does not say how many runs it waits for and how long")
			}
			var got callOutcome
			select {
			case got = <-call:
			case <-time.After(20 * time.Second):
				t.Fatal("the call did not return within 20s of Ctrl-C")
			}
			if got.err != nil {
				t.Fatalf("call: %v; want the run's cancelled result", got.err)
			}
			text := testenv.ResultText(got.res)
			if !got.res.IsError || !strings.Contains(text, "cancelled") {
				t.Errorf("result = isError %v %q; want an isError result saying the run was cancelled", got.res.IsError, text)
			}
			if code := p.wait(t, 20*time.Second); code != 0 {
				t.Errorf("vmcp exited %d; want 0", code)
			}
			log := p.stderr.String()
			for _, want := range []string{`shutdown grace period over: cancelling the runs still going" runs=1`, `msg="server stopped"`} {
				if !strings.Contains(log, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
		})
	}
}

// TestRunCtrlCWaitsForRuns: a run that ends within the grace period ends
// normally and its client gets its result; a call that arrives during the
// shutdown is refused with a result that says why.
func TestRunCtrlCWaitsForRuns(t *testing.T) {
	p := startShutdownVMCP(t, "stdio", 1500, "--shutdown-grace", "30s")
	call := p.callAsync("slow")
	p.waitLog(t, `msg="step started"`, 30*time.Second)
	p.signal(t)
	p.waitLog(t, "shutting down: waiting for the runs in flight to finish", 10*time.Second)
	late := <-p.callAsync("quick")
	if late.err != nil || !late.res.IsError || !strings.Contains(testenv.ResultText(late.res), "vmcp is shutting down") {
		t.Errorf("a call during shutdown = %v %+v; want an isError result saying vmcp is shutting down", late.err, late.res)
	}
	got := <-call
	if got.err != nil || got.res.IsError {
		t.Fatalf("call = %v %+v; want the run's result", got.err, got.res)
	}
	if text := testenv.ResultText(got.res); !strings.Contains(text, `"slept":true`) && !strings.Contains(text, `"slept": true`) {
		t.Errorf("result = %s; want the sleep step's output", text)
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Errorf("vmcp exited %d; want 0", code)
	}
	if !strings.Contains(p.stderr.String(), "every run finished") {
		t.Errorf("stderr lacks %q", "every run finished")
	}
}

// TestRunSecondCtrlCExits: a second Ctrl-C does not wait for the grace
// period: vmcp exits at once with status 130.
func TestRunSecondCtrlCExits(t *testing.T) {
	p := startShutdownVMCP(t, "stdio", 60000, "--shutdown-grace", "60s")
	p.callAsync("slow")
	p.waitLog(t, `msg="step started"`, 30*time.Second)
	p.signal(t)
	p.waitLog(t, "shutting down: waiting for the runs in flight to finish", 10*time.Second)
	p.signal(t)
	if code := p.wait(t, 10*time.Second); code != exitInterrupted {
		t.Errorf("vmcp exited %d; want %d", code, exitInterrupted)
	}
	if !strings.Contains(p.stderr.String(), "vmcp: interrupted again: exiting now") {
		t.Errorf("stderr lacks the forced-exit line")
	}
}

// TestCallCtrlC: Ctrl-C on vmcp call cancels the run; the steps it
// stopped show as cancelled (both of them, however the engine's reports and
// the signal interleave), the last line says the run was cancelled, and
// vmcp call exits 1.
func TestCallCtrlC(t *testing.T) {
	buildOpsBinaries(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vmcp.yaml"), shutdownYAML(60000), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.Buffer{}
	cmd := exec.Command(opsBins.vmcp, "call", "slow_pair")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TB="+opsBins.tb)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &shutdownProc{cmd: cmd, stderr: stderr, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.exited
		}
	})
	p.waitLog(t, "step nap_a started", 30*time.Second)
	p.waitLog(t, "step nap_b started", 30*time.Second)
	p.signal(t)
	if code := p.wait(t, 20*time.Second); code != exitFailure {
		t.Errorf("vmcp call exited %d; want %d", code, exitFailure)
	}
	out := stderr.String()
	for _, re := range []string{
		`(?m)^\[[12]/2\] \+\d+\.\d{3}s step nap_a cancelled$`,
		`(?m)^\[[12]/2\] \+\d+\.\d{3}s step nap_b cancelled$`,
		`(?m)^\[2/2\] \+\d+\.\d{3}s run cancelled$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("stderr does not match %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, " failed") {
		t.Errorf("stderr reports a cancelled step as failed:\n%s", out)
	}
}

// TestRunLogs: vmcp run logs one "run finished" line per run; at debug
// level each backend call is a line with the tool, the duration and the
// result's size, but never the argument values.
func TestRunLogs(t *testing.T) {
	p := startShutdownVMCP(t, "stdio", 10)
	const secret = "s3cret-argument-value"
	for tool, args := range map[string]map[string]any{"quick": {"text": secret}, "slow": {}} {
		got := <-p.callArgsAsync(tool, args)
		if got.err != nil || got.res.IsError {
			t.Fatalf("call %s = %v %+v", tool, got.err, got.res)
		}
	}
	p.signal(t)
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Errorf("vmcp exited %d; want 0", code)
	}
	log := p.stderr.String()
	if n := strings.Count(log, `msg="run finished"`); n != 2 {
		t.Errorf("%d run finished lines for 2 runs; want 2", n)
	}
	for _, re := range []string{
		`msg="backend call" backend=tb tool=echo run_id=[0-9a-f-]{36} step_id=say duration=\S+ result_bytes=\d+ is_error=false`,
		`msg="backend call" backend=tb tool=sleep run_id=[0-9a-f-]{36} step_id=nap duration=\S+ result_bytes=\d+ is_error=false`,
	} {
		if !regexp.MustCompile(re).MatchString(log) {
			t.Errorf("stderr does not match %s", re)
		}
	}
	if strings.Contains(log, secret) {
		t.Errorf("stderr holds an argument value")
	}
}
