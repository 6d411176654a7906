package mcpclient

// Failure cases, against the fake server (internal/testservers) that this
// test binary runs as a subprocess.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testservers"
	"github.com/vmcp-dev/vmcp/runtime"
)

func call(m *Manager, ctx context.Context, tool string, args map[string]any) (*runtime.ToolResult, error) {
	return m.CallTool(ctx, runtime.ToolCall{Backend: "fake", Tool: tool, Arguments: args})
}

// sleepStats reads the fake server's sleep counters.
func sleepStats(t *testing.T, m *Manager) map[string]any {
	t.Helper()
	r, err := call(m, context.Background(), "stats", nil)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	s, _ := r.Structured.(map[string]any)
	return s
}

func TestConvertResults(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	tests := []struct {
		tool string
		args map[string]any
		want *runtime.ToolResult
	}{
		{"echo", map[string]any{"message": "hi"}, &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: "hi"}}}},
		// nil arguments go out as {}, never null.
		{"args", nil, &runtime.ToolResult{Structured: map[string]any{"raw": "{}"}, Content: []runtime.Content{{Type: "text", Text: "{}"}}}},
		{"args", map[string]any{"n": 5, "deep": map[string]any{"list": []any{1, "x"}}}, &runtime.ToolResult{
			Structured: map[string]any{"raw": `{"deep":{"list":[1,"x"]},"n":5}`},
			Content:    []runtime.Content{{Type: "text", Text: `{"deep":{"list":[1,"x"]},"n":5}`}},
		}},
		{"structured", nil, &runtime.ToolResult{
			Structured: map[string]any{"total": float64(3), "items": []any{"a", "b", "c"}},
			Content:    []runtime.Content{{Type: "text", Text: `{"total":3}`}},
		}},
		{"fail", nil, &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "disk on fire"}}}},
		{"mixed", nil, &runtime.ToolResult{Content: []runtime.Content{
			{Type: "text", Text: "first"},
			{Type: "image", Data: "aGVsbG8=", Raw: map[string]any{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}},
			{Type: "text", Text: "second"},
		}}},
	}
	for _, tt := range tests {
		got, err := call(m, context.Background(), tt.tool, tt.args)
		if err != nil {
			t.Errorf("CallTool(fake.%s, %v) error: %v", tt.tool, tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("CallTool(fake.%s, %v) mismatch (-want +got):\n%s", tt.tool, tt.args, diff)
		}
	}
}

func TestPagination(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(map[string]string{testservers.EnvExtraTools: "25"})})
	tools := m.Tools("fake")
	// 11 fixed tools + 25 generated, served PageSize at a time.
	if len(tools) != 36 {
		t.Fatalf("Tools(fake) has %d tools; want 36 (pages of %d)", len(tools), testservers.PageSize)
	}
	if tools[0].Name != "add_tool" || tools[len(tools)-1].Name != "tool_024" {
		t.Errorf("Tools(fake) = [%s ... %s]; want sorted [add_tool ... tool_024]", tools[0].Name, tools[len(tools)-1].Name)
	}
	if got := len(m.Catalog().ToolNames("fake")); got != 36 {
		t.Errorf("Catalog has %d fake tools; want 36", got)
	}
}

func TestRouting(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil), "other": fakeBackend(nil)})
	_, err := m.CallTool(context.Background(), runtime.ToolCall{Backend: "nope", Tool: "echo"})
	if err == nil || err.Error() != `unknown backend "nope" (configured: fake, other)` {
		t.Errorf("CallTool(nope.echo) error = %v; want unknown backend naming the configured ones", err)
	}
	_, err = call(m, context.Background(), "no_such_tool", nil)
	if err == nil || !strings.Contains(err.Error(), `backend "fake": tool "no_such_tool"`) {
		t.Errorf("CallTool(fake.no_such_tool) error = %v; want one naming backend and tool", err)
	}
	// A protocol error does not cost the session.
	if err := m.Ready()["fake"]; err != nil {
		t.Errorf("Ready()[fake] = %v after an unknown tool; want nil", err)
	}
	p1, p2 := pidOf(t, m, "fake"), pidOf(t, m, "other")
	if p1 == p2 {
		t.Errorf("backends fake and other share pid %d; want a process each", p1)
	}
}

func TestConcurrentCalls(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := "m" + strconv.Itoa(i)
			r, err := call(m, context.Background(), "echo", map[string]any{"message": msg})
			switch {
			case err != nil:
				errs[i] = err
			case len(r.Content) != 1 || r.Content[0].Text != msg:
				errs[i] = errors.New("got " + r.Content[0].Text + ", want " + msg)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("32 concurrent echo calls: %v", err)
	}
}

func TestCrashFailsCallAndNextCallRestarts(t *testing.T) {
	checkNoGoroutineLeak(t)
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	pid1 := pidOf(t, m, "fake")

	_, err := call(m, context.Background(), "crash", nil)
	var exit *ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("CallTool(fake.crash) error = %v (%T); want *ExitError", err, err)
	}
	want := "backend \"fake\" exited: exit status 7; its stderr ends with:\n    fake: crashing on purpose"
	if err.Error() != want {
		t.Errorf("CallTool(fake.crash) error =\n%s\nwant\n%s", err, want)
	}
	if err := m.Ready()["fake"]; err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("Ready()[fake] after the crash = %v; want the exit", err)
	}
	if !processGone(pid1) {
		t.Errorf("crashed process %d was not reaped", pid1)
	}

	r, err := call(m, context.Background(), "echo", map[string]any{"message": "again"})
	if err != nil || r.Content[0].Text != "again" {
		t.Fatalf("CallTool(fake.echo) after the crash = %+v, %v; want a restarted backend", r, err)
	}
	if pid2 := pidOf(t, m, "fake"); pid2 == pid1 {
		t.Errorf("after restart pid = %d; want a new process", pid2)
	}
	if err := m.Ready()["fake"]; err != nil {
		t.Errorf("Ready()[fake] after restart = %v; want nil", err)
	}
	if len(m.Tools("fake")) != 11 {
		t.Errorf("Tools(fake) after restart has %d tools; want 11", len(m.Tools("fake")))
	}
}

func TestKilledMidCall(t *testing.T) {
	checkNoGoroutineLeak(t)
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	pid := pidOf(t, m, "fake")

	// Two calls in flight when the process is killed: both fail with the exit.
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := call(m, context.Background(), "sleep", map[string]any{"ms": 10000})
			errs <- err
		}()
	}
	if !eventually(10*time.Second, func() bool { return sleepStats(t, m)["started"] == float64(2) }) {
		t.Fatalf("the sleep calls did not start")
	}
	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := <-errs
		if err == nil || !strings.HasPrefix(err.Error(), `backend "fake" exited: signal: killed`) {
			t.Errorf("in-flight call after SIGKILL: error = %v; want backend \"fake\" exited: signal: killed", err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("in-flight calls took %v to fail after the kill", took)
	}
	r, err := call(m, context.Background(), "echo", map[string]any{"message": "back"})
	if err != nil || r.Content[0].Text != "back" {
		t.Errorf("call after the kill = %+v, %v; want the restarted backend to answer", r, err)
	}
}

func TestBackendTimeoutCancelsOnServer(t *testing.T) {
	b := fakeBackend(nil)
	b.Timeout = 300 * time.Millisecond
	m := connect(t, map[string]*config.Backend{"fake": b})
	start := time.Now()
	_, err := call(m, context.Background(), "sleep", map[string]any{"ms": 10000})
	took := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sleep past the timeout: error = %v (%T); want *TimeoutError matching DeadlineExceeded", err, err)
	}
	if want := `backend "fake": tool "sleep" did not answer within 300ms (the backend's timeout)`; err.Error() != want {
		t.Errorf("error = %q; want %q", err, want)
	}
	if took > 3*time.Second {
		t.Errorf("call returned after %v; want about 300ms", took)
	}
	// The server heard notifications/cancelled and stopped the handler.
	if !eventually(5*time.Second, func() bool { return sleepStats(t, m)["cancelled"] == float64(1) }) {
		t.Errorf("server stats = %v; want cancelled 1", sleepStats(t, m))
	}
}

// cancelSleepMidCall starts the fake server's sleep tool, cancels the call
// once the server has started it, and returns the call's error.
func cancelSleepMidCall(t *testing.T, m *Manager) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := call(m, ctx, "sleep", map[string]any{"ms": 10000})
		errc <- err
	}()
	if !eventually(10*time.Second, func() bool { return sleepStats(t, m)["started"] == float64(1) }) {
		cancel()
		t.Fatalf("sleep did not start")
	}
	cancel()
	select {
	case err := <-errc:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled call did not return within 5s")
		return nil
	}
}

func TestContextCancelReachesServer(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	if err := cancelSleepMidCall(t, m); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `backend "fake": tool "sleep": call cancelled`) {
		t.Errorf("cancelled call error = %v; want call cancelled wrapping context.Canceled", err)
	}
	if !eventually(5*time.Second, func() bool { return sleepStats(t, m)["cancelled"] == float64(1) }) {
		t.Errorf("server stats = %v; want cancelled 1 (notifications/cancelled received)", sleepStats(t, m))
	}
	// The caller's deadline, when earlier than the backend's, wins and is
	// reported as such.
	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	_, err := call(m, dctx, "sleep", map[string]any{"ms": 10000})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("call past the caller's deadline: error = %v; want deadline exceeded", err)
	}
	if err := m.Ready()["fake"]; err != nil {
		t.Errorf("Ready()[fake] after cancellations = %v; want nil", err)
	}
}

func TestConnectErrors(t *testing.T) {
	hang := fakeBackend(map[string]string{testservers.EnvHangInit: "1"})
	hang.StartTimeout = 500 * time.Millisecond
	tests := []struct {
		name    string
		backend *config.Backend
		want    []string
	}{
		{"missing command", &config.Backend{Command: "/nonexistent/vmcp-no-such-server", Timeout: 5 * time.Second},
			[]string{`backend "bad": cannot start "/nonexistent/vmcp-no-such-server"`, "no such file or directory"}},
		{"exits at start", fakeBackend(map[string]string{testservers.EnvExitAtStart: "fatal: GITHUB_TOKEN is empty"}),
			[]string{`backend "bad" exited during initialize: exit status 3`, "its stderr ends with:\n    fatal: GITHUB_TOKEN is empty"}},
		{"never answers", hang, []string{`backend "bad": initialize: no answer within 500ms (the backend's startTimeout)`}},
		{"nothing listening", &config.Backend{URL: "http://127.0.0.1:17198/mcp", Transport: config.TransportStreamableHTTP, Timeout: 5 * time.Second},
			[]string{`backend "bad" (http://127.0.0.1:17198/mcp): initialize:`, "connection refused"}},
		{"sse nothing listening", &config.Backend{URL: "http://127.0.0.1:17198/sse", Transport: config.TransportSSE, Timeout: 5 * time.Second},
			[]string{`backend "bad" (http://127.0.0.1:17198/sse)`, "connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			m, err := Connect(ctx, map[string]*config.Backend{"bad": tt.backend, "good": fakeBackend(nil)}, Options{Logger: testLogger(t)})
			if err == nil {
				m.Close()
				t.Fatalf("Connect = nil error; want one about backend bad")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Connect error =\n%v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), `"good"`) {
				t.Errorf("Connect error mentions the good backend: %v", err)
			}
		})
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	checkNoGoroutineLeak(t)
	ctx := context.Background()
	m, err := Connect(ctx, map[string]*config.Backend{"fake": fakeBackend(nil), "ev": everythingStdio(t)}, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{pidOf(t, m, "fake"), pidOf(t, m, "ev")}
	if _, err := call(m, ctx, "echo", map[string]any{"message": "x"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Errorf("Close() = %v; want nil", err)
	}
	t.Logf("Close took %v", time.Since(start))
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("process %d still exists after Close", pid)
		}
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
	if _, err := call(m, ctx, "echo", map[string]any{"message": "x"}); err == nil || !strings.Contains(err.Error(), "manager is closed") {
		t.Errorf("call after Close: error = %v; want manager is closed", err)
	}
}

// A backend stuck in a tool handler ignores end of input and SIGTERM; Close
// must still end it quickly, because the MCP client above vmcp kills vmcp a
// few seconds after closing its stdin, which would orphan the backend.
func TestCloseKillsABackendStuckInAHandler(t *testing.T) {
	checkNoGoroutineLeak(t)
	m, err := Connect(context.Background(), map[string]*config.Backend{"fake": fakeBackend(nil)}, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, m, "fake")
	errc := make(chan error, 1)
	go func() {
		_, err := call(m, context.Background(), "sleep", map[string]any{"ms": 60000})
		errc <- err
	}()
	if !eventually(10*time.Second, func() bool { return sleepStats(t, m)["started"] == float64(1) }) {
		t.Fatalf("sleep did not start")
	}
	start := time.Now()
	m.Close()
	took := time.Since(start)
	t.Logf("Close took %v", took)
	if took > 4*time.Second {
		t.Errorf("Close took %v; want it to kill the stuck backend after about %v", took, closeGrace)
	}
	if !processGone(pid) {
		t.Errorf("process %d still exists after Close", pid)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Errorf("the call in flight succeeded after Close; want an error")
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the call in flight did not return after Close")
	}
}

func TestReadyAnswersDuringSlowRestart(t *testing.T) {
	// The first start serves the fake server; every later start hangs, so
	// the restart after a crash takes the whole startTimeout.
	marker := filepath.Join(t.TempDir(), "started")
	b := fakeBackend(nil)
	b.Command = "/bin/sh"
	b.Args = []string{"-c", `if [ -e "$1" ]; then exec sleep 60; fi; touch "$1"; exec "$2"`, "sh", marker, os.Args[0]}
	b.StartTimeout = 3 * time.Second
	m := connect(t, map[string]*config.Backend{"fake": b})
	if _, err := call(m, context.Background(), "crash", nil); err == nil {
		t.Fatal("crash returned no error")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := call(m, context.Background(), "echo", map[string]any{"message": "x"})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond) // let the restart begin
	start := time.Now()
	ready := m.Ready()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Ready() took %v during a restart; want an immediate answer", took)
	}
	if err := ready["fake"]; err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("Ready()[fake] during the restart = %v; want the crash", err)
	}
	if n := len(m.Tools("fake")); n != 11 {
		t.Errorf("Tools(fake) during the restart has %d tools; want the 11 from the last start", n)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), `backend "fake": initialize: no answer within 3s`) {
			t.Errorf("call during a hanging restart: error = %v; want initialize: no answer within 3s", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("call during a hanging restart did not return")
	}
}

func TestIdleExitIsNoticedAndNextCallRestarts(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	pid := pidOf(t, m, "fake")
	if _, err := call(m, context.Background(), "exit_later", map[string]any{"ms": 100}); err != nil {
		t.Fatalf("exit_later: %v", err)
	}
	// Ready first says "connection lost" while the exit is described (the
	// process reaped, its stderr read to the end), then the exit itself:
	// wait for that, the settled answer.
	var ready error
	exited := func() bool {
		ready = m.Ready()["fake"]
		var ee *ExitError
		return errors.As(ready, &ee)
	}
	if !eventually(10*time.Second, exited) {
		t.Fatalf("Ready()[fake] = %v 10s after the process exited; want its exit status", ready)
	}
	want := "backend \"fake\" exited: exit status 7; its stderr ends with:\n    fake: exiting while idle"
	if ready.Error() != want {
		t.Errorf("Ready()[fake] = %q; want %q", ready, want)
	}
	if !processGone(pid) {
		t.Errorf("exited process %d was not reaped", pid)
	}
	// No call was in flight, so none fails: the next one restarts it.
	r, err := call(m, context.Background(), "echo", map[string]any{"message": "fresh"})
	if err != nil || r.Content[0].Text != "fresh" {
		t.Errorf("first call after an idle exit = %+v, %v; want a restarted backend to answer", r, err)
	}
}

func TestToolsListChangedRefreshes(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(nil)})
	if _, err := call(m, context.Background(), "add_tool", map[string]any{"name": "late_tool"}); err != nil {
		t.Fatal(err)
	}
	has := func() bool {
		_, ok := m.Catalog().Tool("fake", "late_tool")
		return ok
	}
	if !eventually(10*time.Second, has) {
		t.Fatalf("after tools/list_changed, Catalog lacks fake.late_tool; tools: %v", m.Catalog().ToolNames("fake"))
	}
	if n := len(m.Tools("fake")); n != 12 {
		t.Errorf("Tools(fake) has %d tools after the change; want 12", n)
	}
}
