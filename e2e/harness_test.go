package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of this package: 17350-17449.
const portLo, portHi = 17350, 17449

// bins holds the binaries TestMain builds: vmcp (with -race), the test
// backend and the demo backend.
var bins struct {
	dir, vmcp, testbackend, demo string
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if err := useRepoNode(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "vmcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bins.dir = dir
	bins.vmcp = filepath.Join(dir, "vmcp")
	bins.testbackend = filepath.Join(dir, "testbackend")
	bins.demo = filepath.Join(dir, "demo-backend")
	builds := [][]string{
		{"build", "-race", "-o", bins.vmcp, "./cmd/vmcp"},
		{"build", "-o", bins.testbackend, "./e2e/testbackend"},
		{"build", "-o", bins.demo, "./examples/demo/backends"},
	}
	for _, args := range builds {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	return m.Run()
}

// writeFile writes text to name in a fresh temp dir and returns the path.
// ${TB}, ${DEMO}, ${REC} and ${DIR} in text are replaced by the test
// backend, the demo backend, rec and the directory.
func writeConfig(t testing.TB, text string, rec string) string {
	t.Helper()
	dir := t.TempDir()
	r := strings.NewReplacer("${TB}", bins.testbackend, "${DEMO}", bins.demo, "${REC}", rec, "${DIR}", dir)
	p := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(p, []byte(r.Replace(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stdioVMCP starts `vmcp run --config cfg` on stdio and connects an mcp-go
// client to it. The test owns the process: closing the client closes
// vmcp's stdin, and vmcp must then exit on its own, cleanly, within 15
// seconds (it is killed and the test fails otherwise). Clients such as
// mcp-go's own stdio transport are less patient, but on a loaded machine
// with a race-enabled binary their deadline would measure the machine, not
// vmcp.
func stdioVMCP(t *testing.T, cfg string, opts ...client.ClientOption) (*client.Client, *testenv.Buffer) {
	t.Helper()
	stderr := &testenv.Buffer{}
	cmd := exec.Command(bins.vmcp, "run", "--config", cfg, "--log-level", "debug")
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start vmcp: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c := client.NewClient(transport.NewIO(stdout, stdin, io.NopCloser(strings.NewReader(""))), opts...)
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			c.Close()
			stdin.Close()
			start := time.Now()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("vmcp run exited with %v after its stdin closed", err)
				}
				t.Logf("vmcp run exited %s after its stdin closed", time.Since(start).Round(time.Millisecond))
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Errorf("vmcp run did not exit within 15s of its stdin closing")
			}
			if t.Failed() {
				t.Logf("vmcp stderr:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(shutdown)
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize vmcp: %v\nstderr:\n%s", err, stderr.String())
	}
	stdioShutdown[c] = shutdown
	return c, stderr
}

// stdioShutdown maps a client from stdioVMCP to the function that closes
// it and waits for vmcp to exit. Tests run sequentially, so a plain map is
// enough.
var stdioShutdown = map[*client.Client]func(){}

// httpVMCP starts `vmcp run --transport http` on a free port and returns
// the MCP URL. At the end of the test it sends SIGTERM and requires a clean
// exit within 10 seconds.
func httpVMCP(t *testing.T, cfg string) (string, *testenv.Buffer) {
	t.Helper()
	return httpVMCPOn(t, cfg, portLo, portHi)
}

// recordedHTTPVMCP writes cfg with a fresh record file for the test
// backend (${REC}) and serves it as httpVMCPOn does; it returns the MCP
// URL, the record file and vmcp's stderr.
func recordedHTTPVMCP(t *testing.T, cfg string, lo, hi int) (string, string, *testenv.Buffer) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "record.txt")
	url, stderr := httpVMCPOn(t, writeConfig(t, cfg, rec), lo, hi)
	return url, rec, stderr
}

// Pieces of the configs of the HTTP tests (owners, run limits, tasks,
// resume): the head that runs the recording test backend, the head that
// runs it gated with the SQLite store (the resume tests kill vmcp and
// start it again on the same database), and workflows several of them
// serve, each one compositeTools entry.
const (
	recordedBackend = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
`
	gatedSQLiteHead = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -gated]}
state:
  store: sqlite
  path: "${DIR}/state.db"
`
	sayWorkflow = `
  - name: say
    description: Echo
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
`
	longNapWorkflow = `
  - name: long_nap
    description: Sleep until cancelled
    parameters:
      label: {type: string, required: true}
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: 60000, label: "{{.params.label}}"}}
`
	askNameWorkflow = `
  - name: ask_name
    description: Ask for a name, then greet
    steps:
      - id: ask
        type: elicitation
        message: What is your name?
        schema: {type: object, properties: {name: {type: string}}, required: [name]}
      - {id: greet, tool: tb.echo, dependsOn: [ask], arguments: {text: "hello {{.steps.ask.output.content.name}}"}}
`
)

// httpVMCPOn is httpVMCP on a port from lo to hi (a test file's own
// range).
func httpVMCPOn(t *testing.T, cfg string, lo, hi int) (string, *testenv.Buffer) {
	t.Helper()
	url, stderr, _ := startHTTPVMCP(t, cfg, lo, hi)
	return url, stderr
}

// startHTTPVMCP starts `vmcp run --transport http` on a port from lo to
// hi (with extraArgs after vmcp run's own) and returns the MCP URL, its
// stderr and a function that stops it
// (SIGTERM, then a clean exit within 10 seconds is required). The test's
// cleanup stops it too, if the test did not, and logs stderr when the test
// failed.
func startHTTPVMCP(t *testing.T, cfg string, lo, hi int, extraArgs ...string) (string, *testenv.Buffer, func()) {
	t.Helper()
	return startHTTPVMCPAt(t, cfg, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, lo, hi)), extraArgs...)
}

// startHTTPVMCPAt is startHTTPVMCP on addr (a port the test took from
// testenv.FreePort, for a config that names its own URL).
func startHTTPVMCPAt(t *testing.T, cfg, addr string, extraArgs ...string) (string, *testenv.Buffer, func()) {
	t.Helper()
	stderr := &testenv.Buffer{}
	cmd := exec.Command(bins.vmcp, append([]string{"run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "debug"}, extraArgs...)...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("vmcp run --transport http exited with %v after SIGTERM\nstderr:\n%s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("vmcp run did not exit within 10s of SIGTERM")
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", stderr.String())
		}
	})
	waitListening(t, addr, exited, stderr)
	return "http://" + addr + "/mcp", stderr, stop
}

// callTool calls a tool with a two-minute deadline (the 10 MB limit tests
// move megabytes through stdio, slow under -race on a loaded machine).
func callTool(t *testing.T, c *client.Client, name string, args map[string]any, meta *mcp.Meta) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = meta
	return c.CallTool(ctx, req)
}

func mustCall(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := callTool(t, c, name, args, nil)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// run runs a command with a timeout and returns stdout, stderr and the exit
// code (-1 when it could not run or was killed by the timeout).
func run(t *testing.T, timeout time.Duration, dir string, name string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s %v: killed after %s\nstderr:\n%s", name, args, timeout, errb.String())
		code = -1
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), errb.String(), code
}

// waitGone waits until process pid no longer exists.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s (pid %d) is still running 10s after vmcp exited", what, pid)
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exposedTestbackendTools are the test backend's tools as
// exposeBackendTools serves them (tb_<tool>). Tests that list a server's
// tools expect these besides its workflows, so a tool added to the test
// backend is named here once.
var exposedTestbackendTools = []string{"tb_add", "tb_count", "tb_crash", "tb_echo", "tb_fail", "tb_hang", "tb_keys", "tb_pid", "tb_sleep"}

// withTestbackendTools returns the workflow names plus
// exposedTestbackendTools, sorted.
func withTestbackendTools(workflows ...string) []string {
	out := append(append([]string{}, workflows...), exposedTestbackendTools...)
	sort.Strings(out)
	return out
}

// waitListening waits up to a minute until a vmcp run process listens on
// addr, failing the test if it exits first (exited gets its error back).
func waitListening(t *testing.T, addr string, exited chan error, stderr *testenv.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("vmcp run exited before listening: %v\nstderr:\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("vmcp run did not listen on %s within 60s\nstderr:\n%s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
