package mcpclient

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestCallLogs: at debug level each backend call is one line with the
// tool, the run and step, the duration and the result's size, and never
// the argument values; at info level there is none.
func TestCallLogs(t *testing.T) {
	var logs testenv.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Connect(ctx, map[string]*config.Backend{"fake": fakeBackend(nil)},
		Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const secret = "hunter2-do-not-log"
	if _, err := m.CallTool(ctx, runtime.ToolCall{Backend: "fake", Tool: "echo", Arguments: map[string]any{"message": secret}, RunID: "r1", StepID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CallTool(ctx, runtime.ToolCall{Backend: "fake", Tool: "no_such_tool", RunID: "r1", StepID: "s2"}); err == nil {
		t.Fatal("calling no_such_tool succeeded")
	}
	out := logs.String()
	ok := regexp.MustCompile(`msg="backend call" backend=fake tool=echo run_id=r1 step_id=s1 duration=[0-9.]+[µnm]?s result_bytes=(\d+) is_error=false`).FindStringSubmatch(out)
	if ok == nil {
		t.Fatalf("no debug line for the echo call in:\n%s", out)
	}
	// The result echoes the message back, so its size counts it.
	if n, _ := strconv.Atoi(ok[1]); n < len(secret) {
		t.Errorf("result_bytes = %d; want at least the %d bytes of the echoed text", n, len(secret))
	}
	if !regexp.MustCompile(`msg="backend call" backend=fake tool=no_such_tool run_id=r1 step_id=s2 duration=\S+ err=`).MatchString(out) {
		t.Errorf("no debug line with the error of the failed call in:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the logs hold an argument value:\n%s", out)
	}

	var quiet testenv.Buffer
	m2, err := Connect(ctx, map[string]*config.Backend{"fake": fakeBackend(nil)},
		Options{Logger: slog.New(slog.NewTextHandler(&quiet, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, err := m2.CallTool(ctx, runtime.ToolCall{Backend: "fake", Tool: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(quiet.String(), "backend call") {
		t.Errorf("backend calls logged at info level:\n%s", quiet.String())
	}
}
